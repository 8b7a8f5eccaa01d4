/// A syntax or encoding error in JSON text, with the place it was found.
///
/// `line` and `column` are 1-based; the column counts characters (Unicode scalars) from the
/// start of the line, so it matches what an editor shows. `offset` is the byte offset.
public struct JSONParseError: Error, Equatable, CustomStringConvertible {
  public var message: String
  public var offset: Int
  public var line: Int
  public var column: Int

  public init(message: String, offset: Int, line: Int, column: Int) {
    self.message = message
    self.offset = offset
    self.line = line
    self.column = column
  }

  public var description: String { "\(message) at line \(line), column \(column)" }

  /// The same error placed inside a larger text whose slice started at `line`:`column`.
  public func shifted(line baseLine: Int, column baseColumn: Int, offset baseOffset: Int) -> JSONParseError {
    JSONParseError(
      message: message, offset: offset + baseOffset, line: line + baseLine - 1,
      column: line == 1 ? column + baseColumn - 1 : column)
  }
}

/// A strict RFC 8259 parser with JavaScript `JSON.parse` semantics.
///
/// - Member order is kept. A duplicate key keeps its first position and takes the last value,
///   as JavaScript objects do.
/// - Numbers become the correctly rounded double of their literal (`1e400` is infinity, like JS).
/// - Strings are decoded from UTF-8 with `\u` escapes, surrogate pairs included. A lone surrogate
///   escape (`"\uD800"`) cannot live in a Swift string and becomes U+FFFD; JavaScript would keep
///   the code unit, so two different lone surrogates compare equal here (a documented limit).
/// - Invalid UTF-8, control characters in strings, a byte-order mark, trailing commas, comments
///   and any trailing non-whitespace are errors, each thrown with its line and column.
/// - The parser is iterative, so nesting cannot overflow the stack; values nested deeper than
///   `maxDepth` are rejected with an error, because deeper trees would make the recursive
///   consumers (equality, writing, matching, even deallocation) overflow instead.
public enum JSONParser {
  /// Nesting depth accepted by default: far beyond any device profile, far below the stack.
  public static let defaultMaxDepth = 1000

  /// Parses one JSON text (a value surrounded by optional whitespace).
  public static func parse(_ text: String, maxDepth: Int = defaultMaxDepth) throws(JSONParseError) -> JSON {
    try parse(Array(text.utf8), maxDepth: maxDepth)
  }

  /// Parses one JSON text from bytes.
  public static func parse(_ bytes: [UInt8], maxDepth: Int = defaultMaxDepth) throws(JSONParseError) -> JSON {
    try bytes.withUnsafeBufferPointer { (buffer) throws(JSONParseError) -> JSON in
      try parse(buffer, maxDepth: maxDepth)
    }
  }

  /// Parses one JSON text from a buffer of UTF-8 bytes.
  public static func parse(_ buffer: UnsafeBufferPointer<UInt8>, maxDepth: Int = defaultMaxDepth) throws(JSONParseError)
    -> JSON
  {
    var parser = Parser(buffer, maxDepth: maxDepth)
    return try parser.parseDocument()
  }
}

/// An open object while parsing: its members so far, the key whose value is being parsed,
/// and (for large objects) an index of its keys.
private struct ObjectFrame {
  var object = JSONObject()
  var key: String
  var index: [String: Int]?
}

private struct Parser {
  let bytes: UnsafeBufferPointer<UInt8>
  let maxDepth: Int
  var position = 0

  init(_ bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int) {
    self.bytes = bytes
    self.maxDepth = maxDepth
  }

  // MARK: Errors

  func error(_ message: String, at offset: Int) -> JSONParseError {
    var line = 1
    var lineStart = 0
    let end = min(offset, bytes.count)
    var index = 0
    while index < end {
      if bytes[index] == 0x0A {
        line += 1
        lineStart = index + 1
      }
      index += 1
    }
    var column = 1
    index = lineStart
    while index < end {
      if bytes[index] & 0xC0 != 0x80 { column += 1 }
      index += 1
    }
    return JSONParseError(message: message, offset: offset, line: line, column: column)
  }

  func unexpected(at offset: Int, expecting: String) -> JSONParseError {
    guard offset < bytes.count else { return error("unexpected end of input, expected \(expecting)", at: offset) }
    let byte = bytes[offset]
    let shown: String
    if byte >= 0x21 && byte < 0x7F {
      shown = "'\(Character(Unicode.Scalar(byte)))'"
    } else {
      shown = "byte 0x" + String(byte, radix: 16, uppercase: true)
    }
    return error("unexpected \(shown), expected \(expecting)", at: offset)
  }

  // MARK: Driver

