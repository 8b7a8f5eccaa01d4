// Parsers for the text formats collectors read, kept apart from reading so each gets table
// tests of its own. They work on bytes/UTF-8 views: collection runs at every login.

/// Parses shell-style `KEY=value` files: os-release, /etc/locale.conf, /etc/default/locale,
/// /etc/machine-info.
///
///     PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"
///     VERSION_ID="12"
///     # comment
///     LANG=en_US.UTF-8
///
/// Values may be double- or single-quoted; `\"`, `\\`, `\$` and `` \` `` escapes are undone in
/// double quotes (os-release(5)). Lines without `=` and comments are skipped. Later keys win.
public func parseKeyValueFile(_ text: String) -> [String: String] {
  var result: [String: String] = [:]
  for rawLine in text.split(separator: "\n", omittingEmptySubsequences: true) {
    let line = trimmed(rawLine)
    guard !line.isEmpty, !line.hasPrefix("#"), let equals = line.firstIndex(of: "=") else { continue }
    var key = trimmed(line[..<equals])
    if key.hasPrefix("export ") { key = trimmed(key.dropFirst(7)) }
    guard !key.isEmpty else { continue }
    result[key] = unquote(trimmed(line[line.index(after: equals)...]))
  }
  return result
}

private func unquote(_ value: String) -> String {
  guard let first = value.first, first == "\"" || first == "'" else { return value }
  var output = ""
  var escaped = false
  for character in value.dropFirst() {
    if escaped {
      if !("\"\\$`".contains(character)) { output.append("\\") }
      output.append(character)
      escaped = false
    } else if character == "\\" && first == "\"" {
      escaped = true
    } else if character == first {
      break
    } else {
      output.append(character)
    }
  }
  return output
}

/// MemTotal from /proc/meminfo, in KiB.
///
///     MemTotal:       16303580 kB
///     MemFree:         8123456 kB
public func parseMemTotalKiB(_ text: String) -> UInt64? {
  for line in text.split(separator: "\n") where line.hasPrefix("MemTotal:") {
    let fields = line.dropFirst("MemTotal:".count).split(separator: " ")
    // More than 2^50 KiB (1 EiB) is not memory, and would overflow the MiB arithmetic.
    guard let number = fields.first, let kib = UInt64(number), kib < 1 << 50 else { return nil }
    if fields.count > 1 && fields[1] != "kB" { return nil }
    return kib
  }
  return nil
}

/// The fields of /proc/cpuinfo a profile uses.
public struct CPUInfo: Equatable, Sendable {
  /// `processor` entries (online logical CPUs).
  public var processors = 0
  /// x86 `model name`, or 32-bit ARM `Processor` / `model name`.
  public var modelName: String?
  /// ARM `CPU implementer` and `CPU part` of the first processor, e.g. 0x41 / 0xd08.
  public var implementer: String?
  public var part: String?
  /// `flags` of the first processor contains `hypervisor` (x86 guests).
  public var hypervisorFlag = false
}

/// Parses /proc/cpuinfo.
///
///     processor	: 0
///     model name	: Intel(R) Core(TM) i7-1185G7 @ 3.00GHz
///     flags		: fpu vme … hypervisor …
///
///     processor	: 0
///     CPU implementer	: 0x41
///     CPU part	: 0xd08
public func parseCPUInfo(_ text: String) -> CPUInfo {
  var info = CPUInfo()
  for line in text.split(separator: "\n") {
    guard let colon = line.firstIndex(of: ":") else { continue }
    let key = trimmed(line[..<colon])
    let value = trimmed(line[line.index(after: colon)...])
    switch key {
    case "processor": info.processors += 1
    case "model name", "Processor":
      if info.modelName == nil, !value.isEmpty { info.modelName = collapseSpaces(value) }
    case "CPU implementer": if info.implementer == nil { info.implementer = value.lowercased() }
    case "CPU part": if info.part == nil { info.part = value.lowercased() }
    case "flags":
      if !info.hypervisorFlag, info.processors <= 1 {
        info.hypervisorFlag = value.split(separator: " ").contains("hypervisor")
      }
    default: break
    }
  }
  return info
}

/// The number of CPUs in a sysfs CPU list such as `0-3,8-11` (/sys/devices/system/cpu/present).
public func parseCPUListCount(_ text: String) -> Int? {
  var count = 0
  for range in trimmed(text).split(separator: ",") {
    let bounds = range.split(separator: "-", omittingEmptySubsequences: false)
    if bounds.count == 1, let cpu = Int(bounds[0]), cpu >= 0 {
      count += 1
    } else if bounds.count == 2, let low = Int(bounds[0]), let high = Int(bounds[1]), high >= low, low >= 0,
      high < maximumCPUs
    {
      count += high - low + 1
    } else {
      return nil
    }
  }
  return count > 0 && count <= maximumCPUs ? count : nil
}

/// Linux's largest NR_CPUS is 8192; anything far above is not a CPU list.
private let maximumCPUs = 1 << 16

/// Entries of a NUL-separated device-tree string list (`compatible`, `model`).
public func parseDeviceTreeStrings(_ bytes: [UInt8]) -> [String] {
  bytes.split(separator: 0).map { trimmed(String(decoding: $0, as: UTF8.self)) }.filter { !$0.isEmpty }
}

/// Replaces runs of white space with one space (cpuinfo pads model names).
public func collapseSpaces(_ text: String) -> String {
  text.split(whereSeparator: { $0 == " " || $0 == "\t" }).joined(separator: " ")
}

/// Placeholder text firmware vendors leave in SMBIOS fields; treated as unknown.
/// The list follows fastfetch's and systemd-hostnamed's filters of DMI values.
private let oemFiller: Set<String> = [
  "to be filled by o.e.m.", "to be filled by oem", "default string", "system product name",
  "system manufacturer", "system version", "system serial number", "not applicable", "not specified",
  "none", "o.e.m.", "oem", "unknown", "invalid", "n/a", "na", "x.x", "0123456789", "123456789",
  "type1productconfigid", "type2 - board product name1", "type2 - board vendor name1",
  "chassis manufacture", "base board product name", "default", "product name", "manufacturer",
]

/// The value with surrounding white space removed, or nil when it is empty or OEM filler.
public func meaningful(_ value: String?) -> String? {
  guard let value else { return nil }
  let text = collapseSpaces(trimmed(value))
  if text.isEmpty || oemFiller.contains(text.lowercased()) { return nil }
  if text.allSatisfy({ $0 == "0" || $0 == "." || $0 == " " || $0 == "-" || $0 == "x" || $0 == "X" }) { return nil }
  return text
}
