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
  var scanner: JSONScanner
  let buffer: UnsafeBufferPointer<UInt8>
  let maxDepth: Int

  init(_ bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int) {
    scanner = JSONScanner(bytes)
    buffer = bytes
    self.maxDepth = maxDepth
  }

  /// The tokenizer's error placed at its line and column.
  func placed(_ error: JSONTokenError) -> JSONParseError {
    let (line, column) = TextPosition.locate(error.offset, in: buffer)
    return JSONParseError(message: error.message, offset: error.offset, line: line, column: column)
  }

  mutating func parseDocument() throws(JSONParseError) -> JSON {
    do {
      scanner.skipWhitespace()
      let value = try parseValue()
      try scanner.expectEnd()
      return value
    } catch {
      throw placed(error)
    }
  }

  /// Builds a value iteratively: containers push a frame, completed values pop into their
  /// parent, so nesting cannot overflow the stack. Open arrays and objects live on separate
  /// stacks and are appended to in place (a copy of a frame would copy the container).
  mutating func parseValue() throws(JSONTokenError) -> JSON {
    var isObject: [Bool] = []
    var arrays: [[JSON]] = []
    var objects: [ObjectFrame] = []
    while true {
      // The start of a value.
      var value: JSON
      switch try scanner.valueStart() {
      case .object:
        if isObject.count >= maxDepth { throw scanner.error(.tooDeep(maxDepth), at: scanner.p) }
        guard let key = try scanner.openObject() else {
          value = .object(JSONObject())
          break
        }
        objects.append(ObjectFrame(key: key.decoded))
        isObject.append(true)
        continue
      case .array:
        if isObject.count >= maxDepth { throw scanner.error(.tooDeep(maxDepth), at: scanner.p) }
        guard scanner.openArray() else {
          value = .array([])
          break
        }
        arrays.append([])
        isObject.append(false)
        continue
      case .string: value = .string(try scanner.string().decoded)
      case .number: value = .number(try scanner.number())
      case .true:
        try scanner.literal("true")
        value = .bool(true)
      case .false:
        try scanner.literal("false")
        value = .bool(false)
      case .null:
        try scanner.literal("null")
        value = .null
      }

      // Hand completed values to their containers, closing as many as end here.
      while let inObject = isObject.last {
        if inObject {
          Parser.insert(value, into: &objects[objects.count - 1])
          if let key = try scanner.nextKey() {
            objects[objects.count - 1].key = key.decoded
            break
          }
          isObject.removeLast()
          value = .object(objects.removeLast().object)
        } else {
          arrays[arrays.count - 1].append(value)
          if try scanner.nextElement() { break }
          isObject.removeLast()
          value = .array(arrays.removeLast())
        }
      }
      if isObject.isEmpty { return value }
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
}

/// Whether two strings hold the same code units (JavaScript `===` on strings). Swift's `==`
/// treats canonically equivalent strings ("é" and "e\u{301}") as equal; JavaScript does not.
/// Equal UTF-8 sequences are exactly equal UTF-16 sequences.
@inline(__always)
package func sameCodeUnits(_ a: String, _ b: String) -> Bool {
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
