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

// MARK: - byte helpers

/// White space as `trimmed` removes it: space, tab, LF, CR, NUL.
@inline(__always)
func isSpaceByte(_ byte: UInt8) -> Bool {
  byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D || byte == 0
}

/// `range` of `bytes` without white space at either end.
@inline(__always)
func trimRange(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Range<Int> {
  var low = range.lowerBound
  var high = range.upperBound
  while low < high && isSpaceByte(bytes[low]) { low += 1 }
  while high > low && isSpaceByte(bytes[high - 1]) { high -= 1 }
  return low..<high
}

/// The first index of `byte` in `range`, or nil.
@inline(__always)
func firstIndex(of byte: UInt8, in bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Int? {
  guard !range.isEmpty, let base = bytes.baseAddress,
    let found = memchr(base + range.lowerBound, Int32(byte), range.count)
  else { return nil }
  return base.distance(to: found.assumingMemoryBound(to: UInt8.self))
}

/// Whether `range` of `bytes` equals the ASCII `literal`.
@inline(__always)
func bytesEqual(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, _ literal: StaticString) -> Bool {
  range.count == literal.utf8CodeUnitCount
    && (range.isEmpty || memcmp(bytes.baseAddress! + range.lowerBound, literal.utf8Start, range.count) == 0)
}

/// Whether `range` of `bytes` starts with the ASCII `literal`.
@inline(__always)
func bytesHavePrefix(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, _ literal: StaticString) -> Bool {
  range.count >= literal.utf8CodeUnitCount
    && memcmp(bytes.baseAddress! + range.lowerBound, literal.utf8Start, literal.utf8CodeUnitCount) == 0
}

/// `range` of `bytes` decoded as UTF-8 (invalid sequences become U+FFFD).
@inline(__always)
func decode(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> String {
  String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self)
}

/// Calls `body` with each "\n"-separated line of `bytes` (without the "\n"), empty ones included.
@inline(__always)
func forEachLine(_ bytes: UnsafeBufferPointer<UInt8>, _ body: (Range<Int>) -> Bool) {
  var start = 0
  while start < bytes.count {
    let end = firstIndex(of: 0x0A, in: bytes, start..<bytes.count) ?? bytes.count
    guard body(start..<end) else { return }
    start = end + 1
  }
}

/// Calls `body` with each run of bytes between separators (empty runs skipped).
@inline(__always)
func forEachField(
  _ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, separatedBy isSeparator: (UInt8) -> Bool,
  _ body: (Range<Int>) -> Bool
) {
  var index = range.lowerBound
  while index < range.upperBound {
    while index < range.upperBound && isSeparator(bytes[index]) { index += 1 }
    let start = index
    while index < range.upperBound && !isSeparator(bytes[index]) { index += 1 }
    if start < index, !body(start..<index) { return }
  }
}

// MARK: - KEY=value files

/// The settings of a `KEY=value` file, in file order, each key once (a later line wins).
///
/// An array searched linearly rather than a `Dictionary`: these files hold a dozen keys, and
/// the first `Dictionary<String, String>` of a process makes the Swift runtime scan every
/// protocol conformance record of the binary (~0.1 M instructions and ~1.4 MB of touched
/// pages at every login; bench/README.md).
package struct KeyValues: Sendable, Equatable {
  /// Keys and their values at the same index. Two `[String]`s rather than one array of
  /// (key, value) structs: `[String]` is instantiated anyway, a new element type would cost
  /// collect one more runtime metadata instantiation.
  private var keys: [String] = []
  private var values: [String] = []

  package init() {}

  /// The value of `key`, or nil when the file does not set it.
  package subscript(key: String) -> String? {
    get { keys.firstIndex(of: key).map { values[$0] } }
    set {
      if let index = keys.firstIndex(of: key) {
        if let newValue {
          values[index] = newValue
        } else {
          keys.remove(at: index)
          values.remove(at: index)
        }
      } else if let newValue {
        keys.append(key)
        values.append(newValue)
      }
    }
  }

  /// How many keys are set.
  package var count: Int { keys.count }
}

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
package func parseKeyValueFile(_ bytes: [UInt8]) -> KeyValues {
  var result = KeyValues()
  bytes.withUnsafeBufferPointer { bytes in
    forEachLine(bytes) { rawLine in
      let line = trimRange(bytes, rawLine)
      guard !line.isEmpty, bytes[line.lowerBound] != UInt8(ascii: "#"),
        let equals = firstIndex(of: UInt8(ascii: "="), in: bytes, line)
      else { return true }
      var key = trimRange(bytes, line.lowerBound..<equals)
      if bytesHavePrefix(bytes, key, "export ") { key = trimRange(bytes, (key.lowerBound + 7)..<key.upperBound) }
      guard !key.isEmpty else { return true }
      result[decode(bytes, key)] = unquote(bytes, trimRange(bytes, (equals + 1)..<line.upperBound))
      return true
    }
  }
  return result
}

package func parseKeyValueFile(_ text: String) -> KeyValues {
  parseKeyValueFile(Array(text.utf8))
}

private func unquote(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> String {
  guard let first = range.first.map({ bytes[$0] }), first == UInt8(ascii: "\"") || first == UInt8(ascii: "'") else {
    return decode(bytes, range)
  }
  var output: [UInt8] = []
  output.reserveCapacity(range.count)
  var escaped = false
  for index in (range.lowerBound + 1)..<range.upperBound {
    let byte = bytes[index]
    if escaped {
      switch byte {
      case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "$"), UInt8(ascii: "`"): break
      default: output.append(UInt8(ascii: "\\"))
      }
      output.append(byte)
      escaped = false
    } else if byte == UInt8(ascii: "\\") && first == UInt8(ascii: "\"") {
      escaped = true
    } else if byte == first {
      break
    } else {
      output.append(byte)
    }
  }
  return String(decoding: output, as: UTF8.self)
}

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
