import Journey
import JourneyHTTP
import Login
import OAuthTokens
import ProfileJSON
import SystemCalls
import Testing

/// The login use case in-process: a scripted AM (the transport), answer sources, a conversation
/// that records what it was asked and shown, and device steps — no subprocess, no terminal.
@Suite(.timeLimit(.minutes(10))) struct LoginTests {
  /// A transport that answers from a list of pages and records what was posted.
  final class ScriptedAM {
    var pages: [(Int, String)]
    var posted: [JSON] = []
    var headers: [String] = []
    init(_ pages: [(Int, String)]) { self.pages = pages }
    var transport: OAuthTransport {
      { request in
        self.headers = request.headers
        self.posted.append(try JSONParser.parse(request.body))
        let (status, page) = self.pages.removeFirst()
        return OAuthResponse(status: status, body: Array(page.utf8))
      }
    }
  }

  /// A person who answers from a list and whose screen is recorded.
  final class Person: Conversation {
    var replies: [String?]
    var asked: [(prompt: String, echo: Bool)] = []
    var shown: [(String, MessageKind)] = []
    let canAsk: Bool
    init(_ replies: [String?] = [], canAsk: Bool = true) {
      self.replies = replies
      self.canAsk = canAsk
    }
    func ask(_ prompt: String, echo: Bool, deadline: Double?) -> String? {
      asked.append((prompt, echo))
      return replies.isEmpty ? nil : replies.removeFirst()
    }
    func show(_ text: String, as kind: MessageKind) { shown.append((text, kind)) }
  }

  /// Device steps that record what they were handed.
  final class FakeDevice: DeviceSteps {
    var calls: [String] = []
    func answerProfiles(_ step: inout AuthenticateStep, login: LoginAnswerer) throws {
      calls.append("profile")
      for (index, request) in try step.requests() {
        if case .deviceProfile = request { try step.answer(index, with: #"{"identifier":"device-1"}"#) }
      }
    }
    func answerBinding(_ step: inout AuthenticateStep, index: Int, login: LoginAnswerer) throws {
      calls.append("binding \(index)")
    }
    func answerHiddenValue(_ step: inout AuthenticateStep, index: Int, id: String, value: String, login: LoginAnswerer) throws -> Bool {
      calls.append("hidden \(id)")
      return false
    }
  }

  static func page(_ callbacks: String) -> (Int, String) { (200, #"{"authId":"A","callbacks":[\#(callbacks)]}"#) }
  static let name = #"{"type":"NameCallback","output":[{"name":"prompt","value":"User Name"}],"input":[{"name":"IDToken1","value":""}]}"#
  static let password =
    #"{"type":"PasswordCallback","output":[{"name":"prompt","value":"Password"}],"input":[{"name":"IDToken2","value":""}]}"#
  static let success = (200, #"{"tokenId":"SSO","successUrl":"/am/console","realm":"/alpha"}"#)
  static let endpoint = AuthenticateEndpoint(server: "https://am.example.com/am", realm: "alpha", tree: "Login")

  /// The value posted for `callbacks[index]`'s first input.
  static func input(_ body: JSON, _ index: Int) -> JSON? {
    guard case .array(let callbacks)? = body["callbacks"], case .array(let inputs)? = callbacks[index]["input"] else { return nil }
    return inputs.first?["value"]
  }

  @Test func givenAnswersThenTheProgramThenThePerson() throws {
    let am = ScriptedAM([
      Self.page("\(Self.name),\(Self.password)"),
      Self.page(
        #"{"type":"ChoiceCallback","output":[{"name":"prompt","value":"Method"},{"name":"choices","value":["SMS","Email"]},{"name":"defaultChoice","value":0}],"input":[{"name":"IDToken1","value":0}]}"#
      ),
      Self.page(#"{"type":"NameCallback","output":[{"name":"prompt","value":"One-time code"}],"input":[{"name":"IDToken1","value":""}]}"#),
      Self.success,
    ])
    let person = Person(["123456"])
    var programAsked: [AnswerPrompt] = []
    let program = ProgramAnswers { prompt in
      programAsked.append(prompt)
      return prompt.type == .choice ? .text("email") : nil
    }
    let answerer = LoginAnswerer(sources: [GivenAnswers(user: "demo", password: "s3cret"), program], conversation: person)
    let outcome = try Login(endpoint: Self.endpoint, transport: am.transport).walk(answerer: answerer)
    guard case .success(let body) = outcome else {
      Issue.record("\(outcome)")
      return
    }
    #expect(body["tokenId"]?.stringValue == "SSO")
    #expect(Self.input(am.posted[1], 0) == "demo" && Self.input(am.posted[1], 1) == "s3cret")
    #expect(Self.input(am.posted[2], 0) == 1)  // "email" by its text, case aside
    #expect(Self.input(am.posted[3], 0) == "123456")
    #expect(programAsked.map(\.type) == [.choice, .name])
    #expect(programAsked.first?.options == ["SMS", "Email"])
    #expect(person.asked.map(\.prompt) == ["One-time code: "] && person.asked.allSatisfy(\.echo))
    #expect(am.headers.contains("X-Requested-With: forgerock-sdk") && am.headers.contains("User-Agent: fr-profile"))
    #expect(answerer.printable("the password s3cret") == "the password [hidden]")
  }

  @Test func aPasswordGivenOnceIsNeverResent() throws {
    let am = ScriptedAM([Self.page(Self.password), Self.page(Self.password), Self.success])
    let person = Person(["typed-again"])
    let answerer = LoginAnswerer(sources: [GivenAnswers(password: "first")], conversation: person)
    _ = try Login(endpoint: Self.endpoint, transport: am.transport).walk(answerer: answerer)
    #expect(Self.input(am.posted[1], 0) == "first")
    #expect(Self.input(am.posted[2], 0) == "typed-again")
    #expect(person.asked.map(\.echo) == [false])
    #expect(answerer.secrets.contains("typed-again"))
  }

  @Test func nothingToAskIsAnErrorNamingTheHint() throws {
    let am = ScriptedAM([Self.page(Self.name)])
    let answerer = LoginAnswerer(sources: [], conversation: Person(canAsk: false))
    answerer.hint = { $0 == .name ? "--user NAME" : nil }
    #expect {
      try Login(endpoint: Self.endpoint, transport: am.transport).walk(answerer: answerer)
    } throws: { error in
      guard let error = error as? LoginError else { return false }
      return error.code == .cannotAnswer && error.message.contains("NameCallback \"User Name\"")
        && error.message.contains("pass --user NAME")
    }
    #expect(am.posted.count == 1)  // nothing answered, nothing posted
  }

  @Test func aGivenChoiceOutOfRangeIsTheCallersMistake() throws {
    let am = ScriptedAM([
      Self.page(
        #"{"type":"ConfirmationCallback","output":[{"name":"prompt","value":""},{"name":"options","value":["Yes","No"]},{"name":"defaultOption","value":0}],"input":[{"name":"IDToken1","value":0}]}"#
      )
    ])
    let answerer = LoginAnswerer(sources: [GivenAnswers(choices: [5])], conversation: Person())
    #expect {
      try Login(endpoint: Self.endpoint, transport: am.transport).walk(answerer: answerer)
    } throws: { error in
      (error as? LoginError)?.code == .badGivenAnswer && "\(error)".contains("--choice 5 is not an option")
    }
  }

  @Test func choicesAreListedWithTheQuestion() throws {
    let am = ScriptedAM([
      Self.page(
        #"{"type":"ChoiceCallback","output":[{"name":"prompt","value":"Method"},{"name":"choices","value":["SMS","Email"]},{"name":"defaultChoice","value":1}],"input":[{"name":"IDToken1","value":0}]}"#
      ), Self.success,
    ])
    let person = Person(["9", ""])
    _ = try Login(endpoint: Self.endpoint, transport: am.transport).walk(answerer: LoginAnswerer(sources: [], conversation: person))
    #expect(person.shown.first.map { $0.0 } == "Method\n  0) SMS\n  1) Email" && person.shown.first?.1 == .prompting)
    #expect(person.shown.contains { $0.0 == "Pick one of 0=SMS, 1=Email." })
    #expect(person.asked.map(\.prompt) == ["Choice [1]: ", "Choice [1]: "])
    #expect(Self.input(am.posted[1], 0) == 1)
  }

  @Test func answersFileEntriesAreCheckedWhereTheyAre() throws {
    #expect {
      try AnswersFile(parsing: Array(#"{"answers":[{"type":"WebAuthnCallback","value":"x"}]}"#.utf8), path: "/a.json")
    } throws: { error in
      (error as? LoginError)?.code == .badAnswersEntry
        && "\(error)".contains("--answers /a.json: answers[0] has the type \"WebAuthnCallback\"")
    }
    var file = try AnswersFile(
      parsing: Array(
        #"{"answers":[{"type":"NameCallback","prompt":"User Name:","value":"demo"},{"type":"NameCallback","value":"other"}]}"#.utf8),
      path: "/a.json")
    #expect(file.answer(AnswerPrompt(type: .name, prompt: " user name ")) == .text("demo"))
    #expect(file.answer(AnswerPrompt(type: .name, prompt: "User Name")) == .text("other"))
    #expect(file.answer(AnswerPrompt(type: .name, prompt: "User Name")) == nil)
  }

  @Test func theDeviceAnswersItsCallbacksOrTheyAreRefused() throws {
    let profile =
      #"{"type":"DeviceProfileCallback","output":[{"name":"metadata","value":true},{"name":"location","value":false},{"name":"message","value":""}],"input":[{"name":"IDToken1","value":""}]}"#
    let hidden =
      #"{"type":"HiddenValueCallback","output":[{"name":"value","value":""},{"name":"id","value":"other"}],"input":[{"name":"IDToken2","value":""}]}"#
    let device = FakeDevice()
    let am = ScriptedAM([Self.page("\(profile),\(hidden)"), Self.success])
    _ = try Login(endpoint: Self.endpoint, transport: am.transport).walk(
      answerer: LoginAnswerer(sources: [], conversation: Person(), device: device))
    #expect(device.calls == ["hidden other", "profile"])
    #expect(Self.input(am.posted[1], 0) == #"{"identifier":"device-1"}"#)

    let refused = ScriptedAM([Self.page(profile)])
    #expect {
      try Login(endpoint: Self.endpoint, transport: refused.transport).walk(answerer: LoginAnswerer(sources: [], conversation: Person()))
    } throws: { error in
      (error as? LoginError)?.code == .cannotAnswer && "\(error)".contains("DeviceProfileCallback")
    }
  }

  @Test func aWaitEndsAtTheTimeLimit() throws {
    let polling =
      #"{"type":"PollingWaitCallback","output":[{"name":"waitTime","value":"60000"},{"name":"message","value":"Approve on your phone"}]}"#
    let am = ScriptedAM([Self.page(polling), Self.page(polling)])
    var login = Login(endpoint: Self.endpoint, transport: am.transport)
    login.maximumTime = 0.3
    let person = Person()
    let started = monotonicSeconds()
    #expect {
      try login.walk(answerer: LoginAnswerer(sources: [], conversation: person))
    } throws: { error in
      (error as? LoginError)?.code == .timeLimit
    }
    #expect(monotonicSeconds() - started < 30)
    #expect(person.shown.map(\.0) == ["Approve on your phone"] && person.shown.first?.1 == .information)
  }

  @Test func aRequestTimeoutIsTheTimeLimitOnlyWhenTheJourneyHadLessTimeLeft() throws {
    let timedOut: OAuthTransport = { request in throw HTTPError.timedOut(url: request.url, seconds: request.timeout ?? 0) }
    var login = Login(endpoint: Self.endpoint, transport: timedOut)
    login.maximumTime = 5  // less than requestTimeout (30): the request had the journey's time
    #expect {
      try login.walk(answerer: LoginAnswerer(sources: [], conversation: Person()))
    } throws: { error in
      (error as? LoginError)?.code == .timeLimit
    }
    login.maximumTime = 300  // the request had its own timeout: the server's, not the journey's
    #expect {
      try login.walk(answerer: LoginAnswerer(sources: [], conversation: Person()))
    } throws: { error in
      (error as? HTTPError)?.code == .timedOut && (error as? HTTPError)?.seconds == 30
    }
    let refused: OAuthTransport = { request in throw HTTPError.cannotConnect(url: request.url, reason: "refused") }
    #expect {
      try Login(endpoint: Self.endpoint, transport: refused).walk(answerer: LoginAnswerer(sources: [], conversation: Person()))
    } throws: { error in
      (error as? HTTPError)?.code == .cannotConnect && (error as? HTTPError)?.url?.hasPrefix("https://") == true
    }
  }

  @Test func aSuspendedOrRedirectedJourneyEndsWithoutPosting() throws {
    let suspended = ScriptedAM([
      Self.page(
        #"{"type":"SuspendedTextOutputCallback","output":[{"name":"message","value":"Check your email"},{"name":"messageType","value":"0"}]}"#
      )
    ])
    let outcome = try Login(endpoint: Self.endpoint, transport: suspended.transport).walk(
      answerer: LoginAnswerer(sources: [], conversation: Person()))
    #expect(outcome == .suspended(message: "Check your email") && suspended.posted.count == 1)
    let social = ScriptedAM([
      Self.page(
        #"{"type":"SelectIdPCallback","output":[{"name":"providers","value":[{"provider":"google"},{"provider":"localAuthentication"}]}],"input":[{"name":"IDToken1","value":""}]}"#
      ),
      Self.page(#"{"type":"RedirectCallback","output":[{"name":"redirectUrl","value":"https://accounts.example/auth"}]}"#),
    ])
    let answerer = LoginAnswerer(sources: [GivenAnswers(identityProvider: "Google")], conversation: Person())
    let redirect = try Login(endpoint: Self.endpoint, transport: social.transport).walk(answerer: answerer)
    #expect(redirect == .redirect(url: "https://accounts.example/auth"))
    #expect(Self.input(social.posted[1], 0) == "google" && answerer.identityProviderChosen == "google")
  }
}
