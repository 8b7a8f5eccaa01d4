import DeviceMatch
import ProfileJSON
import Testing

/// The specialised replay path must give the general path's answer whenever it answers.
@Suite(.timeLimit(.minutes(10))) struct FastMatcherTests {
  static let incoming: JSON = try! JSONParser.parse(
    #"{"identifier": "d", "metadata": {"platform": {"version": "6.8", "tz": "UTC"}, "hardware": {"cpu": 16, "list": [1, 2], "flag": false, "none": null}}, "location": {"latitude": 52.52, "longitude": 13.405}}"#
  )

  static let stored: [String] = [
    #"{"identifier": "d", "metadata": {"platform": {"version": "6.8", "tz": "UTC"}, "hardware": {"cpu": 16, "list": [1, 2], "flag": false, "none": null}}, "location": {"latitude": 52.52, "longitude": 13.405}}"#,
    #"{"identifier": "d", "metadata": {"platform": {"version": "6.9", "tz": "CET"}, "hardware": {"cpu": 8, "list": [1, 3, 4], "flag": true, "none": 0}}, "location": {"latitude": 52.5205, "longitude": 13.405}}"#,
    #"{"metadata": {"platform": {"version": "6.9"}}, "identifier": "d", "location": {"lat": 52.52, "lng": 13.405, "latitude": 0}}"#,
    #"{"identifier": "e", "metadata": {"platform": {"version": "6.9"}}, "location": {"latitude": 52.52, "longitude": 13.405}}"#,
    #"{"identifier": "d", "metadata": {"platform": {"version": {"major": 6}}, "hardware": {"flag": {"x": false}, "none": {"y": null}}}, "location": {"latitude": 52.52, "longitude": 13.405}}"#,
    #"{"identifier": "d", "metadata": {"hardware": {"cpu": 16.0, "list": [1e0, 2], "extra": "é"}}, "location": {"latitude": 52.52, "longitude": 13.405}}"#,
    #"{"identifier": "d", "metadata": {"x": {"y": {"z": [[1], [2]]}}}, "location": {"latitude": 52.52, "longitude": 13.405}}"#,
    #"{"identifier": "d", "metadata": {}, "location": {}}"#,
    #"{"identifier": "d", "metadata": {"platform": {"version": "6.8"}}, "location": {"latitude": -52.52, "longitude": 193.405}}"#,
  ]

  @Test(
    "fast and general paths agree",
    arguments: [
      MatchConfig(), MatchConfig(attrWeights: ["version": 0.5, "cpu": 3, "tz": "x"], maxUnmatchedAttrs: 2),
      MatchConfig(maxUnmatchedAttrs: 100, allowedRadius: 1e9), MatchConfig(maxUnmatchedAttrs: -1),
      MatchConfig(matchLocation: false), MatchConfig(matchMetadata: false),
    ])
  func pathsAgree(config: MatchConfig) throws {
    let matcher = DeviceMatcher(config: config)
    let fast = FastMatcher(matcher: matcher, incoming: Self.incoming)
    var answered = 0
    for text in Self.stored {
      let bytes = Array(text.utf8)
      let general = matcher.match(incoming: Self.incoming, stored: try JSONParser.parse(bytes))
      guard let quick = bytes.withUnsafeBufferPointer({ fast.match($0) }) else { continue }
      answered += 1
      #expect(quick.outcome == general.outcome, "\(text)")
      #expect(quick.mismatchedKeys == (general.metadata?.mismatches.map { $0.key ?? "undefined" } ?? []), "\(text)")
    }
    #expect(answered >= 7)
  }

  @Test("the fast path reads number literals exactly as the parser does")
  func numbersAgree() throws {
    var generator = SystemRandomNumberGenerator()
    for _ in 0..<3000 {
      let digits = String(UInt64.random(in: 0...999_999_999_999_999_999, using: &generator))
      let split = Int.random(in: 1...digits.count, using: &generator)
      var text = String(digits.prefix(split)).replacing(/^0+(?=\d)/, with: "")
      if split < digits.count { text += "." + digits.dropFirst(split) }
      if Bool.random(using: &generator) { text += "e" + String(Int.random(in: -30...30, using: &generator)) }
      let incoming: JSON = ["identifier": "d", "metadata": ["x": .number(Double(text)!)], "location": ["lat": 1, "lng": 1]]
      let stored = #"{"identifier": "d", "metadata": {"x": \#(text)}, "location": {"lat": 1, "lng": 1}}"#
      let fast = FastMatcher(matcher: DeviceMatcher(), incoming: incoming)
      let quick = Array(stored.utf8).withUnsafeBufferPointer { fast.match($0) }
      #expect(quick?.outcome == .true, "\(text)")
      #expect(try JSONParser.parse(text).numberValue == Double(text))
    }
  }

  @Test(
    "anything unusual is left to the general path",
    arguments: [
      "null", "[1]", #""{}""#, #"{"identifier": "d", "metadata": {"0": 1}}"#, #"{"identifier": "d", "identifier": "d"}"#,
      #"{"identifier": "d\u0000"}"#, #"{"identifier": "d", "metadata": {"a": 1}"#, #"{"identifier": "d"} x"#,
      #"{"identifier": "d", "metadata": null, "location": {"latitude": 1, "longitude": 1}}"#,
      #"{"identifier": "d", "metadata": {}, "location": {"latitude": "1", "longitude": 1}}"#,
    ])
  func unusualInputBails(text: String) {
    let fast = FastMatcher(matcher: DeviceMatcher(), incoming: Self.incoming)
    #expect(Array(text.utf8).withUnsafeBufferPointer { fast.match($0) } == nil)
  }
}
