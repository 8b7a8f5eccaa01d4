import ProfileJSON
import Testing

@Suite(.timeLimit(.minutes(10))) struct JSONParserTests {
  @Test func parsesEveryValueKind() throws {
    let value = try JSONParser.parse(#" {"a": [1, -2.5e1, true, false, null, "x"], "b": {}} "#)
    #expect(value == ["a": [1, -25, true, false, .null, "x"], "b": [:]])
  }

  @Test func keepsMemberOrder() throws {
    let value = try JSONParser.parse(#"{"z": 1, "a": 2, "m": 3}"#)
    #expect(value.objectValue?.keys == ["z", "a", "m"])
  }

  @Test("duplicate key: last value wins, first position kept (as JSON.parse)")
  func duplicateKeysKeepFirstPositionAndLastValue() throws {
    let value = try JSONParser.parse(#"{"a": 1, "b": 2, "a": 3}"#)
    #expect(value.objectValue?.keys == ["a", "b"])
    #expect(value["a"] == 3)
  }

  @Test("duplicate keys in large objects use the index path")
  func duplicateKeysInLargeObjects() throws {
    var text = "{"
    for index in 0..<40 { text += "\"k\(index)\": \(index)," }
    text += "\"k3\": \"again\"}"
    let value = try JSONParser.parse(text)
    #expect(value.objectValue?.count == 40)
    #expect(value.objectValue?.members[3].value == "again")
  }

  @Test("canonically equivalent keys stay distinct")
  func equivalentKeysAreDistinct() throws {
    let value = try JSONParser.parse("{\"\u{E9}\": 1, \"e\u{301}\": 2}")
    #expect(value.objectValue?.count == 2)
  }

  @Test("numbers are doubles: 1, 1.0 and 1e0 are equal")
  func numbersAreDoubles() throws {
    #expect(try JSONParser.parse("[1, 1.0, 1e0, 10E-1]") == [1, 1, 1, 1])
    #expect(try JSONParser.parse("0.1") == .number(0.1))
    #expect(try JSONParser.parse("-0").numberValue?.sign == .minus)
    #expect(try JSONParser.parse("9007199254740993") == .number(9_007_199_254_740_992))
    #expect(try JSONParser.parse("123456789012345678901234567890") == .number(1.2345678901234568e29))
  }

  @Test("decimal literals round exactly like the standard library's conversion")
  func decimalsRoundCorrectly() throws {
    var generator = SystemRandomNumberGenerator()
    for _ in 0..<20_000 {
      let integer = String(UInt64.random(in: 0...999_999_999, using: &generator))
      let fraction = String(UInt64.random(in: 0...9_999_999_999, using: &generator))
      let places = Int.random(in: 1...12, using: &generator)
      let text = (Bool.random(using: &generator) ? "-" : "") + integer + "." + String(fraction.prefix(places))
      #expect(try JSONParser.parse(text).numberValue == Double(text), "\(text)")
    }
    #expect(try JSONParser.parse("52.520008") == .number(52.520008))
    #expect(try JSONParser.parse("0.1") == .number(0.1))
    #expect(try JSONParser.parse("0.0000000000000000000001") == .number(1e-22))
  }

  @Test("huge numbers become infinity, tiny ones zero, as in JavaScript")
  func hugeNumbers() throws {
    #expect(try JSONParser.parse("1e400") == .number(.infinity))
    #expect(try JSONParser.parse("-1e400") == .number(-.infinity))
    #expect(try JSONParser.parse("1e-400") == .number(0))
    let long = String(repeating: "9", count: 400)
    #expect(try JSONParser.parse(long).numberValue == .infinity)
  }

  @Test("strict number grammar", arguments: ["01", "1.", ".5", "+1", "1e", "-", "0x10", "NaN", "Infinity", "1.e5"])
  func rejectsInvalidNumbers(text: String) {
    #expect(throws: JSONParseError.self) { try JSONParser.parse(text) }
  }

  @Test func decodesEscapesAndSurrogatePairs() throws {
    let value = try JSONParser.parse(#""a\"\\\/\b\f\n\r\t\u00e9\uD83D\uDE00""#)
    #expect(value == .string("a\"\\/\u{8}\u{C}\n\r\t\u{E9}\u{1F600}"))
  }

  @Test("a lone surrogate escape becomes U+FFFD")
  func loneSurrogates() throws {
    #expect(try JSONParser.parse(#""\uD800""#) == .string("\u{FFFD}"))
    #expect(try JSONParser.parse(#""\uDC00x""#) == .string("\u{FFFD}x"))
    #expect(try JSONParser.parse(#""\uD800\u0041""#) == .string("\u{FFFD}A"))
  }

  @Test func decodesRawUTF8() throws {
    #expect(try JSONParser.parse("\"Zürich 東京 😀\"") == .string("Zürich 東京 😀"))
  }

  @Test(
    "invalid UTF-8 is an error with its position",
    arguments: [
      [0x22, 0xFF, 0x22], [0x22, 0xC0, 0xAF, 0x22], [0x22, 0xED, 0xA0, 0x80, 0x22], [0x22, 0xE2, 0x82, 0x22],
      [0x22, 0xF4, 0x90, 0x80, 0x80, 0x22],
    ] as [[UInt8]])
  func rejectsInvalidUTF8(bytes: [UInt8]) {
    #expect {
      try JSONParser.parse(bytes)
    } throws: { error in
      let error = error as! JSONParseError
      return error.line == 1 && error.column == 2 && error.message.contains("UTF-8")
    }
  }

  @Test("syntax errors carry line and column")
  func errorsCarryLineAndColumn() {
    #expect {
      try JSONParser.parse("{\n  \"a\": 1,\n  \"b\": tru\n}")
    } throws: { error in
      let error = error as! JSONParseError
      return error.line == 3 && error.column == 11
    }
  }

  @Test(
    "rejects what JSON.parse rejects",
    arguments: [
      "", " ", "[1,]", "{\"a\":1,}", "{'a':1}", "[1 2]", "{\"a\" 1}", "{1:2}", "// c\n1", "1 2", "\u{FEFF}1",
      "\"a\tb\"", "\"\\x\"", "\"\\u12\"", "\"abc", "[", "{", "nul", "[1]]", "{\"a\":1}}",
    ])
  func rejectsInvalidText(text: String) {
    #expect(throws: JSONParseError.self) { try JSONParser.parse(text) }
  }

  @Test("100,000 levels of nesting: a clear error, no stack overflow")
  func deepNestingIsAnError() {
    let text = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
    #expect {
      try JSONParser.parse(text)
    } throws: { error in
      (error as! JSONParseError).message.contains("nesting deeper than 1000")
    }
    let objects = String(repeating: "{\"a\":", count: 100_000) + "1" + String(repeating: "}", count: 100_000)
    #expect(throws: JSONParseError.self) { try JSONParser.parse(objects) }
  }

  @Test func nestingUpToTheLimitIsAccepted() throws {
    let text = String(repeating: "[", count: 1000) + String(repeating: "]", count: 1000)
    _ = try JSONParser.parse(text)
    let deeper = String(repeating: "[", count: 1001) + String(repeating: "]", count: 1001)
    #expect(throws: JSONParseError.self) { try JSONParser.parse(deeper) }
  }

  @Test("large containers parse in linear time (no copy per append)")
  func largeContainersAreLinear() throws {
    let count = 300_000
    let array = "[" + Array(repeating: "[1,2]", count: count).joined(separator: ",") + "]"
    let clock = ContinuousClock()
    var parsed: JSON = .null
    let elapsed = try clock.measure { parsed = try JSONParser.parse(array) }
    #expect(parsed.arrayValue?.count == count)
    #expect(elapsed < .seconds(20))
    var object = "{"
    for index in 0..<50_000 { object += "\"k\(index)\": {\"v\": \(index)}," }
    object += "\"end\": 0}"
    #expect(try JSONParser.parse(object).objectValue?.count == 50_001)
  }

  @Test func roundTripsThroughTheWriter() throws {
    let text = #"{"b":[1,0.5,"x\n",null,{"c":true}],"a":-3e-7}"#
    #expect(JSONWriter.compact(try JSONParser.parse(text)) == #"{"b":[1,0.5,"x\n",null,{"c":true}],"a":-3e-7}"#)
  }

  @Test func shiftsErrorPositions() {
    let error = JSONParseError(message: "m", offset: 2, line: 1, column: 3)
    #expect(error.shifted(line: 5, column: 10, offset: 100) == JSONParseError(message: "m", offset: 102, line: 5, column: 12))
    let second = JSONParseError(message: "m", offset: 7, line: 2, column: 3)
    #expect(second.shifted(line: 5, column: 10, offset: 100).column == 3)
  }
}
