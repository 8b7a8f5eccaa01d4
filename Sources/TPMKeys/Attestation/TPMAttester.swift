import Crypto
import DeviceIdentity
import ProfileJSON
import StateStore
import Synchronization
import TPMProtocol

/// The client half of TPM attestation (docs/tpm.md), with the TPM commands beside it
/// (TPMEvidence.swift): the request (the EK, its certificate, the attestation key), the answer
/// to a verifier's credential challenge, and the evidence for a key — TPM2_Certify by the AK
/// over SHA-256 of a journey's challenge — which `DeviceBinder` adds to binding and signing
/// JWSs as the claim `tpmEvidence`. The documents are TPMProtocol's, shared with the verifier.
///
/// The AK is made once and kept, TPM-wrapped, in `<state-dir>/attestation-key.json` (mode
/// 0600) with the name of the EK it was first presented with, and with what a later request
/// needs from the TPM only to confirm: the EK's public area, its certificate and
/// persistent handle, and the name of the storage key that wraps the AK. A later request
/// reads the persistent EK (ReadPublic) and the storage key's name, and sends the kept
/// document when both are unchanged: two commands and no CreatePrimary instead of twelve. A
/// TPM that was cleared (the storage key changed and the AK no longer loads) or replaced
/// (another EK) is reported as `TPMError.tpmChanged` with the way out, never answered with a
/// silent new key.
package final class TPMAttester: Sendable {
  package static let fileName = "attestation-key.json"
  /// The TPM, shared with the key store of the same process (`TPMUserKeyStore.connection`).
  package let connection: TPMConnection
  package var tcti: String { connection.tcti }
  /// The state directory (absolute path).
  package let stateDirectory: String
  /// Set once this attester answered a credential challenge: from then on its evidence is
  /// attached to binding and signing JWSs (a verifier that never activated the AK could not
  /// check it).
  package var activated: Bool { activation.load(ordering: .acquiring) }
  private let activation: Atomic<Bool>

  /// `activated`: the verifier activated this device's AK earlier (`fr-profile attest answer`),
  /// so evidence is attached from the start.
  package init(connection: TPMConnection, stateDirectory: String, activated: Bool = false) {
    self.connection = connection
    self.stateDirectory = stateDirectory
    activation = Atomic(activated)
  }

  /// What `attestation-key.json` holds.
  struct Record: Equatable {
    var endorsementKeyType: TPMContext.EndorsementKeyType
    var endorsementKeyName: [UInt8]
    var attestationKey: TPMKeyBlob
    /// What the TPM changes only when it is cleared or replaced (absent in records written
    /// by versions that did not keep it; the next request adds it).
    var known: Known?

    struct Known: Equatable {
      /// The EK's marshalled TPM2B_PUBLIC and certificate (DER), as the request sends them.
      var endorsementKey: [UInt8]
      var endorsementCertificate: [UInt8]?
      /// Where the TPM keeps the EK (0x81010001 or 0x81010002), if it does.
      var persistentHandle: UInt32?
      /// The name of the storage key that wraps the AK: TPM2_Clear changes it.
      var storageKeyName: [UInt8]
    }

    var json: JSON {
      var object: JSONObject = [
        "v": 1, "ekType": .string(endorsementKeyType.rawValue), "ekName": .string(Base64URL.encode(endorsementKeyName)),
        "ak": .string(Base64URL.encode(attestationKey.bytes)),
      ]
      if let known {
        object["ekPublic"] = .string(Base64URL.encode(known.endorsementKey))
        if let certificate = known.endorsementCertificate { object["ekCertificate"] = .string(Base64URL.encode(certificate)) }
        if let handle = known.persistentHandle { object["ekHandle"] = .number(Double(handle)) }
        object["srkName"] = .string(Base64URL.encode(known.storageKeyName))
      }
      return .object(object)
    }

    init(endorsementKeyType: TPMContext.EndorsementKeyType, endorsementKeyName: [UInt8], attestationKey: TPMKeyBlob, known: Known?) {
      self.endorsementKeyType = endorsementKeyType
      self.endorsementKeyName = endorsementKeyName
      self.attestationKey = attestationKey
      self.known = known
    }

    init?(json: JSON) {
      guard json["v"]?.numberValue == 1, let type = json["ekType"]?.stringValue.flatMap(TPMContext.EndorsementKeyType.init(rawValue:)),
        let name = json["ekName"]?.stringValue.flatMap(Base64URL.decode), let ak = json["ak"]?.stringValue.flatMap(Base64URL.decode),
        let blob = try? TPMKeyBlob(bytes: ak)
      else { return nil }
      var known: Known?
      if let ek = json["ekPublic"]?.stringValue.flatMap(Base64URL.decode), let srk = json["srkName"]?.stringValue.flatMap(Base64URL.decode),
        TPMPublic.name(area: ek.dropFirst(2)) == name
      {
        let handle = json["ekHandle"]?.numberValue.flatMap { UInt32(exactly: $0) }
        known = Known(
          endorsementKey: ek, endorsementCertificate: json["ekCertificate"]?.stringValue.flatMap(Base64URL.decode),
          persistentHandle: handle.flatMap { [0x8101_0001, 0x8101_0002].contains($0) ? $0 : nil }, storageKeyName: srk)
      }
      self.init(endorsementKeyType: type, endorsementKeyName: name, attestationKey: blob, known: known)
    }

    /// The request document made of what is kept.
    var request: JSON? {
      guard let known else { return nil }
      return AttestationRequest(
        endorsementKeyType: endorsementKeyType.rawValue, endorsementKey: known.endorsementKey,
        endorsementCertificate: known.endorsementCertificate, attestationKey: attestationKey.publicArea
      ).json
    }
  }

  /// The first message: this TPM's EK (the certified one, `certifiedEndorsementKey`), its
  /// certificate and the AK — made now when there is none; with `replace`, made anew (after the
  /// TPM changed and the user chose to start over). When the record keeps what the last request
  /// found, the TPM is only asked whether it is still so (`confirmed`).
  package func request(replace: Bool = false) throws(TPMError) -> JSON {
    let directory = try directory()
    let lock = try stateCall { () throws(StateDirectoryError) in try directory.lock() }
    defer { _ = lock }
    let existing = replace ? nil : try load(directory)
    if let existing, let request = existing.request, try tpm({ (tpm) throws(TPMError) in try Self.confirmed(existing, tpm) }) {
      return request
    }
    // The kept AK when it belongs to this TPM's EK (nil when it does not), else a new one.
    let record = try tpm { (tpm) throws(TPMError) -> Record? in
      var (type, certificate) = try tpm.certifiedEndorsementKey()
      if let existing, existing.endorsementKeyType != type {
        type = existing.endorsementKeyType
        certificate = try tpm.endorsementCertificate(type)
      }
      let (endorsementKey, persistentHandle) = try tpm.endorsementKey(type, certificate: certificate)
      let name = TPMPublic.name(area: endorsementKey.dropFirst(2))
      let attestationKey: TPMKeyBlob
      if let existing {
        guard existing.endorsementKeyName == name else { return nil }
        try tpm.verifyLoads(existing.attestationKey)
        attestationKey = existing.attestationKey
      } else {
        attestationKey = try tpm.createAttestationKey()
      }
      let known = Record.Known(
        endorsementKey: endorsementKey, endorsementCertificate: certificate, persistentHandle: persistentHandle,
        storageKeyName: try tpm.storageKeyName(attestationKey.parent))
      return Record(endorsementKeyType: type, endorsementKeyName: name, attestationKey: attestationKey, known: known)
    }
    guard let record, let request = record.request else {
      throw .tpmChanged(
        detail:
          "this TPM's endorsement key is not the one the attestation key in \(stateDirectory)/\(Self.fileName) was made with: the TPM was replaced, or its endorsement hierarchy cleared"
      )
    }
    if record != existing {
      let bytes = Array(JSONWriter.compact(record.json).utf8)
      _ = try stateCall { () throws(StateDirectoryError) in try directory.write(Self.fileName, bytes, mode: 0o600, replace: true) }
    }
    return request
  }

  /// Whether the TPM still holds what the record keeps: the same EK (read at its persistent
  /// handle, else re-created from its template) and the same storage key above the AK — which
  /// TPM2_Clear replaces, so the AK, wrapped by it, still loads. False sends the request the
  /// long way, which finds what changed.
  static func confirmed(_ record: Record, _ tpm: TPMContext) throws(TPMError) -> Bool {
    guard let known = record.known else { return false }
    if let handle = known.persistentHandle {
      guard try tpm.persistentEndorsementKey(handle)?.tpm2b == known.endorsementKey else { return false }
    } else {
      guard try tpm.endorsementPublicArea(record.endorsementKeyType) == known.endorsementKey else { return false }
    }
    do { return try tpm.storageKeyName(record.attestationKey.parent) == known.storageKeyName } catch let error
      where error.code == .foreignKey
    { return false }
  }

  /// The answer to a challenge: the credential the TPM releases through its EK for the AK.
  package func answer(_ challenge: AttestationChallenge) throws(TPMError) -> JSON {
    let record = try existing()
    let released = try tpm { (tpm) throws(TPMError) in
      try tpm.activateCredential(
        attestationKey: record.attestationKey, credentialBlob: challenge.credentialBlob, encryptedSecret: challenge.encryptedSecret,
        endorsementKey: record.endorsementKeyType, persistentHandle: record.known?.persistentHandle,
        publicArea: record.known?.endorsementKey)
    }
    activation.store(true, ordering: .releasing)
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

  /// The boot quote: TPM2_Quote of `AttestationProtocol.bootPCRs` (SHA-256 bank) by
  /// the AK over the verifier's nonce, the PCRs' values, and `eventLog`. The values are read
  /// after the quote and must hash to its digest: a PCR extended in between (rare: the boot PCRs
  /// change at boot) makes the client quote again, up to three times.
  package func quote(_ request: BootQuoteRequest, eventLog: BootQuote.EventLogContent) throws(TPMError) -> JSON {
    let record = try existing()
    for _ in 0..<3 {
      let (attestation, signature, values) = try tpm { (tpm) throws(TPMError) in
        try tpm.quote(
          attestationKey: record.attestationKey, qualifyingData: request.nonce, bank: AttestationProtocol.bootBank,
          pcrs: AttestationProtocol.bootPCRs)
      }
      guard case .quote(_, let digest)? = (try? TPMAttest(attestation))?.attested else {
        throw .failed(call: "Esys_Quote", detail: "the TPM's answer is not a quote")
      }
      let concatenated = AttestationProtocol.bootPCRs.flatMap { values[$0] ?? [] }
      guard Array(SHA256.hash(data: concatenated)) == digest else { continue }
      return BootQuote(
        attestation: attestation, signature: signature, attestationKey: record.attestationKey.publicArea, pcrs: values, eventLog: eventLog
      ).json
    }
    throw .failed(call: "Esys_PCR_Read", detail: "the boot PCRs changed between each quote and the reading of their values, three times")
  }

  // MARK: -

  /// A TPM session (`TPMContext.session`, which retries the TPM's transient refusals), its
  /// failure reported as the binding side reports TPM failures — except a key that no longer
  /// loads: here that means the TPM was cleared or replaced since the AK was made.
  private func tpm<T: Sendable>(_ body: (TPMContext) throws(TPMError) -> T) throws(TPMError) -> T {
    do { return try connection.run(body) } catch {
      if error.code == .foreignKey {
        throw .tpmChanged(detail: "a key made in this TPM no longer loads (\(error.detail ?? "")): the TPM was cleared or replaced")
      }
      throw error
    }
  }

  private func stateCall<T>(_ body: () throws(StateDirectoryError) -> T) throws(TPMError) -> T {
    do { return try body() } catch {
      throw .attestationKey(detail: DeviceKeyStore.identityError(error, directory: stateDirectory).description)
    }
  }

  private func directory() throws(TPMError) -> StateDirectory {
    try stateCall { () throws(StateDirectoryError) in try StateDirectory.open(stateDirectory, create: true) }
  }

  private func load(_ directory: StateDirectory) throws(TPMError) -> Record? {
    guard
      let bytes = try stateCall({ () throws(StateDirectoryError) in
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
