import Foundation
import ProfileJSON
import Testing

/// `fr-profile journey` against a hostile loopback server, and
/// `fr-profile callback` on hostile steps.
@Suite(.timeLimit(.minutes(10))) struct JourneyHardeningTests {
  static let password = "s3cret-Passw0rd"
  static let escapes = "\u{1B}]52;c;cm0gLXJmIH4=\u{07}\u{1B}[31mred\u{9B}2J\u{202E}"

  func withState(_ body: (String) throws -> Void) throws {
    let directory = try makeTemporaryDirectory("fr-profile-hostile")
    defer { removeTemporaryDirectory(directory) }
    try body(directory)
  }

  func server(_ script: @escaping @Sendable (AuthenticateServer.Record, Int) -> (status: Int, body: [UInt8])) throws -> AuthenticateServer {
    var configuration = AuthenticateServer.Configuration()
    configuration.behaviour = .scripted(script)
    return try AuthenticateServer(configuration)
  }

  func journey(_ server: AuthenticateServer, _ state: String, _ extra: [String] = []) throws -> RunResult {
    try run(
      [
        "journey", "--server", server.url, "--realm", "alpha", "--tree", "DeviceProfiling", "--user", "demo",
        "--password-stdin", "--state-dir", state + "/state", "--root", machineRoot("laptop"),
      ] + extra, stdin: Self.password + "\n")
  }

  static func step(_ callbacks: [JSON]) -> [UInt8] {
    Array(JSONWriter.compact(["authId": "a", "callbacks": .array(callbacks)]).utf8)
  }

  static func callback(_ type: String, _ output: [(String, JSON)], input: Bool = true) -> JSON {
    var object: JSONObject = ["type": .string(type), "output": .array(output.map { ["name": .string($0.0), "value": $0.1] })]
    if input { object["input"] = [["name": "IDToken1", "value": ""]] }
    return .object(object)
  }

  /// No escape character, C1 control or bidi override, and not the password.
  func expectClean(_ result: RunResult) {
    for text in [result.stdout, result.stderr] {
      #expect(
        !text.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x07 || (0x80...0x9F).contains($0.value) || $0.value == 0x202E })
      #expect(!text.contains(Self.password))
    }
  }

  @Test func item8AnOversizedResponseIsRefusedWithExit76() throws {
    try withState { state in
      let big = Array(repeating: UInt8(ascii: " "), count: 3 << 20) + Array("{}".utf8)
      let server = try server { _, _ in (200, big) }
      defer { server.stop() }
      let result = try journey(server, state)
      #expect(result.status == 76)
      #expect(result.stderr.contains("larger than 1048576 bytes"))
      let raised = try journey(server, state, ["--max-response-size", "8388608"])
      #expect(raised.status == 76)
      #expect(raised.stderr.contains("neither \"callbacks\""))
    }
  }

  @Test func item9TooManyCallbacksAreRefusedBeforeAnswering() throws {
    try withState { state in
      let callbacks = Array(repeating: Self.callback("NameCallback", [("prompt", "User Name")]), count: 10_000)
      let body = Self.step(callbacks)
      let server = try server { _, _ in (200, body) }
      defer { server.stop() }
      let result = try journey(server, state, ["--max-response-size", "8388608"])  // the body is ~1.3 MB
      #expect(result.status == 76)
      #expect(result.stderr.contains("10000 callbacks"))
      #expect(server.requests.count == 1)
    }
  }

  @Test func item9TheWholeJourneyIsBoundedByMaxTime() throws {
    try withState { state in
      // A page that needs no answer, shown again and again (a name would be asked: --user
      // answers one page only).
      let body = Self.step([Self.callback("TextOutputCallback", [("message", "Please wait"), ("messageType", "0")], input: false)])
      let server = try server { _, _ in
        usleep(400_000)  // the server's latency is what is tested here, not a wait for an event
        return (200, body)
      }
      defer { server.stop() }
      let result = try journey(server, state, ["--max-time", "1"])
      #expect(result.status == 75)
      #expect(result.stderr.contains("did not end within 1 s"))
      #expect(server.requests.count <= 4)
    }
  }

  @Test func item10ServerTextIsPrintedWithoutControlsOrThePassword() throws {
    try withState { state in
      let first = Self.step([
        Self.callback("TextOutputCallback", [("message", .string("hello " + Self.escapes)), ("messageType", "0")], input: false),
        Self.callback("TextOutputCallback", [("message", .string("warn " + Self.escapes)), ("messageType", "1")], input: false),
        Self.callback("NameCallback", [("prompt", .string("User " + Self.escapes))]),
        Self.callback("PasswordCallback", [("prompt", "Password")]),
      ])
      let server = try server { request, index in
        if index == 0 { return (200, first) }
        // Echo what the client sent (its password included) in a 401 message.
        let echoed = JSONWriter.compact(["code": 401, "message": .string("denied \(request.body) " + Self.escapes)])
        return (401, Array(echoed.utf8))
      }
      defer { server.stop() }
      let result = try journey(server, state)
      #expect(result.status == 1)
      #expect(result.stderr.contains("hello ?]52;c;"))
      // The echoed body is cut to one line of 200 characters, before the password;
      // where the password is within them, it is hidden.
      let failure = try #require(result.stderr.split(separator: "\n").first { $0.hasPrefix("fr-profile: error: authentication failed") })
      #expect(failure.hasSuffix("….") || failure.contains("[hidden]"), "\(failure)")
      expectClean(result)
    }
  }

  @Test func item10ErrorBodiesAndTypeNamesAreCleaned() throws {
    try withState { state in
      let server5xx = try server { _, _ in (500, Array(("<html>" + Self.escapes + Self.password + "</html>").utf8)) }
      defer { server5xx.stop() }
      let failed = try journey(server5xx, state)
      #expect(failed.status == 76)
      expectClean(failed)
      let unknown = try server { _, _ in (200, Self.step([Self.callback("Evil" + Self.escapes, [("prompt", "x")])])) }
      defer { unknown.stop() }
      let refused = try journey(unknown, state)
      #expect(refused.status == 2)
      #expect(refused.stderr.contains("Evil?]52"))
      expectClean(refused)
    }
  }

  @Test func item10JSONOutputStaysValidWithoutRawControlsOrThePassword() throws {
    try withState { state in
      let first = Self.step([
        Self.callback("NameCallback", [("prompt", "User Name")]), Self.callback("PasswordCallback", [("prompt", "Password")]),
      ])
      let server = try server { request, index in
        if index == 0 { return (200, first) }
        let success = JSONWriter.compact(["tokenId": "tok", "echo": .string(request.body), "evil": .string(Self.escapes)])
        return (200, Array(success.utf8))
      }
      defer { server.stop() }
      let result = try journey(server, state, ["--json"])
      #expect(result.status == 0, "\(result.stderr)")
      expectClean(result)
      let parsed = try JSONParser.parse(Array(result.stdout.utf8))
      #expect(parsed["tokenId"] == "tok")
      #expect(parsed["evil"]?.stringValue == Self.escapes)  // the value survives, escaped
      #expect(parsed["echo"]?.stringValue?.contains("[hidden]") == true)
    }
  }

  @Test func item12PlainHTTPToAnotherMachineIsRefusedUnlessAsked() throws {
    try withState { state in
      let arguments = [
        "journey", "--server", "http://192.0.2.1/am", "--realm", "root", "--tree", "Login", "--user", "demo", "--password-stdin",
        "--state-dir", state + "/state", "--timeout", "1",
      ]
      let refused = try run(arguments, stdin: Self.password + "\n")
      #expect(refused.status == 64)
      #expect(refused.stderr.contains("in clear"))
      let allowed = try run(arguments + ["--insecure-http"], stdin: Self.password + "\n")
      #expect(allowed.status == 75 || allowed.status == 68)  // nothing answers at TEST-NET-1
      #expect(allowed.stderr.contains("warning: --insecure-http"))
    }
  }
}

