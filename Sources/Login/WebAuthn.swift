import Journey
import ProfileJSON

/// What AM's WebAuthn Registration node asks a new credential to be: the options a browser
/// hands `navigator.credentials.create`, read from the node's callbacks (`WebAuthnStep`).
public struct WebAuthnRegistration: Sendable, Equatable {
  public var challenge: [UInt8]
  /// The relying party: AM's setting, or the origin's host when AM leaves it empty (as a
  /// browser takes the page's); `WebAuthnStep.read` fills it in.
  public var relyingPartyID: String
  public var relyingPartyName: String
  /// The user handle: the bytes of AM's `userId` text, as the JavaScript SDK sends them (it
  /// does not decode the base64; the Android SDK does, and gets other bytes).
  public var userID: [UInt8]
  public var userName: String
  public var userDisplayName: String
  /// COSE algorithms in AM's order of preference (-7 ES256, -257 RS256, -8 EdDSA).
  public var algorithms: [Int]
  /// `none`, `indirect`, `direct` or `enterprise`.
  public var attestation: String
  /// `platform`, `cross-platform`, or nil for either.
  public var authenticatorAttachment: String?
  /// Whether the credential must live on the key (a resident key, for usernameless sign-in).
  public var residentKeyRequired: Bool
  /// `required`, `preferred` or `discouraged`.
  public var userVerification: String
  /// Credentials the user has already: a key holding one must not register again.
  public var excludeCredentials: [[UInt8]]
  public var timeoutMilliseconds: Int?
}

/// What AM's WebAuthn Authentication node asks of an assertion.
public struct WebAuthnAuthentication: Sendable, Equatable {
  public var challenge: [UInt8]
  public var relyingPartyID: String
  /// The credentials AM accepts; empty for usernameless sign-in with a resident key.
  public var allowCredentials: [[UInt8]]
  public var userVerification: String
  public var timeoutMilliseconds: Int?
}

/// One of the two ceremonies.
public enum WebAuthnCeremony: Sendable, Equatable {
  case registration(WebAuthnRegistration)
  case authentication(WebAuthnAuthentication)

  public var timeoutMilliseconds: Int? {
    switch self {
    case .registration(let options): options.timeoutMilliseconds
    case .authentication(let options): options.timeoutMilliseconds
    }
  }

  public var relyingPartyID: String {
    switch self {
    case .registration(let options): options.relyingPartyID
    case .authentication(let options): options.relyingPartyID
    }
  }
}

/// A step of AM's WebAuthn nodes: their `HiddenValueCallback` whose id is `webAuthnOutcome`,
/// with AM 7.0+'s `MetadataCallback` (`_type` WebAuthn) or AM 6.5's type-4
/// `TextOutputCallback` script. Read as the ForgeRock JavaScript SDK reads them
/// (fr-webauthn/index.ts, helpers.ts, script-parser.ts): the parsed `_`-prefixed members of
/// later AM releases first, then the legacy strings.
public struct WebAuthnStep: Sendable, Equatable {
  public var ceremony: WebAuthnCeremony
  /// The callback the outcome is written to.
  public var outcomeIndex: Int
  /// AM takes `{"authenticatorAttachment": …, "legacyData": …}` (`supportsJsonResponse`).
  public var supportsJSONResponse: Bool
  /// The node's own callbacks (its data and scripts), answered by the outcome alone.
  public var nodeCallbacks: Set<Int>

