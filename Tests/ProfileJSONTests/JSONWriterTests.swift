import ProfileJSON
import Testing

@Suite(.timeLimit(.minutes(10))) struct JSONWriterTests {
  @Test(
    "numbers print as JavaScript's Number.prototype.toString",
    arguments: [
      (0.0, "0"), (-0.0, "0"), (1.0, "1"), (-4.0, "-4"), (52.52, "52.52"), (13.405, "13.405"),
      (0.5, "0.5"), (1e21, "1e+21"), (1e20, "100000000000000000000"), (1.5e22, "1.5e+22"),
      (1e-7, "1e-7"), (0.000001, "0.000001"), (1.2345e-7, "1.2345e-7"), (123456789012.5, "123456789012.5"),
      (1727110785783.0, "1727110785783"), (1e16, "10000000000000000"), (0.1 + 0.2, "0.30000000000000004"),
      (-1.5e-10, "-1.5e-10"), (Double.nan, "null"), (Double.infinity, "null"),
    ])
  func formatsNumbersLikeJavaScript(value: Double, expected: String) {
    #expect(JSONWriter.formatNumber(value) == expected)
  }

  @Test func keepsMemberOrderAndEscapes() {
    let value: JSON = ["b": 1, "a": ["x": "q\"\\\n\u{01}é", "n": .null, "t": true], "e": [], "o": [:]]
    #expect(JSONWriter.compact(value) == #"{"b":1,"a":{"x":"q\"\\\n\u0001é","n":null,"t":true},"e":[],"o":{}}"#)
  }

  @Test func prettyIndentsTwoSpacesLikeStringify() {
    let value: JSON = ["a": [1, 2], "b": ["c": false]]
    #expect(JSONWriter.pretty(value) == "{\n  \"a\": [\n    1,\n    2\n  ],\n  \"b\": {\n    \"c\": false\n  }\n}")
  }

  @Test func subscriptSetReplacesInPlaceAndRemovesWithNil() {
    var object: JSONObject = ["a": 1, "b": 2, "c": 3]
    object["b"] = "two"
    object["d"] = 4
    object["a"] = nil
    #expect(object.keys == ["b", "c", "d"])
    #expect(object["b"] == "two")
  }
}
