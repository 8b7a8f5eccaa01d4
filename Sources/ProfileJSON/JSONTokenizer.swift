// The one JSON tokenizer of the package. `JSONParser` builds trees with it, DeviceMatch's
// replay reader finds entry boundaries with it and its fast path matches stored profiles
// with it, so all three accept exactly the same text and read numbers and strings the same
// way. No other code reads JSON bytes (docs/development.md "Layout").
//
// Hand-written rather than a library because the matcher needs JavaScript's reading of the
// text (numbers as correctly rounded doubles, strings as exact code units, member order,
// lone surrogates) and the replay path needs to scan without allocating.
//
// The token API is SPI (`@_spi(JSONTokenizer) public`), not `package`: Swift inlines
// `@inlinable` code across modules only for public declarations, and the replay fast path
// needs these calls inlined (callgrind: +23 % instructions when they are calls). Only
// fr-profile's own targets import the SPI; it is not part of the public API (docs/api.md).

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// Why the tokenizer stopped: what was wrong and the byte offset (from the scanned text's
/// start) where it was found. The message is built only when asked for.
@_spi(JSONTokenizer) public struct JSONTokenError: Error, Sendable {
  public enum Kind: Sendable, Equatable {
    /// A byte (or the end of input when `byte` is nil) where something else was expected.
    case unexpected(byte: UInt8?, expecting: StaticStringBox)
    case unterminatedString
    case controlCharacter(UInt8)
    case invalidUTF8Byte(UInt8)
    case invalidUTF8Sequence
    case truncatedUTF8Sequence
    case unterminatedEscape
    case invalidEscape(UInt8)
    case truncatedUnicodeEscape
    case invalidUnicodeEscape
    case tooDeep(Int)
  }

  public var kind: Kind
  public var offset: Int

  @inlinable public init(_ kind: Kind, offset: Int) {
    self.kind = kind
    self.offset = offset
  }

  public var message: String {
    switch kind {
    case .unexpected(let byte, let expecting):
      guard let byte else { return "unexpected end of input, expected \(expecting.text)" }
      let shown =
        byte >= 0x21 && byte < 0x7F
        ? "'\(Character(Unicode.Scalar(byte)))'" : "byte 0x" + String(byte, radix: 16, uppercase: true)
      return "unexpected \(shown), expected \(expecting.text)"
    case .unterminatedString: return "unterminated string"
    case .controlCharacter(let byte):
      return "control character 0x\(String(byte, radix: 16, uppercase: true)) in a string (escape it)"
    case .invalidUTF8Byte(let byte): return "invalid UTF-8 byte 0x\(String(byte, radix: 16, uppercase: true))"
    case .invalidUTF8Sequence: return "invalid UTF-8 sequence"
    case .truncatedUTF8Sequence: return "truncated UTF-8 sequence"
    case .unterminatedEscape: return "unterminated escape"
    case .invalidEscape(let byte): return "invalid escape '\\\(Character(Unicode.Scalar(byte)))'"
    case .truncatedUnicodeEscape: return "truncated \\u escape"
    case .invalidUnicodeEscape: return "invalid \\u escape"
    case .tooDeep(let limit): return "nesting deeper than \(limit) levels"
    }
  }
}

/// A `StaticString` that can sit in an `Equatable`, `Sendable` error (what was expected).
@_spi(JSONTokenizer) public struct StaticStringBox: Sendable, Equatable {
  public let text: StaticString
  @inlinable public init(_ text: StaticString) { self.text = text }
  public static func == (a: Self, b: Self) -> Bool { a.text.description == b.text.description }
}

/// What the next value is, by its first byte.
@_spi(JSONTokenizer) public enum JSONValueStart: Sendable {
  case object, array, string, number, `true`, `false`, null
}

/// A scanned string literal: its raw bytes between the quotes (already validated: UTF-8,
/// no raw control characters, well-formed escapes) and whether it holds escapes.
@_spi(JSONTokenizer) public struct JSONStringToken {
  public var start: UnsafePointer<UInt8>
  public var count: Int
  public var hasEscapes: Bool