  /// The WebAuthn node of a step, or nil when the step has none. Throws a one-line reason when
  /// the node's data cannot be read (nothing is posted then).
  public static func read(_ requests: [(index: Int, request: CallbackRequest)]) throws(WebAuthnDataError) -> WebAuthnStep? {
    var outcomeIndex: Int?
    for (index, request) in requests {
      if case .hiddenValue(let id, _) = request, id == "webAuthnOutcome" { outcomeIndex = index }
    }
    guard let outcomeIndex else { return nil }
    var node: Set<Int> = [outcomeIndex]
    var metadata: (Int, JSONObject)?
    var script: String?
    for (index, request) in requests {
      switch request {
      case .metadata(.object(let data)) where data["relyingPartyId"] != nil || data["_type"]?.stringValue == "WebAuthn":
        if metadata == nil { metadata = (index, data) }
        node.insert(index)
      case .textOutput(let message, 4):
        // The node's scripts: the one with the options, and XUI's "Waiting for local device".
        if message.contains("webAuthnOutcome") && script == nil { script = message }
        if ScriptMessage(script: message) == .webAuthn { node.insert(index) }
      default: break
      }
    }
    let ceremony: WebAuthnCeremony
    var json = false
    if let (_, data) = metadata {
      ceremony = try Self.ceremony(fromMetadata: data)
      json = data["supportsJsonResponse"]?.boolValue == true
    } else if let script {
      ceremony = try Self.ceremony(fromScript: script)
    } else {
      throw WebAuthnDataError("the step has AM's webAuthnOutcome but neither its WebAuthn metadata nor its script")
    }
    return WebAuthnStep(ceremony: ceremony, outcomeIndex: outcomeIndex, supportsJSONResponse: json, nodeCallbacks: node)
  }

  // MARK: - AM 7.0+: the MetadataCallback

  /// The ceremony of AM 7.0+'s WebAuthn `MetadataCallback` data.
  public static func ceremony(fromMetadata data: JSONObject) throws(WebAuthnDataError) -> WebAuthnCeremony {
    guard let challengeText = data["challenge"]?.stringValue, let challenge = standardBase64(challengeText), !challenge.isEmpty else {
      throw WebAuthnDataError("its challenge is not base64")
    }
    let relyingParty = data["_relyingPartyId"]?.stringValue ?? relyingPartyID(legacy: data["relyingPartyId"]?.stringValue ?? "")
    let timeout = milliseconds(data["timeout"])
    let isRegistration: Bool
    if let action = data["_action"]?.stringValue {
      isRegistration = action == "webauthn_registration"
    } else {
      isRegistration = data["pubKeyCredParams"] != nil || data["_pubKeyCredParams"] != nil
    }
    if !isRegistration {
      let allowed: [[UInt8]]
      if let parsed = data["_allowCredentials"], case .array = parsed {
        allowed = try credentialIDs(parsed)
      } else {
        allowed = try credentialIDs(legacy: data["allowCredentials"]?.stringValue ?? data["acceptableCredentials"]?.stringValue ?? "")
      }
      return .authentication(
        WebAuthnAuthentication(
          challenge: challenge, relyingPartyID: relyingParty, allowCredentials: allowed,
          userVerification: data["userVerification"]?.stringValue ?? "preferred", timeoutMilliseconds: timeout))
    }
    let parameters: JSON
    if let parsed = data["_pubKeyCredParams"], case .array = parsed {
      parameters = parsed
    } else if let text = data["pubKeyCredParams"]?.stringValue, let parsed = looseJSONArray(text) {
      parameters = parsed
    } else if let parsed = data["pubKeyCredParams"], case .array = parsed {
      parameters = parsed
    } else {
      throw WebAuthnDataError("its pubKeyCredParams are missing or unreadable")
    }
    let selection: JSONObject
    if case .object(let parsed)? = data["_authenticatorSelection"] {
      selection = parsed
    } else if let text = data["authenticatorSelection"]?.stringValue, !text.isEmpty {
      guard case .object(let parsed)? = try? JSONParser.parse(Array(text.utf8)) else {
        throw WebAuthnDataError("its authenticatorSelection is not a JSON object")
      }
      selection = parsed
    } else {
      selection = [:]
    }
    let excluded: [[UInt8]]
    if let parsed = data["_excludeCredentials"], case .array = parsed {
      excluded = try credentialIDs(parsed)
    } else {
      excluded = try credentialIDs(legacy: data["excludeCredentials"]?.stringValue ?? "")
    }
    let userName = data["userName"]?.stringValue ?? ""
    let displayName = data["displayName"]?.stringValue ?? ""
    return .registration(
      WebAuthnRegistration(
        challenge: challenge, relyingPartyID: relyingParty, relyingPartyName: data["relyingPartyName"]?.stringValue ?? "",
        userID: Array((data["userId"]?.stringValue ?? "").utf8), userName: displayName.isEmpty ? userName : displayName,
        userDisplayName: displayName.isEmpty ? userName : displayName, algorithms: try algorithms(parameters),
        attestation: data["attestationPreference"]?.stringValue ?? "none",
        authenticatorAttachment: selection["authenticatorAttachment"]?.stringValue,
        residentKeyRequired: selection["residentKey"]?.stringValue == "required" || selection["requireResidentKey"]?.boolValue == true,
        userVerification: selection["userVerification"]?.stringValue ?? "preferred", excludeCredentials: excluded,
        timeoutMilliseconds: timeout))
  }

