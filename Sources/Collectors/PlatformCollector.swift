import DeviceFacts
import ProfileJSON
import SystemCalls

/// The "platform" section: what the OS and the machine call themselves.
public struct PlatformCollector: DeviceCollector {
  public let name = "platform"
  /// The tamper detectors whose maximum becomes `jailBreakScore`.
  public var detectors: [any TamperDetector]

  public init(detectors: [any TamperDetector] = TamperScore.defaultDetectors) {
    self.detectors = detectors
  }

  public func collect(_ context: CollectionContext) -> JSON? {
    let system = context.system
    let osRelease = context.facts.osRelease
    let machineInfo = system.readBytes("/etc/machine-info").map(parseKeyValueFile) ?? KeyValues()
    let identity = context.facts.machineIdentity
    var section = SectionBuilder()
    // "platform" ← always "Linux" (Android sends "Android", iOS "iOS")
    section.set("platform", "Linux")
    // "version" ← os-release VERSION_ID, a string as iOS sends it ("12", "24.04")
    section.set("version", meaningful(osRelease["VERSION_ID"]))
    // "device" ← chassis as hostnamectl names it (machine-info CHASSIS, container/VM, DMI, ACPI, device tree)
    section.set("device", chassis(context, machineInfo: machineInfo))
    // "deviceName" ← machine-info PRETTY_HOSTNAME, else the kernel hostname
    section.set("deviceName", meaningful(machineInfo["PRETTY_HOSTNAME"]) ?? system.readLine("/proc/sys/kernel/hostname"))
    // "model" ← DMI product (Lenovo: product_version), else device-tree model
    section.set("model", identity.model)
    // "brand" ← DMI sys_vendor / board_vendor, else the device-tree vendor
    section.set("brand", identity.vendor)
    // "locale" ← LC_ALL > LC_MESSAGES > LANG, then /etc/locale.conf, /etc/default/locale; as en_US
    section.set("locale", locale(system))
    // "timeZone" ← TZ, the /etc/localtime link, or /etc/timezone
    section.set("timeZone", timeZone(system))
    // "jailBreakScore" ← max over the tamper detectors, 0…1
    section.set("jailBreakScore", JSON.number(TamperScore.score(detectors, context)))
    return section.value
  }
}

// MARK: - device (chassis)

func chassis(_ context: CollectionContext, machineInfo: KeyValues) -> String? {
  if let configured = meaningful(machineInfo["CHASSIS"]) { return configured }
  switch context.facts.virtualization {
  case .container: return "container"
  case .vm: return "vm"
  case .none: break
  }
  let system = context.system
  if let type = context.facts.dmi("chassis_type").flatMap({ Int($0) }),
    let name = chassisName(dmiType: type)
  {
    return name
  }
  if let profile = system.readLine("/sys/firmware/acpi/pm_profile").flatMap({ Int($0) }),
    let name = chassisName(acpiProfile: profile)
  {
    return name
  }
  if let bytes = system.readBytes("/proc/device-tree/chassis-type", limit: 256),
    let type = parseDeviceTreeStrings(bytes).first,
    ["laptop", "desktop", "server", "tablet", "convertible", "handset", "embedded", "watch"].contains(type)
  {
    return type
  }
  return nil
}

/// SMBIOS chassis type (DMI `chassis_type`) → hostnamectl's chassis, as systemd-hostnamed maps it.
package func chassisName(dmiType: Int) -> String? {
  switch dmiType {
  case 0x03, 0x04, 0x06, 0x07, 0x0D, 0x23, 0x24: "desktop"
  case 0x08, 0x09, 0x0A, 0x0E: "laptop"
  case 0x0B: "handset"
  case 0x11, 0x17, 0x1C, 0x1D: "server"
  case 0x1E: "tablet"
  case 0x1F, 0x20: "convertible"
  case 0x21, 0x22: "embedded"
  default: nil
  }
}

/// ACPI preferred power-management profile (/sys/firmware/acpi/pm_profile) → chassis.
package func chassisName(acpiProfile: Int) -> String? {
  switch acpiProfile {
  case 1, 3, 6: "desktop"
  case 2: "laptop"
  case 4, 5, 7: "server"
  case 8: "tablet"
  default: nil
  }
}