  @inline(__always) mutating func skipWhitespace() {
    while position < bytes.count {
      switch bytes[position] {
      case 0x20, 0x09, 0x0A, 0x0D: position += 1
      default: return
      }
    }
  }

  mutating func parseDocument() throws(JSONParseError) -> JSON {
    skipWhitespace()
    let value = try parseValue()
    skipWhitespace()
    if position < bytes.count { throw unexpected(at: position, expecting: "end of input") }
    return value
  }

  /// Parses a value iteratively: containers push a frame, completed values pop into their parent.
  /// Open arrays and objects live on separate stacks and are appended to in place (a copy of
  /// a frame would make every append copy the container).
  mutating func parseValue() throws(JSONParseError) -> JSON {
    var isObject: [Bool] = []
    var arrays: [[JSON]] = []
    var objects: [ObjectFrame] = []
    while true {
      // Parse the start of a value.
      var value: JSON
      guard position < bytes.count else { throw unexpected(at: position, expecting: "a value") }
      switch bytes[position] {
      case UInt8(ascii: "{"):
        if isObject.count >= maxDepth { throw error("nesting deeper than \(maxDepth) levels", at: position) }
        position += 1
        skipWhitespace()
        if position < bytes.count && bytes[position] == UInt8(ascii: "}") {
          position += 1
          value = .object(JSONObject())
        } else {
          let key = try parseKeyAndColon()
          objects.append(ObjectFrame(key: key))
          isObject.append(true)
          skipWhitespace()
          continue
        }
      case UInt8(ascii: "["):
        if isObject.count >= maxDepth { throw error("nesting deeper than \(maxDepth) levels", at: position) }
        position += 1
        skipWhitespace()
        if position < bytes.count && bytes[position] == UInt8(ascii: "]") {
          position += 1
          value = .array([])
        } else {
          arrays.append([])
          isObject.append(false)
          continue
        }
      case UInt8(ascii: "\""): value = .string(try parseString())
      case UInt8(ascii: "t"): try literal("true"); value = .bool(true)
      case UInt8(ascii: "f"): try literal("false"); value = .bool(false)
      case UInt8(ascii: "n"): try literal("null"); value = .null
      case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): value = .number(try parseNumber())
      default: throw unexpected(at: position, expecting: "a value")
      }

      // Hand completed values to their containers, closing as many as end here.
      while true {
        guard let inObject = isObject.last else { return value }
        skipWhitespace()
        if inObject {
          Parser.insert(value, into: &objects[objects.count - 1])
          guard position < bytes.count else { throw unexpected(at: position, expecting: "',' or '}'") }
          if bytes[position] == UInt8(ascii: ",") {
            position += 1
            skipWhitespace()
            objects[objects.count - 1].key = try parseKeyAndColon()
            skipWhitespace()
          } else if bytes[position] == UInt8(ascii: "}") {
            position += 1
            isObject.removeLast()
            value = .object(objects.removeLast().object)
            continue
          } else {
            throw unexpected(at: position, expecting: "',' or '}'")
          }
        } else {
          arrays[arrays.count - 1].append(value)
          guard position < bytes.count else { throw unexpected(at: position, expecting: "',' or ']'") }
          if bytes[position] == UInt8(ascii: ",") {
            position += 1
            skipWhitespace()
          } else if bytes[position] == UInt8(ascii: "]") {
            position += 1
            isObject.removeLast()
            value = .array(arrays.removeLast())
            continue
          } else {
            throw unexpected(at: position, expecting: "',' or ']'")
          }
        }
        break
      }
    }
  }

  /// JavaScript's rule for a repeated key: the first position, the last value.
  /// Keys are compared by their UTF-8 bytes (code units), never by Unicode equivalence.
  static func insert(_ value: JSON, into frame: inout ObjectFrame) {
    let key = frame.key
    if frame.object.members.count < 16 {
      for position in frame.object.members.indices where sameCodeUnits(frame.object.members[position].key, key) {
        frame.object.members[position].value = value
        return
      }
      frame.object.members.append((key, value))
      return
    }
    if frame.index == nil {
      var built: [String: Int] = [:]
      for (position, member) in frame.object.members.enumerated() { built[utf8Key(member.key)] = position }
      frame.index = built
    }
    let hashed = utf8Key(key)
    if let position = frame.index![hashed] {
      frame.object.members[position].value = value
    } else {
      frame.index![hashed] = frame.object.members.count
      frame.object.members.append((key, value))
    }
  }

  /// A dictionary key that distinguishes canonically equivalent strings (Swift's `==` does not).
  static func utf8Key(_ key: String) -> String {
    key.utf8.map { String($0, radix: 16) }.joined(separator: ".")
  }

  mutating func parseKeyAndColon() throws(JSONParseError) -> String {
    guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") else {
      throw unexpected(at: position, expecting: "a string key")
    }
    let key = try parseString()
    skipWhitespace()
    guard position < bytes.count, bytes[position] == UInt8(ascii: ":") else {
      throw unexpected(at: position, expecting: "':'")
    }
    position += 1
    return key
  }

  mutating func literal(_ word: StaticString) throws(JSONParseError) {
    let count = word.utf8CodeUnitCount
    let start = word.utf8Start
    for index in 0..<count {
      guard position + index < bytes.count, bytes[position + index] == start[index] else {
        throw unexpected(at: position + index, expecting: "'\(word)'")
      }
    }
    position += count
  }

  // MARK: Numbers

  mutating func parseNumber() throws(JSONParseError) -> Double {
    let start = position
    var negative = false
    if bytes[position] == UInt8(ascii: "-") {
      negative = true
      position += 1
    }
    guard position < bytes.count, isDigit(bytes[position]) else { throw unexpected(at: position, expecting: "a digit") }
    var mantissa: UInt64 = 0
    var digits = 0
    if bytes[position] == UInt8(ascii: "0") {
      position += 1
    } else {
      while position < bytes.count, isDigit(bytes[position]) {
        if digits < 19 { mantissa = mantissa &* 10 &+ UInt64(bytes[position] &- 0x30) }
        digits += 1
        position += 1
      }
    }
    var simple = true
    var fractionDigits = 0
    if position < bytes.count, bytes[position] == UInt8(ascii: ".") {
      position += 1
      guard position < bytes.count, isDigit(bytes[position]) else {
        throw unexpected(at: position, expecting: "a digit after '.'")
      }
      while position < bytes.count, isDigit(bytes[position]) {
        if digits < 19 { mantissa = mantissa &* 10 &+ UInt64(bytes[position] &- 0x30) }
        digits += 1
        fractionDigits += 1
        position += 1
      }
    }
    if position < bytes.count, bytes[position] | 0x20 == UInt8(ascii: "e") {
      simple = false
      position += 1
      if position < bytes.count, bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-") {
        position += 1
      }
      guard position < bytes.count, isDigit(bytes[position]) else {
        throw unexpected(at: position, expecting: "a digit in the exponent")
      }
      while position < bytes.count, isDigit(bytes[position]) { position += 1 }
    }
    // Up to 15 significant digits and 22 decimals the value is an exact double divided by an
    // exact power of ten, which one IEEE division rounds correctly (Clinger's fast path);
    // everything else goes through the correctly rounded conversion of the standard library.
    if simple && digits <= 15 && fractionDigits <= 22 {
      let magnitude = fractionDigits == 0 ? Double(mantissa) : Double(mantissa) / Parser.powersOfTen[fractionDigits]
      return negative ? -magnitude : magnitude
    }
    let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
    guard let value = Double(text) else { throw error("number out of range", at: start) }
    return value
  }

  @inline(__always) func isDigit(_ byte: UInt8) -> Bool { byte &- 0x30 < 10 }

  /// 10^0 … 10^22, all exact doubles.
  static let powersOfTen: [Double] = (0...22).map { exponent in
    var value = 1.0
    for _ in 0..<exponent { value *= 10 }
    return value
  }

  // MARK: Strings

  /// Parses a string literal starting at its opening quote.
  mutating func parseString() throws(JSONParseError) -> String {
    position += 1
    let start = position
    // Fast path: printable ASCII up to the closing quote, no escapes.
    while position < bytes.count {
      let byte = bytes[position]
      if byte == UInt8(ascii: "\"") {
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
        position += 1
        return text
      }
      if byte == UInt8(ascii: "\\") || byte < 0x20 || byte >= 0x80 { break }
      position += 1
    }
    var out: [UInt8] = []
    out.reserveCapacity(position - start + 16)
    out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<position]))
    while true {
      guard position < bytes.count else { throw error("unterminated string", at: start - 1) }
      let byte = bytes[position]
      switch byte {
      case UInt8(ascii: "\""):
        position += 1
        return String(decoding: out, as: UTF8.self)
      case UInt8(ascii: "\\"):
        try parseEscape(into: &out)
      case 0..<0x20:
        throw error("control character 0x\(String(byte, radix: 16, uppercase: true)) in a string (escape it)", at: position)
      case 0x20..<0x80:
        out.append(byte)
        position += 1
      default:
        let length = try validateUTF8Sequence(at: position)
        out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[position..<position + length]))
        position += length
      }
    }
  }

  /// Length of the valid UTF-8 sequence at `offset` (RFC 3629: no overlongs, no surrogates).
  func validateUTF8Sequence(at offset: Int) throws(JSONParseError) -> Int {
    let lead = bytes[offset]
    guard let (length, low, high) = utf8LeadByte(lead) else {
      throw error("invalid UTF-8 byte 0x\(String(lead, radix: 16, uppercase: true))", at: offset)
    }
    for index in 1..<length {
      let at = offset + index
      guard at < bytes.count else { throw error("truncated UTF-8 sequence", at: offset) }
      let byte = bytes[at]
      let (min, max) = index == 1 ? (low, high) : (UInt8(0x80), UInt8(0xBF))
      guard byte >= min && byte <= max else { throw error("invalid UTF-8 sequence", at: offset) }
    }
    return length
  }

  mutating func parseEscape(into out: inout [UInt8]) throws(JSONParseError) {
    let escapeStart = position
    position += 1
    guard position < bytes.count else { throw error("unterminated escape", at: escapeStart) }
    let byte = bytes[position]
    position += 1
    switch byte {
    case UInt8(ascii: "\""): out.append(0x22)
    case UInt8(ascii: "\\"): out.append(0x5C)
    case UInt8(ascii: "/"): out.append(0x2F)
    case UInt8(ascii: "b"): out.append(0x08)
    case UInt8(ascii: "f"): out.append(0x0C)
    case UInt8(ascii: "n"): out.append(0x0A)
    case UInt8(ascii: "r"): out.append(0x0D)
    case UInt8(ascii: "t"): out.append(0x09)
    case UInt8(ascii: "u"):
      var scalar = UInt32(try hex4(escapeStart))
      if scalar & 0xFC00 == 0xD800 {
        // A high surrogate: a low one must follow as another \u escape to form a pair.
        if position + 1 < bytes.count, bytes[position] == UInt8(ascii: "\\"), bytes[position + 1] == UInt8(ascii: "u") {
          let save = position
          position += 2
          let low = UInt32(try hex4(save))
          if low & 0xFC00 == 0xDC00 {
            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
          } else {
            position = save
            scalar = 0xFFFD
          }
        } else {
          scalar = 0xFFFD
        }
      } else if scalar & 0xFC00 == 0xDC00 {
        scalar = 0xFFFD
      }
      appendUTF8(Unicode.Scalar(scalar)!, into: &out)
    default:
      throw error("invalid escape '\\\(Character(Unicode.Scalar(byte)))'", at: escapeStart)
    }
  }

  mutating func hex4(_ escapeStart: Int) throws(JSONParseError) -> UInt16 {
    var value: UInt16 = 0
    for _ in 0..<4 {
      guard position < bytes.count else { throw error("truncated \\u escape", at: escapeStart) }
      let byte = bytes[position]
      let digit: UInt8
      switch byte {
      case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - 0x30
      case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - 0x57
      case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - 0x37
      default: throw error("invalid \\u escape", at: escapeStart)
      }
      value = value << 4 | UInt16(digit)
      position += 1
    }
    return value
  }

  func appendUTF8(_ scalar: Unicode.Scalar, into out: inout [UInt8]) {
    for unit in UTF8.encode(scalar)! { out.append(unit) }
  }
}

