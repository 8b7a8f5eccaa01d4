import Crypto
import Journey
import ProfileJSON
import TPMKeys
import TPMProtocol

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// A bound key created inside a hardware key store (a TPM 2.0): the store keeps only the
/// hardware-wrapped blob, useless on any other machine. For APPLICATION_PIN keys the PIN is the
/// key's authorization value: the hardware checks it and its dictionary-attack lockout counts
/// wrong PINs, on top of the software lock policy recorded here.
package struct HardwareKey: Sendable, Equatable {
  /// Which hardware store made it ("tpm").
  package var store: String
  /// The wrapped key (for a TPM: `TPMKeyBlob.bytes`).
  package var blob: [UInt8]
  /// Whether the key's authorization value is a PIN (APPLICATION_PIN).
  package var pinProtected: Bool
  /// The software lock policy of a PIN key (nil without a PIN).
  package var lockPolicy: LockPolicy?

  package init(store: String, blob: [UInt8], pinProtected: Bool, lockPolicy: LockPolicy?) {
    self.store = store
    self.blob = blob
    self.pinProtected = pinProtected
    self.lockPolicy = lockPolicy
  }

  var json: JSON {
    var object: JSONObject = [
      "protection": "hardware", "store": .string(store), "blob": .string(Base64URL.encode(blob)), "pin": .bool(pinProtected),
    ]
    if let lockPolicy { object["lockPolicy"] = .string(lockPolicy.description) }
    return .object(object)
  }

  init?(json: JSON) {
    guard let store = json["store"]?.stringValue, let text = json["blob"]?.stringValue, let blob = Base64URL.decode(text),
      let pin = json["pin"]?.boolValue
    else { return nil }
    var lockPolicy: LockPolicy?
    if let lockText = json["lockPolicy"]?.stringValue {
      guard let parsed = try? LockPolicy(parsing: lockText) else { return nil }
      lockPolicy = parsed
    }
    self.init(store: store, blob: blob, pinProtected: pin, lockPolicy: lockPolicy)
  }
}

/// Why a hardware key store failed. Wrong PINs and lockouts become client errors (`Abort`);
/// the other cases stop the command (the CLI gives each its exit code).
package enum HardwareKeyError: Error, Sendable, Equatable, CustomStringConvertible {
  /// The hardware is not usable (no TPM at the TCTI, or it went away).
  case unavailable(detail: String)
  /// The key was made by other hardware: the state directory was copied from another machine
  /// (or the TPM was cleared). Never replaced silently: bind again.
  case foreignKey(detail: String)
  /// The TPM was cleared or replaced since the attestation key was made (its EK changed, or
  /// keys made in it no longer load): what was bound in it is gone.
  case tpmChanged(detail: String)
  /// Wrong authorization value (PIN); the hardware counted it.
  case wrongAuthValue
  /// The hardware's dictionary-attack lockout is active.
  case lockout
  /// The lockout blocks a key through its parent (`TPMError.lockoutThroughParent`).
  case lockoutThroughParent
  /// The TPM did not answer in time (`TPMError.timedOut`).
  case timedOut(detail: String)
  case failed(detail: String)
  /// The hardware's library cannot be loaded (tpm2-tss is opened with dlopen on first use):
  /// `soname`, the Debian package that ships it (`debian13Package` on Debian 13), dlerror's text.
  case libraryUnavailable(soname: String, package: String, debian13Package: String, reason: String)

  package var description: String {
    switch self {
    case .unavailable(let detail): detail
    case .foreignKey(let detail): detail
    case .tpmChanged(let detail): detail
    case .wrongAuthValue: "wrong PIN"
    case .lockout:
      "the TPM is in dictionary-attack lockout and refuses every key that has a PIN, whatever the PIN (the PIN was not tried): "
        + "failed authorizations on this TPM, by any user or by unclean shutdowns, reached its limit. It recovers after the "
        + "TPM's recovery time; its owner can clear it at once (tpm2_dictionarylockout --clear-lockout)"
    case .lockoutThroughParent:
      "the TPM is in dictionary-attack lockout, and this key was made under the persistent SRK at 0x81000001, which is not noDA "
        + "(tpm2_createprimary's default attributes): the lockout blocks every key under it, with a PIN or without. It recovers "
        + "after the TPM's recovery time, or its owner clears it (tpm2_dictionarylockout --clear-lockout). New keys are no longer "
        + "made under such an SRK (only under a TCG template's, which is noDA): bind again to end this for good"
    case .failed(let detail), .timedOut(let detail): detail
    case .libraryUnavailable(let soname, let package, let debian13Package, let reason):
      "\(soname) cannot be loaded (\(reason)); install Debian package \(package)"
        + (debian13Package == package ? "" : " (\(debian13Package) on Debian 13)")
    }
  }
}

