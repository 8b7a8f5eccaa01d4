import ProfileJSON

/// A value as the device-match script sees it: a parsed JSON value, JavaScript's `undefined`
/// (a missing member), or a lone UTF-16 surrogate (what indexing a string by position yields
/// in the middle of an emoji, which a Swift string cannot hold).
///
/// Only the JavaScript behaviour the script can reach is modelled: own properties of objects,
/// arrays (indices, `length`) and strings (indices, `length`). Members inherited from
/// `Object.prototype` and the other prototypes are a JavaScript artefact and deliberately absent.
public enum JSValue: Sendable, Equatable {
  case undefined
  case json(JSON)
  case loneSurrogate(UInt16)

  /// The value for explanations: `undefined` is `nil`, a lone surrogate shows as U+FFFD.
  public var jsonValue: JSON? {
    switch self {
    case .undefined: nil
    case .json(let value): value
    case .loneSurrogate: .string("\u{FFFD}")
    }
  }

  public static func == (lhs: JSValue, rhs: JSValue) -> Bool {
    switch (lhs, rhs) {
    case (.undefined, .undefined): true
    case (.loneSurrogate(let a), .loneSurrogate(let b)): a == b
    case (.json(let a), .json(let b)): a == b
    default: false
    }
  }
}

package enum JS {
  // MARK: Truthiness and equality

  /// JavaScript truthiness: `undefined`, `null`, `false`, ±0, NaN and "" are falsy.
  static func truthy(_ value: JSValue) -> Bool {
    switch value {
    case .undefined: return false
    case .loneSurrogate: return true
    case .json(let json):
      switch json {
      case .null: return false
      case .bool(let bool): return bool
      case .number(let number): return number != 0 && !number.isNaN
      case .string(let string): return !string.isEmpty
      case .array, .object: return true
      }
    }
  }

  /// JavaScript `===` between two separately parsed values: numbers as doubles, strings by code
  /// units, `null` only equals `null`, `undefined` only `undefined`, objects and arrays never.
  static func strictEquals(_ a: JSValue, _ b: JSValue) -> Bool {
    switch (a, b) {
    case (.undefined, .undefined): return true
    case (.loneSurrogate(let x), .loneSurrogate(let y)): return x == y
    case (.json(let x), .json(let y)):
      switch (x, y) {
      case (.null, .null): return true
      case (.bool(let p), .bool(let q)): return p == q
      case (.number(let p), .number(let q)): return p == q
      case (.string(let p), .string(let q)): return sameCodeUnits(p, q)
      default: return false
      }
    default: return false
    }
  }

  // MARK: Property access

  /// `value[key]` for an own property (see `JSValue`); `undefined` when there is none.
  /// Callers handle `null`/`undefined` receivers, which throw in JavaScript.
  static func get(_ value: JSValue, _ key: String) -> JSValue {
    switch value {
    case .undefined: return .undefined
    case .loneSurrogate:
      if key == "0" { return value }
      if key == "length" { return .json(.number(1)) }
      return .undefined
    case .json(let json):
      switch json {
      case .object(let object):
        for member in object.members where sameCodeUnits(member.key, key) { return .json(member.value) }
        return .undefined
      case .array(let elements):
        if let index = arrayIndex(key) { return index < elements.count ? .json(elements[index]) : .undefined }
        if key == "length" { return .json(.number(Double(elements.count))) }
        return .undefined
      case .string(let string):
        if let index = arrayIndex(key) { return codeUnit(of: string, at: index) }
        if key == "length" { return .json(.number(Double(string.utf16.count))) }
        return .undefined
      case .null, .bool, .number:
        return .undefined
      }
    }
  }

  /// `value[index]` for a non-negative integer index.
  static func get(_ value: JSValue, index: Int) -> JSValue {
    switch value {
    case .json(.array(let elements)): return index < elements.count ? .json(elements[index]) : .undefined
    case .json(.string(let string)): return codeUnit(of: string, at: index)
    case .loneSurrogate: return index == 0 ? value : .undefined
    case .json(.object): return get(value, String(index))
    default: return .undefined
    }
  }

  /// `Object.prototype.hasOwnProperty.call(value, key)` (never called on null/undefined).
  static func hasOwn(_ value: JSValue, _ key: String) -> Bool {
    switch value {
    case .json(.object(let object)): return object.members.contains { sameCodeUnits($0.key, key) }
    case .json(.array(let elements)):
      if let index = arrayIndex(key) { return index < elements.count }
      return key == "length"
    case .json(.string(let string)):
      if let index = arrayIndex(key) { return index < string.utf16.count }
      return key == "length"
    case .loneSurrogate: return key == "0" || key == "length"
    default: return false
    }
  }

  /// The one-code-unit string at `index` (`"abc"[1]`), `undefined` past the end.
  static func codeUnit(of string: String, at index: Int) -> JSValue {
    let units = string.utf16
    guard index < units.count else { return .undefined }
    let unit = units[units.index(units.startIndex, offsetBy: index)]
    if UTF16.isLeadSurrogate(unit) || UTF16.isTrailSurrogate(unit) { return .loneSurrogate(unit) }
    return .json(.string(String(Character(Unicode.Scalar(unit)!))))
  }

  /// The integer an array-index key denotes ("0", "17"; not "01", "-1", "1.0"), if any.
  /// Array indices stop at 2^32 − 2, as in JavaScript.
  static func arrayIndex(_ key: String) -> Int? {
    var value = 0
    var count = 0
    for byte in key.utf8 {
      guard byte >= 0x30 && byte <= 0x39 else { return nil }
      if count == 1 && value == 0 { return nil }
      value = value * 10 + Int(byte - 0x30)
      count += 1
      if value > 4_294_967_294 { return nil }
    }
    return count == 0 ? nil : value
  }

  /// `Object.keys(value)` in JavaScript property order: array-index keys ascending, then the
  /// other keys in insertion order. Strings and arrays list their indices; numbers and
  /// booleans have none. `nil` for `null`/`undefined`, where `Object.keys` throws.
  static func ownKeys(_ value: JSValue) -> [String]? {
    switch value {
    case .undefined, .json(.null): return nil
    case .loneSurrogate: return ["0"]
    case .json(.object(let object)): return orderedKeys(object)
    case .json(.array(let elements)): return elements.indices.map { String($0) }
    case .json(.string(let string)): return (0..<string.utf16.count).map { String($0) }
    case .json(.bool), .json(.number): return []
    }
  }

  static func orderedKeys(_ object: JSONObject) -> [String] {
    var indexed: [(Int, String)] = []
    var named: [String] = []
    named.reserveCapacity(object.members.count)
    for member in object.members {
      if let index = arrayIndex(member.key) { indexed.append((index, member.key)) } else { named.append(member.key) }
    }
    if indexed.isEmpty { return named }
    return indexed.sorted { $0.0 < $1.0 }.map(\.1) + named
  }

  // MARK: Conversions

  /// JavaScript `ToNumber` for the values the script can convert.
  static func toNumber(_ value: JSValue) -> Double {
    switch value {
    case .undefined: return .nan
    case .loneSurrogate: return .nan
    case .json(let json): return toNumber(json)
    }
  }

  static func toNumber(_ json: JSON) -> Double {
    switch json {
    case .null: return 0
    case .bool(let bool): return bool ? 1 : 0
    case .number(let number): return number
    case .string(let string): return stringToNumber(string)
    case .array: return stringToNumber(toString(json))
    case .object: return .nan
    }
  }

  /// JavaScript `ToString` (objects are "[object Object]"; arrays join with commas, `null`
  /// elements empty).
  static func toString(_ json: JSON) -> String {
    switch json {
    case .null: return "null"
    case .bool(let bool): return bool ? "true" : "false"
    case .number(let number): return numberToString(number)
    case .string(let string): return string
    case .array(let elements):
      return elements.map { element -> String in
        if case .null = element { return "" }
        return toString(element)
      }.joined(separator: ",")
    case .object: return "[object Object]"
    }
  }

  static func numberToString(_ number: Double) -> String {
    if number.isNaN { return "NaN" }
    if number.isInfinite { return number < 0 ? "-Infinity" : "Infinity" }
    return JSONWriter.formatNumber(number)
  }

  /// Whether `scalar` is JavaScript white space or a line terminator (what `trim`, `\s` and
  /// `Number(string)` skip).
  static func isWhitespace(_ scalar: Unicode.Scalar) -> Bool {
    switch scalar.value {
    case 0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x20, 0xA0, 0x1680, 0x2000...0x200A, 0x2028, 0x2029, 0x202F, 0x205F,
      0x3000, 0xFEFF:
      return true
    default: return false
    }
  }

  /// `String.prototype.trim`.
  static func trim(_ string: String) -> Substring {
    let scalars = string.unicodeScalars
    guard let first = scalars.firstIndex(where: { !isWhitespace($0) }) else { return "" }
    let last = scalars.lastIndex(where: { !isWhitespace($0) })!
    return Substring(scalars[first...last])
  }

  /// JavaScript `StringToNumber` (`Number("…")`): trimmed, empty is 0, decimal literals,
  /// `Infinity` with sign, and unsigned 0x/0o/0b integers; anything else is NaN.
  /// This reads a string *value* the way the script's arithmetic does; it is not JSON
  /// scanning (JSON number literals are read only by ProfileJSON's tokenizer, `JSONScanner`).
  static func stringToNumber(_ string: String) -> Double {
    let text = Array(trim(string).utf8)
    if text.isEmpty { return 0 }
    if text.count > 2, text[0] == UInt8(ascii: "0") {
      let radix: Int?
      switch text[1] | 0x20 {
      case UInt8(ascii: "x"): radix = 16
      case UInt8(ascii: "o"): radix = 8
      case UInt8(ascii: "b"): radix = 2
      default: radix = nil
      }
      if let radix { return radixInteger(text[2...], radix: radix) }
    }
    guard let (value, length) = decimalPrefix(text[...]), length == text.count else { return .nan }
    return value
  }

  /// An integer in `radix` rounded to the nearest double, NaN if any digit is invalid.
  static func radixInteger(_ digits: ArraySlice<UInt8>, radix: Int) -> Double {
    var exact: UInt64 = 0
    var overflow = false
    var approximate = 0.0
    for byte in digits {
      let digit: Int
      switch byte {
      case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = Int(byte) - 48
      case UInt8(ascii: "a")...UInt8(ascii: "z"): digit = Int(byte) - 87
      case UInt8(ascii: "A")...UInt8(ascii: "Z"): digit = Int(byte) - 55
      default: return .nan
      }
      guard digit < radix else { return .nan }
      if !overflow {
        let (times, o1) = exact.multipliedReportingOverflow(by: UInt64(radix))
        let (plus, o2) = times.addingReportingOverflow(UInt64(digit))
        if o1 || o2 {
          overflow = true
          approximate = Double(exact) * Double(radix) + Double(digit)
        } else {
          exact = plus
        }
      } else {
        approximate = approximate * Double(radix) + Double(digit)
      }
    }
    return overflow ? approximate : Double(exact)
  }

  /// The longest prefix of `text` that is a StrDecimalLiteral (sign, `Infinity`, digits with
  /// optional point and exponent), its value and byte length; `nil` if there is none.
  /// This is `parseFloat` after leading white space, and the whole of `Number()` for decimals.
  static func decimalPrefix(_ text: ArraySlice<UInt8>) -> (Double, Int)? {
    var index = text.startIndex
    var negative = false
    if index < text.endIndex, text[index] == UInt8(ascii: "+") || text[index] == UInt8(ascii: "-") {
      negative = text[index] == UInt8(ascii: "-")
      index += 1
    }
    let infinity = Array("Infinity".utf8)
    if text[index...].starts(with: infinity) {
      return (negative ? -.infinity : .infinity, index + infinity.count - text.startIndex)
    }
    let isDigit = { (b: UInt8) in b >= 0x30 && b <= 0x39 }
    var integer: [UInt8] = []
    while index < text.endIndex, isDigit(text[index]) {
      integer.append(text[index])
      index += 1
    }
    var fraction: [UInt8] = []
    if index < text.endIndex, text[index] == UInt8(ascii: ".") {
      var probe = index + 1
      while probe < text.endIndex, isDigit(text[probe]) {
        fraction.append(text[probe])
        probe += 1
      }
      if !integer.isEmpty || !fraction.isEmpty { index = probe }
    }
    guard !integer.isEmpty || !fraction.isEmpty else { return nil }
    var exponent: [UInt8] = []
    if index < text.endIndex, text[index] | 0x20 == UInt8(ascii: "e") {
      var probe = index + 1
      var sign: [UInt8] = []
      if probe < text.endIndex, text[probe] == UInt8(ascii: "+") || text[probe] == UInt8(ascii: "-") {
        sign = [text[probe]]
        probe += 1
      }
      var digits: [UInt8] = []
      while probe < text.endIndex, isDigit(text[probe]) {
        digits.append(text[probe])
        probe += 1
      }
      if !digits.isEmpty {
        exponent = sign + digits
        index = probe
      }
    }
    var literal = (negative ? "-" : "") + String(decoding: integer.isEmpty ? [UInt8(ascii: "0")] : integer, as: UTF8.self)
    if !fraction.isEmpty { literal += "." + String(decoding: fraction, as: UTF8.self) }
    if !exponent.isEmpty {
      // Clamp absurd exponents: the result is already 0 or infinity well before ±100000.
      var value = 0
      var expNegative = false
      for byte in exponent {
        if byte == UInt8(ascii: "-") {
          expNegative = true
        } else if byte != UInt8(ascii: "+") {
          value = min(value * 10 + Int(byte - 48), 100_000)
        }
      }
      literal += "e" + (expNegative ? "-" : "") + String(value)
    }
    return (Double(literal) ?? .nan, index - text.startIndex)
  }

  /// `parseFloat(string)`.
  static func parseFloat(_ string: String) -> Double {
    let scalars = string.unicodeScalars
    guard let first = scalars.firstIndex(where: { !isWhitespace($0) }) else { return .nan }
    let rest = Array(String(scalars[first...]).utf8)
    return decimalPrefix(rest[...])?.0 ?? .nan
  }

  /// JavaScript `Math.round`: the nearest integer, halves towards +∞.
  package static func round(_ value: Double) -> Double {
    guard value.isFinite else { return value }
    let floor = value.rounded(.down)
    let result = value - floor >= 0.5 ? floor + 1 : floor
    // Math.round keeps the sign of zero for -0.5 ≤ x < 0.
    return result == 0 && value.sign == .minus ? -0.0 : result
  }
}
