import Crypto
import Foundation
import ProfileJSON

/// A handler that answers every request of an `AuthenticateServer` itself.
protocol CustomTree: AnyObject, Sendable {
  func respond(to request: AuthenticateServer.Record) -> (Int, String)
}

/// AM's Device Binding and Device Signing Verifier nodes, verifying exactly what they verify
/// (reference/binding/README.md §2, §3): the signature against the header `jwk` at binding and
/// against the stored key at signing, `challenge`, `sub`, `iss` ∈ Application Ids,
/// `exp`/`nbf`/`iat` with 30 s skew, `kid` lookup, and client errors routed to outcomes.
/// Verification uses swift-crypto directly, independent of the client's JWS encoder.
///
/// Trees (authIndexValue): `Bind` = Username → Password → Device Binding → success;
/// `Sign` = Username → Password → Device Signing Verifier → success; `SignUsernameless` =
/// Device Signing Verifier alone (userId ""), the user found by `sub`. With TPM attestation
/// (Scripted Decision nodes running am/fr-tpm-attestation.js under Rhino, `AMScript`):
/// `AttestedBind` = Username → Password → script → Device Binding → Device Signing Verifier →
/// script; `AttestedSign` = Username → Password → script → Device Signing Verifier → script.
/// A script node before the signing node activates (its journey goes on at outcome "activated"),
/// one after it verifies (goes on at "true"); any other outcome fails the journey.
/// The signing node leaves its JWS in transient state (`DeviceSigningVerifierNode.JWT`), as AM's does. A client error or a
/// failed check ends in 401 and an outcome in `outcomes`. Also serves AM's
/// `DELETE …/users/{userId}/devices/2fa/binding/{kid}`.
final class BindingServer: CustomTree, @unchecked Sendable {
  struct Device {
    var kid: String
    var jwk: JSON
    var deviceId: String
    var deviceName: String
  }

  struct User {
    var username: String
    var password: String
    var universalId: String
  }

  let realmPath = "/json/realms/root/realms/alpha"
  var applicationIds = ["fr-profile"]
  var authenticationType = "NONE"
  var timeout = 60
  var attestation = false
  /// Whether the signing node leaves its JWS in transient state (false: a journey where
  /// something between it and the script dropped it).
  var signingLeavesJWS = true
  /// The binding and signing callbacks' title (a hostile server's, in the sanitizing tests).
  var title = "Authentication required"
  /// The username a binding callback sends for a user who logged in with the key's name,
  /// when it differs from that name (AM sends the user's own; a hostile server anything).
  var callbackUsernames: [String: String] = [:]
  var users = [
    User(username: "demo", password: "s3cret-Passw0rd", universalId: "id=demo,ou=user,o=alpha,ou=services,ou=am-config"),
    User(username: "bjensen", password: "0ther-Passw0rd", universalId: "id=bjensen,ou=user,o=alpha,ou=services,ou=am-config"),
  ]
  let token = "AQIC5wM2LY4Sfcz-binding-session.*AAJTSQACMDE.*"

  private let lock = NSLock()
  private var sessions: [String: Session] = [:]
  private var devices: [String: [Device]] = [:]  // by universal id
  private var decisions: [String] = []
  private var received: [String] = []

  /// The attestation script's configuration (FR_TPM_ATTESTATION_CONFIG: roots, intermediates,
  /// trusted EK names).
  var attestationConfig: JSON = ["rootsPem": "", "intermediatesPem": "", "trustedEkNames": []]
  /// Every HiddenValueCallback exchanged with a script node, in order: ("sent", id, value) from the
  /// script, ("answered", id, value) from the client.
  var hiddenValues: [(direction: String, id: String, value: String)] { lock.withLock { exchanged } }
  private var exchanged: [(direction: String, id: String, value: String)] = []
  /// The scripts' shared state at the end of each attested journey.
  var sharedStates: [[String: String]] { lock.withLock { finishedStates } }
  private var finishedStates: [[String: String]] = []

