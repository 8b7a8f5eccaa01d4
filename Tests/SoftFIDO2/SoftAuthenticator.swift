import Crypto
import CryptoExtras
import Synchronization

/// CTAP 2.0 status codes the key answers with (CTAP 2.0 §6.3); libfido2's FIDO_ERR_* values are
/// the same numbers.
public enum CTAPStatus {
  public static let success: UInt8 = 0x00
  public static let invalidCommand: UInt8 = 0x01
  public static let invalidParameter: UInt8 = 0x02
  public static let invalidCBOR: UInt8 = 0x12
  public static let cborUnexpectedType: UInt8 = 0x11
  public static let missingParameter: UInt8 = 0x14
  public static let credentialExcluded: UInt8 = 0x19
  public static let unsupportedAlgorithm: UInt8 = 0x26
  public static let unsupportedOption: UInt8 = 0x2B
  public static let invalidOption: UInt8 = 0x2C
  public static let keepaliveCancel: UInt8 = 0x2D
  public static let noCredentials: UInt8 = 0x2E
  public static let userActionTimeout: UInt8 = 0x2F
  public static let notAllowed: UInt8 = 0x30
  public static let pinInvalid: UInt8 = 0x31
  public static let pinBlocked: UInt8 = 0x32
  public static let pinAuthInvalid: UInt8 = 0x33
  public static let pinNotSet: UInt8 = 0x35
  public static let pinRequired: UInt8 = 0x36
  public static let invalidSubcommand: UInt8 = 0x3E
  public static let other: UInt8 = 0x7F
}

/// A CTAP 2.0 authenticator in software: one ES256 key per credential, PIN/UV auth protocol 1,
/// one signature counter, every change written to its state file (``SoftKeyState``).
///
/// It answers authenticatorGetInfo, MakeCredential, GetAssertion, GetNextAssertion and
/// ClientPIN (getRetries, getKeyAgreement, getPINToken). ``handle(_:)`` takes a CTAPHID_CBOR
/// message (command byte and CBOR) and gives the reply (status byte and CBOR), or, when the
/// user must touch the key, the work to finish once touched: the transport (``attach(_:)``)
/// decides when that is, by the state's `touch`.
///
/// Safe to use from several threads: the state and the power-up session (key agreement key,
/// PIN token, pending assertions) are behind one lock.
public final class SoftAuthenticator: Sendable {
  public let stateFile: String
  let engine: Mutex<Engine>

  struct Engine: Sendable {
    var state: SoftKeyState
    /// Renewed at power-up and after a wrong PIN (CTAP 2.0 §5.5.8).
    var agreementKey = P256.KeyAgreement.PrivateKey()
    let pinToken = randomBytes(32)
    var nextAssertions: PendingAssertions?
  }

  struct PendingAssertions: Sendable {
    var credentials: [SoftKeyState.Credential]
    var clientDataHash: [UInt8]
    var flags: UInt8
    var userNames: Bool
  }

  /// What a CTAPHID_CBOR request comes to.
  public enum Outcome: Sendable {
    /// The reply: status byte, then CBOR.
    case reply([UInt8])
    /// The reply once the user touches the key; the closure does the work (signs, stores).
    case afterTouch(@Sendable () -> [UInt8])
  }

  /// Reads the key from `stateFile`.
  public init(stateFile: String) throws {
    self.stateFile = stateFile
    engine = Mutex(Engine(state: try SoftKeyState.load(from: stateFile)))
  }

  public var state: SoftKeyState { engine.withLock { $0.state } }
  public var path: String { state.path }
  public var product: String { state.product }

  /// Reads the state file again (another process may have used the key since).
  public func reload() throws {
    let fresh = try SoftKeyState.load(from: stateFile)
    engine.withLock { $0.state = fresh }
  }