  /// `id: "host",` (registration) or `rpId: "host",` (authentication), or empty: AM's legacy
  /// spelling, a fragment of the script it once was (helpers.ts parseRelyingPartyId).
  static func relyingPartyID(legacy text: String) -> String {
    guard let match = text.firstMatch(of: #/(?:rpId|id):\s*"([^"]*)"/#) else { return text.trimmed }
    return String(match.1)
  }

  /// A timeout given as a number or as its text ("60000").
  static func milliseconds(_ value: JSON?) -> Int? {
    switch value {
    case .number(let number)? where number > 0 && number < 86_400_000: Int(number)
    case .string(let text)?: Int(text.trimmed).flatMap { $0 > 0 && $0 < 86_400_000 ? $0 : nil }
    default: nil
    }
  }

  /// `[{"type": "public-key", "alg": -7}, …]`, or the same without brackets and with bare keys
  /// (helpers.ts parsePubKeyArray).
  static func looseJSONArray(_ text: String) -> JSON? {
    let trimmed = text.trimmed
    if trimmed.hasPrefix("["), let parsed = try? JSONParser.parse(Array(trimmed.utf8)) { return parsed }
    let quoted = trimmed.replacing(#/(\w+):/#) { "\"\($0.1)\":" }
    return try? JSONParser.parse(Array("[\(quoted)]".utf8))
  }

  static func algorithms(_ parameters: JSON) throws(WebAuthnDataError) -> [Int] {
    guard case .array(let items) = parameters else { throw WebAuthnDataError("its pubKeyCredParams are not a list") }
    var found: [Int] = []
    for item in items {
      guard item["type"]?.stringValue == "public-key" else { continue }
      guard case .number(let alg)? = item["alg"], let value = Int(exactly: alg) else {
        throw WebAuthnDataError("a pubKeyCredParams entry has no integer alg")
      }
      found.append(value)
    }
    return found
  }

  /// Credential ids of the parsed lists: each `{"type": "public-key", "id": …}` with the id as
  /// a list of (signed or unsigned) bytes or as base64url text.
  static func credentialIDs(_ list: JSON) throws(WebAuthnDataError) -> [[UInt8]] {
    guard case .array(let items) = list else { return [] }
    var ids: [[UInt8]] = []
    for item in items {
      switch item["id"] {
      case .array(let numbers)?:
        ids.append(try bytes(numbers))
      case .string(let text)?:
        guard let id = Base64URL.decode(text) ?? standardBase64(text) else { throw WebAuthnDataError("a credential id is not base64url") }
        ids.append(id)
      default:
        throw WebAuthnDataError("a credential has no id")
      }
    }
    return ids
  }

  /// The legacy credential lists: `{ "type": "public-key", "id": new Int8Array([…]).buffer }`
  /// items (helpers.ts parseCredentials, script-parser.ts).
  static func credentialIDs(legacy text: String) throws(WebAuthnDataError) -> [[UInt8]] {
    var ids: [[UInt8]] = []
    for match in text.matches(of: #/new\s*U?[Ii]nt8Array\(\s*(\[[^\]]*\])\s*\)/#) {
      ids.append(try byteList(String(match.1)))
    }
    return ids
  }

  /// `[87, -95, 18, …]` as bytes (an Int8Array's or a Uint8Array's).
  static func byteList(_ text: String) throws(WebAuthnDataError) -> [UInt8] {
    guard case .array(let numbers)? = try? JSONParser.parse(Array(text.utf8)) else { throw WebAuthnDataError("a byte list is unreadable") }
    return try bytes(numbers)
  }

  static func bytes(_ numbers: [JSON]) throws(WebAuthnDataError) -> [UInt8] {
    var out: [UInt8] = []
    out.reserveCapacity(numbers.count)
    for number in numbers {
      guard case .number(let value) = number, let integer = Int(exactly: value), (-128...255).contains(integer) else {
        throw WebAuthnDataError("a byte list holds something other than bytes")
      }
      out.append(UInt8(truncatingIfNeeded: integer))
    }
    return out
  }

  /// Standard base64 with or without padding (AM's challenge: `atob` in the SDK).
  static func standardBase64(_ text: String) -> [UInt8]? {
    var url = ""
    for character in text.trimmed where character != "=" {
      switch character {
      case "+": url.append("-")
      case "/": url.append("_")
      case "-", "_": return nil
      default: url.append(character)
      }
    }
    return Base64URL.decode(url)
  }

  // MARK: - AM 6.5: the script

  /// The ceremony of AM 6.5's WebAuthn script (a type-4 `TextOutputCallback`'s message).
  public static func ceremony(fromScript text: String) throws(WebAuthnDataError) -> WebAuthnCeremony {
    guard let challengeMatch = text.firstMatch(of: #/challenge"*:\s*new\s*U?[Ii]nt8Array\(\s*(\[[^\]]*\])/#) else {
      throw WebAuthnDataError("its script has no challenge")
    }
    let challenge = try byteList(String(challengeMatch.1))
    let timeout = text.firstMatch(of: #/timeout"*:\s*(\d+)/#).flatMap { Int($0.1) }
    let userVerification = text.firstMatch(of: #/userVerification"*:\s*"(\w+)"/#).map { String($0.1) } ?? "preferred"
    guard text.contains("pubKeyCredParams") else {
      let list: String
      if let accepted = text.firstMatch(of: #/acceptableCredentials"*\s*=\s*\[([\s\S]*?)\];/#) {
        list = String(accepted.1)
      } else {
        list = text.firstMatch(of: #/allowCredentials"*:\s*\[([\s\S]*?)\]\s*[,}\n]/#).map { String($0.1) } ?? ""
      }
      let relyingParty = text.firstMatch(of: #/rpId"*:\s*\\*"([^"\\]*)/#).map { String($0.1) } ?? ""
      return .authentication(
        WebAuthnAuthentication(
          challenge: challenge, relyingPartyID: relyingParty, allowCredentials: try credentialIDs(legacy: list),
          userVerification: userVerification, timeoutMilliseconds: timeout))
    }
    let rp = text.firstMatch(of: #/\brp"*:\s*\{([^}]*)\}/#).map { String($0.1) } ?? ""
    let user = text.firstMatch(of: #/user"*:\s*\{([\s\S]*?)\}\s*,/#).map { String($0.1) } ?? ""
    // The list's inside, up to the last entry that ends in a number (script-parser.ts), so that
    // AM 6.5's bare keys can be quoted.
    guard let parameters = text.firstMatch(of: #/pubKeyCredParams"*:\s*\[([\s\S]*?\d\s*\})\s*\]/#).flatMap({ looseJSONArray(String($0.1)) })
    else { throw WebAuthnDataError("its script's pubKeyCredParams are unreadable") }
    let excluded = text.firstMatch(of: #/excludeCredentials"*:\s*\[([\s\S]*?)\]\s*,/#).map { String($0.1) } ?? ""
    let userName = user.firstMatch(of: #/\bname"*:\s*"([^"]*)"/#).map { String($0.1) } ?? ""
    let displayName = user.firstMatch(of: #/displayName"*:\s*"([^"]*)"/#).map { String($0.1) } ?? userName
    return .registration(
      WebAuthnRegistration(
        challenge: challenge, relyingPartyID: rp.firstMatch(of: #/\bid"*:\s*"([^"]*)"/#).map { String($0.1) } ?? "",
        relyingPartyName: rp.firstMatch(of: #/name"*:\s*"([^"]*)"/#).map { String($0.1) } ?? "",
        userID: Array((user.firstMatch(of: #/id"*:\s*Uint8Array\.from\("([^"]+)"/#).map { String($0.1) } ?? "").utf8),
        userName: userName, userDisplayName: displayName, algorithms: try algorithms(parameters),
        attestation: text.firstMatch(of: #/attestation"*:\s*"(\w+)"/#).map { String($0.1) } ?? "none",
        authenticatorAttachment: text.firstMatch(of: #/authenticatorAttachment"*:\s*"([\w-]+)"/#).map { String($0.1) },
        residentKeyRequired: text.firstMatch(of: #/requireResidentKey"*:\s*true/#) != nil
          || text.firstMatch(of: #/residentKey"*:\s*"required"/#) != nil,
        userVerification: userVerification, excludeCredentials: try credentialIDs(legacy: excluded), timeoutMilliseconds: timeout))
  }
}

/// AM's WebAuthn data could not be read.
public struct WebAuthnDataError: Error, Sendable, Equatable, CustomStringConvertible {
  public let description: String
  public init(_ description: String) { self.description = description }
}

/// Why the authenticator did not give a credential, in the browser's words: posted to AM as
/// `ERROR::<name>:<message>` (a `NotSupportedError` as `unsupported`), as the SDKs post a
/// DOMException, so the node's Error or Unsupported outcome decides what comes next.
public struct WebAuthnRefusal: Error, Sendable, Equatable, CustomStringConvertible {
  /// The DOMException's name: `NotAllowedError` (timed out, cancelled, refused), `InvalidStateError`
  /// (a key already registered), `NotSupportedError`, `SecurityError`, `UnknownError`.
  public let name: String
  public let message: String

  public init(name: String, message: String) {
    self.name = name
    self.message = message
  }

  public var description: String { "\(name): \(message)" }
}

/// A new credential as the key made it.
public struct NewCredential: Sendable, Equatable {
  /// The attestation statement's format (`packed`, `fido-u2f`, `tpm`, `none`).
  public var format: String
  /// The authenticator data, raw (not CBOR-wrapped).
  public var authenticatorData: [UInt8]
  /// The attestation statement: a CBOR map, as the key sent it.
  public var attestationStatement: [UInt8]
  public var id: [UInt8]

  public init(format: String, authenticatorData: [UInt8], attestationStatement: [UInt8], id: [UInt8]) {
    self.format = format
    self.authenticatorData = authenticatorData
    self.attestationStatement = attestationStatement
    self.id = id
  }
}

/// An assertion as the key made it.
public struct WebAuthnAssertion: Sendable, Equatable {
  /// The authenticator data, raw.
  public var authenticatorData: [UInt8]
  public var signature: [UInt8]
  public var id: [UInt8]
  /// The user handle of a resident credential; nil or empty when the key returned none.
  public var userHandle: [UInt8]?

  public init(authenticatorData: [UInt8], signature: [UInt8], id: [UInt8], userHandle: [UInt8]?) {
    self.authenticatorData = authenticatorData
    self.signature = signature
    self.id = id
    self.userHandle = userHandle
  }
}

/// The authenticators a login reaches: fr-profile's command line uses FIDO2 security keys
/// through libfido2. Each call gets the clientDataJSON the browser would make (its SHA-256 is
/// the key's client data hash) and returns what the key made, or throws `WebAuthnRefusal` to
/// post it to AM; any other error ends the login with nothing posted.
public protocol SecurityKeys: AnyObject {
  func register(_ options: WebAuthnRegistration, clientData: [UInt8], login: LoginAnswerer) throws -> NewCredential
  func authenticate(_ options: WebAuthnAuthentication, clientData: [UInt8], login: LoginAnswerer) throws -> WebAuthnAssertion
}

/// What is posted in `webAuthnOutcome`, byte for byte as the ForgeRock JavaScript SDK posts it.
public enum WebAuthnOutcome {
  /// `{"type":…,"challenge":…,"origin":…,"crossOrigin":false}`: the members and order a
  /// browser writes; the challenge base64url without padding.
  public static func clientData(create: Bool, challenge: [UInt8], origin: String) -> [UInt8] {
    var out = Array(#"{"type":"webauthn."#.utf8) + Array((create ? "create" : "get").utf8) + Array(#"","challenge":""#.utf8)
    out += Array(Base64URL.encode(challenge).utf8) + Array(#"","origin":"#.utf8)
    JSONWriter.writeString(origin, into: &out)
    out += Array(#","crossOrigin":false}"#.utf8)
    return out
  }

  /// `clientDataJSON::<attestationObject>::<credential id>[::<device name>]`.
  public static func registration(clientData: [UInt8], credential: NewCredential, attestation: String, deviceName: String?) -> String {
    let object = attestationObject(credential, keepStatement: attestation != "none")
    var outcome = "\(String(decoding: clientData, as: UTF8.self))::\(signedBytes(object))::\(Base64URL.encode(credential.id))"
    if let deviceName, !deviceName.isEmpty { outcome += "::\(deviceName)" }
    return outcome
  }

  /// `clientDataJSON::<authenticatorData>::<signature>::<credential id>[::<user handle>]`,
  /// the user handle as the text of its bytes (the SDK's arrayBufferToString).
  public static func authentication(clientData: [UInt8], assertion: WebAuthnAssertion) -> String {
    var outcome =
      "\(String(decoding: clientData, as: UTF8.self))::\(signedBytes(assertion.authenticatorData))::\(signedBytes(assertion.signature))::\(Base64URL.encode(assertion.id))"
    if let handle = assertion.userHandle, !handle.isEmpty { outcome += "::\(String(decoding: handle, as: UTF8.self))" }
    return outcome
  }

  /// A refusal: `unsupported` for NotSupportedError, else `ERROR::<name>:<message>`.
  public static func error(_ refusal: WebAuthnRefusal) -> String {
    refusal.name == "NotSupportedError" ? "unsupported" : "ERROR::\(refusal.name):\(refusal.message)"
  }

  /// `{"authenticatorAttachment":"cross-platform","legacyData":…}` (JSON.stringify's output).
  public static func json(_ legacyData: String) -> String {
    var out = Array(#"{"authenticatorAttachment":"cross-platform","legacyData":"#.utf8)
    JSONWriter.writeString(legacyData, into: &out)
    out.append(UInt8(ascii: "}"))
    return String(decoding: out, as: UTF8.self)
  }

  /// `new Int8Array(bytes).toString()`: each byte as a signed decimal, comma-separated.
  public static func signedBytes(_ bytes: [UInt8]) -> String {
    bytes.map { String(Int8(bitPattern: $0)) }.joined(separator: ",")
  }

  /// The attestation object a browser returns: the CBOR map {fmt, attStmt, authData} in that
  /// order. With attestation `none` the statement is dropped (`fmt: none`, `attStmt: {}`), as a
  /// browser does when the relying party asks for none.
  public static func attestationObject(_ credential: NewCredential, keepStatement: Bool) -> [UInt8] {
    var out: [UInt8] = [0xA3]
    cborText("fmt", into: &out)
    cborText(keepStatement ? credential.format : "none", into: &out)
    cborText("attStmt", into: &out)
    out += keepStatement && !credential.attestationStatement.isEmpty ? credential.attestationStatement : [0xA0]
    cborText("authData", into: &out)
    cborHead(major: 2, credential.authenticatorData.count, into: &out)
    out += credential.authenticatorData
    return out
  }

  static func cborText(_ text: String, into out: inout [UInt8]) {
    cborHead(major: 3, text.utf8.count, into: &out)
    out += Array(text.utf8)
  }

  /// A CBOR head with its length in the shortest form (RFC 8949 §4.2.1).
  static func cborHead(major: UInt8, _ length: Int, into out: inout [UInt8]) {
    let type = major << 5
    switch length {
    case 0..<24: out.append(type | UInt8(length))
    case 24..<256: out += [type | 24, UInt8(length)]
    case 256..<65536: out += [type | 25, UInt8(length >> 8), UInt8(length & 0xFF)]
    default: out += [type | 26] + (0..<4).map { UInt8(truncatingIfNeeded: length >> (24 - 8 * $0)) }
    }
  }
}

extension String {
  fileprivate var trimmed: String {
    var view = Substring(self)
    while let first = view.first, first.isWhitespace { view.removeFirst() }
    while let last = view.last, last.isWhitespace { view.removeLast() }
    return String(view)
  }
}