/// Whether two strings hold the same code units (JavaScript `===` on strings). Swift's `==`
/// treats canonically equivalent strings ("é" and "e\u{301}") as equal; JavaScript does not.
/// Equal UTF-8 sequences are exactly equal UTF-16 sequences.
@inlinable
public func sameCodeUnits(_ a: String, _ b: String) -> Bool {
  let x = a.utf8
  let y = b.utf8
  guard x.count == y.count else { return false }
  if let result = x.withContiguousStorageIfAvailable({ p in
    y.withContiguousStorageIfAvailable { q in p.elementsEqual(q) }
  }), let equal = result {
    return equal
  }
  return x.elementsEqual(y)
}

/// What a UTF-8 lead byte allows (RFC 3629: no overlong forms, no surrogates, nothing above
/// U+10FFFF): the sequence length and the range of its second byte (later bytes are 80…BF).
/// Nil for a byte that cannot start a multi-byte sequence. Shared by `JSONParser` and
/// DeviceMatch's fast replay scanner so both accept exactly the same text.
@inlinable
public func utf8LeadByte(_ lead: UInt8) -> (length: Int, secondLow: UInt8, secondHigh: UInt8)? {
  switch lead {
  case 0xC2...0xDF: (2, 0x80, 0xBF)
  case 0xE0: (3, 0xA0, 0xBF)
  case 0xE1...0xEC, 0xEE...0xEF: (3, 0x80, 0xBF)
  case 0xED: (3, 0x80, 0x9F)
  case 0xF0: (4, 0x90, 0xBF)
  case 0xF1...0xF3: (4, 0x80, 0xBF)
  case 0xF4: (4, 0x80, 0x8F)
  default: nil
  }
}