  public func handle(_ message: [UInt8]) -> Outcome {
    guard let command = message.first else { return .reply([CTAPStatus.invalidCommand]) }
    let parameters: CBOR
    if message.count > 1 {
      guard let decoded = try? CBOR.decode(Array(message.dropFirst())), decoded.mapValue != nil else {
        return .reply([CTAPStatus.invalidCBOR])
      }
      parameters = decoded
    } else {
      parameters = .map([])
    }
    if let status = state.failWith, command == 0x01 || command == 0x02 { return .reply([status]) }
    switch command {
    case 0x04: return .reply(getInfo())
    case 0x01: return makeCredential(parameters)
    case 0x02: return getAssertion(parameters)
    case 0x08: return .reply(getNextAssertion())
    case 0x06: return .reply(clientPIN(parameters))
    default: return .reply([CTAPStatus.invalidCommand])
    }
  }

  // MARK: authenticatorGetInfo (0x04)

  func getInfo() -> [UInt8] {
    let state = self.state
    let info: CBOR = .map([
      CBORPair(.int(1), .array([.text("FIDO_2_0")])),
      CBORPair(.int(3), .bytes(state.aaguid)),
      CBORPair(
        .int(4),
        .map([
          CBORPair(.text("rk"), .bool(true)), CBORPair(.text("up"), .bool(true)), CBORPair(.text("plat"), .bool(false)),
          CBORPair(.text("clientPin"), .bool(state.pin != nil)),
        ])),
      CBORPair(.int(5), .int(1200)),
      CBORPair(.int(6), .array([.int(1)])),
    ])
    return [CTAPStatus.success] + info.encoded
  }

  // MARK: user verification

  /// What a request's pinAuth (or its absence) comes to: verified, not verified, or an error
  /// now, or the error after a touch (a zero-length pinAuth: libfido2's "touch begin").
  enum Verification {
    case verified(Bool)
    case error(UInt8)
    case touchThen(UInt8)
  }

  func verify(
    pinAuth: CBOR?, protocol pinProtocol: CBOR?, options: CBOR?, clientDataHash: [UInt8], pinDemanded: Bool
  ) -> Verification {
    let pinSet = state.pin != nil
    if options?["uv"]?.boolValue == true {
      // No built-in user verification: with a PIN set the platform must send pinAuth.
      return .error(pinSet ? CTAPStatus.pinRequired : CTAPStatus.unsupportedOption)
    }
    guard let pinAuth else {
      return pinSet && pinDemanded ? .error(CTAPStatus.pinRequired) : .verified(false)
    }
    guard let auth = pinAuth.bytesValue else { return .error(CTAPStatus.cborUnexpectedType) }
    if auth.isEmpty { return .touchThen(pinSet ? CTAPStatus.pinInvalid : CTAPStatus.pinNotSet) }
    guard pinProtocol?.intValue == 1 else { return .error(CTAPStatus.pinAuthInvalid) }
    guard pinSet else { return .error(CTAPStatus.pinNotSet) }
    let token = engine.withLock { $0.pinToken }
    let expected = Array(HMAC<SHA256>.authenticationCode(for: clientDataHash, using: SymmetricKey(data: token)).prefix(16))
    return auth == expected ? .verified(true) : .error(CTAPStatus.pinAuthInvalid)
  }

  // MARK: authenticatorMakeCredential (0x01)