  @inlinable public init(start: UnsafePointer<UInt8>, count: Int, hasEscapes: Bool) {
    self.start = start
    self.count = count
    self.hasEscapes = hasEscapes
  }

  /// Whether the raw bytes equal `text`'s (only meaningful without escapes).
  @inlinable @inline(__always)
  public func rawEquals(_ text: StaticString) -> Bool {
    guard text.utf8CodeUnitCount == count else { return false }
    let other = text.utf8Start
    for index in 0..<count where start[index] != other[index] { return false }
    return true
  }

  /// The decoded string (escapes resolved; a lone surrogate escape becomes U+FFFD).
  public var decoded: String {
    let raw = UnsafeBufferPointer(start: start, count: count)
    guard hasEscapes else { return String(decoding: raw, as: UTF8.self) }
    var out: [UInt8] = []
    out.reserveCapacity(count)
    var index = 0
    while index < count {
      let byte = raw[index]
      guard byte == UInt8(ascii: "\\") else {
        out.append(byte)
        index += 1
        continue
      }
      let escape = raw[index + 1]
      index += 2
      switch escape {
      case UInt8(ascii: "b"): out.append(0x08)
      case UInt8(ascii: "f"): out.append(0x0C)
      case UInt8(ascii: "n"): out.append(0x0A)
      case UInt8(ascii: "r"): out.append(0x0D)
      case UInt8(ascii: "t"): out.append(0x09)
      case UInt8(ascii: "u"):
        var scalar = UInt32(JSONScanner.hexValue(raw, index))
        index += 4
        if scalar & 0xFC00 == 0xD800 {
          // A high surrogate pairs with a directly following low-surrogate escape.
          if index + 5 < count, raw[index] == UInt8(ascii: "\\"), raw[index + 1] == UInt8(ascii: "u") {
            let low = UInt32(JSONScanner.hexValue(raw, index + 2))
            if low & 0xFC00 == 0xDC00 {
              scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
              index += 6
            } else {
              scalar = 0xFFFD
            }
          } else {
            scalar = 0xFFFD
          }
        } else if scalar & 0xFC00 == 0xDC00 {
          scalar = 0xFFFD
        }
        out.append(contentsOf: UTF8.encode(Unicode.Scalar(scalar)!)!)
      default: out.append(escape)  // " \ /
      }
    }
    return String(decoding: out, as: UTF8.self)
  }
}

/// A cursor over JSON text that reads one token at a time and validates as it goes
/// (RFC 8259, strict: no comments, no trailing commas, UTF-8 per RFC 3629).
@_spi(JSONTokenizer) public struct JSONScanner {
  public let base: UnsafePointer<UInt8>
  public let end: UnsafePointer<UInt8>
  public var p: UnsafePointer<UInt8>

  /// A scanner over `buffer` (an empty buffer is an empty text).
  @inlinable public init(_ buffer: UnsafeBufferPointer<UInt8>) {
    // An empty buffer may have no address; any non-null pointer with no bytes will do.
    let start = buffer.baseAddress ?? UnsafePointer(bitPattern: 1)!
    base = start
    end = start + buffer.count
    p = start
  }

  /// Byte offset of the cursor from the start of the text.
  @inlinable @inline(__always) public var offset: Int { p - base }
  @inlinable @inline(__always) public var atEnd: Bool { p >= end }

  @inlinable @inline(__always) public func error(_ kind: JSONTokenError.Kind, at pointer: UnsafePointer<UInt8>) -> JSONTokenError {
    JSONTokenError(kind, offset: pointer - base)
  }

  @inlinable @inline(__always) public func unexpected(_ expecting: StaticString) -> JSONTokenError {
    error(.unexpected(byte: p < end ? p.pointee : nil, expecting: StaticStringBox(expecting)), at: p)
  }

  @inlinable @inline(__always) public mutating func skipWhitespace() {
    while p < end {
      switch p.pointee {
      case 0x20, 0x0A, 0x0D, 0x09: p += 1
      default: return
      }
    }
  }

