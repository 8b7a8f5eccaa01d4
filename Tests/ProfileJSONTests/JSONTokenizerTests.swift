@_spi(JSONTokenizer) import ProfileJSON
import Testing

/// The shared tokenizer: tokens, extents over split input, positions, and JavaScript equality.
@Suite(.timeLimit(.minutes(10))) struct JSONTokenizerTests {
  func scan<T>(_ text: String, _ body: (inout JSONScanner) throws -> T) rethrows -> T {
    let bytes = Array(text.utf8)
    return try bytes.withUnsafeBufferPointer { buffer in
      var scanner = JSONScanner(buffer)
      return try body(&scanner)
    }
  }

  @Test("strings: raw bytes without escapes, decoded with them, lone surrogates as U+FFFD")
  func strings() throws {
    try scan(#""plain text" "#) { scanner in
      let token = try scanner.string()
      #expect(!token.hasEscapes)
      #expect(token.rawEquals("plain text"))
      #expect(scanner.offset == 12)
    }
    try scan(#""a\"b\u00e9\ud83d\ude00\ud800x""#) { scanner in
      let token = try scanner.string()
      #expect(token.hasEscapes)
      #expect(token.decoded == "a\"bé😀\u{FFFD}x")
    }
  }

  /// A byte-at-a-time reading of one string literal (for the specials used below): where it
  /// ends and whether it has escapes, or the offset of the first error.
  static func naiveString(_ bytes: [UInt8]) -> (end: Int, count: Int, escapes: Bool)? {
    var index = 1
    var escapes = false
    while index < bytes.count {
      let byte = bytes[index]
      switch byte {
      case UInt8(ascii: "\""): return (index + 1, index - 1, escapes)
      case UInt8(ascii: "\\"):
        escapes = true
        guard index + 1 < bytes.count else { return nil }
        switch bytes[index + 1] {
        case UInt8(ascii: "n"), UInt8(ascii: "\""): index += 2
        case UInt8(ascii: "u") where index + 5 < bytes.count: index += 6
        default: return nil
        }
      case 0..<0x20: return nil
      case 0x20..<0x80: index += 1
      case 0xC3 where index + 1 < bytes.count && bytes[index + 1] & 0xC0 == 0x80: index += 2
      default: return nil
      }
    }
    return nil
  }

  @Test("strings: a quote, escape, control, non-ASCII or invalid byte is found at every position mod 8")
  func stringSpecialsAtEveryPosition() {
    let specials: [[UInt8]] = [
      [], Array(#"\n"#.utf8), Array(#"\u00e9"#.utf8), Array(#"\""#.utf8), Array("é".utf8), [0x01], [0x1F], [0xFF],
      Array(#"\q"#.utf8), [0x7F],
    ]
    for prefix in 0..<20 {
      for special in specials {
        for suffix in [0, 1, 7, 8, 9] {
          for closed in [true, false] {
            var text: [UInt8] = [UInt8(ascii: "\"")]
            text += (0..<prefix).map { UInt8(ascii: "a") + UInt8($0 % 26) }
            text += special
            text += Array(repeating: UInt8(ascii: "z"), count: suffix)
            if closed { text += Array(#"" , "tail of sixteen""#.utf8) }
            let expected = Self.naiveString(text)
            let found: (end: Int, count: Int, escapes: Bool)? = text.withUnsafeBufferPointer { buffer in
              var scanner = JSONScanner(buffer)
              guard let token = try? scanner.string() else { return nil }
              return (scanner.offset, token.count, token.hasEscapes)
            }
            #expect(
              found?.end == expected?.end && found?.count == expected?.count && found?.escapes == expected?.escapes,
              "prefix \(prefix), special \(special), suffix \(suffix), closed \(closed)")
          }
        }
      }
    }
  }

  @Test("sameBytes: equal texts of every length up to 40, and a difference at every position")
  func sameBytes() {
    for count in 0...40 {
      let text = (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
      let copy = text
      text.withUnsafeBufferPointer { a in
        copy.withUnsafeBufferPointer { b in
          #expect(
            JSONScanner.sameBytes(a.baseAddress ?? UnsafePointer(bitPattern: 8)!, b.baseAddress ?? UnsafePointer(bitPattern: 8)!, count))
        }
      }
      for position in 0..<count {
        var changed = text
        changed[position] ^= 0x20
        text.withUnsafeBufferPointer { a in
          changed.withUnsafeBufferPointer { b in
            #expect(!JSONScanner.sameBytes(a.baseAddress!, b.baseAddress!, count), "length \(count), position \(position)")
          }
        }
      }
    }
  }

  @Test(
    "numbers are read as JavaScript reads them",
    arguments: [
      ("0", 0.0), ("-0", -0.0), ("1e400", .infinity), ("-1e400", -.infinity), ("1e-400", 0), ("0.1", 0.1),
      ("9007199254740993", 9_007_199_254_740_992), ("123456789012345678901234567890", 1.2345678901234568e29),
      ("52.520008", 52.520008), ("5e-324", .leastNonzeroMagnitude),
    ])
  func numbers(text: String, expected: Double) throws {
    let value = try scan(text) { try $0.number() }
    #expect(value == expected && value.sign == expected.sign, "\(text)")
  }

  @Test(
    "errors name what was expected, at the right offset",
    arguments: [
      ("[1,]", "unexpected ']', expected a value", 3), ("{\"a\" 1}", "unexpected '1', expected ':'", 5),
      ("\"a\tb\"", "control character 0x9 in a string (escape it)", 2), ("\"\\x\"", "invalid escape '\\x'", 1),
      ("01", "unexpected '1', expected end of input", 1), ("-", "unexpected end of input, expected a digit", 1),
      ("tru", "unexpected end of input, expected true", 3),
    ])
  func errors(text: String, message: String, offset: Int) {
    do {
      try scan(text) { scanner in
        scanner.skipWhitespace()
        try scanner.skipValue()
        try scanner.expectEnd()
      }
      Issue.record("\(text) was accepted")
    } catch let error as JSONTokenError {
      #expect(error.message == message, "\(text)")
      #expect(error.offset == offset, "\(text)")
    } catch {
      Issue.record("\(error)")
    }
  }

  @Test("skipValue honours its depth limit")
  func depthLimit() {
    let deep = String(repeating: "[", count: 11) + String(repeating: "]", count: 11)
    #expect(throws: JSONTokenError.self) { try scan(deep) { try $0.skipValue(maxDepth: 10) } }
    #expect(throws: Never.self) { try scan(deep) { try $0.skipValue(maxDepth: 11) } }
  }

  @Test("JSONExtent finds a value's end however the text is split into pieces")
  func extentAcrossPieces() {
    let text = #"{"a": "x}\"]", "b": [1, {"c": "{"}]} trailing"#
    let bytes = Array(text.utf8)
    let expected = text.utf8.count - " trailing".utf8.count
    for piece in 1...bytes.count {
      var finder = JSONExtent()
      var found: Int?
      var start = 0
      bytes.withUnsafeBufferPointer { buffer in
        while start < buffer.count, found == nil {
          let count = min(piece, buffer.count - start)
          if let end = finder.scan(buffer.baseAddress! + start, count: count) { found = start + end }
          start += count
        }
      }
      #expect(found == expected, "pieces of \(piece)")
    }
    var scalar = JSONExtent()
    #expect(Array("123 ".utf8).withUnsafeBufferPointer { scalar.scan($0.baseAddress!, count: 4) } == 3)
  }

  @Test("framing: blank runs, the token at a byte, and plain key names, as the stored-profile reader asks")
  func framing() {
    let text = Array(" \t\r\n ,x".utf8)
    text.withUnsafeBufferPointer { bytes in
      #expect(JSONFraming.blankCount(bytes.baseAddress!, count: bytes.count) == 5)
      #expect(JSONFraming.blankCount(bytes.baseAddress!, count: 3) == 3)
      #expect(JSONFraming.blankCount(bytes.baseAddress! + 5, count: 2) == 0)
    }
    // Form feed and vertical tab are JavaScript white space but not JSON whitespace.
    #expect(!JSONFraming.isBlank(0x0C) && !JSONFraming.isBlank(0x0B) && JSONFraming.isBlank(0x0D))
    let expected: [(Character, JSONFraming.Token)] = [
      (",", .comma), (":", .colon), ("]", .arrayEnd), ("}", .objectEnd), ("[", .arrayStart), ("{", .objectStart),
      ("\"", .string), ("1", .other), ("t", .other), ("-", .other),
    ]
    for (character, token) in expected { #expect(JSONFraming.token(character.asciiValue!) == token) }
    for (literal, isResult) in [
      ("\"result\"", true), ("\"results\"", false), ("\"resul\"", false), ("\"res\\u0075lt\"", false), ("result", false),
    ] {
      let bytes = Array(literal.utf8)
      #expect(bytes.withUnsafeBufferPointer { JSONFraming.isKey($0.baseAddress!, count: $0.count, "result") } == isResult)
    }
  }

  @Test("positions: 1-based lines, columns in characters")
  func positions() {
    let bytes = Array("ab\ncé\n\nxyz".utf8)
    bytes.withUnsafeBufferPointer { buffer in
      #expect(TextPosition.locate(0, in: buffer) == (1, 1))
      #expect(TextPosition.locate(3, in: buffer) == (2, 1))
      #expect(TextPosition.locate(6, in: buffer) == (2, 3))  // after "cé" (3 bytes, 2 characters)
      #expect(TextPosition.locate(8, in: buffer) == (4, 1))
      #expect(TextPosition.locate(99, in: buffer) == (4, 4))
    }
  }

  @Test("JSON equality and lookup are by code units, as in JavaScript")
  func equalityByCodeUnits() throws {
    #expect(JSON.string("é") != JSON.string("e\u{301}"))
    #expect(JSON.string("é") == JSON.string("\u{E9}"))
    let object = try JSONParser.parse(#"{"e\u0301": 1}"#)
    #expect(object["é"] == nil)
    #expect(object["e\u{301}"] == 1)
    #expect(try JSONParser.parse(#"{"é": 1}"#) != object)
    var edited = object.objectValue!
    edited["é"] = 2
    #expect(edited.count == 2)
  }
}