  func makeCredential(_ p: CBOR) -> Outcome {
    guard let cdhItem = p[1], let rp = p[2], let user = p[3], let params = p[4] else {
      return .reply([CTAPStatus.missingParameter])
    }
    guard let clientDataHash = cdhItem.bytesValue, rp.mapValue != nil, let rpId = rp["id"]?.textValue,
      user.mapValue != nil, let userId = user["id"]?.bytesValue, let paramList = params.arrayValue
    else { return .reply([CTAPStatus.cborUnexpectedType]) }
    guard paramList.contains(where: { $0["alg"]?.intValue == -7 && $0["type"]?.textValue == "public-key" }) else {
      return .reply([CTAPStatus.unsupportedAlgorithm])
    }
    let options = p[7]
    if options?["up"] != nil { return .reply([CTAPStatus.invalidOption]) }
    let resident = options?["rk"]?.boolValue ?? false
    let verification = verify(
      pinAuth: p[8], protocol: p[9], options: options, clientDataHash: clientDataHash, pinDemanded: true)
    let verified: Bool
    switch verification {
    case .error(let status): return .reply([status])
    case .touchThen(let status): return .afterTouch { () -> [UInt8] in [status] }
    case .verified(let value): verified = value
    }
    if let excluded = p[5]?.arrayValue {
      let ids = excluded.compactMap { $0["id"]?.bytesValue }
      if state.credentials.contains(where: { $0.rpId == rpId && ids.contains($0.id) }) {
        return .reply([CTAPStatus.credentialExcluded])
      }
    }
    let credential = SoftKeyState.Credential(
      id: randomBytes(32), rpId: rpId, userId: userId, userName: user["name"]?.textValue,
      displayName: user["displayName"]?.textValue, privateKey: Array(P256.Signing.PrivateKey().rawRepresentation),
      resident: resident)
    return .afterTouch { [self] in
      self.register(credential, clientDataHash: clientDataHash, verified: verified)
    }
  }

  func register(_ credential: SoftKeyState.Credential, clientDataHash: [UInt8], verified: Bool) -> [UInt8] {
    engine.withLock { engine in
      var state = engine.state
      state.counter &+= 1
      if credential.resident {
        // One discoverable credential per account: a new one replaces the old (CTAP 2.0 §5.1 step 9).
        state.credentials.removeAll { $0.resident && $0.rpId == credential.rpId && $0.userId == credential.userId }
      }
      state.credentials.append(credential)
      guard (try? state.save(to: stateFile)) != nil, let key = try? P256.Signing.PrivateKey(rawRepresentation: credential.privateKey)
      else { return [CTAPStatus.other] }
      engine.state = state
      let point = Array(key.publicKey.rawRepresentation)
      let coseKey: CBOR = .map([
        CBORPair(.int(1), .int(2)), CBORPair(.int(3), .int(-7)), CBORPair(.int(-1), .int(1)),
        CBORPair(.int(-2), .bytes(Array(point[0..<32]))), CBORPair(.int(-3), .bytes(Array(point[32..<64]))),
      ])
      let flags: UInt8 = 0x01 | (verified ? 0x04 : 0) | 0x40
      var authData = Self.rpIdHash(credential.rpId) + [flags] + Self.bigEndian(state.counter)
      authData += state.aaguid + [UInt8(credential.id.count >> 8), UInt8(credential.id.count & 0xFF)] + credential.id
      authData += coseKey.encoded
      let attestationStatement: CBOR
      switch state.attestation {
      case .none: attestationStatement = .map([])
      case .packed:
        guard let signature = try? key.signature(for: authData + clientDataHash) else { return [CTAPStatus.other] }
        attestationStatement = .map([
          CBORPair(.text("alg"), .int(-7)), CBORPair(.text("sig"), .bytes(Array(signature.derRepresentation))),
        ])
      }
      let reply: CBOR = .map([
        CBORPair(.int(1), .text(state.attestation.rawValue)), CBORPair(.int(2), .bytes(authData)),
        CBORPair(.int(3), attestationStatement),
      ])
      return [CTAPStatus.success] + reply.encoded
    }
  }

  // MARK: authenticatorGetAssertion (0x02), authenticatorGetNextAssertion (0x08)

