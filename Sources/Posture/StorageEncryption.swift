import SystemCalls

/// Whether what is written below a mount point, or to a swap area, reaches persistent storage
/// only encrypted — as far as /sys shows without root.
///
/// A block device is followed down to what stores it: /sys/dev/block/M:m names it; a
/// device-mapper device says what it is in dm/uuid (`CRYPT-LUKS2-…`, `CRYPT-PLAIN-…`: dm-crypt;
/// `LVM-…`: a logical volume) and lists what it is built on in `slaves/` (LVM on LUKS: the
/// volume's slave is the dm-crypt device); a loop device names its backing file, which is stored
/// wherever that file's mount is. Encrypted means dm-crypt somewhere on every path down.
/// dm-verity and dm-integrity (also `CRYPT-` uuids) protect integrity, not secrecy, and are
/// followed through.
///
/// What /sys cannot show, and so is never claimed: the cipher of a dm-crypt mapping (its table
/// needs root; `cipher_null` would count as encrypted), a self-encrypting drive's hardware
/// encryption (counted as not encrypted, and said), ZFS native encryption (a dataset property
/// only `zfs get` reports: unknown), and the legacy cryptoloop encryption of a loop device
/// itself (removed in Linux 5.19; a loop device counts as what its backing file is on).
struct StorageEncryption {
  let system: SystemSource
  let mounts: [MountEntry]

  /// How deep a chain of devices and files may go before it is called a loop.
  static let maximumDepth = 12

  /// The verdict for what is mounted at `entry`: true encrypted, false stored in the clear,
  /// nil unknown; and the chain that shows it.
  func mounted(_ entry: MountEntry, depth: Int = 0) -> (Bool?, String) {
    let what = "\(entry.mountPoint) (\(entry.fileSystem) from \(entry.source))"
    if entry.fileSystem == "zfs" {
      return (
        nil,
        "\(what) is a ZFS dataset: whether it uses ZFS native encryption is a dataset property that no file in /proc or /sys shows ('zfs get encryption,keystatus \(entry.source)' tells, without root), nor are the pool's devices listed there"
      )
    }
    if entry.major != 0 {
      let (verdict, chain) = device(entry.major, entry.minor, depth: depth)
      return (verdict, "\(what) is on \(chain)")
    }
    // Anonymous device numbers (btrfs, and file systems without a device): the source names
    // the device, when there is one.
    if entry.source.hasPrefix("/dev/"), let number = deviceNumber(named: entry.source) {
      let (verdict, chain) = device(number.major, number.minor, depth: depth)
      let note = entry.fileSystem == "btrfs" ? " (a btrfs file system's other devices, if any, are not followed)" : ""
      return (verdict, "\(what) is on \(chain)\(note)")
    }
    switch entry.fileSystem {
    case "overlay":
      return (
        nil, "\(what) is an overlay file system (a container's root): its layers are stored on the host, which this view does not show"
      )
    case "tmpfs", "ramfs":
      return (nil, "\(what) is held in memory (\(entry.fileSystem)); tmpfs pages can still be swapped out")
    default:
      return (nil, "\(what) is not stored on a block device that /sys names (network or virtual file system)")
    }
  }

  /// The verdict for a regular file at `path` (a swap file, a loop device's backing file): what
  /// the mount that holds it is stored on.
  func file(_ path: String, depth: Int) -> (Bool?, String) {
    guard depth < Self.maximumDepth else { return (nil, "the chain of devices goes deeper than \(Self.maximumDepth) steps") }
    guard let holder = mount(holding: path, in: mounts) else {
      return (nil, "no mount in /proc/self/mountinfo holds \(path)")
    }
    return mounted(holder, depth: depth + 1)
  }

