import Journey
import ProfileJSON
import Testing

/// Bounded walks, linear input setting, and server
/// text made printable.
@Suite(.timeLimit(.minutes(10))) struct JourneyBoundsTests {
  static func step(names count: Int) -> [UInt8] {
    let callback: JSON = [
      "type": "NameCallback", "output": [["name": "prompt", "value": "User"]], "input": [["name": "IDToken1", "value": ""]],
    ]
    return Array(JSONWriter.compact(["authId": "a", "callbacks": .array(Array(repeating: callback, count: count)), "stage": "s"]).utf8)
  }

  @Test func aStepWithTooManyCallbacksStopsTheWalkBeforeAnswering() throws {
    nonisolated(unsafe) var answered = 0
    let walker = JourneyWalker(post: { _, _ in (200, Self.step(names: 300)) }, answer: { _ in answered += 1 })
    #expect(throws: JourneyError.tooManyCallbacks(count: 300, limit: 256)) {
      try walker.walk(AuthenticateEndpoint(server: "https://am", realm: "root", tree: "t"))
    }
    #expect(answered == 0)
  }

  @Test func theWalkEndsWhenItsTimeIsUp() throws {
    nonisolated(unsafe) var clock = 0.0
    var walker = JourneyWalker(post: { _, _ in (200, Self.step(names: 1)) }, answer: { _ in clock += 2 })
    walker.maximumTime = 5
    walker.now = { clock }
    #expect(throws: JourneyError.timeLimit(seconds: 5)) {
      try walker.walk(AuthenticateEndpoint(server: "https://am", realm: "root", tree: "t"))
    }
    #expect(clock == 6)
  }

  @Test func setInputsFillsEveryCallbackAndKeepsTheRestInOrder() throws {
    var step = try AuthenticateStep(parsing: Self.step(names: 1000))
    try step.setInputs((0..<1000).map { ($0, .string("user\($0)")) })
    #expect(step.body.keys == ["authId", "callbacks", "stage"])
    let callbacks = try #require(step.callbacks)
    #expect(callbacks.count == 1000)
    for callback in callbacks {
      #expect(callback.json["input"]?.arrayValue?.first?["value"] == .string("user\(callback.index)"))
      #expect(callback.json["input"]?.arrayValue?.first?["name"] == "IDToken1")
    }
  }

  @Test func setInputsChangesNothingWhenOneTargetIsMissing() throws {
    var step = try AuthenticateStep(parsing: Self.step(names: 2))
    let before = step
    #expect(throws: JourneyError.malformedCallback(index: 5, reason: "no such callback")) { try step.setInputs([(0, "a"), (5, "b")]) }
    #expect(step == before)
  }

  @Test(
    "server text loses controls and secrets",
    arguments: [
      ("plain text", "plain text"),
      ("\u{1B}[31mred\u{1B}[0m", "?[31mred?[0m"),
      ("osc \u{1B}]52;c;eA==\u{07} end", "osc ?]52;c;eA==? end"),
      ("c1 \u{9B}2J", "c1 ?2J"),
      ("bidi \u{202E}txt.exe", "bidi ?txt.exe"),
      // Every Bidi_Control scalar, U+061C ARABIC LETTER MARK too.
      ("alm \u{061C}a \u{200E}\u{200F}\u{202A}\u{202B}\u{202C}\u{202D}\u{2066}\u{2067}\u{2068}\u{2069}", "alm ?a ??????????"),
      // Other format characters stay: ZWJ joins an emoji, ZWNJ is part of Persian spelling.
      (
        "\u{1F469}\u{200D}\u{1F4BB} \u{0645}\u{06CC}\u{200C}\u{062E}\u{0648}\u{0627}\u{0647}\u{0645}",
        "\u{1F469}\u{200D}\u{1F4BB} \u{0645}\u{06CC}\u{200C}\u{062E}\u{0648}\u{0627}\u{0647}\u{0645}"
      ),
      ("two\nlines\ttab", "two\nlines\ttab"),
      ("your password is hunter2!", "your password is [hidden]!"),
      ("hun\u{07}ter2", "hun?ter2"),
    ])
  func printable(input: String, expected: String) {
    #expect(ServerText.printable(input, hiding: ["hunter2"]) == expected)
  }

  @Test func singleLineTextLosesNewlines() {
    #expect(ServerText.printable("a\nfr-profile: error: fake", singleLine: true) == "a?fr-profile: error: fake")
  }

  @Test func jsonKeepsItsValueWithControlsEscaped() throws {
    let value: JSON = ["k\u{9B}": .string("v\u{9B}\u{7F} hunter2"), "n": 1]
    let text = ServerText.escapingControls(inJSON: JSONWriter.compact(ServerText.hiding(["hunter2"], in: value)))
    #expect(!text.unicodeScalars.contains { (0x7F...0x9F).contains($0.value) })
    #expect(try JSONParser.parse(Array(text.utf8)) == ["k\u{9B}": .string("v\u{9B}\u{7F} [hidden]"), "n": 1])
  }

  /// A binding step whose `timeout` output is `value` (JSON text).
  static func bindingStep(timeout value: String) throws -> AuthenticateStep {
    try AuthenticateStep(
      parsing: Array(
        """
        {"callbacks":[{"type":"DeviceBindingCallback","output":[{"name":"userId","value":"u"},\
        {"name":"authenticationType","value":"NONE"},{"name":"challenge","value":"c"},{"name":"timeout","value":\(value)}],\
        "input":[{"name":"IDToken1jws","value":""},{"name":"IDToken1deviceName","value":""},\
        {"name":"IDToken1deviceId","value":""},{"name":"IDToken1clientError","value":""}]}]}
        """.utf8))
  }

  @Test("a server's integers are read with one rule: whole, 0 to 999999999, digits or a number; null is absent")
  func callbackIntegersHaveOneBoundedRule() throws {
    let reason = "DeviceBindingCallback output \"timeout\" is not a whole number from 0 to 999999999"
    // Int.max as a string overflowed the JWS's exp (a crash, SIGILL) before it was bounded.
    for hostile in [#""9223372036854775807""#, "-5", #""-5""#, "1e12", "1.5", #""+7""#, #"" 7""#, #""""#] {
      #expect(throws: JourneyError.malformedCallback(index: 0, reason: reason), "\(hostile)") {
        try Self.bindingStep(timeout: hostile).requests()
      }
    }
    for (text, seconds) in [("999999999", 999_999_999), (#""30""#, 30), ("null", 60)] {
      guard case .deviceBinding(let request)? = try Self.bindingStep(timeout: text).requests().first?.request else {
        Issue.record("\(text): not read as a binding request")
        continue
      }
      #expect(request.timeout == seconds, "\(text)")
    }
    // The same rule for the common callbacks: a negative messageType is malformed, null is the default.
    let text = #"{"callbacks":[{"type":"TextOutputCallback","output":[{"name":"message","value":"m"},{"name":"messageType","value":X}]}]}"#
    let negative = "TextOutputCallback output \"messageType\" is not a whole number from 0 to 999999999"
    #expect(throws: JourneyError.malformedCallback(index: 0, reason: negative)) {
      try AuthenticateStep(parsing: Array(text.replacingOccurrences(of: "X", with: #""-1""#).utf8)).requests()
    }
    let null = try AuthenticateStep(parsing: Array(text.replacingOccurrences(of: "X", with: "null").utf8)).requests()
    #expect(null.first?.request == .textOutput(message: "m", messageType: 0))
  }
}