  func getAssertion(_ p: CBOR) -> Outcome {
    guard let rpItem = p[1], let cdhItem = p[2] else { return .reply([CTAPStatus.missingParameter]) }
    guard let rpId = rpItem.textValue, let clientDataHash = cdhItem.bytesValue else {
      return .reply([CTAPStatus.cborUnexpectedType])
    }
    let options = p[5]
    if options?["rk"] != nil { return .reply([CTAPStatus.invalidOption]) }
    let userPresence = options?["up"]?.boolValue ?? true
    let verified: Bool
    switch verify(pinAuth: p[6], protocol: p[7], options: options, clientDataHash: clientDataHash, pinDemanded: false) {
    case .error(let status): return .reply([status])
    case .touchThen(let status): return .afterTouch { () -> [UInt8] in [status] }
    case .verified(let value): verified = value
    }
    let stored = state.credentials.filter { $0.rpId == rpId }
    let found: [SoftKeyState.Credential]
    let byAllowList: Bool
    if let allowed = p[3]?.arrayValue, !allowed.isEmpty {
      let ids = allowed.compactMap { $0["id"]?.bytesValue }
      found = stored.filter { ids.contains($0.id) }.prefix(1).map { $0 }
      byAllowList = true
    } else {
      found = stored.filter(\.resident).reversed()  // most recent first
      byAllowList = false
    }
    guard !found.isEmpty else { return .reply([CTAPStatus.noCredentials]) }
    let flags: UInt8 = (userPresence ? 0x01 : 0) | (verified ? 0x04 : 0)
    let pending = PendingAssertions(
      credentials: found, clientDataHash: clientDataHash, flags: flags, userNames: verified && found.count > 1)
    let work: @Sendable () -> [UInt8] = { [self] in
      self.engine.withLock { engine in
        engine.nextAssertions = nil
        let reply = self.assert(
          found[0], pending: pending, engine: &engine, count: byAllowList || found.count == 1 ? nil : found.count)
        if found.count > 1 {
          var rest = pending
          rest.credentials.removeFirst()
          engine.nextAssertions = rest
        }
        return reply
      }
    }
    return userPresence ? .afterTouch(work) : .reply(work())
  }

  func getNextAssertion() -> [UInt8] {
    engine.withLock { engine in
      guard var pending = engine.nextAssertions, let credential = pending.credentials.first else {
        return [CTAPStatus.notAllowed]
      }
      let reply = assert(credential, pending: pending, engine: &engine, count: nil)
      pending.credentials.removeFirst()
      engine.nextAssertions = pending.credentials.isEmpty ? nil : pending
      return reply
    }
  }

  /// Signs one assertion: the counter goes up (and is saved) first.
  func assert(_ credential: SoftKeyState.Credential, pending: PendingAssertions, engine: inout Engine, count: Int?) -> [UInt8] {
    var state = engine.state
    state.counter &+= 1
    guard (try? state.save(to: stateFile)) != nil, let key = try? P256.Signing.PrivateKey(rawRepresentation: credential.privateKey)
    else { return [CTAPStatus.other] }
    engine.state = state
    let authData = Self.rpIdHash(credential.rpId) + [pending.flags] + Self.bigEndian(state.counter)
    guard let signature = try? key.signature(for: authData + pending.clientDataHash) else { return [CTAPStatus.other] }
    var members = [
      CBORPair(.int(1), .map([CBORPair(.text("id"), .bytes(credential.id)), CBORPair(.text("type"), .text("public-key"))])),
      CBORPair(.int(2), .bytes(authData)),
      CBORPair(.int(3), .bytes(Array(signature.derRepresentation))),
    ]
    if credential.resident {
      // The user's name only after user verification, and only to choose among several
      // (CTAP 2.0 §5.2: "User identifiable information … MUST not be returned if user
      // verification is not done by the authenticator").
      var user = [CBORPair(.text("id"), .bytes(credential.userId))]
      if pending.userNames {
        if let name = credential.userName { user.append(CBORPair(.text("name"), .text(name))) }
        if let name = credential.displayName { user.append(CBORPair(.text("displayName"), .text(name))) }
      }
      members.append(CBORPair(.int(4), .map(user)))
    }
    if let count { members.append(CBORPair(.int(5), .int(count))) }
    return [CTAPStatus.success] + CBOR.map(members).encoded
  }

