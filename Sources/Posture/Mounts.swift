import SystemCalls

/// One line of /proc/self/mountinfo (proc(5)).
public struct MountEntry: Sendable, Equatable {
  /// The device number of the file system (`st_dev`): 0 for anonymous ones (btrfs, overlay, tmpfs).
  public var major: UInt32
  public var minor: UInt32
  public var mountPoint: String
  public var fileSystem: String
  /// What was mounted: a device path, a ZFS dataset, "tmpfs", "overlay", …
  public var source: String
}

/// Parses /proc/self/mountinfo. Lines that do not have the documented shape are skipped and
/// counted in `malformed`.
///
///     27 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw,discard
///     36 27 0:32 /@home /home rw,relatime - btrfs /dev/mapper/luks-0f1e rw,ssd,subvol=/@home
///
/// Fields: mount id, parent id, major:minor, root, mount point, options, optional fields up to
/// a lone "-", then the file system type, the source and the super-block options. Octal
/// escapes (`\040` for a space) are undone in the mount point and the source.
public func parseMountInfo(_ text: String) -> (mounts: [MountEntry], malformed: Int) {
  var mounts: [MountEntry] = []
  var malformed = 0
  for line in text.split(separator: "\n") where !line.allSatisfy({ $0 == " " }) {
    let fields = line.split(separator: " ", omittingEmptySubsequences: true)
    guard fields.count >= 10, let dash = fields[6...].firstIndex(of: "-"), dash + 2 < fields.count else {
      malformed += 1
      continue
    }
    let numbers = fields[2].split(separator: ":")
    guard numbers.count == 2, let major = UInt32(numbers[0]), let minor = UInt32(numbers[1]) else {
      malformed += 1
      continue
    }
    mounts.append(
      MountEntry(
        major: major, minor: minor, mountPoint: unescapeOctal(fields[4]), fileSystem: String(fields[dash + 1]),
        source: unescapeOctal(fields[dash + 2])))
  }
  return (mounts, malformed)
}

/// The mount that holds `path`: the last mount (mounts stack) whose mount point is the longest
/// prefix of `path` on a path-component boundary.
public func mount(holding path: String, in mounts: [MountEntry]) -> MountEntry? {
  var best: MountEntry?
  for entry in mounts {
    let point = entry.mountPoint
    let covers =
      point == "/" || path == point || (path.hasPrefix(point) && path.dropFirst(point.count).first == "/")
    if covers, point.count >= (best?.mountPoint.count ?? 0) { best = entry }
  }
  return best
}

/// One active swap area of /proc/swaps.
public struct SwapArea: Sendable, Equatable {
  public var path: String
  /// "partition" or "file".
  public var type: String

  package init(path: String, type: String) {
    self.path = path
    self.type = type
  }
}

/// Parses /proc/swaps (a header line, then one area per line; paths escape white space octally).
///
///     Filename                                Type            Size    Used    Priority
///     /dev/dm-1                               partition       8388604 0       -2
///     /swapfile                               file            2097148 0       -3
public func parseSwaps(_ text: String) -> (areas: [SwapArea], malformed: Int) {
  var areas: [SwapArea] = []
  var malformed = 0
  for line in text.split(separator: "\n").dropFirst() where !line.allSatisfy({ $0 == " " }) {
    let fields = line.split(separator: " ", omittingEmptySubsequences: true).flatMap { $0.split(separator: "\t") }
    guard fields.count >= 2, fields[0].hasPrefix("/") else {
      malformed += 1
      continue
    }
    areas.append(SwapArea(path: unescapeOctal(fields[0]), type: String(fields[1])))
  }
  return (areas, malformed)
}

/// `\ooo` octal escapes (space, tab, newline, backslash) as the kernel writes them in paths.
func unescapeOctal(_ text: Substring) -> String {
  guard text.contains("\\") else { return String(text) }
  var bytes: [UInt8] = []
  let utf8 = Array(text.utf8)
  var index = 0
  while index < utf8.count {
    if utf8[index] == UInt8(ascii: "\\"), index + 3 < utf8.count, let value = octal(utf8[(index + 1)...(index + 3)]) {
      bytes.append(value)
      index += 4
    } else {
      bytes.append(utf8[index])
      index += 1
    }
  }
  return String(decoding: bytes, as: UTF8.self)
}

private func octal(_ digits: ArraySlice<UInt8>) -> UInt8? {
  guard digits.count == 3 else { return nil }
  var value = 0
  for digit in digits {
    guard digit >= UInt8(ascii: "0"), digit <= UInt8(ascii: "7") else { return nil }
    value = value * 8 + Int(digit - UInt8(ascii: "0"))
  }
  return value <= 255 ? UInt8(value) : nil
}