  private struct Session {
    enum Stage { case username, password, binding, signing, script }
    enum Node { case binding, signing, script }
    var tree: String
    var stage: Stage
    var user: User?
    var challenge = ""
    /// The nodes after the password, in order.
    var plan: [Node] = []
    var sharedState: [String: String] = [:]
    var transientState: [String: String] = [:]
    /// The outcome the current script node's journey follows ("activated" or "true").
    var scriptProceedsOn = ""
  }

  private static let plans: [String: [Session.Node]] = [
    "Bind": [.binding], "Sign": [.signing], "AttestedBind": [.script, .binding, .signing, .script],
    "AttestedSign": [.script, .signing, .script],
  ]

  /// What the nodes decided, in order: "binding: success", "signing: INVALID_SIGNATURE",
  /// "binding: clientError Unsupported", "signing: keyNotFound", …
  var outcomes: [String] { lock.withLock { decisions } }
  /// The JWSs received, in order.
  var jwsReceived: [String] { lock.withLock { received } }
  func boundDevices(_ username: String) -> [Device] {
    lock.withLock { devices[universalId(username)] ?? [] }
  }

  func universalId(_ username: String) -> String { users.first { $0.username == username }!.universalId }

  private func decide(_ text: String) { lock.withLock { decisions.append(text) } }

  private static let failure = #"{"code":401,"reason":"Unauthorized","message":"Login failure"}"#

