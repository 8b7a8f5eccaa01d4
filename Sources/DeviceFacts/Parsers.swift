import SystemCalls

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

// Parsers for the text formats collectors read, kept apart from reading so each gets table
// tests of its own. They scan bytes (`[UInt8]`): collection runs at every login, and splitting
// /proc text into `Character`s cost more than all the reads together (bench/README.md).
// Only the values that end up in a profile become `String`s. Each parser also takes a `String`
// for tests and embedders; that overload only forwards the UTF-8 bytes.

// MARK: - /proc

/// MemTotal from /proc/meminfo, in KiB.
///
///     MemTotal:       16303580 kB
///     MemFree:         8123456 kB
package func parseMemTotalKiB(_ bytes: [UInt8]) -> UInt64? {
  var result: UInt64?
  bytes.withUnsafeBufferPointer { bytes in
    forEachLine(bytes) { line in
      guard bytesHavePrefix(bytes, line, "MemTotal:") else { return true }
      // The first two fields separated by spaces: the number and its unit.
      var number: Range<Int>?
      var unit: Range<Int>?
      forEachField(bytes, (line.lowerBound + 9)..<line.upperBound, separatedBy: { $0 == 0x20 }) { field in
        if number == nil { number = field } else { unit = field }
        return unit == nil
      }
      // More than 2^50 KiB (1 EiB) is not memory, and would overflow the MiB arithmetic.
      guard let number, let kib = UInt64(decode(bytes, number)), kib < 1 << 50 else { return false }
      if let unit, !bytesEqual(bytes, unit, "kB") { return false }
      result = kib
      return false
    }
  }
  return result
}

package func parseMemTotalKiB(_ text: String) -> UInt64? {
  parseMemTotalKiB(Array(text.utf8))
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
package func parseCPUInfo(_ bytes: [UInt8]) -> CPUInfo {
  var info = CPUInfo()
  bytes.withUnsafeBufferPointer { bytes in
    forEachLine(bytes) { line in
      guard let colon = firstIndex(of: UInt8(ascii: ":"), in: bytes, line) else { return true }
      let key = trimRange(bytes, line.lowerBound..<colon)
      guard !key.isEmpty else { return true }
      let value = { trimRange(bytes, (colon + 1)..<line.upperBound) }
      switch bytes[key.lowerBound] {
      case UInt8(ascii: "p") where bytesEqual(bytes, key, "processor"):
        info.processors += 1
      case UInt8(ascii: "m") where bytesEqual(bytes, key, "model name"),
        UInt8(ascii: "P") where bytesEqual(bytes, key, "Processor"):
        let value = value()
        if info.modelName == nil, !value.isEmpty { info.modelName = collapseSpaces(decode(bytes, value)) }
      case UInt8(ascii: "C") where bytesEqual(bytes, key, "CPU implementer"):
        if info.implementer == nil { info.implementer = decode(bytes, value()).lowercased() }
      case UInt8(ascii: "C") where bytesEqual(bytes, key, "CPU part"):
        if info.part == nil { info.part = decode(bytes, value()).lowercased() }
      case UInt8(ascii: "f") where bytesEqual(bytes, key, "flags"):
        if !info.hypervisorFlag, info.processors <= 1 {
          forEachField(bytes, value(), separatedBy: { $0 == 0x20 }) { word in
            if bytesEqual(bytes, word, "hypervisor") { info.hypervisorFlag = true }
            return !info.hypervisorFlag
          }
        }
      default: break
      }
      return true
    }
  }
  return info
}

package func parseCPUInfo(_ text: String) -> CPUInfo {
  parseCPUInfo(Array(text.utf8))
}

/// The number of CPUs in a sysfs CPU list such as `0-3,8-11` (/sys/devices/system/cpu/present).
package func parseCPUListCount(_ text: String) -> Int? {
  var count = 0
  // Comma-separated pieces, empty ones skipped; each is "N" or "LOW-HIGH". Walked with indices,
  // not `split`: an `[Substring]` costs collect a runtime metadata instantiation.
  let list = trimmed(text)[...]
  var pieceStart = list.startIndex
  while pieceStart < list.endIndex {
    let pieceEnd = list[pieceStart...].firstIndex(of: ",") ?? list.endIndex
    let piece = list[pieceStart..<pieceEnd]
    pieceStart = pieceEnd < list.endIndex ? list.index(after: pieceEnd) : pieceEnd
    if piece.isEmpty { continue }
    if let dash = piece.firstIndex(of: "-") {
      let high = piece[piece.index(after: dash)...]
      guard !high.contains("-"), let low = Int(piece[..<dash]), let high = Int(high), high >= low, low >= 0,
        high < maximumCPUs
      else { return nil }
      count += high - low + 1
    } else if let cpu = Int(piece), cpu >= 0 {
      count += 1
    } else {
      return nil
    }
  }
  return count > 0 && count <= maximumCPUs ? count : nil
}

/// Linux's largest NR_CPUS is 8192; anything far above is not a CPU list.
private let maximumCPUs = 1 << 16

/// Entries of a NUL-separated device-tree string list (`compatible`, `model`).
package func parseDeviceTreeStrings(_ bytes: [UInt8]) -> [String] {
  bytes.split(separator: 0).map { trimmed(String(decoding: $0, as: UTF8.self)) }.filter { !$0.isEmpty }
}

/// Replaces runs of spaces and tabs with one space and drops them at both ends (cpuinfo pads
/// model names). Works on UTF-8 bytes: `split` + `joined` would cost a runtime conformance
/// lookup on every collect.
package func collapseSpaces(_ text: String) -> String {
  var output: [UInt8] = []
  output.reserveCapacity(text.utf8.count)
  var pendingSpace = false
  for byte in text.utf8 {
    if byte == 0x20 || byte == 0x09 {
      pendingSpace = !output.isEmpty
    } else {
      if pendingSpace { output.append(0x20) }
      pendingSpace = false
      output.append(byte)
    }
  }
  return String(decoding: output, as: UTF8.self)
}

/// Placeholder text firmware vendors leave in SMBIOS fields (lowercased); treated as unknown.
/// The list follows fastfetch's and systemd-hostnamed's filters of DMI values. A `switch`, not a
/// `Set<String>`: building the set cost more than every lookup a collect makes.
private func isOEMFiller(_ lowercased: String) -> Bool {
  switch lowercased {
  case "to be filled by o.e.m.", "to be filled by oem", "default string", "system product name",
    "system manufacturer", "system version", "system serial number", "not applicable", "not specified",
    "none", "o.e.m.", "oem", "unknown", "invalid", "n/a", "na", "x.x", "0123456789", "123456789",
    "type1productconfigid", "type2 - board product name1", "type2 - board vendor name1",
    "chassis manufacture", "base board product name", "default", "product name", "manufacturer":
    true
  default: false
  }
}

/// The value with surrounding white space removed, or nil when it is empty or OEM filler.
package func meaningful(_ value: String?) -> String? {
  guard let value else { return nil }
  let text = collapseSpaces(trimmed(value))
  if text.isEmpty || isOEMFiller(text.lowercased()) { return nil }
  if text.utf8.allSatisfy({ $0 == 0x30 || $0 == 0x2E || $0 == 0x20 || $0 == 0x2D || $0 == 0x78 || $0 == 0x58 }) { return nil }
  return text
}
