import Journey
import ProfileJSON
import Testing

/// The journey loop and the callback reader, without HTTP: a scripted transport.
@Suite(.timeLimit(.minutes(10))) struct JourneyWalkerTests {
  @Test(arguments: [
    ("alpha", "https://am.example.com/am/json/realms/root/realms/alpha/authenticate?authIndexType=service&authIndexValue=Login"),
    ("root", "https://am.example.com/am/json/realms/root/authenticate?authIndexType=service&authIndexValue=Login"),
    ("/", "https://am.example.com/am/json/realms/root/authenticate?authIndexType=service&authIndexValue=Login"),
    (
      "/alpha/staff",
      "https://am.example.com/am/json/realms/root/realms/alpha/realms/staff/authenticate?authIndexType=service&authIndexValue=Login"
    ),
  ])
  func endpointURLFollowsAMsRealmPaths(realm: String, url: String) {
    #expect(AuthenticateEndpoint(server: "https://am.example.com/am/", realm: realm, tree: "Login").url == url)
  }

  @Test func treeNameIsPercentEncoded() {
    let url = AuthenticateEndpoint(server: "http://am", realm: "root", tree: "Device Profiling&x=1").url
    #expect(url.hasSuffix("authIndexValue=Device%20Profiling%26x%3D1"))
  }

  @Test func textOutputMessageTypeMayBeAString() throws {
    let step = try AuthenticateStep(
      parsing: Array(
        #"""
        {"authId":"a","callbacks":[{"type":"TextOutputCallback","output":[{"name":"message","value":"Hi"},{"name":"messageType","value":"1"}]}]}
        """#.utf8))
    let requests = try step.requests()
    #expect(requests.map { $0.request } == [.textOutput(message: "Hi", messageType: 1)])
  }

  @Test func unsupportedCallbackIsNamedWithItsIndex() throws {
    let step = try AuthenticateStep(
      parsing: Array(
        #"""
        {"authId":"a","callbacks":[{"type":"NameCallback","output":[],"input":[{"name":"IDToken1","value":""}]},{"type":"WebAuthnRegistrationCallback"}]}
        """#.utf8))
    #expect(throws: JourneyError.unsupportedCallback(index: 1, type: "WebAuthnRegistrationCallback")) { try step.requests() }
    let error = try #require(throws: JourneyError.self) { try step.requests() }
    #expect(error.code == .unsupportedCallback && error.code != .malformedCallback)
    #expect(error.index == 1 && error.type == "WebAuthnRegistrationCallback" && error.status == nil)
  }

  @Test func choiceWithoutChoicesIsMalformed() throws {
    let step = try AuthenticateStep(
      parsing: Array(
        #"""
        {"callbacks":[{"type":"ChoiceCallback","output":[{"name":"prompt","value":"Pick"}],"input":[{"name":"IDToken1","value":0}]}]}
        """#.utf8))
    #expect(throws: JourneyError.malformedCallback(index: 0, reason: "ChoiceCallback output \"choices\" is not an array")) {
      try step.requests()
    }
  }

  /// A transport that answers from a list and records what was posted.
  final class Script {
    var responses: [(Int, String)]
    var posted: [String] = []
    init(_ responses: [(Int, String)]) { self.responses = responses }
    func walker(answer: @escaping (inout AuthenticateStep) throws -> Void = { _ in }) -> JourneyWalker {
      JourneyWalker(
        post: { _, body in
          self.posted.append(String(decoding: body, as: UTF8.self))
          let (status, text) = self.responses.removeFirst()
          return (status, Array(text.utf8))
        }, answer: answer)
    }
  }

  let endpoint = AuthenticateEndpoint(server: "http://am", realm: "root", tree: "T")
  let nameStep =
    #"{"authId":"x","callbacks":[{"type":"NameCallback","output":[{"name":"prompt","value":"User"}],"input":[{"name":"IDToken1","value":""}]}]}"#

  @Test func walksStepsUntilTheToken() throws {
    let script = Script([(200, nameStep), (200, #"{"tokenId":"T0K","successUrl":"/am"}"#)])
    let outcome = try script.walker { step in try step.answer(0, with: "demo") }.walk(endpoint)
    #expect(outcome == .success(["tokenId": "T0K", "successUrl": "/am"]))
    #expect(script.posted.first == "{}")
    #expect(script.posted.last?.contains(#""value":"demo""#) == true)
    #expect(script.posted.last?.contains(#""authId":"x""#) == true)
  }

  @Test func unauthorizedEndsWithAMsMessage() throws {
    let script = Script([(401, #"{"code":401,"reason":"Unauthorized","message":"Login failure"}"#)])
    guard case .failure(let message, _) = try script.walker().walk(endpoint) else {
      Issue.record("expected a failure")
      return
    }
    #expect(message == "Login failure")
  }

  @Test func otherStatusIsAnError() {
    let script = Script([(500, "<html>Internal Server Error</html>\n")])
    #expect(throws: JourneyError.unexpectedStatus(status: 500, message: "<html>Internal Server Error</html>")) {
      try script.walker().walk(endpoint)
    }
  }

  @Test func loopingTreeStops() {
    let script = Script(Array(repeating: (200, nameStep), count: 3))
    var walker = script.walker { step in try step.answer(0, with: "demo") }
    walker.maximumSteps = 3
    #expect(throws: JourneyError.tooManySteps(3)) { try walker.walk(endpoint) }
  }
}
