import Foundation
import ProfileJSON
import TestSupport
import Testing

/// The journeys enterprises run — MFA after the password, registration, suspended
/// and step-up journeys, and every callback the SDKs answer — against a loopback AM tree of
/// nodes (`NodeTree`) speaking AM's exact callback JSON, answered from an --answers file and,
/// in TerminalPromptTests' way, at a terminal.
@Suite(.timeLimit(.minutes(10)))
struct EnterpriseJourneyTests {
  static let password = "s3cret-Passw0rd"
  typealias C = NodeTree

  // MARK: Pages (AM's callback shapes)

  static func name(_ prompt: String) -> JSON { C.callback("NameCallback", [("prompt", .string(prompt))], inputs: [("IDToken1", "")]) }
  static func passwordCallback(_ prompt: String) -> JSON {
    C.callback("PasswordCallback", [("prompt", .string(prompt))], inputs: [("IDToken1", "")])
  }
  static let login = [name("User Name"), passwordCallback("Password")]

  /// The login page: `demo` and the password, else the same page again with AM's error.
  static let loginNode = NodeTree.Node(callbacks: login) { answers, _ in
    answers.text("NameCallback") == "demo" && answers.text("PasswordCallback") == password
      ? .node("mfa") : .again(error: "Wrong username or password")
  }

  func withTree(
    _ nodes: [String: NodeTree.Node], start: @escaping @Sendable (AuthenticateServer.Record) -> NodeTree.Next = { _ in .node("start") },
    _ body: (AuthenticateServer, NodeTree, String) throws -> Void
  ) throws {
    let tree = NodeTree(nodes: nodes, start: start)
    var configuration = AuthenticateServer.Configuration()
    configuration.behaviour = .custom(tree)
    let server = try AuthenticateServer(configuration)
    defer { server.stop() }
    let directory = try makeTemporaryDirectory("fr-profile-enterprise")
    defer { removeTemporaryDirectory(directory) }
    chmod(directory, 0o700)
    try body(server, tree, directory)
  }

  func journey(_ server: AuthenticateServer, _ directory: String, _ extra: [String], stdin: String? = nil) throws -> RunResult {
    try run(
      ["journey", "--server", server.url, "--realm", "alpha", "--state-dir", directory + "/state", "--root", machineRoot("laptop")]
        + extra, stdin: stdin)
  }

  /// An answers file (0600) in `directory`.
  func answers(_ directory: String, _ entries: [JSON]) throws -> String {
    let path = directory + "/answers.json"
    try (JSONWriter.compact(["answers": .array(entries)]) + "\n").write(toFile: path, atomically: false, encoding: .utf8)
    chmod(path, 0o600)
    expectValid(try String(contentsOfFile: path, encoding: .utf8), schema: "answers")
    return path
  }

  // MARK: MFA

  @Test("OATH: --user answers the user name only; the code's NameCallback takes the answers file, a wrong code then the right one")
  func oathWrongCodeThenRight() throws {
    let nodes: [String: NodeTree.Node] = [
      "start": Self.loginNode,
      "mfa": NodeTree.Node(callbacks: [Self.name("Enter verification code")]) { answers, _ in
        answers.text("NameCallback") == "123456" ? .success : .again(error: "Invalid OTP")
      },
    ]
    try withTree(nodes) { server, tree, directory in
      let file = try answers(
        directory,
        [
          ["type": "NameCallback", "prompt": "Enter verification code", "value": "000000"],
          ["type": "NameCallback", "prompt": "Enter verification code", "value": "123456"],
        ])
      let result = try journey(
        server, directory, ["--tree", "MFA", "--user", "demo", "--password-stdin", "--answers", file], stdin: Self.password + "\n")
      #expect(result.status == 0, "\(result.stderr)")
      #expect(result.stdout == tree.token + "\n")
      #expect(result.stderr.contains("Invalid OTP"))
      let codes = tree.answered.compactMap { NodeTree.Answers(callbacks: $0["callbacks"]?.arrayValue ?? []) }.dropFirst()
        .map { $0.text("NameCallback") }
      #expect(codes == ["000000", "123456"], "the code field got \(codes): the user name was reused")
      #expect(tree.events == ["node start", "node mfa", "again mfa: Invalid OTP", "success"])
    }
  }