  /// The kind of value starting at the cursor (after whitespace), without consuming it.
  @inlinable @inline(__always) public func valueStart() throws(JSONTokenError) -> JSONValueStart {
    guard p < end else { throw unexpected("a value") }
    switch p.pointee {
    case UInt8(ascii: "{"): return .object
    case UInt8(ascii: "["): return .array
    case UInt8(ascii: "\""): return .string
    case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number
    case UInt8(ascii: "t"): return .true
    case UInt8(ascii: "f"): return .false
    case UInt8(ascii: "n"): return .null
    default: throw unexpected("a value")
    }
  }

  /// Whether the whole text has been consumed, whitespace aside.
  @inlinable
  public mutating func expectEnd() throws(JSONTokenError) {
    skipWhitespace()
    if p < end { throw unexpected("end of input") }
  }

  // MARK: Containers

  /// At `{`: consumes it and the first key with its colon; nil (and the `}`) for `{}`.
  @inlinable @inline(__always)
  public mutating func openObject() throws(JSONTokenError) -> JSONStringToken? {
    p += 1
    skipWhitespace()
    if p < end && p.pointee == UInt8(ascii: "}") {
      p += 1
      return nil
    }
    return try keyAndColon()
  }

  /// After a member's value: the next key with its colon, or nil (consuming the `}`).
  @inlinable @inline(__always)
  public mutating func nextKey() throws(JSONTokenError) -> JSONStringToken? {
    skipWhitespace()
    guard p < end else { throw unexpected("',' or '}'") }
    switch p.pointee {
    case UInt8(ascii: ","):
      p += 1
      skipWhitespace()
      return try keyAndColon()
    case UInt8(ascii: "}"):
      p += 1
      return nil
    default: throw unexpected("',' or '}'")
    }
  }

  @inlinable @inline(__always)
  mutating func keyAndColon() throws(JSONTokenError) -> JSONStringToken {
    guard p < end, p.pointee == UInt8(ascii: "\"") else { throw unexpected("a string key") }
    let key = try string()
    skipWhitespace()
    guard p < end, p.pointee == UInt8(ascii: ":") else { throw unexpected("':'") }
    p += 1
    skipWhitespace()
    return key
  }

  /// At `[`: consumes it; false (and the `]`) for `[]`, else the cursor is at the first element.
  @inlinable @inline(__always)
  public mutating func openArray() -> Bool {
    p += 1
    skipWhitespace()
    if p < end && p.pointee == UInt8(ascii: "]") {
      p += 1
      return false
    }
    return true
  }

  /// After an element: true at the next element, false (consuming the `]`) at the end.
  @inlinable @inline(__always)
  public mutating func nextElement() throws(JSONTokenError) -> Bool {
    skipWhitespace()
    guard p < end else { throw unexpected("',' or ']'") }
    switch p.pointee {
    case UInt8(ascii: ","):
      p += 1
      skipWhitespace()
      return true
    case UInt8(ascii: "]"):
      p += 1
      return false
    default: throw unexpected("',' or ']'")
    }
  }

  // MARK: Scalars

  /// Consumes `true`, `false` or `null`.
  @inlinable @inline(__always)
  public mutating func literal(_ word: StaticString) throws(JSONTokenError) {
    let count = word.utf8CodeUnitCount
    let start = word.utf8Start
    for index in 0..<count {
      guard p + index < end, p[index] == start[index] else {
        p += index
        throw unexpected(word)
      }
    }
    p += count
  }

  /// Consumes a string literal (the cursor is at its opening quote) and validates it.
  @inlinable @inline(__always)
  public mutating func string() throws(JSONTokenError) -> JSONStringToken {
    let quote = p
    p += 1
    let start = p
    var escapes = false
    while true {
      skipPlainStringBytes()
      guard p < end else { break }
      let byte = p.pointee
      switch byte {
      case UInt8(ascii: "\""):
        let token = JSONStringToken(start: start, count: p - start, hasEscapes: escapes)
        p += 1
        return token
      case UInt8(ascii: "\\"):
        escapes = true
        try escape()
      case 0..<0x20: throw error(.controlCharacter(byte), at: p)
      case 0x20..<0x80: p += 1  // in the last 7 bytes, which are read one at a time
      default: try utf8Sequence()
      }
    }
    throw error(.unterminatedString, at: quote)
  }