/// A `UserKeyStore` whose keys can be made and used inside hardware. `DeviceBinder` creates
/// new keys through `createKey` when `createsHardwareKeys`, and signs with keys whose material
/// is `.hardware` through `sign`.
package protocol HardwareUserKeyStore: UserKeyStore {
  /// Whether new bindings create their key in hardware.
  var createsHardwareKeys: Bool { get }
  /// Why new keys are not made in hardware although it exists (nil when they are, or when
  /// there is none): shown after a binding.
  var fallbackNote: String? { get }
  /// A new P-256 signing key, protected by `authValue` (empty: none).
  func createKey(authValue: [UInt8]) throws(HardwareKeyError) -> (blob: [UInt8], publicKey: P256.Signing.PublicKey)
  /// The public key of a stored key.
  func publicKey(of key: HardwareKey) throws(HardwareKeyError) -> P256.Signing.PublicKey
  /// ES256 over `message`: the raw 64-byte R‖S of ECDSA over its SHA-256.
  func sign(_ message: [UInt8], with key: HardwareKey, authValue: [UInt8]) throws(HardwareKeyError) -> [UInt8]
}

/// Bound keys in a TPM 2.0 (over tpm2-tss): the records and TPM-wrapped blobs are kept by
/// `records` (the file store in the state directory, with its safety), the keys live in the
/// TPM at `tcti`, reached through `connection` — the process's one connection when the caller
/// gives it (a binding's Create, its evidence's Certify and its Sign then share the storage key,
/// the loaded key and the salted session), else one of the store's own.
///
///     let store = TPMUserKeyStore(records: try FileUserKeyStore(stateDirectory: dir),
///                                 tcti: "device:/dev/tpmrm0")
///     let binder = DeviceBinder(store: store, …)   // binds and signs in the TPM
package final class TPMUserKeyStore: HardwareUserKeyStore {
  /// Where records and blobs are kept.
  package let backing: any UserKeyStore
  /// tpm2-tss's TCTI loader string (`TPMConfiguration.tcti`).
  package var tcti: String { connection.tcti }
  package let connection: TPMConnection
  package let createsHardwareKeys: Bool
  package let fallbackNote: String?

  /// `createInTPM: false` keeps using the TPM for keys already made there but creates new
  /// keys as `records` does (`--key-store file`, or `auto` without a TPM).
  package init(
    records: any UserKeyStore, tcti: String = TPMConfiguration.defaultTCTI, createInTPM: Bool = true, fallbackNote: String? = nil,
    connection: TPMConnection? = nil
  ) {
    self.backing = records
    self.connection = connection ?? TPMConnection(tcti: tcti)
    self.createsHardwareKeys = createInTPM
    self.fallbackNote = fallbackNote
  }

  /// What `--key-store auto` decides on: a store that makes new keys in the TPM when one answers
  /// at `tcti` (the first command of the connection, which the binding needs anyway); else one
  /// that makes files, with a note when the TPM's device exists but this user cannot open it
  /// (the tss group), so that falling back is never silent.
  package static func automatic(records: any UserKeyStore, tcti: String, connection: TPMConnection? = nil) -> TPMUserKeyStore {
    let connection = connection ?? TPMConnection(tcti: tcti)
    if (try? connection.run({ (tpm) throws(TPMError) in try tpm.probe() })) != nil {
      return TPMUserKeyStore(records: records, tcti: tcti, createInTPM: true, connection: connection)
    }
    var note: String?
    if let device = deviceNode(tcti), access(device, F_OK) == 0, access(device, R_OK | W_OK) != 0 {
      let reason = String(cString: strerror(errno))
      note =
        "\(device) exists but this user cannot open it (\(reason)), so the key was made as a file, not in the TPM. "
        + "To keep new keys in the TPM, add the user to the group that owns \(device) (Debian: tss; sudo usermod -aG tss USER, then log in again)"
    }
    return TPMUserKeyStore(records: records, tcti: tcti, createInTPM: false, fallbackNote: note, connection: connection)
  }

  /// The device a `device` TCTI opens: its configuration, else the kernel's resource manager.
  static func deviceNode(_ tcti: String) -> String? {
    guard tcti == "device" || tcti.hasPrefix("device:") else { return nil }
    let path = tcti.dropFirst("device".count).drop { $0 == ":" }
    return path.isEmpty ? "/dev/tpmrm0" : String(path)
  }

  package var name: String { createsHardwareKeys ? "tpm" : backing.name }

  package func records() throws(KeyStoreError) -> [UserKeyRecord] { try backing.records() }
  package func key(kid: String) throws(KeyStoreError) -> StoredUserKey? { try backing.key(kid: kid) }
  @discardableResult
  package func bind(_ key: StoredUserKey) throws(KeyStoreError) -> [String] { try backing.bind(key) }
  package func update<Result>(kid: String, _ change: (inout StoredUserKey) throws -> Result) throws -> Result? {
    try backing.update(kid: kid, change)
  }
  @discardableResult
  package func delete(kid: String) throws(KeyStoreError) -> Bool { try backing.delete(kid: kid) }
  package func damagedKeys() throws(KeyStoreError) -> [DamagedKey] { try backing.damagedKeys() }

  package func createKey(authValue: [UInt8]) throws(HardwareKeyError) -> (blob: [UInt8], publicKey: P256.Signing.PublicKey) {
    do {
      // Kept loaded: the binding's evidence and signature follow on this connection.
      let blob = try connection.run { (tpm) throws(TPMError) in try tpm.createSigningKey(authValue: authValue, keepLoaded: true) }
      return (blob.bytes, try TPMContext.publicKey(of: blob))
    } catch {
      throw Self.mapped(error, tcti: tcti)
    }
  }

  package func publicKey(of key: HardwareKey) throws(HardwareKeyError) -> P256.Signing.PublicKey {
    do { return try TPMContext.publicKey(of: TPMKeyBlob.parsed(key.blob)) } catch { throw Self.mapped(error, tcti: tcti) }
  }

  package func sign(_ message: [UInt8], with key: HardwareKey, authValue: [UInt8]) throws(HardwareKeyError) -> [UInt8] {
    do {
      let blob = try TPMKeyBlob.parsed(key.blob)
      return try connection.run { (tpm) throws(TPMError) in try tpm.sign(message, with: blob, authValue: authValue) }
    } catch {
      throw Self.mapped(error, tcti: tcti)
    }
  }

  /// The binding-side form of a TPM failure.
  package static func mapped(_ error: TPMError, tcti: String) -> HardwareKeyError {
    let (call, detail) = (error.call ?? "", error.detail ?? "")
    return switch error.code {
    case .unavailable:
      .unavailable(detail: "no usable TPM at \((error.tcti ?? "").isEmpty ? tcti : error.tcti ?? "") (\(detail))")
    case .foreignKey:
      .foreignKey(detail: "the key was made by another TPM (\(detail)): was the state directory copied from another machine?")
    case .authFailed: .wrongAuthValue
    case .lockout: .lockout
    case .lockoutThroughParent: .lockoutThroughParent
    case .tpmChanged: .tpmChanged(detail: detail)
    case .attestationKey: .failed(detail: detail)
    case .busy: .failed(detail: "the TPM stayed busy (\(call): \(detail))")
    case .corrupt: .failed(detail: "the TPM key blob is corrupt (\(error.reason ?? ""))")
    case .failed: .failed(detail: "the TPM refused \(call): \(detail)")
    case .timedOut: .timedOut(detail: "\(error) at \(tcti)")
    case .libraryUnavailable:
      .libraryUnavailable(
        soname: error.soname ?? "", package: error.package ?? "", debian13Package: error.debian13Package ?? "", reason: error.reason ?? "")
    default: .failed(detail: error.description)
    }
  }
}

