import Crypto
import DeviceIdentity
import ProfileJSON
import TPMProtocol

/// The client half of TPM attestation (docs/tpm.md), with the TPM commands beside it
/// (TPMEvidence.swift): the request (the EK, its certificate, the attestation key), the answer
/// to a verifier's credential challenge, and the evidence for a key — TPM2_Certify by the AK
/// over SHA-256 of a journey's challenge — which `DeviceBinder` adds to binding and signing
/// JWSs as the claim `tpmEvidence`. The documents are TPMProtocol's, shared with the verifier.
///
/// The AK is made once and kept, TPM-wrapped, in `<state-dir>/attestation-key.json` (mode
/// 0600) with the name of the EK it was first presented with. A TPM that was cleared (the AK
/// no longer loads) or replaced (another EK) is reported as `TPMError.tpmChanged` with
/// the way out, never answered with a silent new key.
package final class TPMAttester: @unchecked Sendable {
  package static let fileName = "attestation-key.json"
  package let tcti: String
  /// The state directory (absolute path).
  package let stateDirectory: String
  /// Set once this attester answered a credential challenge: from then on its evidence is
  /// attached to binding and signing JWSs (a verifier that never activated the AK could not
  /// check it).
  package private(set) var activated = false

  /// `activated`: the verifier activated this device's AK earlier (`fr-profile attest answer`),
  /// so evidence is attached from the start.
  package init(tcti: String, stateDirectory: String, activated: Bool = false) {
    self.tcti = tcti
    self.stateDirectory = stateDirectory
    self.activated = activated
  }

  /// What `attestation-key.json` holds.
  struct Record {
    var endorsementKeyType: TPMContext.EndorsementKeyType
    var endorsementKeyName: [UInt8]
    var attestationKey: TPMKeyBlob

    var json: JSON {
      [
        "v": 1, "ekType": .string(endorsementKeyType.rawValue), "ekName": .string(Base64URL.encode(endorsementKeyName)),
        "ak": .string(Base64URL.encode(attestationKey.bytes)),
      ]
    }

    init(endorsementKeyType: TPMContext.EndorsementKeyType, endorsementKeyName: [UInt8], attestationKey: TPMKeyBlob) {
      self.endorsementKeyType = endorsementKeyType
      self.endorsementKeyName = endorsementKeyName
      self.attestationKey = attestationKey
    }

    init?(json: JSON) {
      guard json["v"]?.numberValue == 1, let type = json["ekType"]?.stringValue.flatMap(TPMContext.EndorsementKeyType.init(rawValue:)),
        let name = json["ekName"]?.stringValue.flatMap(Base64URL.decode), let ak = json["ak"]?.stringValue.flatMap(Base64URL.decode),
        let blob = try? TPMKeyBlob(bytes: ak)
      else { return nil }
      self.init(endorsementKeyType: type, endorsementKeyName: name, attestationKey: blob)
    }
  }

  /// The first message: this TPM's EK (the certified one, `certifiedEndorsementKey`), its
  /// certificate and the AK — made now when there is none; with `replace`, made anew (after the
  /// TPM changed and the user chose to start over).
  package func request(replace: Bool = false) throws(TPMError) -> JSON {
    let directory = try directory()
    let lock = try Self.stateCall { () throws(StateDirectoryError) in try directory.lock() }
    defer { _ = lock }
    let existing = replace ? nil : try load(directory)
    // The kept AK when it belongs to this TPM's EK (nil when it does not), else a new one.
    let (ekType, endorsementKey, certificate, attestationKey) = try tpm { (tpm) throws(TPMError) in
      var (type, certificate) = try tpm.certifiedEndorsementKey()
      if let existing, existing.endorsementKeyType != type {
        type = existing.endorsementKeyType
        certificate = try tpm.endorsementCertificate(type)
      }
      let endorsementKey = try tpm.endorsementPublicArea(type)
      guard let existing else { return (type, endorsementKey, certificate, try tpm.createAttestationKey() as TPMKeyBlob?) }
      guard existing.endorsementKeyName == TPMPublic.name(area: endorsementKey.dropFirst(2)) else {
        return (type, endorsementKey, certificate, nil)
      }
      try tpm.verifyLoads(existing.attestationKey)
      return (type, endorsementKey, certificate, existing.attestationKey)
    }
    guard let attestationKey else {
      throw .tpmChanged(
        detail:
          "this TPM's endorsement key is not the one the attestation key in \(stateDirectory)/\(Self.fileName) was made with: the TPM was replaced, or its endorsement hierarchy cleared"
      )
    }
    if existing == nil {
      let record = Record(
        endorsementKeyType: ekType, endorsementKeyName: TPMPublic.name(area: endorsementKey.dropFirst(2)), attestationKey: attestationKey)
      let bytes = Array(JSONWriter.compact(record.json).utf8)
      _ = try Self.stateCall { () throws(StateDirectoryError) in try directory.write(Self.fileName, bytes, mode: 0o600, replace: true) }
    }
    return AttestationRequest(
      endorsementKeyType: ekType.rawValue, endorsementKey: endorsementKey, endorsementCertificate: certificate,
      attestationKey: attestationKey.publicArea
    ).json
  }

  /// The answer to a challenge: the credential the TPM releases through its EK for the AK.
  package func answer(_ challenge: AttestationChallenge) throws(TPMError) -> JSON {
    let record = try existing()
    let released = try tpm { (tpm) throws(TPMError) in
      try tpm.activateCredential(
        attestationKey: record.attestationKey, credentialBlob: challenge.credentialBlob, encryptedSecret: challenge.encryptedSecret,
        endorsementKey: record.endorsementKeyType)
    }
    activated = true
    return AttestationAnswer(secret: released).json
  }

  /// The `tpmEvidence` claim for `key` (a TPM-wrapped key blob) over `challenge`.
  package func evidence(forKeyBlob key: [UInt8], authValue: [UInt8], challenge: String) throws(TPMError) -> JSON {
    let record = try existing()
    let nonce = AttestationProtocol.nonce(challenge: challenge)
    let (blob, attestation, signature) = try tpm { (tpm) throws(TPMError) in
      let blob = try TPMKeyBlob.parsed(key)
      let (attestation, signature) = try tpm.certify(
        blob, attestationKey: record.attestationKey, qualifyingData: nonce, keyAuthValue: authValue)
      return (blob, attestation, signature)
    }
    return KeyCertification(
      attestation: attestation, signature: signature, attestationKey: record.attestationKey.publicArea, key: blob.publicArea
    ).json
  }

  // MARK: -

  /// A TPM session (`TPMContext.session`, which retries the TPM's transient refusals), its
  /// failure reported as the binding side reports TPM failures — except a key that no longer
  /// loads: here that means the TPM was cleared or replaced since the AK was made.
  private func tpm<T>(_ body: (TPMContext) throws(TPMError) -> T) throws(TPMError) -> T {
    do { return try TPMContext.session(tcti: tcti, body) } catch {
      if case .foreignKey(let detail) = error {
        throw .tpmChanged(detail: "a key made in this TPM no longer loads (\(detail)): the TPM was cleared or replaced")
      }
      throw error
    }
  }

  private static func stateCall<T>(_ body: () throws(StateDirectoryError) -> T) throws(TPMError) -> T {
    do { return try body() } catch { throw .attestationKey(detail: "the state directory: \(error)") }
  }

  private func directory() throws(TPMError) -> StateDirectory {
    try Self.stateCall { () throws(StateDirectoryError) in try StateDirectory.open(stateDirectory, create: true) }
  }

  private func load(_ directory: StateDirectory) throws(TPMError) -> Record? {
    guard
      let bytes = try Self.stateCall({ () throws(StateDirectoryError) in
        try directory.readBytes(Self.fileName, requirement: .secret(maximumSize: 16 << 10))
      })
    else { return nil }
    guard let json = try? JSONParser.parse(bytes), let record = Record(json: json) else {
      throw .attestationKey(
        detail: "\(stateDirectory)/\(Self.fileName) is damaged; run 'fr-profile attest request --replace' to make a new attestation key")
    }
    return record
  }

  private func existing() throws(TPMError) -> Record {
    guard let record = try load(try directory()) else {
      throw .attestationKey(detail: "there is no attestation key yet: the request round ('fr-profile attest request') comes first")
    }
    return record
  }
}