  /// Moves the cursor to the first byte that is a quote, a backslash, a control or a
  /// non-ASCII byte, eight bytes at a time (SWAR), or to within 7 bytes of the end. In each
  /// word the lowest flagged byte is exact (a borrow only runs upward from a flagged byte),
  /// so the cursor lands on it.
  @inlinable @inline(__always)
  mutating func skipPlainStringBytes() {
    var cursor = p
    defer { p = cursor }
    while end - cursor >= 16 {
      let first = Self.specialBytes(cursor)
      let second = Self.specialBytes(cursor + 8)
      if first | second != 0 {
        cursor += first != 0 ? first.trailingZeroBitCount >> 3 : 8 + second.trailingZeroBitCount >> 3
        return
      }
      cursor += 16
    }
    if end - cursor >= 8 {
      let special = Self.specialBytes(cursor)
      cursor += special != 0 ? special.trailingZeroBitCount >> 3 : 8
    }
  }

  /// The high bit of each of the eight bytes at `bytes` that is a quote, a backslash, a
  /// control or a non-ASCII byte (exact for the lowest flagged byte; above it a borrow may
  /// flag more).
  @inlinable @inline(__always)
  static func specialBytes(_ bytes: UnsafePointer<UInt8>) -> UInt64 {
    let ones: UInt64 = 0x0101_0101_0101_0101
    let v = UInt64(littleEndian: UnsafeRawPointer(bytes).loadUnaligned(as: UInt64.self))
    let quotes = v ^ (ones &* 0x22)
    let backslashes = v ^ (ones &* 0x5C)
    return (((quotes &- ones) & ~quotes) | ((backslashes &- ones) & ~backslashes) | ((v &- ones &* 0x20) & ~v) | v)
      & (ones &* 0x80)
  }

  /// Whether `count` bytes at `a` and at `b` are equal: eight at a time, inline (for the
  /// short keys and values of a profile, cheaper than a call to `memcmp`); from eight bytes
  /// on, the last word overlaps the one before instead of a byte loop.
  @inlinable @inline(__always)
  public static func sameBytes(_ a: UnsafePointer<UInt8>, _ b: UnsafePointer<UInt8>, _ count: Int) -> Bool {
    @inline(__always) func word(_ pointer: UnsafePointer<UInt8>) -> UInt64 {
      UnsafeRawPointer(pointer).loadUnaligned(as: UInt64.self)
    }
    guard count >= 8 else {
      var index = 0
      while index < count {
        if a[index] != b[index] { return false }
        index += 1
      }
      return true
    }
    var index = 0
    while count - index > 8 {
      if word(a + index) != word(b + index) { return false }
      index += 8
    }
    return word(a + count - 8) == word(b + count - 8)
  }

  /// Validates one escape at the cursor (a backslash) and consumes it.
  @inlinable @inline(__always)
  mutating func escape() throws(JSONTokenError) {
    let start = p
    guard p + 1 < end else { throw error(.unterminatedEscape, at: start) }
    let byte = p[1]
    p += 2
    switch byte {
    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
      UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
      return
    case UInt8(ascii: "u"):
      for _ in 0..<4 {
        guard p < end else { throw error(.truncatedUnicodeEscape, at: start) }
        guard Hex.digitValue(p.pointee) != nil else { throw error(.invalidUnicodeEscape, at: start) }
        p += 1
      }
    default: throw error(.invalidEscape(byte), at: start)
    }
  }

  /// Validates one multi-byte UTF-8 sequence at the cursor and consumes it.
  @inlinable @inline(__always)
  mutating func utf8Sequence() throws(JSONTokenError) {
    let lead = p.pointee
    guard let (length, low, high) = utf8LeadByte(lead) else { throw error(.invalidUTF8Byte(lead), at: p) }
    for index in 1..<length {
      guard p + index < end else { throw error(.truncatedUTF8Sequence, at: p) }
      let byte = p[index]
      let (min, max) = index == 1 ? (low, high) : (UInt8(0x80), UInt8(0xBF))
      guard byte >= min && byte <= max else { throw error(.invalidUTF8Sequence, at: p) }
    }
    p += length
  }