// MARK: - model and vendor

// MARK: - locale and time zone

/// The first of LC_ALL, LC_MESSAGES, LANG that names a language, then the system's configured
/// locale. "C"/"POSIX" (the default of services and containers) name no language, so they fall
/// through to the system setting instead of hiding it: a login shell and a service then agree.
func locale(_ system: SystemSource) -> String? {
  for variable in ["LC_ALL", "LC_MESSAGES", "LANG"] {
    if let value = system.variable(variable), !value.isEmpty, let locale = normalizeLocale(value) { return locale }
  }
  for file in ["/etc/locale.conf", "/etc/default/locale"] {
    guard let settings = system.readBytes(file).map(parseKeyValueFile) else { continue }
    for key in ["LC_MESSAGES", "LANG"] {
      if let value = settings[key], let locale = normalizeLocale(value) { return locale }
    }
  }
  return nil
}

/// "de_DE.UTF-8@euro" → "de_DE"; "C", "POSIX" and "C.UTF-8" name no language and give nil.
package func normalizeLocale(_ value: String) -> String? {
  let name = firstPiece(value[...], separatedBy: ".").map(String.init) ?? value
  let base = firstPiece(name[...], separatedBy: "@").map(String.init) ?? name
  if base.isEmpty || base == "C" || base == "POSIX" { return nil }
  let valid = base.allSatisfy { $0.isASCII && ($0.isLetter || $0 == "_" || $0 == "-") }
  return valid ? base.replacingOccurrences(of: "-", with: "_") : nil
}

/// The first non-empty piece of `text` between `separator`s, as `split(separator:maxSplits: 1).first`
/// gives it, without building the array of pieces (an `[Substring]` costs collect a runtime
/// metadata instantiation).
func firstPiece(_ text: Substring, separatedBy separator: Character) -> Substring? {
  guard let start = text.firstIndex(where: { $0 != separator }) else { return nil }
  let rest = text[start...]
  return rest[..<(rest.firstIndex(of: separator) ?? rest.endIndex)]
}

func timeZone(_ system: SystemSource) -> String? {
  if let tz = system.variable("TZ"), !tz.isEmpty, let zone = ianaZone(fromTZ: tz) { return zone }
  if let target = system.readLink("/etc/localtime"), let zone = ianaZone(fromPath: target) { return zone }
  return system.readLine("/etc/timezone").flatMap(validZoneName)
}

/// The IANA name in a TZ value: ":Europe/Berlin", "Europe/Berlin", or a path into zoneinfo.
/// POSIX rule strings such as "CET-1CEST" name no zone and give nil.
package func ianaZone(fromTZ value: String) -> String? {
  let text = value.hasPrefix(":") ? String(value.dropFirst()) : value
  if text.hasPrefix("/") { return ianaZone(fromPath: text) }
  return validZoneName(text)
}

/// "/usr/share/zoneinfo/Europe/Berlin" or "../usr/share/zoneinfo/Europe/Berlin" → "Europe/Berlin".
package func ianaZone(fromPath path: String) -> String? {
  let marker = Array("zoneinfo/".utf8)
  let bytes = Array(path.utf8)
  guard bytes.count > marker.count,
    let start = (0...(bytes.count - marker.count)).first(where: { bytes[$0..<($0 + marker.count)].elementsEqual(marker) })
  else { return nil }
  var zone = String(decoding: bytes[(start + marker.count)...], as: UTF8.self)
  for variant in ["posix/", "right/"] where zone.hasPrefix(variant) { zone.removeFirst(variant.count) }
  return validZoneName(zone)
}

private func validZoneName(_ name: String) -> String? {
  if name == "UTC" || name == "Etc/UTC" || name == "GMT" || name == "Universal" || name == "Zulu" { return name }
  // IANA names are Area/Location (or a few single names); POSIX rules contain digits and signs.
  let valid =
    !name.isEmpty && name.first!.isLetter
    && name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "/_-+".contains($0)) }
    && (name.contains("/") || !name.contains(where: { $0.isNumber }))
  return valid ? name : nil
}

extension String {
  fileprivate func replacingOccurrences(of target: Character, with replacement: Character) -> String {
    String(map { $0 == target ? replacement : $0 })
  }
}