  /// The verdict for block device `major:minor` and the chain below it, in words.
  func device(_ major: UInt32, _ minor: UInt32, depth: Int) -> (Bool?, String) {
    let number = "\(major):\(minor)"
    guard depth < Self.maximumDepth else { return (nil, "\(number): the chain of devices goes deeper than \(Self.maximumDepth) steps") }
    let base = "/sys/dev/block/\(number)"
    guard let target = system.readLink(base) else {
      return (nil, "\(number), a device /sys/dev/block does not list")
    }
    let name = String(target.split(separator: "/").last ?? Substring(number))
    let device = "\(name) (\(number))"

    if let uuid = system.readLine(base + "/dm/uuid") {
      let mapping = system.readLine(base + "/dm/name").map { " \($0)" } ?? ""
      if uuid.hasPrefix("CRYPT-") {
        let kind = uuid.dropFirst(6).split(separator: "-").first.map(String.init) ?? ""
        if !["VERITY", "INTEGRITY", "SUBDEV"].contains(kind) {
          return (true, "\(device), the dm-crypt mapping\(mapping) (\(kind.isEmpty ? "dm-crypt" : kind))")
        }
        return below(base, "\(device), the dm-\(kind.lowercased()) mapping\(mapping) (integrity, not encryption)", depth: depth)
      }
      let kind = uuid.hasPrefix("LVM-") ? "the LVM logical volume" : "the device-mapper device"
      return below(base, "\(device), \(kind)\(mapping)", depth: depth)
    }
    if system.exists(base + "/dm") {
      return below(base, "\(device), a device-mapper device without a uuid", depth: depth)
    }
    if name.hasPrefix("loop") {
      guard let backing = system.readLine(base + "/loop/backing_file") else {
        return (nil, "\(device), a loop device with no backing file in /sys")
      }
      if backing.hasSuffix(" (deleted)") {
        return (nil, "\(device), a loop device over the deleted file \(backing.dropLast(10))")
      }
      let verdict: Bool?
      let chain: String
      if backing.hasPrefix("/dev/"), let number = deviceNumber(named: backing) {
        (verdict, chain) = self.device(number.major, number.minor, depth: depth + 1)
      } else {
        (verdict, chain) = file(backing, depth: depth + 1)
      }
      return (verdict, "\(device), a loop device over \(backing), which is \(chain)")
    }
    if name.hasPrefix("zram") {
      let backing = system.readLine(base + "/backing_dev")
      guard let backing, backing != "none" else {
        return (true, "\(device), compressed memory (zram) with no backing device: nothing reaches a disk")
      }
      guard let number = deviceNumber(named: backing) else { return (nil, "\(device), zram written back to \(backing)") }
      let (verdict, chain) = self.device(number.major, number.minor, depth: depth + 1)
      return (verdict, "\(device), zram written back to \(chain)")
    }
    return below(
      base,
      "\(device), a disk or partition with no dm-crypt above it (a self-encrypting drive's own encryption is not shown in /sys)",
      depth: depth, plainWhenAlone: true)
  }

  /// A device built on the devices in its `slaves/` directory: encrypted when every one of them
  /// is, in the clear when one is, unknown otherwise. A device with no slaves is in the clear
  /// when `plainWhenAlone` (a disk or partition), else unknown.
  private func below(_ base: String, _ description: String, depth: Int, plainWhenAlone: Bool = false) -> (Bool?, String) {
    let slaves = system.listDirectory(base + "/slaves")
    guard !slaves.isEmpty else {
      return plainWhenAlone ? (false, description) : (nil, "\(description), built on no device /sys lists")
    }
    var verdicts: [(Bool?, String)] = []
    for slave in slaves {
      guard let text = system.readLine(base + "/slaves/\(slave)/dev"), let number = parseDeviceNumber(text) else {
        verdicts.append((nil, "\(slave), whose device number cannot be read"))
        continue
      }
      verdicts.append(device(number.major, number.minor, depth: depth + 1))
    }
    let chain = verdicts.map(\.1).joined(separator: " and on ")
    let verdict: Bool? =
      verdicts.contains(where: { $0.0 == false }) ? false : verdicts.allSatisfy({ $0.0 == true }) ? true : nil
    return (verdict, "\(description), on \(chain)")
  }

  /// The device number of /dev/NAME or /dev/mapper/NAME, from /sys (no /dev in a recorded tree).
  func deviceNumber(named path: String) -> (major: UInt32, minor: UInt32)? {
    if path.hasPrefix("/dev/mapper/") {
      let mapping = String(path.dropFirst("/dev/mapper/".count))
      for name in system.listDirectory("/sys/class/block") where name.hasPrefix("dm-") {
        if system.readLine("/sys/class/block/\(name)/dm/name") == mapping {
          return system.readLine("/sys/class/block/\(name)/dev").flatMap(parseDeviceNumber)
        }
      }
      return nil
    }
    let name = String(path.dropFirst("/dev/".count))
    guard !name.isEmpty, !name.contains("/") else { return nil }
    return system.readLine("/sys/class/block/\(name)/dev").flatMap(parseDeviceNumber)
  }
}

/// "254:0" as a device number.
func parseDeviceNumber(_ text: String) -> (major: UInt32, minor: UInt32)? {
  let parts = text.split(separator: ":")
  guard parts.count == 2, let major = UInt32(parts[0]), let minor = UInt32(parts[1]) else { return nil }
  return (major, minor)
}