  /// The value of four validated hex digits at `raw[index]`.
  static func hexValue(_ raw: UnsafeBufferPointer<UInt8>, _ index: Int) -> UInt16 {
    var value: UInt16 = 0
    for offset in 0..<4 { value = value << 4 | UInt16(Hex.digitValue(raw[index + offset])!) }
    return value
  }

  /// Consumes a number literal and returns the double JavaScript's `JSON.parse` gives it:
  /// the correctly rounded value (`1e400` is infinity, `1e-400` is 0, `-0` keeps its sign).
  @inlinable @inline(__always)
  public mutating func number() throws(JSONTokenError) -> Double {
    let start = p
    let negative = p < end && p.pointee == UInt8(ascii: "-")
    if negative { p += 1 }
    guard p < end, p.pointee &- 0x30 < 10 else { throw unexpected("a digit") }
    var mantissa: UInt64 = 0
    var digits = 0
    if p.pointee == UInt8(ascii: "0") {
      p += 1
    } else {
      while p < end, p.pointee &- 0x30 < 10 {
        if digits < 19 { mantissa = mantissa &* 10 &+ UInt64(p.pointee &- 0x30) }
        digits += 1
        p += 1
      }
    }
    var simple = true
    var fractionDigits = 0
    if p < end, p.pointee == UInt8(ascii: ".") {
      p += 1
      guard p < end, p.pointee &- 0x30 < 10 else { throw unexpected("a digit after '.'") }
      while p < end, p.pointee &- 0x30 < 10 {
        if digits < 19 { mantissa = mantissa &* 10 &+ UInt64(p.pointee &- 0x30) }
        digits += 1
        fractionDigits += 1
        p += 1
      }
    }
    if p < end, p.pointee | 0x20 == UInt8(ascii: "e") {
      simple = false
      p += 1
      if p < end, p.pointee == UInt8(ascii: "+") || p.pointee == UInt8(ascii: "-") { p += 1 }
      guard p < end, p.pointee &- 0x30 < 10 else { throw unexpected("a digit in the exponent") }
      while p < end, p.pointee &- 0x30 < 10 { p += 1 }
    }
    // Up to 15 significant digits and 22 decimals the value is an exact double divided by an
    // exact power of ten, which one IEEE division rounds correctly (Clinger's fast path);
    // everything else goes through the standard library's correctly rounded conversion.
    if simple && digits <= 15 && fractionDigits <= 22 {
      let magnitude = fractionDigits == 0 ? Double(mantissa) : Double(mantissa) / Self.powersOfTen[fractionDigits]
      return negative ? -magnitude : magnitude
    }
    let text = String(decoding: UnsafeBufferPointer(start: start, count: p - start), as: UTF8.self)
    // The grammar was checked above, and Swift's conversion saturates to ±infinity and 0.
    return Double(text) ?? .nan
  }

  /// 10^0 … 10^22, all exact doubles.
  @usableFromInline static let powersOfTen: [Double] = (0...22).map { exponent in
    var value = 1.0
    for _ in 0..<exponent { value *= 10 }
    return value
  }

  // MARK: Whole values

  /// Consumes and validates one value, nested at most `maxDepth` containers deep.
  @inlinable public mutating func skipValue(maxDepth: Int = 1000) throws(JSONTokenError) {
    try skipValue(depth: 0, maxDepth: maxDepth)
  }

  @usableFromInline mutating func skipValue(depth: Int, maxDepth: Int) throws(JSONTokenError) {
    switch try valueStart() {
    case .object:
      guard depth < maxDepth else { throw error(.tooDeep(maxDepth), at: p) }
      var key = try openObject()
      while key != nil {
        try skipValue(depth: depth + 1, maxDepth: maxDepth)
        key = try nextKey()
      }
    case .array:
      guard depth < maxDepth else { throw error(.tooDeep(maxDepth), at: p) }
      var more = openArray()
      while more {
        try skipValue(depth: depth + 1, maxDepth: maxDepth)
        more = try nextElement()
      }
    case .string: _ = try string()
    case .number: _ = try number()
    case .true: try literal("true")
    case .false: try literal("false")
    case .null: try literal("null")
    }
  }
}

