import Foundation
import Journey
import JourneyHTTP
import Login
import ProfileJSON
import Testing

/// AM's WebAuthn nodes as the login reads and answers them: the pages the ForgeRock JavaScript
/// SDK records in its own tests (Tests/JourneyTests/Fixtures/sdk-recorded/javascript/webauthn-*,
/// provenance in that README), read to what the SDK's tests expect; the outcome posted in the
/// SDK's form, with a recording key. The real key and AM's judgement: CLITests/WebAuthnJourneyTests.
@Suite(.timeLimit(.minutes(10))) struct WebAuthnTests {
  static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .appendingPathComponent("../JourneyTests/Fixtures/sdk-recorded/javascript")

  static func page(_ name: String) throws -> AuthenticateStep {
    try AuthenticateStep(parsing: Array(try Data(contentsOf: directory.appendingPathComponent("webauthn-\(name).json"))))
  }

  static func node(_ name: String) throws -> WebAuthnStep? {
    try WebAuthnStep.read(try page(name).requests())
  }

  /// The ceremony of `name`'s page, which must have a WebAuthn node.
  static func ceremony(_ name: String) throws -> WebAuthnCeremony {
    try #require(try node(name), "\(name) has no WebAuthn node").ceremony
  }

  /// The script texts of the SDK's script-parser tests (script-text.mock.data.ts).
  static func script(_ name: String) throws -> String {
    let data = try JSONParser.parse(Array(try Data(contentsOf: directory.appendingPathComponent("webauthn-scripts/script-text.json"))))
    return try #require(data[name]?.stringValue, "\(name)")
  }

  static func bytes(_ signed: [Int]) -> [UInt8] { signed.map { UInt8(truncatingIfNeeded: $0) } }

  @Test(
    "each recorded page is the ceremony the SDK's getWebAuthnStepType says",
    arguments: [
      ("webAuthnRegJSCallback653", true), ("webAuthnAuthJSCallback653", false), ("webAuthnRegJSCallback70", true),
      ("webAuthnAuthJSCallback70", false), ("webAuthnRegJSCallback70StoredUsername", true),
      ("webAuthnAuthJSCallback70StoredUsername", false), ("webAuthnRegMetaCallback70", true), ("webAuthnAuthMetaCallback70", false),
      ("webAuthnRegMetaCallback70StoredUsername", true), ("webAuthnAuthMetaCallback70StoredUsername", false),
      ("webAuthnAuthMetaCallbackJsonResponse", false), ("webAuthnRegMetaCallbackJsonResponse", true),
    ])
  func stepType(name: String, registration: Bool) throws {
    let node = try #require(try Self.node(name))
    if case .registration = node.ceremony { #expect(registration, "\(name)") } else { #expect(!registration, "\(name)") }
    #expect(node.ceremony.timeoutMilliseconds == 60000, "\(name)")
    // The outcome's HiddenValueCallback and every script or metadata of the node are the node's.
    let page = try Self.page(name)
    #expect(node.nodeCallbacks.count == (page.callbacks ?? []).count, "\(name): \(node.nodeCallbacks)")
  }

  @Test("AM 6.5's registration script: challenge, relying party, user, algorithms and selection as the SDK reads them")
  func registrationScript653() throws {
    let options = try #require(try Self.ceremony("webAuthnRegJSCallback653").registration)
    #expect(Array(options.challenge.prefix(4)) == Self.bytes([63, -71, 8, -32]) && options.challenge.count == 32)
    #expect(options.relyingPartyID == "" && options.relyingPartyName == "ForgeRock")
    #expect(options.userID == Array("sgsP5DNBy2TvEhwnWHu1BFRw2_LQepAdjkOfC1z6nxU".utf8))
    #expect(options.userName == "57a5b4e4-6999-4b45-bf86-a4f2e5d4b629")
    #expect(options.algorithms == [-7, -257] && options.attestation == "none" && options.userVerification == "discouraged")
    #expect(options.excludeCredentials.isEmpty && !options.residentKeyRequired)
  }

  @Test("AM 7.0's scripts: an rp id, two excluded credentials, an allowed credential")
  func scripts70() throws {
    let options = try #require(try Self.ceremony("webAuthnRegJSCallback70").registration)
    #expect(options.relyingPartyID == "https://user.example.com:3002" && options.algorithms == [-257, -7])
    #expect(options.excludeCredentials.count == 2 && Array(options.excludeCredentials[0].prefix(3)) == Self.bytes([49, -96, -107]))
    #expect(options.excludeCredentials.allSatisfy { $0.count == 64 } && options.userVerification == "preferred")
    let authentication = try #require(try Self.ceremony("webAuthnAuthJSCallback70").authentication)
    #expect(authentication.allowCredentials.count == 1 && Array(authentication.allowCredentials[0].prefix(2)) == Self.bytes([-107, 93]))
    let accepted = try #require(try Self.ceremony("webAuthnAuthJSCallback653").authentication)
    #expect(accepted.allowCredentials.count == 1 && Array(accepted.allowCredentials[0].prefix(4)) == Self.bytes([1, 97, 2, 123]))
    #expect(accepted.userVerification == "discouraged" && Array(accepted.challenge.prefix(2)) == Self.bytes([109, 14]))
  }

  @Test("AM 7.0+'s MetadataCallback: base64 challenge, JSON strings, the _-prefixed members first, supportsJsonResponse")
  func metadata() throws {
    let options = try #require(try Self.ceremony("webAuthnRegMetaCallback70").registration)
    #expect(options.challenge.count == 32 && Array(options.challenge.prefix(3)) == [0x3E, 0x22, 0x30])  // "PiIw…"
    #expect(options.userID == Array("NTdhNWI0ZTQtNjk5OS00YjQ1LWJmODYtYTRmMmU1ZDRiNjI5".utf8))
    #expect(options.algorithms == [-257, -7] && options.relyingPartyID == "" && options.userVerification == "preferred")
    let json = try #require(try Self.node("webAuthnRegMetaCallbackJsonResponse"))
    guard case .registration(let resident) = json.ceremony else {
      Issue.record("not a registration")
      return
    }
    #expect(json.supportsJSONResponse && resident.relyingPartyID == "idc.petrov.ca" && resident.residentKeyRequired)
    #expect(resident.userName == "demo" && resident.userID == Array("NzcyNTI2NmMtYmZiZi00ZGFiLWFhYzEtNjY3NjUyMGIzNmZl".utf8))
    let signIn = try #require(try Self.ceremony("webAuthnAuthMetaCallbackJsonResponse").authentication)
    #expect(signIn.relyingPartyID == "humorous-cuddly-carrot.glitch.me" && signIn.allowCredentials.isEmpty)
  }

  @Test("the SDK's script-parser cases: rp id with and without quotes, no rp id, 6.5's acceptableCredentials, excluded keys")
  func scriptParserCases() throws {
    for name in ["authenticateInputWithRpidAndAllowCredentials", "authenticateInputWithRpidAllowCredentialsAndQuotes"] {
      let options = try #require((try WebAuthnStep.ceremony(fromScript: try Self.script(name))).authentication)
      #expect(
        options.relyingPartyID == "example.com" && options.allowCredentials.count == 1 && options.timeoutMilliseconds == 60000, "\(name)")
    }
    let recovery = try #require(
      (try WebAuthnStep.ceremony(fromScript: try Self.script("authenticateInputWithRpidAndAllowCredentialsAndAllowRecoveryCode")))
        .authentication)
    #expect(recovery.userVerification == "preferred" && recovery.allowCredentials.count == 1)
    let bare = try #require(
      (try WebAuthnStep.ceremony(fromScript: try Self.script("authenticateInputWithoutRpidAndAllowCredentials"))).authentication)
    #expect(bare.allowCredentials.isEmpty && bare.relyingPartyID == "")
    let old = try #require(
      (try WebAuthnStep.ceremony(fromScript: try Self.script("authenticateInputWithAcceptableCredentialsWithoutRpid"))).authentication)
    #expect(old.allowCredentials.count == 1)
    for name in ["registerInputWithRpid", "registerInputWithRpidAndQuotes"] {
      let options = try #require((try WebAuthnStep.ceremony(fromScript: try Self.script(name))).registration)
      // registerOutputWithRpid in the same file.
      #expect(options.relyingPartyID == "example.com" && options.relyingPartyName == "ForgeRock", "\(name)")
      #expect(options.userName == "57a5b4e4-6999-4b45-bf86-a4f2e5d4b629" && options.userDisplayName == "bob_lee-tester@me.co.uk", "\(name)")
      #expect(Set(options.algorithms) == [-7, -257] && options.attestation == "none" && options.timeoutMilliseconds == 60000, "\(name)")
      #expect(options.userVerification == "preferred" && options.authenticatorAttachment == "cross-platform", "\(name)")
    }
    let excluding = try #require((try WebAuthnStep.ceremony(fromScript: try Self.script("registerInputWithExcludeCreds"))).registration)
    #expect(excluding.excludeCredentials.count == 2 && excluding.relyingPartyID == "" && excluding.userDisplayName == "Bob Tester")
  }

  @Test("data that cannot be read is refused by name, never guessed")
  func unreadable() throws {
    let hidden: JSON = [
      "type": "HiddenValueCallback", "output": [["name": "value", "value": "false"], ["name": "id", "value": "webAuthnOutcome"]],
      "input": [["name": "IDToken2", "value": "webAuthnOutcome"]],
    ]
    func read(_ data: JSON) throws -> WebAuthnStep? {
      let metadata: JSON = ["type": "MetadataCallback", "output": [["name": "data", "value": data]]]
      return try WebAuthnStep.read(AuthenticateStep(body: ["authId": "a", "callbacks": [metadata, hidden]]).requests())
    }
    #expect(throws: WebAuthnDataError.self) { try read(["_type": "WebAuthn", "relyingPartyId": "", "challenge": "not base64!"]) }
    #expect(throws: WebAuthnDataError.self) {
      try read([
        "_type": "WebAuthn", "_action": "webauthn_registration", "relyingPartyId": "", "challenge": "AAAA", "pubKeyCredParams": "{",
      ])
    }
    #expect(throws: WebAuthnDataError.self) {
      try read([
        "_type": "WebAuthn", "relyingPartyId": "", "challenge": "AAAA", "_allowCredentials": [["type": "public-key", "id": [1, 999]]],
      ])
    }
    // No node: no outcome callback.
    #expect(try WebAuthnStep.read(AuthenticateStep(body: ["authId": "a", "callbacks": [hidden.replacingID()]]).requests()) == nil)
  }

  // MARK: - The outcome

  /// A key that records what it was asked and answers with fixed bytes, or refuses.
  final class RecordingKey: SecurityKeys {
    var registrations: [(WebAuthnRegistration, [UInt8])] = []
    var authentications: [(WebAuthnAuthentication, [UInt8])] = []
    var refusal: WebAuthnRefusal?
    let credential = NewCredential(
      format: "packed", authenticatorData: [1, 2, 0xFF], attestationStatement: [0xA1, 0x63, 0x61, 0x6C, 0x67, 0x26], id: [0xFB, 0xFF, 0x01])
    let assertion = WebAuthnAssertion(
      authenticatorData: [0x80, 0x7F], signature: [0x30, 0xFE], id: [0xFB, 0xFF, 0x01], userHandle: Array("dXNlcg".utf8))

    func register(_ options: WebAuthnRegistration, clientData: [UInt8], login: LoginAnswerer) throws -> NewCredential {
      registrations.append((options, clientData))
      if let refusal { throw refusal }
      return credential
    }
    func authenticate(_ options: WebAuthnAuthentication, clientData: [UInt8], login: LoginAnswerer) throws -> WebAuthnAssertion {
      authentications.append((options, clientData))
      if let refusal { throw refusal }
      return assertion
    }
  }

  /// Answers `name`'s page with `key` at `origin`; the outcome posted, or the error.
  static func answer(_ name: String, key: RecordingKey?, origin: String = "https://am.example.com:8443", deviceName: String? = nil)
    throws -> String?
  {
    var step = try page(name)
    let login = LoginAnswerer(sources: [], conversation: NoConversation())
    login.securityKeys = key
    login.webAuthnOrigin = origin
    login.webAuthnDeviceName = deviceName
    try login.answer(&step)
    let node = try #require(try WebAuthnStep.read(try step.requests()))
    guard case .array(let inputs)? = step.callbacks?[node.outcomeIndex].json["input"] else { return nil }
    return inputs.first?["value"]?.stringValue
  }

  @Test("a registration is posted as clientDataJSON::<attestation object>::<id>[::<device name>], the client data as a browser writes it")
  func registrationOutcome() throws {
    let key = RecordingKey()
    let outcome = try #require(try Self.answer("webAuthnRegMetaCallback70", key: key, deviceName: "work key"))
    let (options, clientData) = try #require(key.registrations.first)
    // AM named no relying party: the origin's host is it, as a browser takes the page's.
    #expect(options.relyingPartyID == "am.example.com")
    let challenge = "PiIwSUMSo5qN7ahxaBVzWCHnpIxiWZPBix3PDI4_O8k"
    #expect(
      String(decoding: clientData, as: UTF8.self)
        == #"{"type":"webauthn.create","challenge":"\#(challenge)","origin":"https://am.example.com:8443","crossOrigin":false}"#)
    let parts = outcome.components(separatedBy: "::")
    #expect(parts.count == 4 && parts[0] == String(decoding: clientData, as: UTF8.self) && parts[2] == "-_8B" && parts[3] == "work key")
    // attestation none: {fmt: "none", attStmt: {}, authData: h'0102FF'} as signed bytes.
    let none: [UInt8] =
      [0xA3, 0x63] + Array("fmt".utf8) + [0x64] + Array("none".utf8) + [0x67] + Array("attStmt".utf8) + [0xA0, 0x68]
      + Array("authData".utf8) + [0x43, 1, 2, 0xFF]
    #expect(parts[1] == none.map { String(Int8(bitPattern: $0)) }.joined(separator: ","))
  }

  @Test("direct attestation keeps the key's statement; supportsJsonResponse wraps the outcome as the SDK does")
  func jsonResponse() throws {
    let key = RecordingKey()
    let outcome = try #require(try Self.answer("webAuthnRegMetaCallbackJsonResponse", key: key, origin: "https://login.idc.petrov.ca"))
    let wrapped = try JSONParser.parse(Array(outcome.utf8))
    #expect(wrapped["authenticatorAttachment"]?.stringValue == "cross-platform")
    let legacy = try #require(wrapped["legacyData"]?.stringValue)
    #expect(outcome.hasPrefix(#"{"authenticatorAttachment":"cross-platform","legacyData":"{\"type\":\"webauthn.create\""#))
    #expect(legacy.components(separatedBy: "::").count == 3 && key.registrations.first?.0.relyingPartyID == "idc.petrov.ca")
    // Attestation direct: the key's format and statement are kept.
    let direct = WebAuthnOutcome.attestationObject(key.credential, keepStatement: true)
    let expected: [UInt8] =
      [0xA3, 0x63] + Array("fmt".utf8) + [0x66] + Array("packed".utf8) + [0x67] + Array("attStmt".utf8)
      + key.credential.attestationStatement + [0x68] + Array("authData".utf8) + [0x43, 1, 2, 0xFF]
    #expect(direct == expected)
  }

  @Test("an assertion is posted with its user handle as text; refusals as ERROR::<name>:<message>, NotSupportedError as unsupported")
  func authenticationOutcome() throws {
    let key = RecordingKey()
    let outcome = try #require(try Self.answer("webAuthnAuthMetaCallback70StoredUsername", key: key))
    let parts = outcome.components(separatedBy: "::")
    #expect(parts.count == 5 && parts[1] == "-128,127" && parts[2] == "48,-2" && parts[3] == "-_8B" && parts[4] == "dXNlcg")
    #expect(parts[0].hasPrefix(#"{"type":"webauthn.get","challenge":""#))
    key.refusal = WebAuthnRefusal(name: "NotAllowedError", message: "timed out")
    #expect(try Self.answer("webAuthnAuthMetaCallback70", key: key) == "ERROR::NotAllowedError:timed out")
    // A refusal is never wrapped in JSON (the SDK sets the error text itself).
    #expect(
      try Self.answer("webAuthnAuthMetaCallbackJsonResponse", key: key, origin: "https://humorous-cuddly-carrot.glitch.me")
        == "ERROR::NotAllowedError:timed out")
    key.refusal = WebAuthnRefusal(name: "NotSupportedError", message: "no algorithm")
    #expect(try Self.answer("webAuthnRegMetaCallback70", key: key) == "unsupported")
  }

  @Test("the origin decides the relying party: a foreign rp id is a SecurityError posted; an IP origin with no rp id stops")
  func origins() throws {
    let key = RecordingKey()
    let foreign = try Self.answer("webAuthnAuthMetaCallbackJsonResponse", key: key, origin: "https://am.example.com")
    #expect(foreign?.hasPrefix("ERROR::SecurityError:") == true && key.authentications.isEmpty)
    // A subdomain of the rp id is allowed, as in a browser.
    #expect(
      try Self.answer("webAuthnAuthMetaCallbackJsonResponse", key: key, origin: "https://am.humorous-cuddly-carrot.glitch.me")?.hasPrefix(
        "{") == true)
    #expect(throws: LoginError.self) { try Self.answer("webAuthnAuthMetaCallback70", key: key, origin: "https://127.0.0.1:8443") }
    #expect(throws: LoginError.self) { try Self.answer("webAuthnAuthMetaCallback70", key: nil) }
  }

  @Test("a registration node that accepts only a platform authenticator stops by name, with nothing posted and no key asked")
  func platformOnly() throws {
    var step = try Self.page("webAuthnRegMetaCallbackJsonResponse")
    guard case .object(var metadata)? = step.callbacks?[0].json, case .array(var outputs)? = metadata["output"],
      case .object(var data)? = outputs[0]["value"]
    else {
      Issue.record("the recorded page changed shape")
      return
    }
    data["_authenticatorSelection"] = ["authenticatorAttachment": "platform", "userVerification": "required"]
    outputs[0] = ["name": "data", "value": .object(data)]
    metadata["output"] = .array(outputs)
    step.body["callbacks"] = .array([.object(metadata)] + (step.callbacks ?? []).dropFirst().map(\.json))
    let key = RecordingKey()
    let login = LoginAnswerer(sources: [], conversation: NoConversation())
    login.securityKeys = key
    login.webAuthnOrigin = "https://idc.petrov.ca"
    let error = try #require(throws: LoginError.self) { try login.answer(&step) }
    #expect(error.code == .cannotAnswer && error.message.contains("platform authenticator") && key.registrations.isEmpty, "\(error)")
  }
}

extension JSON {
  /// This HiddenValueCallback with another id (not AM's WebAuthn outcome).
  fileprivate func replacingID() -> JSON {
    [
      "type": "HiddenValueCallback", "output": [["name": "value", "value": "x"], ["name": "id", "value": "other"]],
      "input": [["name": "IDToken1", "value": ""]],
    ]
  }
}

extension WebAuthnCeremony {
  fileprivate var registration: WebAuthnRegistration? {
    if case .registration(let options) = self { return options }
    return nil
  }
  fileprivate var authentication: WebAuthnAuthentication? {
    if case .authentication(let options) = self { return options }
    return nil
  }
}
