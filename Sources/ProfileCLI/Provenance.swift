import ProfileJSON

/// Where each key of a profile comes from, for `-v`: one line per leaf of the profile, and one
/// per known key the profile lacks. The rules are those of the collectors' `// "key" ← source`
/// comments; a key with alternatives names them in order, as the collector tries them.
package enum Provenance {
  /// Source rule per JSON path (array indices and the location's members included).
  package static let sources: [(path: String, source: String)] = [
    ("identifier", "<host>-<key>: HMAC-SHA256 of /etc/machine-id (else /var/lib/dbus/machine-id), SHA-1 of <state-dir>/device-key.pub"),
    ("version", "the profile format of the ForgeRock Android SDK, always \"1.0\""),
    ("metadata.platform.platform", "always \"Linux\""),
    ("metadata.platform.version", "VERSION_ID in /etc/os-release"),
    (
      "metadata.platform.device",
      "chassis as hostnamectl names it: CHASSIS in /etc/machine-info, container/VM detection, DMI chassis_type, ACPI, device tree"
    ),
    ("metadata.platform.deviceName", "PRETTY_HOSTNAME in /etc/machine-info, else /proc/sys/kernel/hostname"),
    ("metadata.platform.model", "DMI product_name (Lenovo: product_version) in /sys/class/dmi/id, else the device-tree model"),
    ("metadata.platform.brand", "DMI sys_vendor, else board_vendor, else the device-tree vendor"),
    ("metadata.platform.locale", "LC_ALL, LC_MESSAGES, LANG, then /etc/locale.conf, /etc/default/locale"),
    ("metadata.platform.timeZone", "TZ, the /etc/localtime link, or /etc/timezone"),
    ("metadata.platform.jailBreakScore", "the highest tamper detector score, 0…1 (fr-profile tamper explains it)"),
    ("metadata.hardware.hardware", "\"model name\" in /proc/cpuinfo (x86), the ARM core from \"CPU part\", else the device-tree SoC"),
    ("metadata.hardware.manufacturer", "DMI sys_vendor, else board_vendor, else the device-tree vendor"),
    ("metadata.hardware.storage", "statvfs(\"/\"): f_blocks × f_frsize, MiB"),
    ("metadata.hardware.memory", "MemTotal in /proc/meminfo, MiB, rounded up to 128 MiB"),
    ("metadata.hardware.cpu", "logical CPUs in /sys/devices/system/cpu/present, else processors in /proc/cpuinfo"),
    ("metadata.hardware.camera.numberOfCameras", "udev video4linux nodes that can capture, else one per physical device"),
    ("metadata.hardware.display.width", "the EDID preferred timing of the first connected DRM connector, else its first mode"),
    ("metadata.hardware.display.height", "the same mode's vertical active pixels"),
    ("metadata.hardware.display.orientation", "always natural (1): rotation belongs to the compositor"),
    ("metadata.browser.userAgent", "fr-profile/<version> (PRETTY_NAME in /etc/os-release; uname machine), or --user-agent"),
    ("metadata.bluetooth.supported", "an hci<N> device in udev's bluetooth subsystem"),
    ("metadata.network.connected", "a default route in /proc/net/route or /proc/net/ipv6_route on an interface that is up"),
    ("location.latitude", "--latitude, else FR_PROFILE_LOCATION, else the location file"),
    ("location.longitude", "--longitude, else FR_PROFILE_LOCATION, else the location file"),
  ]

  /// One line per leaf of `profile` ("path = value ← source") and per known key it lacks.
  package static func explain(_ profile: JSON, metadata: Bool, location: Bool) -> [String] {
    var leaves: [(String, JSON)] = []
    func walk(_ value: JSON, _ path: String) {
      switch value {
      case .object(let object):
        for (key, member) in object.members { walk(member, path.isEmpty ? key : path + "." + key) }
      case .array(let items):
        for (index, item) in items.enumerated() { walk(item, "\(path)[\(index)]") }
      default:
        leaves.append((path, value))
      }
    }
    walk(profile, "")
    let table = Dictionary(sources.map { ($0.path, $0.source) }, uniquingKeysWith: { first, _ in first })
    var lines = leaves.map { path, value in
      "\(path) = \(JSONWriter.compact(value)) ← \(table[path] ?? "no rule recorded for this key")"
    }
    let present = Set(leaves.map(\.0))
    for (path, source) in sources where !present.contains(path) {
      if path.hasPrefix("metadata.") && !metadata { continue }
      if path.hasPrefix("location.") && !location { continue }
      lines.append("\(path): not in the profile; nothing usable in its sources (\(source))")
    }
    return lines
  }
}