// MARK: - Extents without validation (streaming)

/// Finds where one JSON value ends by its structure alone (brackets outside strings), over
/// text that arrives in pieces: feed it buffered bytes until it reports the end. The text
/// is validated later by `JSONScanner`; invalid text still gets an extent, which the
/// scanner then rejects. Used by the stored-profile reader to cut entries from a stream.
package struct JSONExtent {
  var depth = 0
  var inString = false
  var escaped = false
  var started = false
  /// Whether a scalar (number, literal) ends at whitespace or a delimiter.
  var inScalar = false

  /// An extent finder for a value starting at the next byte fed, or (`depth` 1) for the rest
  /// of a container whose opening bracket was already consumed.
  package init(openContainers: Int = 0) {
    depth = openContainers
    started = openContainers > 0
  }

  /// Scans `count` bytes at `bytes`, continuing where the last call stopped; returns how
  /// many of them belong to the value when it ends among them, nil when more is needed.
  package mutating func scan(_ bytes: UnsafePointer<UInt8>, count: Int) -> Int? {
    var index = 0
    while index < count {
      let byte = bytes[index]
      index += 1
      if inString {
        if escaped {
          escaped = false
        } else if byte == UInt8(ascii: "\\") {
          escaped = true
        } else if byte == UInt8(ascii: "\"") {
          inString = false
          if depth == 0 { return index }
        }
        continue
      }
      if inScalar {
        switch byte {
        case 0x20, 0x09, 0x0A, 0x0D, UInt8(ascii: ","), UInt8(ascii: "]"), UInt8(ascii: "}"):
          return index - 1
        default: continue
        }
      }
      switch byte {
      case UInt8(ascii: "\""):
        inString = true
        started = true
      case UInt8(ascii: "{"), UInt8(ascii: "["):
        depth += 1
        started = true
      case UInt8(ascii: "}"), UInt8(ascii: "]"):
        depth -= 1
        if depth <= 0 { return index }
      case 0x20, 0x09, 0x0A, 0x0D: continue
      default:
        if depth == 0 && !started {
          started = true
          inScalar = true
        }
      }
    }
    return nil
  }

  /// At the end of the text: whether the value ended with it (a scalar does; an open
  /// container or string does not).
  package var completeAtEnd: Bool { inScalar }
}

// MARK: - Framing (streaming)

/// The JSON-syntax questions a streaming reader asks about the text *between* values — how
/// many blank bytes come next, which punctuation or value starts at a byte, whether a key is
/// a given name — so that a reader cutting a file into values (the stored-profile reader)
/// decides no JSON syntax itself. Stateless over windows: the reader hands in the bytes it
/// has buffered and refills when an answer reaches the window's end (`blankCount` equal to
/// the window means "more may follow"). Value lengths come from `JSONExtent`.
package enum JSONFraming {
  /// What starts at a byte between values.
  package enum Token: Equatable, Sendable {
    case comma, colon, arrayEnd, objectEnd
    /// `[` or `{`: a value that is a container.
    case arrayStart, objectStart
    /// `"`: a string (a value, or a key).
    case string
    /// Anything else: a scalar value's first byte, or a byte the parser will reject.
    case other
  }

  /// Whether `byte` is JSON whitespace (RFC 8259: space, tab, line feed, carriage return).
  @inline(__always)
  package static func isBlank(_ byte: UInt8) -> Bool {
    byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
  }

  /// The number of JSON whitespace bytes at the start of `count` bytes at `bytes`.
  @inline(__always)
  package static func blankCount(_ bytes: UnsafePointer<UInt8>, count: Int) -> Int {
    var index = 0
    while index < count && isBlank(bytes[index]) { index += 1 }
    return index
  }

  /// The token that starts at `byte` (not whitespace).
  @inline(__always)
  package static func token(_ byte: UInt8) -> Token {
    switch byte {
    case UInt8(ascii: ","): .comma
    case UInt8(ascii: ":"): .colon
    case UInt8(ascii: "]"): .arrayEnd
    case UInt8(ascii: "}"): .objectEnd
    case UInt8(ascii: "["): .arrayStart
    case UInt8(ascii: "{"): .objectStart
    case UInt8(ascii: "\""): .string
    default: .other
    }
  }

  /// Whether the string literal of `count` bytes at `bytes` (quotes included, as
  /// `JSONExtent` measures it) is exactly `"name"` without escapes. A key spelled with
  /// escapes is a different key here; AM writes its listing keys plainly.
  package static func isKey(_ bytes: UnsafePointer<UInt8>, count: Int, _ name: StaticString) -> Bool {
    let length = name.utf8CodeUnitCount
    guard count == length + 2, bytes[0] == UInt8(ascii: "\""), bytes[count - 1] == UInt8(ascii: "\"") else {
      return false
    }
    return memcmp(bytes + 1, name.utf8Start, length) == 0
  }
}