  @Test("OTP by mail: the code is a PasswordCallback; the login password is never sent to it, nor resent after a wrong one")
  func otpNeverReusesThePassword() throws {
    let nodes: [String: NodeTree.Node] = [
      "start": Self.loginNode,
      "mfa": NodeTree.Node(callbacks: [Self.passwordCallback("One Time Password")]) { answers, _ in
        answers.text("PasswordCallback") == "884422" ? .success : .again(error: "Wrong code")
      },
    ]
    try withTree(nodes) { server, tree, directory in
      // No answer for the code: the journey stops, naming what to give, and never sends the
      // login password in its place.
      let stopped = try journey(server, directory, ["--tree", "OTP", "--user", "demo", "--password-stdin"], stdin: Self.password + "\n")
      #expect(stopped.status == 2, "\(stopped.stderr)")
      #expect(
        stopped.stderr.contains("PasswordCallback \"One Time Password\"") && stopped.stderr.contains("--answers"), "\(stopped.stderr)")
      #expect(!tree.answered.dropFirst().contains { JSONWriter.compact($0).contains(Self.password) })
      // A wrong login password: the page comes back, and the password is not resent.
      let file = try answers(directory, [["type": "PasswordCallback", "prompt": "One Time Password", "value": "884422"]])
      let wrong = try journey(
        server, directory, ["--tree", "OTP", "--user", "demo", "--password-stdin", "--answers", file], stdin: "not-it\n")
      #expect(wrong.status == 2, "\(wrong.stderr)")
      // The page again asks its name first: --user was used once, and nothing answers it now.
      #expect(wrong.stderr.contains("Wrong username or password") && wrong.stderr.contains("NameCallback \"User Name\""), "\(wrong.stderr)")
      #expect(tree.answered.filter { JSONWriter.compact($0).contains("not-it") }.count == 1)
    }
  }

  @Test("Push: PollingWaitCallback is waited on and polled until approved; denied is a clear refusal (exit 1)")
  func pushPollsUntilApprovedOrDenied() throws {
    let polls = NSLockedCounter()
    let polling = C.callback("PollingWaitCallback", [("waitTime", "200"), ("message", "Waiting for your approval on your phone…")])
    func nodes(approve: Bool) -> [String: NodeTree.Node] {
      [
        "start": Self.loginNode,
        "mfa": NodeTree.Node(callbacks: [polling]) { _, _ in
          polls.increment() < 2 ? .node("mfa") : approve ? .success : .failure("Push notification denied")
        },
      ]
    }
    try withTree(nodes(approve: true)) { server, tree, directory in
      let started = Date()
      let result = try journey(server, directory, ["--tree", "Push", "--user", "demo", "--password-stdin"], stdin: Self.password + "\n")
      #expect(result.status == 0, "\(result.stderr)")
      #expect(result.stderr.components(separatedBy: "Waiting for your approval").count == 2, "the message is shown once: \(result.stderr)")
      #expect(tree.events.filter { $0 == "node mfa" }.count == 3)
      #expect(Date().timeIntervalSince(started) >= 0.5, "three polls of 200 ms each were waited")
    }
    polls.reset()
    try withTree(nodes(approve: false)) { server, _, directory in
      let denied = try journey(server, directory, ["--tree", "Push", "--user", "demo", "--password-stdin"], stdin: Self.password + "\n")
      #expect(denied.status == 1 && denied.stderr.contains("Push notification denied"), "\(denied.stderr)")
    }
  }

  // MARK: Registration

  static func validated(
    _ type: String, prompt: String, name: String = "", failed: [JSON] = [], extra: [(String, JSON)] = [], value: JSON? = nil
  )
    -> JSON
  {
    var outputs: [(String, JSON)] = [("prompt", .string(prompt))]
    if !name.isEmpty { outputs.append(("name", .string(name))) }
    outputs += extra
    outputs += [
      ("required", true), ("policies", ["policyRequirements": ["REQUIRED", "MIN_LENGTH"], "name": .string(name), "policies": []]),
      ("failedPolicies", .array(failed.map { .string(JSONWriter.compact($0)) })), ("validateOnly", false),
    ]
    if let value { outputs.append(("value", value)) }
    return C.callback(type, outputs, inputs: [("IDToken1", value ?? ""), ("IDToken1validateOnly", false)])
  }

  static func registration(failed: [JSON]) -> [JSON] {
    [
      validated("ValidatedCreateUsernameCallback", prompt: "Username"),
      validated("StringAttributeInputCallback", prompt: "First Name", name: "givenName", value: ""),
      validated("StringAttributeInputCallback", prompt: "Email Address", name: "mail", value: ""),
      validated("BooleanAttributeInputCallback", prompt: "Send me special offers", name: "preferences/marketing", value: false),
      validated("ValidatedCreatePasswordCallback", prompt: "Password", failed: failed, extra: [("echoOn", false)]),
      C.callback(
        "KbaCreateCallback",
        [
          ("prompt", "Select a security question"),
          ("predefinedQuestions", ["What's your favorite color?", "Who was your first employer?"]),
          ("allowUserDefinedQuestions", true),
        ], inputs: [("IDToken1question", ""), ("IDToken1answer", "")]),
      C.callback(
        "TermsAndConditionsCallback", [("version", "0.0"), ("terms", "Be nice."), ("createDate", "2019-10-28T04:20:11.320Z")],
        inputs: [("IDToken1", false)]),
    ]
  }

  @Test("registration: validated username, attributes, a password refused by policy then accepted, a security question, the terms")
  func registrationWithAPolicyFailingPassword() throws {
    let nodes: [String: NodeTree.Node] = [
      "start": NodeTree.Node(callbacks: Self.registration(failed: [])) { answers, _ in
        guard (answers.text("ValidatedCreatePasswordCallback") ?? "").count >= 12 else { return .node("again") }
        return .success
      },
      "again": NodeTree.Node(callbacks: Self.registration(failed: [["policyRequirement": "MIN_LENGTH", "params": ["minLength": 12]]])) {
        answers, _ in
        guard (answers.text("ValidatedCreatePasswordCallback") ?? "").count >= 12,
          answers.text("StringAttributeInputCallback", 1) == "ada@example.com",
          answers.value("BooleanAttributeInputCallback") == true, answers.value("TermsAndConditionsCallback") == true,
          answers.text("KbaCreateCallback", input: "question") == "Who was your first employer?",
          answers.value("ValidatedCreatePasswordCallback", input: "validateOnly") == false
        else { return .failure("registration data is wrong") }
        return .success
      },
    ]
    try withTree(nodes) { server, tree, directory in
      let entry: (String, String, JSON) -> JSON = { type, prompt, value in
        ["type": .string(type), "prompt": .string(prompt), "value": value]
      }
      let once: [JSON] = [
        entry("ValidatedCreateUsernameCallback", "Username", "ada"), entry("StringAttributeInputCallback", "First Name", "Ada"),
        entry("StringAttributeInputCallback", "Email Address", "ada@example.com"),
        entry("BooleanAttributeInputCallback", "Send me special offers", true),
        ["type": "KbaCreateCallback", "question": "Who was your first employer?", "answer": "Babbage"],
        entry("TermsAndConditionsCallback", "", true),
      ]
      let file = try answers(
        directory,
        once + [entry("ValidatedCreatePasswordCallback", "Password", "short1")] + once
          + [entry("ValidatedCreatePasswordCallback", "Password", "a-much-longer-passphrase")])
      let result = try journey(server, directory, ["--tree", "Registration", "--answers", file])
      #expect(result.status == 0, "\(result.stderr)")
      #expect(result.stderr.contains("Password was refused: it must be at least 12 characters"), "\(result.stderr)")
      #expect(tree.events == ["node start", "node again", "success"])
      #expect(!result.stderr.contains("a-much-longer-passphrase") && !result.stderr.contains("Babbage"))
    }
  }

  @Test("registration: a required attribute left empty comes back refused, and without another answer the journey stops naming it")
  func requiredAttributeLeftEmpty() throws {
    let emailPage: (Bool) -> [JSON] = { failed in
      [
        Self.validated(
          "StringAttributeInputCallback", prompt: "Email Address", name: "mail",
          failed: failed ? [["policyRequirement": "REQUIRED"]] : [], value: "")
      ]
    }
    let nodes: [String: NodeTree.Node] = [
      "start": NodeTree.Node(callbacks: emailPage(false)) { answers, _ in
        (answers.text("StringAttributeInputCallback") ?? "").isEmpty ? .node("refused") : .success
      },
      "refused": NodeTree.Node(callbacks: emailPage(true)) { _, _ in .success },
    ]
    try withTree(nodes) { server, _, directory in
      let file = try answers(directory, [["type": "StringAttributeInputCallback", "prompt": "Email Address", "value": ""]])
      let result = try journey(server, directory, ["--tree", "Registration", "--answers", file])
      #expect(result.status == 2, "\(result.stderr)")
      #expect(result.stderr.contains("Email Address was refused: it must be a value is required"), "\(result.stderr)")
      #expect(result.stderr.contains("StringAttributeInputCallback \"Email Address\""))
    }
  }

  // MARK: Suspended and step-up journeys

  @Test("a suspended journey stops with exit 4 and continues from its email link (--resume -); an expired link is refused")
  func suspendAndResume() throws {
    let nodes: [String: NodeTree.Node] = [
      "start": NodeTree.Node(callbacks: [Self.name("Email")]) { _, _ in .node("suspended") },
      "suspended": NodeTree.Node(
        callbacks: [
          C.callback(
            "SuspendedTextOutputCallback", [("message", "An email has been sent to the address you entered."), ("messageType", "0")])
        ]
      ) { _, _ in .failure("a suspended step was posted") },
      "verified": NodeTree.Node(callbacks: [C.callback("TextOutputCallback", [("message", "Email verified"), ("messageType", "0")])]) {
        _, _ in .success
      },
    ]
    let start: @Sendable (AuthenticateServer.Record) -> NodeTree.Next = { request in
      if request.target.contains("?suspendedId=Qm9ndXM") { return .failure("Suspended ID is expired or invalid") }
      if request.target.contains("?suspendedId=abc-123") { return .node("verified") }
      return request.target.contains("authIndexValue=Verify") ? .node("start") : .failure("bad start \(request.target)")
    }
    try withTree(nodes, start: start) { server, tree, directory in
      let file = try answers(directory, [["type": "NameCallback", "prompt": "Email", "value": "ada@example.com"]])
      let suspended = try journey(server, directory, ["--tree", "Verify", "--answers", file])
      #expect(suspended.status == 4, "\(suspended.stderr)")
      #expect(suspended.stderr.contains("An email has been sent") && suspended.stderr.contains("--resume -"), "\(suspended.stderr)")
      #expect(!tree.events.contains("failure: a suspended step was posted"))
      let link = "\(server.url)/am/XUI/?realm=/alpha&suspendedId=abc-123"
      let resumed = try journey(server, directory, ["--resume", "-"], stdin: link + "\n")
      #expect(resumed.status == 0 && resumed.stdout == tree.token + "\n", "\(resumed.stderr)")
      // AM 7's link: the tree kept and sent back, XUI's fragment after the id, --realm not needed.
      let am7 = "\(server.url)/am/XUI/?realm=/alpha&authIndexType=service&authIndexValue=Verify&suspendedId=abc-123#/"
      let withoutRealm = try run(
        ["journey", "--server", server.url, "--resume", am7, "--state-dir", directory + "/state", "--root", machineRoot("laptop")])
      #expect(withoutRealm.status == 0 && withoutRealm.stdout == tree.token + "\n", "\(withoutRealm.stderr)")
      #expect(
        server.requests.last?.target
          == "/json/realms/root/realms/alpha/authenticate?suspendedId=abc-123&authIndexType=service&authIndexValue=Verify")
      // The parameters in XUI's fragment (AM 6.5), with --tree for a link that names none.
      let fragment = "\(server.url)/openam/XUI/#login/&realm=%2Falpha&suspendedId=abc-123"
      let inFragment = try journey(server, directory, ["--resume", fragment, "--tree", "Verify"])
      #expect(inFragment.status == 0, "\(inFragment.stderr)")
      #expect(server.requests.last?.target.hasSuffix("?suspendedId=abc-123&authIndexType=service&authIndexValue=Verify") == true)
      let otherRealm = try journey(server, directory, ["--resume", "\(server.url)/am/XUI/?realm=/bravo&suspendedId=abc-123#/"])
      #expect(
        otherRealm.status == 64 && otherRealm.stderr.contains("alpha") && otherRealm.stderr.contains("/bravo"), "\(otherRealm.stderr)")
      let otherTree = try journey(server, directory, ["--resume", am7, "--tree", "Login"])
      #expect(otherTree.status == 64 && otherTree.stderr.contains("Login") && otherTree.stderr.contains("Verify"), "\(otherTree.stderr)")
      let twice = try journey(server, directory, ["--resume", "\(server.url)/am/XUI/?suspendedId=abc-123#/?suspendedId=abc-124"])
      #expect(twice.status == 65 && twice.stderr.contains("suspendedId twice"), "\(twice.stderr)")
      let expired = try journey(server, directory, ["--resume", "-"], stdin: "\(server.url)/am/XUI/?suspendedId=Qm9ndXM\n")
      #expect(expired.status == 1 && expired.stderr.contains("Suspended ID is expired or invalid"), "\(expired.stderr)")
      let noID = try journey(server, directory, ["--resume", "-"], stdin: "\(server.url)/am/XUI/?realm=/alpha\n")
      #expect(noID.status == 65 && noID.stderr.contains("suspendedId"), "\(noID.stderr)")
    }
  }

  @Test(
    "session upgrade: the token -o wrote goes back with --session-file (and ForceAuth); a session AM refuses is said so; an advice starts the step-up"
  )
  func sessionFileAndAdvice() throws {
    let nodes: [String: NodeTree.Node] = [
      "login": NodeTree.Node(callbacks: Self.login) { answers, _ in
        answers.text("PasswordCallback") == Self.password ? .success : .failure("Login failure")
      },
      "mfa": NodeTree.Node(callbacks: [Self.name("Enter verification code")]) { answers, _ in
        answers.text("NameCallback") == "123456" ? .success : .failure("Invalid OTP")
      },
    ]
    let token = NodeTree(nodes: [:]).token
    let start: @Sendable (AuthenticateServer.Record) -> NodeTree.Next = { request in
      if request.target.contains("authIndexValue=Login") { return .node("login") }
      guard request.headers["cookie"] == "iPlanetDirectoryPro=\(token)" else { return .failure("Invalid session") }
      if request.target.contains("authIndexType=composite_advice") {
        return request.target.contains("authIndexValue=%3CAdvices%3E") ? .node("mfa") : .failure("bad advice")
      }
      return request.target.hasSuffix("authIndexValue=StepUp&ForceAuth=true") ? .node("mfa") : .failure("no ForceAuth")
    }
    try withTree(nodes, start: start) { server, tree, directory in
      let tokenFile = directory + "/token"
      let login = try journey(
        server, directory, ["--tree", "Login", "--user", "demo", "--password-stdin", "-o", tokenFile], stdin: Self.password + "\n")
      #expect(login.status == 0, "\(login.stderr)")
      #expect(fileMode(tokenFile) == 0o600)
      let file = try answers(directory, [["type": "NameCallback", "value": "123456"], ["type": "NameCallback", "value": "123456"]])
      let stepUp = try journey(server, directory, ["--tree", "StepUp", "--session-file", tokenFile, "--force-auth", "--answers", file])
      #expect(stepUp.status == 0, "\(stepUp.stderr)")
      let advice = try journey(
        server, directory,
        [
          "--advice",
          "<Advices><AttributeValuePair><Attribute name=\"AuthenticateToServiceConditionAdvice\"/><Value>/:MFA</Value></AttributeValuePair></Advices>",
          "--session-file", tokenFile, "--answers", file,
        ])
      #expect(advice.status == 0, "\(advice.stderr)")
      // A token AM does not know (the file still the caller's 0600).
      try "AQIC-not-a-session\n".write(toFile: tokenFile, atomically: false, encoding: .utf8)
      let refused = try journey(server, directory, ["--tree", "StepUp", "--session-file", tokenFile, "--force-auth"])
      #expect(
        refused.status == 1 && refused.stderr.contains("Invalid session") && refused.stderr.contains("--session-file"), "\(refused.stderr)")
      chmod(tokenFile, 0o644)
      let loose = try journey(server, directory, ["--tree", "StepUp", "--session-file", tokenFile])
      #expect(loose.status == 77 && loose.stderr.contains("chmod 600"), "\(loose.stderr)")
      #expect(tree.events.filter { $0 == "success" }.count == 3, "\(tree.events)")
    }
  }

  @Test("a KbaCreateCallback without allowUserDefinedQuestions takes the user's own question, as AM and the SDKs do; false refuses it")
  func securityQuestionOfTheUsersOwn() throws {
    let page: (JSON?) -> [JSON] = { allow in
      var outputs: [(String, JSON)] = [("prompt", "Select a security question"), ("predefinedQuestions", ["What's your favorite color?"])]
      if let allow { outputs.append(("allowUserDefinedQuestions", allow)) }
      return [C.callback("KbaCreateCallback", outputs, inputs: [("IDToken1question", ""), ("IDToken1answer", "")])]
    }
    let nodes: [String: NodeTree.Node] = [
      "absent": NodeTree.Node(callbacks: page(nil)) { answers, _ in
        answers.text("KbaCreateCallback", input: "question") == "Name of my first robot?"
          && answers.text("KbaCreateCallback", input: "answer") == "Shakey" ? .success : .failure("wrong question")
      },
      "refused": NodeTree.Node(callbacks: page(false)) { _, _ in .success },
    ]
    let start: @Sendable (AuthenticateServer.Record) -> NodeTree.Next = { request in
      .node(String(request.target.split(separator: "=").last ?? ""))
    }
    try withTree(nodes, start: start) { server, tree, directory in
      let file = try answers(directory, [["type": "KbaCreateCallback", "question": "Name of my first robot?", "answer": "Shakey"]])
      let own = try journey(server, directory, ["--tree", "absent", "--answers", file])
      #expect(own.status == 0, "\(own.stderr) \(tree.events)")
      let refused = try journey(server, directory, ["--tree", "refused", "--answers", file])
      #expect(refused.status == 65 && refused.stderr.contains("allows no others"), "\(refused.stderr)")
    }
  }

  @Test("SelectIdPCallback: the provider of --idp or the answers file is sent; a social one stops at its redirect, naming it")
  func identityProviderChosen() throws {
    let providers: JSON = [["provider": "google", "uiConfig": ["buttonDisplayName": "Google"]], ["provider": "localAuthentication"]]
    let nodes: [String: NodeTree.Node] = [
      "start": NodeTree.Node(callbacks: [
        C.callback("SelectIdPCallback", [("providers", providers), ("value", "")], inputs: [("IDToken1", "")])
      ]) {
        answers, _ in
        switch answers.text("SelectIdPCallback") {
        case "localAuthentication": .success
        case "google": .node("google")
        default: .failure("unknown provider")
        }
      },
      "google": NodeTree.Node(
        callbacks: [
          C.callback(
            "RedirectCallback",
            [
              ("redirectUrl", "https://accounts.google.com/o/oauth2/v2/auth?client_id=x"), ("redirectMethod", "GET"),
              ("trackingCookie", false),
            ])
        ]
      ) { _, _ in .failure("the redirect step was posted") },
    ]
    try withTree(nodes) { server, tree, directory in
      let local = try journey(server, directory, ["--tree", "Social"])
      #expect(local.status == 0, "\(local.stderr)")
      let flag = try journey(server, directory, ["--tree", "Social", "--idp", "google"])
      #expect(
        flag.status == 2 && flag.stderr.contains("identity provider google") && flag.stderr.contains("accounts.google.com"),
        "\(flag.stderr)")
      let file = try answers(directory, [["type": "SelectIdPCallback", "value": "Google"]])
      let fromFile = try journey(server, directory, ["--tree", "Social", "--answers", file])
      #expect(fromFile.status == 2 && fromFile.stderr.contains("identity provider google"), "\(fromFile.stderr)")
      let unknown = try journey(server, directory, ["--tree", "Social", "--idp", "okta"])
      #expect(
        unknown.status == 64 && unknown.stderr.contains("okta") && unknown.stderr.contains("1=localAuthentication"), "\(unknown.stderr)")
      #expect(
        tree.events.filter { $0 == "node google" }.count == 2 && !tree.events.contains("failure: the redirect step was posted"),
        "\(tree.events)")
      let arguments = [
        "journey", "--server", server.url, "--realm", "alpha", "--tree", "Social", "--state-dir", directory + "/state", "--root",
        machineRoot("laptop"),
      ]
      let typed = try typed(arguments, steps: [["expect": "Provider [1]: "], ["send": "0\n"], ["expect": "accounts.google.com"]])
      #expect(typed.failed == nil && typed.status == 2 && typed.text.contains("0) google"), "[\(typed.text)]")
    }
  }

  // MARK: At a terminal

  /// `arguments` run through the pseudo-terminal driver (Support/pty-drive.py) with `steps`.
  func typed(_ arguments: [String], steps: [JSON]) throws -> (text: String, echo: [Bool], status: Int32, failed: String?) {
    let result = try run(
      [cliFixture("../Support/pty-drive.py"), JSONWriter.compact(.array(steps)), frProfilePath] + arguments,
      environment: ["TERM": "dumb", "PATH": "/usr/bin:/bin"], executable: "/usr/bin/python3")
    let json = try JSONParser.parse(Array(result.stdout.utf8))
    return (
      json["screen"]?.stringValue ?? "", json["echo"]?.arrayValue?.compactMap(\.boolValue) ?? [], Int32(json["status"]?.numberValue ?? -99),
      json["failed"].flatMap { $0 == .null ? nil : JSONWriter.compact($0) }
    )
  }

  @Test(
    "at a terminal: the prompts are the callbacks' own, the OTP is asked without echo, a wrong one asked again, never the password resent")
  func otpTypedAtATerminal() throws {
    let nodes: [String: NodeTree.Node] = [
      "start": Self.loginNode,
      "mfa": NodeTree.Node(callbacks: [Self.passwordCallback("One Time Password \u{1b}]0;owned\u{07}")]) { answers, _ in
        answers.text("PasswordCallback") == "884422" ? .success : .again(error: "Wrong code")
      },
    ]
    try withTree(nodes) { server, tree, directory in
      let arguments = [
        "journey", "--server", server.url, "--realm", "alpha", "--tree", "OTP", "--state-dir", directory + "/state", "--root",
        machineRoot("laptop"),
      ]
      let screen = try typed(
        arguments,
        steps: [
          ["expect": "User Name"], ["echo": true], ["send": "demo\n"], ["expect": "Password"], ["echo": false],
          ["send": .string(Self.password + "\n")], ["expect": "One Time Password"], ["echo": false], ["send": "111111\n"],
          ["expect": "Wrong code"], ["expect": "One Time Password"], ["echo": false], ["send": "884422\n"], ["expect": .string(tree.token)],
        ])
      #expect(screen.failed == nil, "[\(screen.text)]")
      #expect(screen.status == 0, "\(screen.text)")
      #expect(screen.echo == [true, false, false, false])
      #expect(!screen.text.contains(Self.password) && !screen.text.contains("884422") && !screen.text.contains("111111"))
      #expect(!screen.text.contains("\u{1b}]0;owned"), "the server's escape sequence reached the terminal")
      #expect(tree.answered.filter { JSONWriter.compact($0).contains(Self.password) }.count == 1)
    }
  }

  @Test("at a terminal: a new password is typed twice without echo, the failed policy said in words; the terms asked y/N")
  func registrationTypedAtATerminal() throws {
    let page: (Bool) -> [JSON] = { failed in
      [
        Self.validated(
          "ValidatedCreatePasswordCallback", prompt: "Password",
          failed: failed ? [["policyRequirement": "AT_LEAST_X_NUMBERS", "params": ["numNums": 1]]] : [], extra: [("echoOn", false)]),
        C.callback(
          "TermsAndConditionsCallback", [("version", "2.1"), ("terms", "Be nice."), ("createDate", "")], inputs: [("IDToken2", false)]),
      ]
    }
    let nodes: [String: NodeTree.Node] = [
      "start": NodeTree.Node(callbacks: page(false)) { _, _ in .node("again") },
      "again": NodeTree.Node(callbacks: page(true)) { answers, _ in
        answers.text("ValidatedCreatePasswordCallback") == "correct horse 7" && answers.value("TermsAndConditionsCallback") == true
          ? .success : .failure("wrong registration")
      },
    ]
    try withTree(nodes) { server, tree, directory in
      let arguments = [
        "journey", "--server", server.url, "--realm", "alpha", "--tree", "Register", "--state-dir", directory + "/state", "--root",
        machineRoot("laptop"),
      ]
      let screen = try typed(
        arguments,
        steps: [
          ["expect": "Password"], ["echo": false], ["send": "correct horse\n"], ["expect": "Again"], ["send": "correct horse\n"],
          ["expect": "Be nice."], ["expect": "[y/N]"], ["send": "n\n"], ["expect": "at least 1 numbers"], ["expect": "Password"],
          ["echo": false], ["send": "correct horse 7\n"], ["expect": "Again"], ["send": "correct horse 8\n"], ["expect": "do not agree"],
          ["expect": "Password"], ["send": "correct horse 7\n"], ["expect": "Again"], ["send": "correct horse 7\n"], ["expect": "[y/N]"],
          ["send": "y\n"], ["expect": .string(tree.token)],
        ])
      #expect(screen.failed == nil, "[\(screen.text)]")
      #expect(screen.status == 0, "\(screen.text)")
      #expect(screen.echo == [false, false])
      #expect(!screen.text.contains("correct horse"))
    }
  }

  // MARK: Every other callback

  @Test("text input, recovery codes, metadata, a registration URI, local IdP, PingOne Protect and reCAPTCHA answered as the SDKs do")
  func everyOtherCallback() throws {
    let script =
      "var div = document.createElement(\"div\");\ndiv.innerHTML = \"<h3>Your Recovery Codes</h3>\\n\" +\n\"<div class=\\\"text-center\\\">\\n\" +\n\"iZmEtxvQ00\\n\" +\n\"</div>\\n\" +\n\"<div class=\\\"text-center\\\">\\n\" +\n\"Eqw3GFVamY\\n\" +\n\"</div>\\n\";"
    let uri = "otpauth://totp/ForgeRock:demo?secret=JBSWY3DPEHPK3PXP&issuer=ForgeRock&period=30&digits=6"
    let nodes: [String: NodeTree.Node] = [
      "start": NodeTree.Node(
        callbacks: [
          C.callback("TextInputCallback", [("prompt", "Nickname"), ("defaultText", "kiosk-7")], inputs: [("IDToken1", "")]),
          C.callback("TextOutputCallback", [("message", .string(script)), ("messageType", "4")]),
          C.callback("MetadataCallback", [("data", ["stage": "RecoveryCodes"])]),
          C.callback(
            "HiddenValueCallback", [("value", .string(uri)), ("id", "mfaDeviceRegistration")],
            inputs: [("IDToken4", "mfaDeviceRegistration")]),
          C.callback(
            "SelectIdPCallback",
            [("providers", [["provider": "google", "uiConfig": [:]], ["provider": "localAuthentication"]]), ("value", "")],
            inputs: [("IDToken5", "")]),
          C.callback(
            "PingOneProtectInitializeCallback", [("envId", "02fb4743"), ("behavioralDataCollection", true)],
            inputs: [("IDToken6signals", ""), ("IDToken6clientError", "")]),
          C.callback(
            "ReCaptchaEnterpriseCallback",
            [("recaptchaSiteKey", "6LdSu"), ("captchaApiUri", "https://www.google.com/recaptcha/enterprise.js")],
            inputs: [("IDToken7token", ""), ("IDToken7action", ""), ("IDToken7clientError", ""), ("IDToken7payload", "")]),
        ]
      ) { answers, _ in
        guard answers.text("TextInputCallback") == "kiosk-7", answers.text("HiddenValueCallback") == "mfaDeviceRegistration",
          answers.text("SelectIdPCallback") == "localAuthentication",
          (answers.text("PingOneProtectInitializeCallback", input: "clientError") ?? "").contains("not available on Linux"),
          (answers.text("ReCaptchaEnterpriseCallback", input: "clientError") ?? "").contains("browser")
        else { return .failure("wrong answers") }
        return .success
      }
    ]
    try withTree(nodes) { server, tree, directory in
      let file = try answers(directory, [["type": "TextInputCallback", "prompt": "Nickname", "value": ""]])
      let result = try journey(server, directory, ["--tree", "Everything", "--answers", file])
      #expect(result.status == 0, "\(result.stderr) \(tree.events)")
      #expect(result.stderr.contains("iZmEtxvQ00") && result.stderr.contains("Eqw3GFVamY"), "\(result.stderr)")
      #expect(result.stderr.contains(uri), "the registration URI is shown")
      if FileManager.default.fileExists(atPath: "/usr/lib/x86_64-linux-gnu/libqrencode.so.4") {
        #expect(result.stderr.contains("█"), "a QR code is drawn with libqrencode")
      }
    }
  }

  @Test(
    "WebAuthn without a security key stops before posting (exit 2), unreadable WebAuthn data too; a RedirectCallback shows its URL (exit 2); social sign-in alone is named"
  )
  func whatLinuxCannotDo() throws {
    let nodes: [String: NodeTree.Node] = [
      "webauthn": NodeTree.Node(
        callbacks: [
          C.callback(
            "TextOutputCallback",
            [("message", "if (!window.PublicKeyCredential) {}\nnavigator.credentials.get({publicKey: options})"), ("messageType", "4")]),
          C.callback("HiddenValueCallback", [("value", "false"), ("id", "webAuthnOutcome")], inputs: [("IDToken2", "webAuthnOutcome")]),
        ]
      ) { _, _ in .success },
      "webauthn-key": NodeTree.Node(
        callbacks: [
          C.callback(
            "MetadataCallback",
            [
              (
                "data",
                [
                  "_action": "webauthn_authentication", "_type": "WebAuthn", "challenge": "qnMsxgya8h6mUc6OyRu8jJ6Oq16tHV3cgE7juXGMDbg=",
                  "allowCredentials": "", "timeout": "60000", "userVerification": "preferred", "relyingPartyId": "",
                ] as JSON
              )
            ]),
          C.callback("HiddenValueCallback", [("value", "false"), ("id", "webAuthnOutcome")], inputs: [("IDToken2", "webAuthnOutcome")]),
        ]
      ) { _, _ in .success },
      "redirect": NodeTree.Node(
        callbacks: [
          C.callback(
            "RedirectCallback",
            [
              ("redirectUrl", "https://accounts.google.com/o/oauth2/v2/auth?client_id=x"), ("redirectMethod", "GET"),
              ("trackingCookie", false),
            ])
        ]
      ) { _, _ in .success },
      "social": NodeTree.Node(
        callbacks: [
          C.callback(
            "SelectIdPCallback", [("providers", [["provider": "google"], ["provider": "apple"]]), ("value", "")], inputs: [("IDToken1", "")]
          )
        ]
      ) { _, _ in .success },
    ]
    let start: @Sendable (AuthenticateServer.Record) -> NodeTree.Next = { request in
      .node(String(request.target.split(separator: "=").last ?? ""))
    }
    try withTree(nodes, start: start) { server, tree, directory in
      let webAuthn = try journey(server, directory, ["--tree", "webauthn"])
      #expect(webAuthn.status == 2 && webAuthn.stderr.contains("WebAuthn node sent data fr-profile cannot read"), "\(webAuthn.stderr)")
      // This machine has no FIDO device (no /dev/hidraw): the person is asked to insert one,
      // and after the wait nothing is posted.
      let noKey = try journey(
        server, directory, ["--tree", "webauthn-key", "--webauthn-origin", "https://am.example.com", "--webauthn-timeout", "1"])
      #expect(noKey.status == 2 && noKey.stderr.contains("Insert your security key."), "\(noKey.stderr)")
      #expect(noKey.stderr.contains("no security key was plugged in") && noKey.stderr.contains("Nothing was sent to AM"), "\(noKey.stderr)")
      let redirect = try journey(server, directory, ["--tree", "redirect"])
      #expect(redirect.status == 2 && redirect.stderr.contains("https://accounts.google.com/o/oauth2/v2/auth"), "\(redirect.stderr)")
      let social = try journey(server, directory, ["--tree", "social"])
      #expect(social.status == 2 && social.stderr.contains("google, apple"), "\(social.stderr)")
      #expect(!tree.events.contains("success"))
    }
  }

  @Test("the answers file is a secret: another user's or a readable one is refused, and it is never in argv or the environment")
  func answersFileIsASecret() throws {
    try withTree(["start": Self.loginNode]) { server, _, directory in
      let file = try answers(directory, [["type": "PasswordCallback", "value": "from-the-file"]])
      chmod(file, 0o644)
      let readable = try journey(server, directory, ["--tree", "Login", "--answers", file])
      #expect(readable.status == 77 && readable.stderr.contains("chmod 600"), "\(readable.stderr)")
      chmod(file, 0o600)
      try "{\"answers\": [{\"type\": \"NoSuchCallback\"}]}".write(toFile: file, atomically: false, encoding: .utf8)
      let bad = try journey(server, directory, ["--tree", "Login", "--answers", file])
      #expect(bad.status == 65 && bad.stderr.contains("NoSuchCallback"), "\(bad.stderr)")
    }
  }
}

/// A counter the node closures of a test share.
final class NSLockedCounter: @unchecked Sendable {
  private let lock = NSLock()
  private var value = 0
  /// The value before this call.
  func increment() -> Int {
    lock.withLock {
      defer { value += 1 }
      return value
    }
  }
  func reset() { lock.withLock { value = 0 } }
}