extension DeviceBinder {
  /// `bind` for a store that creates keys in hardware.
  func bindInHardware(
    _ request: DeviceBindingRequest, type: AuthenticationType, hardware: any HardwareUserKeyStore, deviceId: String, deadline: Double
  ) throws -> BindingResult {
    var pin: String?
    switch type {
    case .none: break
    case .applicationPIN:
      pin = try pins.newPIN(prompt: Self.promptText(request.title, request.description), deadline: deadline)
    case .biometricOnly, .biometricAllowFallback:
      try verifyUser(type)
    }
    try checkDeadline(deadline)
    let authValue = pin.map { Array($0.utf8) } ?? []
    let (blob, publicKey) = try hardware.createKey(authValue: authValue)
    let material = HardwareKey(store: hardware.name, blob: blob, pinProtected: pin != nil, lockPolicy: pin != nil ? pins.lockPolicy : nil)

    let kid = Self.randomUUID()
    let seconds = Int(now())
    var claims = BindingJWS.claims(
      subject: request.userId, issuer: applicationId, challenge: request.challenge, seconds: seconds,
      timeout: request.timeout, binding: true)
    let evidence = try attestationClaim(blob: blob, authValue: authValue, challenge: request.challenge)
    if let evidence { claims.append((AttestationProtocol.evidenceClaim, evidence)) }
    let jws = try hardwareJWS(claims: claims, publicKey: publicKey, kid: kid, includeJWK: true) { input in
      try hardware.sign(input, with: material, authValue: authValue)
    }
    let record = UserKeyRecord(
      kid: kid, userId: request.userId, username: request.username, authType: type, createdAt: Self.iso8601(seconds),
      store: hardware.name, policies: policies)
    let key = StoredUserKey(record: record, material: .hardware(material), publicKey: BindingJWS.coordinates(publicKey))
    var result = try keep(key, jws: jws, request, deviceId, deadline)
    result.attested = evidence != nil
    return result
  }

