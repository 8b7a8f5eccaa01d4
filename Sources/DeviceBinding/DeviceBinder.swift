import CHardening
import Crypto
import DeviceFacts
import Journey
import ProfileJSON
import SystemCalls
import TPMKeys
import TPMProtocol

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// Where PINs come from. Implementations read a file or a no-echo terminal prompt — never
/// argv or the environment — and must not log what they return.
package protocol PINSource: Sendable {
  /// A new PIN for a binding (a terminal asks twice); nil when the user cancelled.
  /// `deadline` is the monotonic time (`monotonicSeconds()`) by which to give up.
  func newPIN(prompt: String, policy: PINPolicy, deadline: Double) throws(BindingFailure) -> String?
  /// The PIN of an existing key; nil when the user cancelled.
  func existingPIN(prompt: String, deadline: Double) throws(BindingFailure) -> String?
}

/// Picks one of several bound keys for a usernameless signing (the SDKs' key selector):
/// returns the kid, nil when the user cancelled (`Abort`).
package typealias KeySelector = @Sendable (_ records: [UserKeyRecord]) throws(BindingFailure) -> String?

/// Answers DeviceBindingCallback and DeviceSigningVerifierCallback (what the SDKs call the
/// binder and the signer). `package`, not API: the CLI's binding commands use it, and its shape
/// is still to settle (one binding path) before journey clients get it as a product.
///
///     let binder = DeviceBinder(
///       store: try FileUserKeyStore(stateDirectory: stateDir), applicationId: "com.example.app",
///       deviceId: { id }, policyContext: PolicyContext(system: SystemSource(), biometricAvailable: { false }))
///     let outcomes = try binder.answer(&step)    // fills every binding/signing callback
package struct DeviceBinder: Sendable {
  /// The default `iss`: must be among the node's Application Ids.
  package static let defaultApplicationId = "fr-profile"

  package var store: any UserKeyStore
  /// The JWS `iss`.
  package var applicationId: String
  /// The device id sent at binding and checked at signing (fr-profile's `identifier`).
  package var deviceId: @Sendable () throws -> String
  /// The device name sent at binding.
  package var deviceName: String
  /// PINs: where they come from, which are accepted, what wrong ones cost (`PINGate`).
  package var pins: PINGate
  /// PAM user verification for BIOMETRIC_* keys; nil = not available (`Unsupported`).
  package var userVerifier: PAMUserVerifier?
  /// Policies recorded with new bindings (AM's JSON form), checked before every signing.
  package var policies: JSONObject
  package var policyEvaluator: PolicyEvaluator
  package var policyContext: PolicyContext
  /// Custom claims added to signing JWSs (names in `reservedClaims` give `Abort`).
  package var customClaims: [(String, JSON)]
  /// TPM attestation: once it answered a credential challenge, the binding and signing JWSs of
  /// TPM keys carry their evidence (claim `tpmEvidence`); file keys carry none and say so.
  package var attester: TPMAttester?
  /// Usernameless signing with several keys: the username (or userId) of the key to use.
  package var boundUser: String?
  /// Asked when several keys fit and `boundUser` is nil; nil means no one can be asked.
  package var selectKey: KeySelector?
  /// Unix seconds (for `iat`, `nbf`, `exp`, `createdAt`, PIN delays).
  package var now: @Sendable () -> Double
  /// The caller's own deadline (CLOCK_MONOTONIC seconds, e.g. a journey's --max-time): a
  /// binding or signing ends by it or by the callback's timeout, whichever comes first.
  package var deadline: Double?

  package init(
    store: any UserKeyStore, applicationId: String = DeviceBinder.defaultApplicationId,
    deviceId: @escaping @Sendable () throws -> String, deviceName: String = "",
    pins: PINGate = PINGate(), userVerifier: PAMUserVerifier? = nil,
    policies: JSONObject = JSONObject(), policyEvaluator: PolicyEvaluator = PolicyEvaluator(),
    policyContext: PolicyContext, customClaims: [(String, JSON)] = [], boundUser: String? = nil,
    selectKey: KeySelector? = nil, now: @escaping @Sendable () -> Double = { DeviceBinder.wallClock() }, deadline: Double? = nil
  ) {
    self.store = store
    self.applicationId = applicationId
    self.deviceId = deviceId
    self.deviceName = deviceName
    self.pins = pins
    self.userVerifier = userVerifier
    self.policies = policies
    self.policyEvaluator = policyEvaluator
    self.policyContext = policyContext
    self.customClaims = customClaims
    self.boundUser = boundUser
    self.selectKey = selectKey
    self.now = now
    self.deadline = deadline
  }

  /// When an interaction for a callback with `timeout` seconds must end.
  func deadline(timeout: Int) -> Double {
    min(monotonicSeconds() + Double(timeout), deadline ?? .infinity)
  }

  // MARK: - Answering steps

  /// What happened to one callback.
  package struct Outcome: Sendable, Equatable {
    package var index: Int
    package var type: String
    /// The JWS's `kid` on success.
    package var kid: String?
    /// The client error sent, with its reason.
    package var failure: BindingFailure?
    /// What the user should know about how it was done (e.g. a key made as a file because the
    /// TPM could not be opened).
    package var notes: [String] = []

    package init(index: Int, type: String, kid: String? = nil, failure: BindingFailure? = nil, notes: [String] = []) {
      self.index = index
      self.type = type
      self.kid = kid
      self.failure = failure
      self.notes = notes
    }
  }

  /// Answers every binding and signing callback of `step` in place. Client errors are sent to
  /// AM as the protocol says; store errors (`KeyStoreError`) and a malformed callback
  /// (`JourneyError`) are thrown before that callback is answered.
  @discardableResult
  package func answer(_ step: inout AuthenticateStep) throws -> [Outcome] {
    var outcomes: [Outcome] = []
    for callback in step.callbacks ?? [] {
      if let outcome = try answer(&step, callback: callback.index) { outcomes.append(outcome) }
    }
    return outcomes
  }

  /// Answers the binding or signing callback at `index` in place, the one answer path of both
  /// (a JWS, or the client error AM routes on); nil, and nothing changed, for another type.
  package func answer(_ step: inout AuthenticateStep, callback index: Int) throws -> Outcome? {
    guard let callback = step.callbacks?.first(where: { $0.index == index }) else { return nil }
    let answer: DeviceBindingAnswer
    let outcome: Outcome
    if let request = try DeviceBindingRequest(callback) {
      switch try bindOrFail(request) {
      case .success(let result):
        answer = .jws(result.jws, deviceName: result.deviceName, deviceId: result.deviceId)
        let fallback = (store as? any HardwareUserKeyStore)?.fallbackNote
        outcome = Outcome(
          index: index, type: DeviceBindingRequest.callbackType, kid: result.kid,
          notes: (fallback.map { [$0] } ?? []) + unattestedNote(result.attested))
      case .failure(let failure):
        answer = .clientError(failure.clientError.rawValue)
        outcome = Outcome(index: index, type: DeviceBindingRequest.callbackType, failure: failure)
      }
    } else if let request = try DeviceSigningRequest(callback) {
      switch try signOrFail(request) {
      case .success(let result):
        answer = .jws(result.jws)
        outcome = Outcome(index: index, type: DeviceSigningRequest.callbackType, kid: result.kid, notes: unattestedNote(result.attested))
      case .failure(let failure):
        answer = .clientError(failure.clientError.rawValue)
        outcome = Outcome(index: index, type: DeviceSigningRequest.callbackType, failure: failure)
      }
    } else {
      return nil
    }
    try step.answer(index, binding: answer)
    return outcome
  }

  /// Said when the server asked for attestation and the key could give none.
  private func unattestedNote(_ attested: Bool) -> [String] {
    guard let attester, attester.activated, !attested else { return [] }
    return [
      "the key is not in the TPM, so its JWS carries no TPM evidence (tpmEvidence): a server that requires attestation refuses it; bind with --key-store tpm"
    ]
  }

  /// `bind`, with the client error as a value (other errors still thrown).
  package func bindOrFail(_ request: DeviceBindingRequest) throws -> Result<BindingResult, BindingFailure> {
    do { return .success(try bind(request)) } catch let failure as BindingFailure { return .failure(failure) }
  }

  /// `sign`, with the client error as a value (other errors still thrown).
  package func signOrFail(_ request: DeviceSigningRequest) throws -> Result<SigningResult, BindingFailure> {
    do { return .success(try sign(request)) } catch let failure as BindingFailure { return .failure(failure) }
  }

  // MARK: - Binding

  package struct BindingResult: Sendable, Equatable {
    package var jws: String
    package var kid: String
    package var deviceName: String
    package var deviceId: String
    /// Whether the JWS carries TPM evidence (`tpmEvidence`).
    package var attested = false
  }

  /// Creates a key for `request.userId` (replacing any key of that user), protected as the
  /// request's authentication type says, and returns the binding JWS. Throws
  /// `BindingFailure` (send it as the client error) or `KeyStoreError`.
  package func bind(_ request: DeviceBindingRequest) throws -> BindingResult {
    try Self.guardSecrets()
    let deadline = deadline(timeout: request.timeout)
    if request.attestation {
      throw BindingFailure(.unsupported, "the node asks for Android key attestation, which a Linux client cannot give")
    }
    guard let type = AuthenticationType(rawValue: request.authenticationType) else {
      throw BindingFailure(.unsupported, "unknown authentication type \"\(request.authenticationType)\"")
    }
    guard !request.userId.isEmpty else { throw BindingFailure(.abort, "the callback has no userId to bind a key for") }
    for (name, value) in [("userId", request.userId), ("username", request.username)] where value.utf8.count > Self.maximumStoredText {
      throw BindingFailure(
        .abort, "the callback's \(name) is \(value.utf8.count) bytes; a bound key stores at most \(Self.maximumStoredText)")
    }
    do { try policyEvaluator.validate(policies) } catch { throw BindingFailure(.abort, error.description) }
    let deviceId = try deviceId()
    if let hardware = store as? any HardwareUserKeyStore, hardware.createsHardwareKeys {
      return try bindInHardware(request, type: type, hardware: hardware, deviceId: deviceId, deadline: deadline)
    }

    let privateKey = P256.Signing.PrivateKey()
    var scalar = Array(privateKey.rawRepresentation)
    defer { Self.erase(&scalar) }
    let material: KeyMaterial
    var publicKey: (x: String, y: String)? = BindingJWS.coordinates(privateKey.publicKey)
    switch type {
    case .none:
      material = .plain(scalar)
    case .applicationPIN:
      let pin = try pins.newPIN(prompt: Self.promptText(request.title, request.description), deadline: deadline)
      try checkDeadline(deadline)
      material = .pinProtected(try pins.seal(scalar: scalar, pin: pin))
      if pins.lockPolicy == .silent { publicKey = nil }
    case .biometricOnly, .biometricAllowFallback:
      try verifyUser(type)
      material = .plain(scalar)
    }
    try checkDeadline(deadline)

    let kid = Self.randomUUID()
    let seconds = Int(now())
    let claims = BindingJWS.claims(
      subject: request.userId, issuer: applicationId, challenge: request.challenge, seconds: seconds,
      timeout: request.timeout, binding: true)
    let jws: String
    do {
      jws = try BindingJWS.sign(claims: claims, key: privateKey, kid: kid, includeJWK: true)
    } catch {
      throw BindingFailure(.unsupported, "cannot sign the binding JWS: \(error)")
    }
    let record = UserKeyRecord(
      kid: kid, userId: request.userId, username: request.username, authType: type, createdAt: Self.iso8601(seconds),
      store: store.name, policies: policies)
    return try keep(StoredUserKey(record: record, material: material, publicKey: publicKey), jws: jws, request, deviceId, deadline)
  }

  /// Stores a new key (bound on `deviceId`) and returns the binding's result, the last step of
  /// every binding. The timeout bounds the whole interaction: past it, the half-made key goes again.
  func keep(
    _ key: StoredUserKey, jws: String, _ request: DeviceBindingRequest, _ deviceId: String, _ deadline: Double
  ) throws -> BindingResult {
    var key = key
    key.boundDeviceId = deviceId
    try store.bind(key)
    if monotonicSeconds() > deadline {
      try store.delete(kid: key.record.kid)
      throw BindingFailure(.timeout, "binding took longer than the callback's \(request.timeout) s")
    }
    return BindingResult(jws: jws, kid: key.record.kid, deviceName: deviceName, deviceId: deviceId)
  }

  // MARK: - Signing

  package struct SigningResult: Sendable, Equatable {
    package var jws: String
    package var kid: String
    /// Whether the JWS carries TPM evidence (`tpmEvidence`).
    package var attested = false
  }

  /// Signs the challenge with the key bound for `request.userId` (or, usernameless, the one
  /// key, `boundUser`'s, or the one `selectKey` picks). Throws `BindingFailure` or
  /// `KeyStoreError`.
  package func sign(_ request: DeviceSigningRequest) throws -> SigningResult {
    try Self.guardSecrets()
    let deadline = deadline(timeout: request.timeout)
    if let reserved = customClaims.first(where: { BindingJWS.reservedClaims.contains($0.0) }) {
      throw BindingFailure(.abort, "custom claim \"\(reserved.0)\" is reserved (sub, iss, challenge, iat, nbf, exp)")
    }
    let record = try chooseKey(userId: request.userId)
    guard let stored = try store.key(kid: record.kid) else {
      throw BindingFailure(.clientNotRegistered, "the key \(record.kid) is gone")
    }
    if let bound = stored.boundDeviceId, let current = try? deviceId(), bound != current {
      throw BindingFailure(
        .clientNotRegistered,
        "the key \(record.kid) was bound on another device (\(bound)); this one is \(current) — was the state directory copied? Bind this device again"
      )
    }
    if stored.record.locked {
      throw BindingFailure(
        .abort,
        "the key \(record.kid) is locked by policy \(stored.record.lockingPolicy ?? "?"); run 'fr-profile keys unlock \(record.kid)'")
    }
    if let breach = policyEvaluator.firstBreach(stored.record.policies, context: policyContext) {
      _ = try store.update(kid: record.kid) { key in
        key.record.locked = true
        key.record.lockingPolicy = breach.name
      }
      throw BindingFailure(.abort, "policy \(breach.name) is breached (\(breach.outcome.detail)): the key \(record.kid) is now locked")
    }

    var scalar: [UInt8] = []
    defer { Self.erase(&scalar) }
    switch stored.material {
    case .plain(let bytes):
      try verifyUser(stored.record.authType)
      scalar = bytes
    case .pinProtected(let sealed):
      scalar = try unlockPIN(
        policy: sealed.lockPolicy, record: stored.record, prompt: Self.promptText(request.title, request.description), deadline: deadline
      ) { pin in try sealed.open(pin: pin) }
    case .hardware(let key):
      return try signInHardware(stored, key: key, request: request, deadline: deadline)
    }
    try checkDeadline(deadline)
    let privateKey: P256.Signing.PrivateKey
    do {
      privateKey = try P256.Signing.PrivateKey(rawRepresentation: scalar)
    } catch {
      // Only a `silent` key opened with a wrong PIN lands here (2^-32 of wrong PINs).
      throw BindingFailure(.abort, "the PIN did not open the key")
    }
    let seconds = Int(now())
    let claims = BindingJWS.claims(
      subject: stored.record.userId, issuer: applicationId, challenge: request.challenge, seconds: seconds,
      timeout: request.timeout, binding: false, custom: customClaims)
    do {
      return SigningResult(
        jws: try BindingJWS.sign(claims: claims, key: privateKey, kid: record.kid, includeJWK: false), kid: record.kid)
    } catch {
      throw BindingFailure(.abort, "cannot sign: \(error)")
    }
  }

  /// The SDKs' key choice (reference §3), with `boundUser` and `selectKey` for several keys.
  func chooseKey(userId: String) throws -> UserKeyRecord {
    let records = try store.records()
    if !userId.isEmpty {
      guard let record = records.first(where: { $0.userId == userId }) else {
        throw BindingFailure(.clientNotRegistered, "no key is bound on this device for \(userId)" + damagedNote())
      }
      return record
    }
    switch records.count {
    case 0: throw BindingFailure(.clientNotRegistered, "no key is bound on this device" + damagedNote())
    case 1: return records[0]
    default:
      if let boundUser {
        let matches = records.filter { $0.username == boundUser || $0.userId == boundUser || $0.kid == boundUser }
        guard matches.count == 1 else {
          throw BindingFailure(
            .clientNotRegistered,
            matches.isEmpty ? "no bound key belongs to \(boundUser)" : "\(boundUser) matches \(matches.count) keys; give the userId or kid")
        }
        return matches[0]
      }
      guard let selectKey else {
        throw BindingFailure(
          .abort,
          "\(records.count) keys are bound and the callback names no user: pass --bound-user NAME (one of \(records.map(\.username).joined(separator: ", ")))"
        )
      }
      guard let kid = try selectKey(records), let record = records.first(where: { $0.kid == kid }) else {
        throw BindingFailure(.abort, "no key was chosen")
      }
      return record
    }
  }

  /// Before a PIN or a private key enters memory: no core dump (RLIMIT_CORE 0) and not
  /// dumpable (a same-user debugger cannot attach, /proc/self goes to root), for the rest of
  /// this process. A crash while a key is open must not write it to disk (a 31 MB
  /// core held a PIN key's scalar).
  static func guardSecrets() throws {
    guard fr_profile_forbid_core_dumps() == 0 else {
      throw BindingFailure(.abort, "cannot forbid core dumps before handling a key: \(String(cString: strerror(errno)))")
    }
  }

  /// Overwrites a key's bytes with zeros (explicit_bzero: not optimised away) once used.
  static func erase(_ bytes: inout [UInt8]) {
    bytes.withUnsafeMutableBytes { raw in
      if let base = raw.baseAddress { explicit_bzero(base, raw.count) }
    }
  }

  /// "; 2 bound key files are damaged (…)" when the store skipped some, else "".
  func damagedNote() -> String {
    guard let damaged = try? store.damagedKeys(), !damaged.isEmpty else { return "" }
    return "; \(damaged.count) bound key file\(damaged.count == 1 ? " is" : "s are") damaged and skipped "
      + "(\(damaged.map(\.kid).joined(separator: ", "))): 'fr-profile keys list' says why, 'fr-profile keys delete KID' removes one"
  }

  /// `PINGate.unlock` for `record`'s key, with this binder's store, clock and tracer check.
  func unlockPIN<Opened>(
    policy: LockPolicy, record: UserKeyRecord, prompt: String, deadline: Double, open: (String) throws -> Opened?
  ) throws -> Opened {
    try pins.unlock(
      key: record.kid, in: store, policy: policy, prompt: prompt, deadline: deadline, now: now,
      beforeTrying: {
        try checkDeadline(deadline)
        try recheckTracer(record)
      }, open: open)
  }

  /// A debugger that attached after the policy check (while the PIN was typed) could read the
  /// PIN or the key from this process: for a key under `deviceTampering`, `TracerPid` is read
  /// again, from this process's own /proc (never a `--root` tree), right before the key is
  /// unlocked. A tracer is a breach: the key locks as for any other.
  func recheckTracer(_ record: UserKeyRecord) throws {
    guard record.policies[DeviceTamperingPolicy.policyName] != nil, let tracer = currentTracerPid(), tracer != 0 else { return }
    _ = try store.update(kid: record.kid) { key in
      key.record.locked = true
      key.record.lockingPolicy = DeviceTamperingPolicy.policyName
    }
    throw BindingFailure(
      .abort,
      "policy deviceTampering is breached (process \(tracer) is tracing fr-profile): the key \(record.kid) is now locked")
  }

  func verifyUser(_ type: AuthenticationType) throws {
    guard let service = PAMUserVerifier.service(for: type) else { return }
    guard let userVerifier else { throw BindingFailure(.unsupported, "no PAM user verification is available") }
    switch try userVerifier.verify(service: service) {
    case .verified: return
    case .notConfigured:
      throw BindingFailure(
        .unsupported, "\(type.rawValue) needs the PAM service \(service) (/etc/pam.d/\(service)), which is not configured")
    case .denied(let reason): throw BindingFailure(.abort, "user verification failed: \(reason)")
    }
  }

  func checkDeadline(_ deadline: Double) throws(BindingFailure) {
    if monotonicSeconds() > deadline { throw BindingFailure(.timeout, "the user interaction outlasted the callback's timeout") }
  }

  // MARK: - Helpers

  static func promptText(_ title: String, _ description: String) -> String {
    [title, description].filter { !$0.isEmpty }.joined(separator: " — ")
  }

  /// The most bytes of a server's userId or username a binding stores with its key: AM's are
  /// tens of bytes, and what a server makes us store is shown by every later `keys list`.
  package static let maximumStoredText = 4096

  /// The longest a JWS stays valid, in seconds: its `exp` is the callback's timeout after
  /// `iat`, but never more than this. The JWS is posted as soon as it is made, so a server that
  /// asks for a timeout of years (999999999) gets an hour, not a token it could replay for decades.
  package static let maximumJWSLifetime = 3600

  /// The `exp` offset for a callback `timeout`: the timeout, capped at `maximumJWSLifetime`.
  static func jwsLifetime(_ timeout: Int) -> Int { min(max(timeout, 0), maximumJWSLifetime) }
}