  func respond(to request: AuthenticateServer.Record) -> (Int, String) {
    if request.method == "DELETE" { return deleteBinding(request) }
    let prefix = realmPath + "/authenticate?authIndexType=service&authIndexValue="
    guard request.method == "POST", request.target.hasPrefix(prefix),
      case .object(let body)? = try? JSONParser.parse(Array(request.body.utf8))
    else { return (400, #"{"code":400,"message":"bad request"}"#) }
    let tree = String(request.target.dropFirst(prefix.count))
    guard case .string(let authId)? = body["authId"] else {
      let id = UUID().uuidString
      var session = Session(tree: tree, stage: .username)
      if tree == "SignUsernameless" {
        session.stage = .signing
        session.challenge = Self.challenge()
        lock.withLock { sessions[id] = session }
        return (200, step(id, signingCallback(userId: "", challenge: session.challenge)))
      }
      lock.withLock { sessions[id] = session }
      return (200, step(id, Self.callback("NameCallback", [("prompt", "User Name")], inputs: ["IDToken1"])))
    }
    guard var session = lock.withLock({ sessions.removeValue(forKey: authId) }) else { return (401, Self.failure) }
    let callbacks = body["callbacks"]?.arrayValue ?? []
    func input(_ type: String, _ suffix: String) -> String {
      guard let callback = callbacks.first(where: { $0["type"]?.stringValue == type }) else { return "" }
      for item in callback["input"]?.arrayValue ?? [] where item["name"]?.stringValue?.hasSuffix(suffix) == true {
        return item["value"]?.stringValue ?? ""
      }
      return ""
    }
    let next: JSON
    switch session.stage {
    case .username:
      session.user = users.first { $0.username == input("NameCallback", "IDToken1") }
      session.stage = .password
      next = Self.callback("PasswordCallback", [("prompt", "Password")], inputs: ["IDToken2"])
    case .password:
      guard let user = session.user, input("PasswordCallback", "IDToken2") == user.password else {
        decide("wrong password")
        return (401, Self.failure)
      }
      session.plan = Self.plans[session.tree] ?? [.signing]
      return advance(authId, &session)
    case .binding:
      let user = session.user!
      let jws = input("DeviceBindingCallback", "jws")
      let deviceId = input("DeviceBindingCallback", "deviceId")
      guard !jws.isEmpty, !deviceId.isEmpty else {
        let error = input("DeviceBindingCallback", "clientError")
        decide(error.isEmpty ? "binding: resent" : "binding: clientError \(error)")
        return (401, Self.failure)
      }
      lock.withLock { received.append(jws) }
      switch verifyBinding(jws, challenge: session.challenge) {
      case .failure(let reason):
        decide("binding: failure (\(reason))")
        return (401, Self.failure)
      case .success(let (kid, jwk)):
        let device = Device(
          kid: kid, jwk: jwk, deviceId: deviceId, deviceName: input("DeviceBindingCallback", "deviceName"))
        lock.withLock { devices[user.universalId, default: []].append(device) }
        decide("binding: success")
        return advance(authId, &session)
      }
    case .signing:
      let jws = input("DeviceSigningVerifierCallback", "jws")
      guard !jws.isEmpty else {
        let error = input("DeviceSigningVerifierCallback", "clientError")
        decide(error.isEmpty ? "signing: resent" : "signing: clientError \(error)")
        return (401, Self.failure)
      }
      lock.withLock { received.append(jws) }
      let outcome = verifySigning(jws, challenge: session.challenge, knownUser: session.user)
      decide("signing: \(outcome)")
      guard outcome == "success" else { return (401, Self.failure) }
      if signingLeavesJWS { session.transientState["DeviceSigningVerifierNode.JWT"] = jws }
      return advance(authId, &session)
    case .script:
      let answered: [JSON] = callbacks.filter { $0["type"]?.stringValue == "HiddenValueCallback" }.map { callback in
        let id = callback["output"]?.arrayValue?.first { $0["name"]?.stringValue == "id" }?["value"] ?? ""
        let value = callback["input"]?.arrayValue?.first?["value"] ?? ""
        return ["id": id, "value": value]
      }
      return runScript(authId, &session, callbacks: answered)
    }
    lock.withLock { sessions[authId] = session }
    return (200, step(authId, next))
  }

  /// Enters the next node of the session's plan; success when none is left.
  private func advance(_ authId: String, _ session: inout Session) -> (Int, String) {
    guard !session.plan.isEmpty else {
      if Self.plans[session.tree]?.contains(.script) == true { lock.withLock { finishedStates.append(session.sharedState) } }
      return success()
    }
    let node = session.plan.removeFirst()
    let user = session.user!
    let next: JSON
    switch node {
    case .binding:
      session.challenge = Self.challenge()
      session.stage = .binding
      next = bindingCallback(user, challenge: session.challenge)
    case .signing:
      // The node goes straight to noDeviceRegistered for a known user without devices.
      guard !(lock.withLock { devices[user.universalId] ?? [] }).isEmpty else {
        decide("signing: noDeviceRegistered")
        return (401, Self.failure)
      }
      session.challenge = Self.challenge()
      session.stage = .signing
      next = signingCallback(userId: user.universalId, challenge: session.challenge)
    case .script:
      session.stage = .script
      // Wired as the script's header says: "activated" → Device Binding in the node before the
      // signing node, "true" → success only in the node after it.
      session.scriptProceedsOn = session.plan.contains(.signing) ? "activated" : "true"
      return runScript(authId, &session, callbacks: [])
    }
    lock.withLock { sessions[authId] = session }
    return (200, step(authId, next))
  }

  /// One run of the Scripted Decision node: its callbacks are sent, its outcome followed
  /// (`scriptProceedsOn` to the next node, anything else a failure).
  private func runScript(_ authId: String, _ session: inout Session, callbacks: [JSON]) -> (Int, String) {
    for callback in callbacks {
      let entry = ("answered", callback["id"]?.stringValue ?? "", callback["value"]?.stringValue ?? "")
      lock.withLock { exchanged.append(entry) }
    }
    let context: JSON = [
      "sharedState": .object(JSONObject(session.sharedState.map { (key: $0.key, value: JSON.string($0.value)) })),
      "transientState": .object(JSONObject(session.transientState.map { (key: $0.key, value: JSON.string($0.value)) })),
      "callbacks": .array(callbacks), "config": attestationConfig,
    ]
    let result: JSON
    do { result = try AMScript.run(context: context) } catch {
      decide("attestation: error (\(error))")
      return (500, #"{"code":500,"message":"script error"}"#)
    }
    for (key, value) in result["sharedState"]?.objectValue?.members ?? [] { session.sharedState[key] = value.stringValue }
    if let sent = result["callbacks"]?.arrayValue, !sent.isEmpty {
      for callback in sent {
        let entry = ("sent", callback["id"]?.stringValue ?? "", callback["value"]?.stringValue ?? "")
        lock.withLock { exchanged.append(entry) }
      }
      let hidden = sent.map { callback in
        Self.callback(
          "HiddenValueCallback", [("value", callback["value"] ?? ""), ("id", callback["id"] ?? "")], inputs: ["IDToken1"])
      }
      lock.withLock { sessions[authId] = session }
      return (200, JSONWriter.compact(["authId": .string(authId), "callbacks": .array(hidden)]))
    }
    let outcome = result["outcome"]?.stringValue ?? "none"
    if outcome == session.scriptProceedsOn {
      decide("attestation: \(outcome)")
      session.transientState = [:]
      return advance(authId, &session)
    }
    decide("attestation: \(outcome) (\(session.sharedState["frTpmAttestation.refused"] ?? "no reason"))")
    return (401, Self.failure)
  }

  // MARK: Verification

  private enum Verdict<T> {
    case success(T)
    case failure(String)
  }

  private func verifyBinding(_ jws: String, challenge: String) -> Verdict<(String, JSON)> {
    guard let token = Self.parse(jws) else { return .failure("INVALID_JWT") }
    guard case .object(let jwk)? = token.header["jwk"] else { return .failure("no jwk") }
    guard let kid = token.header["kid"]?.stringValue, jwk["kid"]?.stringValue == kid else { return .failure("jwk kid differs") }
    if let problem = checkClaims(token.claims, challenge: challenge) { return .failure(problem) }
    guard Self.verifySignature(token, jwk: .object(jwk)) else { return .failure("INVALID_SIGNATURE") }
    return .success((kid, .object(jwk)))
  }

  private func verifySigning(_ jws: String, challenge: String, knownUser: User?) -> String {
    guard let token = Self.parse(jws) else { return "INVALID_JWT" }
    guard let sub = token.claims["sub"]?.stringValue, !sub.isEmpty else { return "INVALID_SUBJECT" }
    let user: User
    if let knownUser {
      guard sub == knownUser.universalId else { return "INVALID_SUBJECT" }
      user = knownUser
    } else {
      guard let found = users.first(where: { $0.universalId == sub }) else { return "INVALID_USER" }
      user = found
    }
    let bound = lock.withLock { devices[user.universalId] ?? [] }
    guard !bound.isEmpty else { return "noDeviceRegistered" }
    guard let kid = token.header["kid"]?.stringValue, let device = bound.first(where: { $0.kid == kid }) else {
      return "keyNotFound"
    }
    if let problem = checkClaims(token.claims, challenge: challenge) { return problem }
    guard Self.verifySignature(token, jwk: device.jwk) else { return "INVALID_SIGNATURE" }
    return "success"
  }

  /// The claim checks both nodes make, with 30 s clock skew.
  private func checkClaims(_ claims: JSON, challenge: String) -> String? {
    let now = Date().timeIntervalSince1970
    guard claims["challenge"]?.stringValue == challenge else { return "INVALID_CLAIM challenge" }
    guard claims["sub"]?.stringValue != nil else { return "INVALID_CLAIM sub" }
    guard let iss = claims["iss"]?.stringValue, applicationIds.contains(iss) else { return "INVALID_CLAIM iss" }
    guard let exp = claims["exp"]?.numberValue, exp + 30 >= now else { return "INVALID_CLAIM exp" }
    if let nbf = claims["nbf"]?.numberValue, nbf - 30 > now { return "INVALID_CLAIM nbf" }
    if let iat = claims["iat"]?.numberValue, iat - 30 > now { return "INVALID_CLAIM iat" }
    return nil
  }

  struct Token {
    var header: JSON
    var claims: JSON
    var signingInput: String
    var signature: Data
  }

  static func parse(_ jws: String) -> Token? {
    let parts = jws.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
    guard parts.count == 3, let header = base64URL(parts[0]), let claims = base64URL(parts[1]),
      let signature = base64URL(parts[2]),
      let headerJSON = try? JSONParser.parse(Array(header)), let claimsJSON = try? JSONParser.parse(Array(claims))
    else { return nil }
    return Token(header: headerJSON, claims: claimsJSON, signingInput: parts[0] + "." + parts[1], signature: signature)
  }

  /// ES256: the raw 64-byte R‖S over the signing input, with the EC JWK's x and y.
  static func verifySignature(_ token: Token, jwk: JSON) -> Bool {
    guard token.header["alg"]?.stringValue == "ES256", jwk["kty"]?.stringValue == "EC", jwk["crv"]?.stringValue == "P-256",
      let x = jwk["x"]?.stringValue.flatMap(base64URL), let y = jwk["y"]?.stringValue.flatMap(base64URL),
      x.count == 32, y.count == 32, token.signature.count == 64,
      let key = try? P256.Signing.PublicKey(rawRepresentation: x + y),
      let signature = try? P256.Signing.ECDSASignature(rawRepresentation: token.signature)
    else { return false }
    return key.isValidSignature(signature, for: Data(token.signingInput.utf8))
  }

  static func base64URL(_ text: String) -> Data? {
    var standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
    while standard.count % 4 != 0 { standard += "=" }
    return Data(base64Encoded: standard)
  }

  // MARK: REST

  private func deleteBinding(_ request: AuthenticateServer.Record) -> (Int, String) {
    let prefix = realmPath + "/users/"
    guard request.target.hasPrefix(prefix), request.headers["accept-api-version"] == "resource=1.0",
      request.headers["iplanetdirectorypro"] == token
    else {
      decide("delete: refused")
      return (401, #"{"code":401,"reason":"Unauthorized","message":"Access Denied"}"#)
    }
    let rest = request.target.dropFirst(prefix.count).split(separator: "/").map(String.init)
    guard rest.count == 5, rest[1] == "devices", rest[2] == "2fa", rest[3] == "binding",
      let userId = rest[0].removingPercentEncoding
    else { return (400, #"{"code":400,"message":"bad path"}"#) }
    let removed = lock.withLock { () -> Bool in
      let before = devices[userId]?.count ?? 0
      devices[userId]?.removeAll { $0.kid == rest[4] }
      return (devices[userId]?.count ?? 0) < before
    }
    decide(removed ? "delete: \(rest[4])" : "delete: not found")
    return removed ? (200, JSONWriter.compact(["_id": .string(rest[4])])) : (404, #"{"code":404,"message":"Not Found"}"#)
  }

  // MARK: Steps

  private func success() -> (Int, String) {
    (200, JSONWriter.compact(["tokenId": .string(token), "successUrl": "/am/console", "realm": "/alpha"]))
  }

  private static func challenge() -> String {
    Data((0..<32).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
  }

  private func step(_ authId: String, _ callback: JSON) -> String {
    JSONWriter.compact(["authId": .string(authId), "callbacks": [callback], "header": "Sign in"])
  }

  private func bindingCallback(_ user: User, challenge: String) -> JSON {
    Self.callback(
      "DeviceBindingCallback",
      [
        ("userId", .string(user.universalId)), ("username", .string(callbackUsernames[user.username] ?? user.username)),
        ("authenticationType", .string(authenticationType)), ("challenge", .string(challenge)),
        ("title", .string(title)), ("subtitle", "Cryptography device binding"),
        ("description", "Please complete with biometric to proceed"), ("timeout", .number(Double(timeout))),
        ("attestation", .bool(attestation)),
      ], inputs: ["IDToken1jws", "IDToken1deviceName", "IDToken1deviceId", "IDToken1clientError"])
  }

  private func signingCallback(userId: String, challenge: String) -> JSON {
    Self.callback(
      "DeviceSigningVerifierCallback",
      [
        ("userId", .string(userId)), ("challenge", .string(challenge)), ("title", .string(title)),
        ("subtitle", "Cryptography device binding"), ("description", "Please complete with biometric to proceed"),
        ("timeout", .number(Double(timeout))),
      ], inputs: ["IDToken1jws", "IDToken1clientError"])
  }

  static func callback(_ type: String, _ output: [(String, JSON)], inputs: [String]) -> JSON {
    [
      "type": .string(type), "output": .array(output.map { ["name": .string($0.0), "value": $0.1] }),
      "input": .array(inputs.map { ["name": .string($0), "value": ""] }),
    ]
  }
}