  /// `sign` for a key kept in hardware: the PIN (if any) goes to the hardware as the key's
  /// authorization value, counted by the software lock policy as for file keys.
  func signInHardware(_ stored: StoredUserKey, key: HardwareKey, request: DeviceSigningRequest, deadline: Double) throws -> SigningResult {
    let kid = stored.record.kid
    guard let hardware = store as? any HardwareUserKeyStore else {
      throw HardwareKeyError.unavailable(
        detail:
          "the key \(kid) is in the \(key.store.uppercased()), which this key store (\(store.name)) cannot use; it is never re-made as a file"
      )
    }
    if !key.pinProtected { try verifyUser(stored.record.authType) }
    let publicKey = try hardware.publicKey(of: key)
    let seconds = Int(now())
    let claims = BindingJWS.claims(
      subject: stored.record.userId, issuer: applicationId, challenge: request.challenge, seconds: seconds,
      timeout: request.timeout, binding: false, custom: customClaims)
    let prompt = Self.promptText(request.title, request.description)
    var attested = false
    /// The JWS with the key's evidence when attesting; the PIN (if any) authorizes both the
    /// certification and the signature, and a wrong one fails the first.
    func jws(authValue: [UInt8]) throws -> String {
      var claims = claims
      if let evidence = try attestationClaim(blob: key.blob, authValue: authValue, challenge: request.challenge) {
        claims.append((AttestationProtocol.evidenceClaim, evidence))
        attested = true
      }
      return try hardwareJWS(claims: claims, publicKey: publicKey, kid: kid, includeJWK: false) { input in
        try hardware.sign(input, with: key, authValue: authValue)
      }
    }
    let signed: String
    if key.pinProtected {
      signed = try unlockPIN(policy: key.lockPolicy ?? .none, record: stored.record, prompt: prompt, deadline: deadline) {
        (pin: String) throws -> String? in
        do {
          return try jws(authValue: Array(pin.utf8))
        } catch HardwareKeyError.wrongAuthValue {
          return nil
        }
      }
    } else {
      signed = try jws(authValue: [])
    }
    var result = SigningResult(jws: signed, kid: kid)
    result.attested = attested
    return result
  }

  /// The `tpmEvidence` claim of a key when this binder attests (its attester answered a
  /// credential challenge in this walk); nil otherwise.
  private func attestationClaim(blob: [UInt8], authValue: [UInt8], challenge: String) throws -> JSON? {
    guard let attester, attester.activated else { return nil }
    do throws(TPMError) {
      return try attester.evidence(forKeyBlob: blob, authValue: authValue, challenge: challenge)
    } catch {
      let mapped = TPMUserKeyStore.mapped(error, tcti: attester.tcti)
      if mapped == .lockout || mapped == .lockoutThroughParent { throw BindingFailure(.abort, mapped.description) }
      throw mapped
    }
  }

  private func hardwareJWS(
    claims: [(String, JSON)], publicKey: P256.Signing.PublicKey, kid: String, includeJWK: Bool, signer: ([UInt8]) throws -> [UInt8]
  ) throws -> String {
    do {
      return try BindingJWS.sign(claims: claims, publicKey: publicKey, kid: kid, includeJWK: includeJWK, signer: signer)
    } catch let error as HardwareKeyError where error == .lockout || error == .lockoutThroughParent {
      throw BindingFailure(.abort, error.description)
    } catch let error as HardwareKeyError {
      throw error
    } catch let error as BindingFailure {
      throw error
    } catch let error as KeyStoreError {
      throw error
    } catch {
      throw BindingFailure(includeJWK ? .unsupported : .abort, "cannot sign the JWS: \(error)")
    }
  }
}
