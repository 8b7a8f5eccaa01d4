#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

// The byte scanners of the text formats read from /proc, /sys and /etc, shared by the
// collectors (collect's path), the posture checks and `SystemSource`. Inlinable: collect's
// parsers loop over them line by line, and across a module boundary an out-of-line call per
// byte range would cost instructions at every login (bench/README.md).

// MARK: - byte helpers

/// White space as `trimmed` removes it: space, tab, LF, CR, NUL.
@inlinable @inline(__always)
package func isSpaceByte(_ byte: UInt8) -> Bool {
  byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D || byte == 0
}

/// `range` of `bytes` without white space at either end.
@inlinable @inline(__always)
package func trimRange(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Range<Int> {
  var low = range.lowerBound
  var high = range.upperBound
  while low < high && isSpaceByte(bytes[low]) { low += 1 }
  while high > low && isSpaceByte(bytes[high - 1]) { high -= 1 }
  return low..<high
}

/// The first index of `byte` in `range`, or nil.
@inlinable @inline(__always)
package func firstIndex(of byte: UInt8, in bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Int? {
  guard !range.isEmpty, let base = bytes.baseAddress,
    let found = memchr(base + range.lowerBound, Int32(byte), range.count)
  else { return nil }
  return base.distance(to: found.assumingMemoryBound(to: UInt8.self))
}

/// `range` of `bytes` decoded as UTF-8 (invalid sequences become U+FFFD).
@inlinable @inline(__always)
package func decode(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> String {
  String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self)
}

/// Whether `range` of `bytes` equals the ASCII `literal`.
@inlinable @inline(__always)
package func bytesEqual(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, _ literal: StaticString) -> Bool {
  range.count == literal.utf8CodeUnitCount
    && (range.isEmpty || memcmp(bytes.baseAddress! + range.lowerBound, literal.utf8Start, range.count) == 0)
}

/// Whether `range` of `bytes` starts with the ASCII `literal`.
@inlinable @inline(__always)
package func bytesHavePrefix(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, _ literal: StaticString) -> Bool {
  range.count >= literal.utf8CodeUnitCount
    && memcmp(bytes.baseAddress! + range.lowerBound, literal.utf8Start, literal.utf8CodeUnitCount) == 0
}

/// Calls `body` with each "\n"-separated line of `bytes` (without the "\n"), empty ones included.
@inlinable @inline(__always)
package func forEachLine(_ bytes: UnsafeBufferPointer<UInt8>, _ body: (Range<Int>) -> Bool) {
  var start = 0
  while start < bytes.count {
    let end = firstIndex(of: 0x0A, in: bytes, start..<bytes.count) ?? bytes.count
    guard body(start..<end) else { return }
    start = end + 1
  }
}

/// Calls `body` with each run of bytes between separators (empty runs skipped).
@inlinable @inline(__always)
package func forEachField(
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