  // MARK: authenticatorClientPIN (0x06), PIN/UV auth protocol 1

  func clientPIN(_ p: CBOR) -> [UInt8] {
    guard let pinProtocol = p[1]?.intValue, let subcommand = p[2]?.intValue else { return [CTAPStatus.missingParameter] }
    guard pinProtocol == 1 else { return [CTAPStatus.invalidParameter] }
    switch subcommand {
    case 0x01:
      return [CTAPStatus.success] + CBOR.map([CBORPair(.int(3), .int(state.pinRetries))]).encoded
    case 0x02:
      let point = Array(engine.withLock { $0.agreementKey.publicKey.rawRepresentation })
      let coseKey: CBOR = .map([
        CBORPair(.int(1), .int(2)), CBORPair(.int(3), .int(-25)), CBORPair(.int(-1), .int(1)),
        CBORPair(.int(-2), .bytes(Array(point[0..<32]))), CBORPair(.int(-3), .bytes(Array(point[32..<64]))),
      ])
      return [CTAPStatus.success] + CBOR.map([CBORPair(.int(1), coseKey)]).encoded
    case 0x05:
      guard let platformKey = p[3], let pinHashEnc = p[6]?.bytesValue else { return [CTAPStatus.missingParameter] }
      return getPINToken(platformKey: platformKey, pinHashEnc: pinHashEnc)
    default:
      return [CTAPStatus.invalidSubcommand]
    }
  }

  func getPINToken(platformKey: CBOR, pinHashEnc: [UInt8]) -> [UInt8] {
    engine.withLock { engine in
      guard let pin = engine.state.pin else { return [CTAPStatus.pinNotSet] }
      guard engine.state.pinRetries > 0 else { return [CTAPStatus.pinBlocked] }
      guard let x = platformKey[-2]?.bytesValue, let y = platformKey[-3]?.bytesValue, x.count == 32, y.count == 32,
        let publicKey = try? P256.KeyAgreement.PublicKey(rawRepresentation: x + y),
        let shared = try? engine.agreementKey.sharedSecretFromKeyAgreement(with: publicKey)
      else { return [CTAPStatus.invalidParameter] }
      let secret = SymmetricKey(data: SHA256.hash(data: shared.withUnsafeBytes { Array($0) }))
      var state = engine.state
      state.pinRetries -= 1
      guard (try? state.save(to: stateFile)) != nil else { return [CTAPStatus.other] }
      engine.state = state
      guard pinHashEnc.count == 16, let iv = try? AES._CBC.IV(ivBytes: [UInt8](repeating: 0, count: 16)),
        let pinHash = try? AES._CBC.decrypt(pinHashEnc, using: secret, iv: iv, noPadding: true)
      else { return [CTAPStatus.invalidParameter] }
      guard Array(pinHash) == Array(SHA256.hash(data: Array(pin.utf8)).prefix(16)) else {
        engine.agreementKey = P256.KeyAgreement.PrivateKey()
        return [state.pinRetries == 0 ? CTAPStatus.pinBlocked : CTAPStatus.pinInvalid]
      }
      state.pinRetries = SoftKeyState.maxPINRetries
      guard (try? state.save(to: stateFile)) != nil,
        let token = try? AES._CBC.encrypt(engine.pinToken, using: secret, iv: iv, noPadding: true)
      else { return [CTAPStatus.other] }
      engine.state = state
      return [CTAPStatus.success] + CBOR.map([CBORPair(.int(2), .bytes(Array(token)))]).encoded
    }
  }

  static func rpIdHash(_ rpId: String) -> [UInt8] { Array(SHA256.hash(data: Array(rpId.utf8))) }
  static func bigEndian(_ value: UInt32) -> [UInt8] { (0..<4).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }
}