@Suite(.timeLimit(.minutes(10))) struct CallbackHardeningTests {
  static func body(profileCallbacks count: Int, message: String = "Collecting") -> String {
    let callback: JSON = [
      "type": "DeviceProfileCallback",
      "output": [
        ["name": "metadata", "value": true], ["name": "location", "value": false], ["name": "message", "value": .string(message)],
      ],
      "input": [["name": "IDToken1", "value": ""]],
    ]
    return JSONWriter.compact(["authId": "x", "callbacks": .array(Array(repeating: callback, count: count))])
  }

  func callback(_ text: String, _ state: String, _ extra: [String] = []) throws -> RunResult {
    try run(["callback", "--state-dir", state, "--root", machineRoot("laptop")] + extra, stdin: text)
  }

  @Test func item11TooManyCallbacksAreRefused() throws {
    let state = try makeTemporaryDirectory()
    defer { removeTemporaryDirectory(state) }
    let result = try callback(Self.body(profileCallbacks: 10_000), state)
    #expect(result.status == 65)
    #expect(result.stderr.contains("10000 callbacks"))
  }

  @Test func item11TheMachineIsCollectedOncePerStep() throws {
    let state = try makeTemporaryDirectory()
    defer { removeTemporaryDirectory(state) }
    let one = try callback(Self.body(profileCallbacks: 1), state, ["-v"])
    let many = try callback(Self.body(profileCallbacks: 200), state, ["-v"])
    #expect(one.status == 0 && many.status == 0)
    // Each collection reports its sources with -v: as many lines for 200 callbacks as for 1.
    let details = { (result: RunResult) in result.stderr.split(separator: "\n").filter { $0.hasPrefix("fr-profile: detail:") }.count }
    #expect(details(one) > 0)
    #expect(details(many) == details(one))
    let answered = try JSONParser.parse(Array(many.stdout.utf8))
    let values = Set((answered["callbacks"]?.arrayValue ?? []).compactMap { $0["input"]?.arrayValue?.first?["value"]?.stringValue })
    #expect(values.count == 1)
  }

  @Test func item10CallbackMessagesArePrintedWithoutControls() throws {
    let state = try makeTemporaryDirectory()
    defer { removeTemporaryDirectory(state) }
    let result = try callback(Self.body(profileCallbacks: 1, message: "hi " + JourneyHardeningTests.escapes), state)
    #expect(result.status == 0)
    #expect(result.stderr.contains("hi ?]52;c;"))
    #expect(!result.stderr.unicodeScalars.contains { $0.value == 0x1B || (0x80...0x9F).contains($0.value) })
  }
}