// MARK: - Positions

/// Line and column of byte offsets, as editors show them: 1-based lines split at `\n`,
/// columns counting characters (UTF-8 lead bytes) from the line's start.
package enum TextPosition {
  /// The line and column of `offset` in `bytes`.
  package static func locate(_ offset: Int, in bytes: UnsafeBufferPointer<UInt8>) -> (line: Int, column: Int) {
    var line = 1
    var column = 1
    guard let base = bytes.baseAddress else { return (1, 1) }
    advance(line: &line, column: &column, over: base, count: min(offset, bytes.count))
    return (line, column)
  }

  /// Moves `line`:`column` over `count` bytes at `start`.
  package static func advance(line: inout Int, column: inout Int, over start: UnsafePointer<UInt8>, count: Int) {
    let stop = start + count
    var cursor = start
    var lineStart: UnsafePointer<UInt8>?
    var newlines = 0
    while cursor < stop, let found = memoryChr(cursor, 0x0A, stop - cursor) {
      newlines += 1
      cursor = found + 1
      lineStart = cursor
    }
    if let lineStart {
      line += newlines
      column = 1 + characters(lineStart, stop)
    } else {
      column += characters(start, stop)
    }
  }

  /// The number of newlines in `count` bytes at `start`.
  package static func newlines(in start: UnsafePointer<UInt8>, count: Int) -> Int {
    let stop = start + count
    var cursor = start
    var found = 0
    while cursor < stop, let next = memoryChr(cursor, 0x0A, stop - cursor) {
      found += 1
      cursor = next + 1
    }
    return found
  }

  /// The first `byte` in `count` bytes at `start` (the C library's `memchr`).
  @inline(__always)
  package static func memoryChr(_ start: UnsafePointer<UInt8>, _ byte: UInt8, _ count: Int) -> UnsafePointer<UInt8>? {
    guard let found = memchr(start, Int32(byte), count) else { return nil }
    return UnsafePointer(found.assumingMemoryBound(to: UInt8.self))
  }

  /// The number of characters (UTF-8 lead bytes) in `from..<to`, eight bytes at a time.
  package static func characters(_ from: UnsafePointer<UInt8>, _ to: UnsafePointer<UInt8>) -> Int {
    var cursor = from
    var continuation = 0
    let high: UInt64 = 0x8080_8080_8080_8080
    while to - cursor >= 8 {
      let v = UnsafeRawPointer(cursor).loadUnaligned(as: UInt64.self)
      // A continuation byte is 10xxxxxx: high bit set, next bit clear.
      continuation += (v & high & ~(v << 1)).nonzeroBitCount
      cursor += 8
    }
    while cursor < to {
      if cursor.pointee & 0xC0 == 0x80 { continuation += 1 }
      cursor += 1
    }
    return (to - from) - continuation
  }
}

/// What a UTF-8 lead byte allows (RFC 3629: no overlong forms, no surrogates, nothing above
/// U+10FFFF): the sequence length and the range of its second byte (later bytes are 80…BF).
/// Nil for a byte that cannot start a multi-byte sequence.
@inlinable @inline(__always)
func utf8LeadByte(_ lead: UInt8) -> (length: Int, secondLow: UInt8, secondHigh: UInt8)? {
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
