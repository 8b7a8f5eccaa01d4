/// Serialises `JSON` the way JavaScript's `JSON.stringify` does: members in order, numbers in
/// JavaScript's shortest form (`1`, `0.5`, `1e+21`, `1e-7`), non-finite numbers as `null`,
/// non-ASCII text as UTF-8. Hand-written rather than `JSONEncoder` because it must keep member
/// order and JavaScript number syntax, and because `collect` must stay off full Foundation.
public enum JSONWriter {
  /// Compact text, as `JSON.stringify(value)`.
  public static func compact(_ value: JSON) -> String {
    var out: [UInt8] = []
    out.reserveCapacity(1024)
    write(value, into: &out, indent: nil, level: 0)
    return String(decoding: out, as: UTF8.self)
  }

  /// Indented text, as `JSON.stringify(value, null, 2)`.
  public static func pretty(_ value: JSON) -> String {
    var out: [UInt8] = []
    out.reserveCapacity(2048)
    write(value, into: &out, indent: 2, level: 0)
    return String(decoding: out, as: UTF8.self)
  }

  /// Appends the serialised value to `out`; `indent` nil means compact.
  public static func write(_ value: JSON, into out: inout [UInt8], indent: Int?, level: Int) {
    switch value {
    case .null: out.append(contentsOf: "null".utf8)
    case .bool(let bool): out.append(contentsOf: (bool ? "true" : "false").utf8)
    case .number(let number): out.append(contentsOf: formatNumber(number).utf8)
    case .string(let string): writeString(string, into: &out)
    case .array(let elements):
      if elements.isEmpty {
        out.append(contentsOf: "[]".utf8)
        return
      }
      out.append(UInt8(ascii: "["))
      for (index, element) in elements.enumerated() {
        if index > 0 { out.append(UInt8(ascii: ",")) }
        newline(into: &out, indent: indent, level: level + 1)
        write(element, into: &out, indent: indent, level: level + 1)
      }
      newline(into: &out, indent: indent, level: level)
      out.append(UInt8(ascii: "]"))
    case .object(let object):
      if object.isEmpty {
        out.append(contentsOf: "{}".utf8)
        return
      }
      out.append(UInt8(ascii: "{"))
      for (index, member) in object.members.enumerated() {
        if index > 0 { out.append(UInt8(ascii: ",")) }
        newline(into: &out, indent: indent, level: level + 1)
        writeString(member.key, into: &out)
        out.append(UInt8(ascii: ":"))
        if indent != nil { out.append(UInt8(ascii: " ")) }
        write(member.value, into: &out, indent: indent, level: level + 1)
      }
      newline(into: &out, indent: indent, level: level)
      out.append(UInt8(ascii: "}"))
    }
  }

  private static func newline(into out: inout [UInt8], indent: Int?, level: Int) {
    guard let indent else { return }
    out.append(UInt8(ascii: "\n"))
    out.append(contentsOf: repeatElement(UInt8(ascii: " "), count: indent * level))
  }

  /// Writes a JSON string literal with `JSON.stringify`'s escapes.
  public static func writeString(_ string: String, into out: inout [UInt8]) {
    out.append(UInt8(ascii: "\""))
    var string = string
    string.withUTF8 { bytes in
      // Runs of bytes that need no escape are copied whole; only `"`, `\` and controls stop.
      var run = 0
      for index in bytes.indices {
        let byte = bytes[index]
        guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
        if run < index { out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[run..<index])) }
        run = index + 1
        out.append(UInt8(ascii: "\\"))
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"): out.append(byte)
        case 0x08: out.append(UInt8(ascii: "b"))
        case 0x0C: out.append(UInt8(ascii: "f"))
        case 0x0A: out.append(UInt8(ascii: "n"))
        case 0x0D: out.append(UInt8(ascii: "r"))
        case 0x09: out.append(UInt8(ascii: "t"))
        default:
          out.append(contentsOf: "u00".utf8)
          Hex.append(CollectionOfOne(byte), to: &out)
        }
      }
      if run < bytes.count { out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[run...])) }
    }
    out.append(UInt8(ascii: "\""))
  }

  /// JavaScript's `Number.prototype.toString()` for a double (ECMA-262 Number::toString).
  ///
  /// Swift's `description` already yields the shortest digits that round-trip, which is what
  /// JavaScript uses too; only the layout (where the point and exponent go) differs.
  public static func formatNumber(_ value: Double) -> String {
    guard value.isFinite else { return "null" }
    if value == 0 { return "0" }
    if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
    let (negative, digits, exponent) = decompose(value)
    // value = 0.d1d2…dk × 10^exponent, with k = digits.count (ECMA-262's n is `exponent`).
    let k = digits.count
    let n = exponent
    var text = negative ? "-" : ""
    if k <= n && n <= 21 {
      text += digits + String(repeating: "0", count: n - k)
    } else if 0 < n && n <= 21 {
      let split = digits.index(digits.startIndex, offsetBy: n)
      text += digits[..<split] + "." + digits[split...]
    } else if -6 < n && n <= 0 {
      text += "0." + String(repeating: "0", count: -n) + digits
    } else {
      let e = n - 1
      let sign = e < 0 ? "-" : "+"
      let first = digits.prefix(1)
      let rest = digits.dropFirst()
      text += first + (rest.isEmpty ? "" : "." + rest) + "e" + sign + String(abs(e))
    }
    return text
  }

  /// Splits Swift's shortest round-trip text into sign, significant digits and the decimal
  /// exponent `n` such that value = 0.digits × 10^n.
  private static func decompose(_ value: Double) -> (Bool, String, Int) {
    var text = abs(value).description  // e.g. "52.52", "1e-07", "1.5e+22", "123456789012.0"
    var exponent = 0
    if let e = text.firstIndex(where: { $0 == "e" || $0 == "E" }) {
      exponent = Int(text[text.index(after: e)...]) ?? 0
      text = String(text[..<e])
    }
    var integerPart = Substring(text)
    var fraction = Substring("")
    if let dot = text.firstIndex(of: ".") {
      integerPart = text[..<dot]
      fraction = text[text.index(after: dot)...]
    }
    // String + String: `String + Substring` goes through the unspecialised generic
    // `append(contentsOf:)`, whose first use costs ~180 k instructions of runtime type lookups.
    var digits = String(integerPart) + String(fraction)
    var n = integerPart.count + exponent
    // Strip leading zeros (each shifts the point) and trailing zeros (insignificant).
    while digits.first == "0" && digits.count > 1 {
      digits.removeFirst()
      n -= 1
    }
    while digits.last == "0" && digits.count > 1 { digits.removeLast() }
    return (value < 0, digits, n)
  }
}
