import SystemCalls

/// Lists devices by walking `/sys` below a `SystemSource` root, as libudev does on a live machine.
///
/// libudev always reads the real `/sys` and `/run/udev`, so recorded trees (a `SystemSource` root DIR) use this
/// instead: `DIR/sys/class/<subsystem>/*` and `DIR/sys/bus/<subsystem>/devices/*` (symbolic
/// links into `DIR/sys/devices`), each device's `uevent` for its properties, and the udev
/// database `DIR/run/udev/data/<id>` (`E:` lines) when the tree has one.
public struct SysfsEnumerator: DeviceEnumerating {
  public var system: SystemSource

  public init(system: SystemSource) {
    self.system = system
  }

  public func devices(subsystem: String, attributes: [String]) -> [UdevDevice] {
    var syspaths = Set<String>()
    for directory in ["/sys/class/\(subsystem)", "/sys/bus/\(subsystem)/devices"] {
      for name in system.listDirectory(directory) {
        let entry = directory + "/" + name
        if let target = system.readLink(entry) {
          syspaths.insert(resolvePath(target, relativeTo: directory))
        } else if system.status(entry)?.isDirectory == true {
          syspaths.insert(entry)
        }
      }
    }
    return syspaths.sorted().compactMap { device(at: $0, subsystem: subsystem, attributes: attributes) }
  }

  private func device(at syspath: String, subsystem: String, attributes names: [String]) -> UdevDevice? {
    // Like libudev: a directory without a uevent file (e.g. /sys/class/drm/version) is no device.
    guard let uevent = system.readText(syspath + "/uevent") else { return nil }
    let sysname = String(syspath.split(separator: "/").last ?? "")
    var properties = parseKeyValueLines(uevent)
    let actualSubsystem = system.readLink(syspath + "/subsystem").map(lastComponent) ?? subsystem
    properties["SUBSYSTEM"] = actualSubsystem
    if let database = system.readText("/run/udev/data/" + udevDatabaseID(sysname: sysname, subsystem: actualSubsystem, uevent: properties))
    {
      for line in database.split(separator: "\n") where line.hasPrefix("E:") {
        let assignment = parseKeyValueLines(String(line.dropFirst(2)))
        properties.merge(assignment) { _, new in new }
      }
    }
    var attributes: [String: String] = [:]
    for name in names {
      guard let bytes = system.readBytes(syspath + "/" + name, limit: 4096) else { continue }
      var text = String(decoding: bytes, as: UTF8.self)
      while text.hasSuffix("\n") { text.removeLast() }
      attributes[name] = text
    }
    return UdevDevice(
      subsystem: actualSubsystem, sysname: sysname, syspath: syspath, devtype: properties["DEVTYPE"],
      properties: properties, attributes: attributes)
  }
}

/// The name of a device's file in the udev database (`/run/udev/data`), as systemd forms it:
/// "c81:0" / "b8:0" for character / block devices, "n2" for network interfaces, else
/// "+<subsystem>:<sysname>".
package func udevDatabaseID(sysname: String, subsystem: String, uevent: [String: String]) -> String {
  if let major = uevent["MAJOR"], let minor = uevent["MINOR"], major != "0" || minor != "0" {
    return (subsystem == "block" ? "b" : "c") + major + ":" + minor
  }
  if subsystem == "net", let index = uevent["IFINDEX"] { return "n" + index }
  return "+" + subsystem + ":" + sysname
}

/// "KEY=value" lines (a uevent file) as a dictionary; lines without "=" are skipped.
///
///     MAJOR=81
///     MINOR=0
///     DEVNAME=video0
func parseKeyValueLines(_ text: String) -> [String: String] {
  var result: [String: String] = [:]
  for line in text.split(separator: "\n") {
    guard let equals = line.firstIndex(of: "=") else { continue }
    result[String(line[..<equals])] = String(line[line.index(after: equals)...])
  }
  return result
}

/// `target` (a symbolic link's content) as an absolute path, with "." and ".." removed.
package func resolvePath(_ target: String, relativeTo directory: String) -> String {
  let joined = target.hasPrefix("/") ? target : directory + "/" + target
  var parts: [Substring] = []
  for part in joined.split(separator: "/") {
    switch part {
    case ".": continue
    case "..": if !parts.isEmpty { parts.removeLast() }
    default: parts.append(part)
    }
  }
  return "/" + parts.joined(separator: "/")
}

private func lastComponent(_ path: String) -> String {
  String(path.split(separator: "/").last ?? "")
}
