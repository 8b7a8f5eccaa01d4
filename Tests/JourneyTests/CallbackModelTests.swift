import Journey
import ProfileJSON
import Testing

/// Every callback the SDKs answer is read into a typed request, and
/// answered through the step, as an embedder would (the SDKs' callback model: a step, its typed
/// callbacks, set values, next). Shapes as the JavaScript SDK's own tests have them.
@Suite(.timeLimit(.minutes(10)))
struct CallbackModelTests {
  static func callback(_ type: String, _ outputs: [(String, JSON)], inputs: [(String, JSON)] = []) -> JSON {
    var object: JSONObject = ["type": .string(type), "output": .array(outputs.map { ["name": .string($0.0), "value": $0.1] })]
    if !inputs.isEmpty { object["input"] = .array(inputs.map { ["name": .string($0.0), "value": $0.1] }) }
    return .object(object)
  }

  static let step: AuthenticateStep = {
    let failed = JSON.string(#"{"params":{"minLength":8},"policyRequirement":"MIN_LENGTH"}"#)
    let callbacks: [JSON] = [
      callback("TextInputCallback", [("prompt", "Nickname"), ("defaultText", "kiosk")], inputs: [("IDToken1", "")]),
      callback(
        "StringAttributeInputCallback",
        [
          ("name", "givenName"), ("prompt", "First Name:"), ("required", true),
          ("policies", ["policyRequirements": ["REQUIRED"], "name": "givenName", "policies": []]), ("failedPolicies", []),
          ("validateOnly", false), ("value", ""),
        ], inputs: [("IDToken2", ""), ("IDToken2validateOnly", true)]),
      callback(
        "ValidatedCreatePasswordCallback",
        [
          ("echoOn", false), ("required", true), ("policies", ["policyRequirements": ["MIN_LENGTH"]]), ("failedPolicies", [failed]),
          ("validateOnly", false), ("prompt", "Password"),
        ],
        inputs: [("IDToken3", ""), ("IDToken3validateOnly", false)]),
      callback(
        "KbaCreateCallback", [("prompt", "Select a security question"), ("predefinedQuestions", ["What's your favorite color?"])],
        inputs: [("IDToken4question", ""), ("IDToken4answer", "")]),
      callback(
        "TermsAndConditionsCallback", [("version", "0.0"), ("terms", "Be nice"), ("createDate", "2019")], inputs: [("IDToken5", false)]),
      callback("PollingWaitCallback", [("waitTime", "8000"), ("message", "Waiting for response...")]),
      callback(
        "PingOneProtectEvaluationCallback", [("pauseBehavioralData", true)], inputs: [("IDToken7signals", ""), ("IDToken7clientError", "")]),
      callback(
        "SelectIdPCallback", [("providers", [["provider": "amazon"], ["provider": "localAuthentication"]]), ("value", "")],
        inputs: [("IDToken8", "")]),
      callback("MetadataCallback", [("data", ["x": 1])]),
      callback("SuspendedTextOutputCallback", [("message", "Check your email"), ("messageType", "0")]),
    ]
    return AuthenticateStep(body: ["authId": "abc", "callbacks": .array(callbacks)])
  }()

  @Test("every callback reads into its typed request")
  func requestsAreTyped() throws {
    let requests = try Self.step.requests().map(\.request)
    #expect(requests[0] == .textInput(prompt: "Nickname", defaultText: "kiosk"))
    guard case .attributeInput(let attribute) = requests[1] else { throw Unexpected(requests[1]) }
    #expect(
      attribute.kind == .string && attribute.input.name == "givenName" && attribute.input.required
        && attribute.input.requirements == ["REQUIRED"])
    guard case .validatedCreatePassword(let password) = requests[2] else { throw Unexpected(requests[2]) }
    #expect(!password.echoOn && password.failures == ["at least 8 characters"])
    #expect(
      requests[3]
        == .kbaCreate(prompt: "Select a security question", questions: ["What's your favorite color?"], allowUserDefinedQuestions: true))
    #expect(requests[4] == .termsAndConditions(terms: "Be nice", version: "0.0", createDate: "2019"))
    #expect(requests[5] == .pollingWait(waitTime: 8000, message: "Waiting for response..."))
    #expect(requests[6] == .pingOneProtect(evaluation: true))
    #expect(requests[7] == .selectIdP(providers: ["amazon", "localAuthentication"]))
    #expect(requests[8] == .metadata(["x": 1]))
    #expect(requests[9] == .suspendedTextOutput(message: "Check your email", messageType: 0))
  }

  @Test("answers land in the inputs the nodes read: validateOnly false on submission, KBA's two inputs, clientError")
  func answersLandInTheirInputs() throws {
    var step = Self.step
    try step.answer(0, with: "kiosk-7")
    try step.answerValidated(1, value: "Ada")
    try step.answerValidated(2, value: "long-enough")
    try step.answer(3, question: "What's your favorite color?", answer: "blue")
    try step.answer(4, accepting: true)
    try step.answer(6, clientError: "not on Linux")
    try step.answer(7, with: "localAuthentication")
    let callbacks = step.callbacks ?? []
    func inputs(_ index: Int) -> [JSON] { callbacks[index].json["input"]?.arrayValue?.compactMap { $0["value"] } ?? [] }
    #expect(inputs(0) == ["kiosk-7"])
    #expect(inputs(1) == ["Ada", false])
    #expect(inputs(2) == ["long-enough", false])
    #expect(inputs(3) == ["What's your favorite color?", "blue"])
    #expect(inputs(4) == [true])
    #expect(inputs(6) == ["", "not on Linux"])
    #expect(inputs(7) == ["localAuthentication"])
    #expect(throws: JourneyError.self) { try step.answer(5, clientError: "x") }  // PollingWaitCallback has no input
  }

  @Test("a malformed output is named; failedPolicies that are not JSON are refused")
  func malformedCallbacksAreNamed() throws {
    let bad = AuthenticateStep(body: [
      "callbacks": [
        Self.callback(
          "ValidatedCreateUsernameCallback", [("prompt", "Username"), ("failedPolicies", ["{not json"])], inputs: [("IDToken1", "")])
      ]
    ])
    #expect(throws: JourneyError.self) { try bad.requests() }
    let noProviders = AuthenticateStep(body: [
      "callbacks": [Self.callback("SelectIdPCallback", [("providers", "google")], inputs: [("IDToken1", "")])]
    ])
    #expect(throws: JourneyError.malformedCallback(index: 0, reason: "SelectIdPCallback output \"providers\" is not an array")) {
      try noProviders.requests()
    }
  }

  @Test("recovery codes are read from AM's display script; WebAuthn scripts are recognised")
  func scriptMessages() {
    let codes =
      "newLocation.innerHTML = \"<div class=\\\"text-center\\\">\\n\" +\n   \"iZmEtxvQ00\\n\" +\n   \"</div>\\n\" +\n   \"Eqw3GFVamY\\n\" +\n \"<h3>Your Recovery Codes</h3>\""
    #expect(ScriptMessage(script: codes) == .recoveryCodes(["iZmEtxvQ00", "Eqw3GFVamY"]))
    #expect(ScriptMessage(script: "navigator.credentials.create({publicKey: {}})") == .webAuthn)
    #expect(ScriptMessage(script: "document.title = 'hello'") == .other)
  }

  @Test("the endpoints of the three starts")
  func endpoints() {
    var advice = AuthenticateEndpoint(server: "https://am/am/", realm: "alpha", start: .compositeAdvice("<Advices/>"))
    advice.forceAuth = true
    #expect(
      advice.url
        == "https://am/am/json/realms/root/realms/alpha/authenticate?authIndexType=composite_advice&authIndexValue=%3CAdvices%2F%3E&ForceAuth=true"
    )
    let resume = AuthenticateEndpoint(server: "https://am/am", realm: "root", start: .resume(suspendedId: "a+b="))
    #expect(resume.url == "https://am/am/json/realms/root/authenticate?suspendedId=a%2Bb%3D")
  }

  struct Unexpected: Error {
    let request: CallbackRequest
    init(_ request: CallbackRequest) { self.request = request }
  }
}
