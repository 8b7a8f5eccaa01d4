// swift-format-ignore-file: NoBlockComments

import CTSS2
import TPMProtocol

/// The client half of TPM attestation: the endorsement key and its certificate, an
/// attestation key (AK), the answer to a server's credential challenge (which proves the AK
/// shares a TPM with the EK), and TPM2_Certify of a key by the AK over a server's nonce.
extension TPMContext {
  /// Which endorsement key: the TCG templates L-1 (RSA 2048, which every TPM certifies) and
  /// L-2 (ECC P-256).
  public enum EndorsementKeyType: String, Sendable {
    case rsa2048
    case eccP256
  }

  /// The endorsement key's public area (a marshalled TPM2B_PUBLIC), re-created from its TCG
  /// template: the key an EK certificate certifies.
  public func endorsementPublicArea(_ type: EndorsementKeyType = .eccP256) throws(TPMError) -> [UInt8] {
    let (handle, publicArea) = try createEndorsementKey(type)
    _ = frp_Esys_FlushContext(esys, handle)
    return publicArea
  }

  private func createEndorsementKey(_ type: EndorsementKeyType) throws(TPMError) -> (ESYS_TR, [UInt8]) {
    var template = TPM2B_PUBLIC()
    switch type {
    case .rsa2048: frp_ek_rsa_template(&template)
    case .eccP256: frp_ek_template(&template)
    }
    var sensitive = TPM2B_SENSITIVE_CREATE()
    var outsideInfo = TPM2B_DATA()
    var pcrs = TPML_PCR_SELECTION()
    var handle = ESYS_TR(ESYS_TR_NONE)
    var outPublic: UnsafeMutablePointer<TPM2B_PUBLIC>?
    makeRoom(for: 1)
    let rc = frp_Esys_CreatePrimary(
      esys, ESYS_TR(ESYS_TR_RH_ENDORSEMENT), ESYS_TR(ESYS_TR_PASSWORD), ESYS_TR(ESYS_TR_NONE), ESYS_TR(ESYS_TR_NONE),
      &sensitive, &template, &outsideInfo, &pcrs, &handle, &outPublic, nil, nil, nil)
    defer { frp_Esys_Free(outPublic) }
    guard rc == TSS2_RC_SUCCESS, let outPublic else { throw Self.error("Esys_CreatePrimary (endorsement key)", rc) }
    do {
      return (handle, try Self.marshal(outPublic))
    } catch {
      _ = frp_Esys_FlushContext(esys, handle)
      throw error
    }
  }

  /// The persistent handle the TCG reserves for the `type` EK (0x81010001, 0x81010002).
  public static func persistentHandle(_ type: EndorsementKeyType) -> UInt32 {
    type == .rsa2048 ? frp_ek_rsa_persistent_handle : frp_ek_ecc_persistent_handle
  }

  /// The `type` EK's public area (a marshalled TPM2B_PUBLIC) and, when the TPM keeps it there,
  /// its persistent handle. The key at the persistent handle is taken as the EK without
  /// re-creating it (one ReadPublic instead of a CreatePrimary, which takes seconds for an
  /// RSA key on some chips) when its area is the TCG template's for its key, byte for byte
  /// (`TPMPublic.isCanonicalEndorsementKey`), and `certificate` names that key; else the EK is
  /// re-created from its template, and the persistent key is named only if it is that EK.
  public func endorsementKey(_ type: EndorsementKeyType, certificate: [UInt8]?) throws(TPMError) -> (
    publicArea: [UInt8], persistentHandle: UInt32?
  ) {
    let handle = Self.persistentHandle(type)
    let persistent = try persistentEndorsementKey(handle)
    if let persistent, persistent.isCanonicalEndorsementKey, Self.isType(type, persistent), let certificate,
      EndorsementCertificateKey.certifies(certificate, persistent)
    {
      return (persistent.tpm2b, handle)
    }
    let created = try endorsementPublicArea(type)
    return (created, persistent?.tpm2b == created ? handle : nil)
  }

  static func isType(_ type: EndorsementKeyType, _ area: TPMPublic) -> Bool {
    switch area.material {
    case .rsa: type == .rsa2048
    case .eccP256: type == .eccP256
    }
  }

  /// The public area of the key at the persistent `handle` (one ReadPublic per connection; its
  /// handle is kept for the credential activation that follows); nil when there is none.
  public func persistentEndorsementKey(_ handle: UInt32) throws(TPMError) -> TPMPublic? {
    switch endorsementKeys[handle] ?? .unknown {
    case .absent: return nil
    case .present(_, let area): return area
    case .unknown:
      let found = try persistentObject(handle)
      endorsementKeys[handle] = found.map { .present($0.0, $0.1) } ?? .absent
      return found?.1
    }
  }

  /// The EK certificate (DER) the manufacturer stored in NV — the ECC one (0x01C0000A), else
  /// the RSA one (0x01C00002); nil when the TPM holds neither.
  public func endorsementCertificate() throws(TPMError) -> [UInt8]? {
    if let ecc = try endorsementCertificate(.eccP256) { return ecc }
    return try endorsementCertificate(.rsa2048)
  }

  /// The endorsement key a verifier can trust: the ECC P-256 one when its certificate is in NV,
  /// else the RSA 2048 one when its certificate is, else the ECC P-256 one without a certificate
  /// (a verifier then needs the EK itself on a list it keeps).
  public func certifiedEndorsementKey() throws(TPMError) -> (type: EndorsementKeyType, certificate: [UInt8]?) {
    if let der = try endorsementCertificate(.eccP256) { return (.eccP256, der) }
    if let der = try endorsementCertificate(.rsa2048) { return (.rsa2048, der) }
    return (.eccP256, nil)
  }

  /// The certificate of the `type` EK in NV (TCG EK Credential Profile: 0x01C0000A for P-256,
  /// 0x01C00002 for RSA 2048), DER; nil when that index is not defined.
  public func endorsementCertificate(_ type: EndorsementKeyType) throws(TPMError) -> [UInt8]? {
    let index = type == .eccP256 ? frp_ek_cert_ecc_index : frp_ek_cert_rsa_index
    var nv = ESYS_TR(ESYS_TR_NONE)
    // One NV_ReadPublic, whose answer ESAPI keeps with the handle: the size comes from there.
    let rc = frp_Esys_TR_FromTPMPublic(esys, index, ESYS_TR(ESYS_TR_NONE), ESYS_TR(ESYS_TR_NONE), ESYS_TR(ESYS_TR_NONE), &nv)
    guard rc == TSS2_RC_SUCCESS else {
      if rc & frp_rc_layer_mask == 0, rc & 0x80 != 0 { return nil }
      throw Self.error("Esys_TR_FromTPMPublic", rc)
    }
    defer { _ = frp_Esys_TR_Close(esys, &nv) }
    let size = try nvDataSize(nv)
    var bytes: [UInt8] = []
    // 1024 bytes a read (MAX_NV_BUFFER_SIZE of most TPMs: one read for most certificates), 512
    // (below every TPM's) after a TPM that refuses that.
    var chunk = 1024
    while bytes.count < size {
      var data: UnsafeMutablePointer<TPM2B_MAX_NV_BUFFER>?
      let rc = frp_Esys_NV_Read(
        esys, ESYS_TR(ESYS_TR_RH_OWNER), nv, ESYS_TR(ESYS_TR_PASSWORD), ESYS_TR(ESYS_TR_NONE), ESYS_TR(ESYS_TR_NONE),
        UInt16(min(size - bytes.count, chunk)), UInt16(bytes.count), &data)
      defer { frp_Esys_Free(data) }
      if rc != TSS2_RC_SUCCESS, chunk > 512, rc & frp_rc_layer_mask == 0, rc & 0x80 != 0 {
        chunk = 512
        continue
      }
      guard rc == TSS2_RC_SUCCESS, let data, data.pointee.size > 0 else { throw Self.error("Esys_NV_Read", rc) }
      bytes += withUnsafeBytes(of: data.pointee.buffer) { Array($0.prefix(Int(data.pointee.size))) }
    }
    return bytes
  }

  /// The data size of an NV index, from the public area ESAPI keeps with its handle (the
  /// serialized resource: handle, TPM2B_NAME, type 2 for NV, TPM2B_NV_PUBLIC { nvIndex, nameAlg,
  /// attributes, authPolicy, dataSize }).
  private func nvDataSize(_ nv: ESYS_TR) throws(TPMError) -> Int {
    var buffer: UnsafeMutablePointer<UInt8>?
    var count = 0
    let rc = frp_Esys_TR_Serialize(esys, nv, &buffer, &count)
    defer { frp_Esys_Free(buffer) }
    guard rc == TSS2_RC_SUCCESS, let buffer else { throw Self.error("Esys_TR_Serialize", rc) }
    var reader = TPMReader(Array(UnsafeBufferPointer(start: buffer, count: count)))
    do throws(AttestationError) {
      _ = try reader.u32()
      _ = try reader.sized()
      guard try reader.u32() == 2 else { throw .malformed("not an NV index") }
      _ = try reader.u16()
      _ = try reader.u32()
      _ = try reader.u16()
      _ = try reader.u32()
      _ = try reader.sized()
      return Int(try reader.u16())
    } catch {
      throw .corrupt(reason: "the NV index's public area: \(error)")
    }
  }

  /// A new attestation key under the storage key: restricted signing (it signs only what the
  /// TPM produced), P-256 ECDSA/SHA-256, noDA, no authValue.
  public func createAttestationKey() throws(TPMError) -> TPMKeyBlob {
    try operation { () throws(TPMError) in try createKey(authValue: [], template: frp_ak_template) }
  }

  /// Answers a credential challenge (TPM2_ActivateCredential): the TPM releases the secret only
  /// if its EK can decrypt `encryptedSecret` and `ak` is the key whose name the challenge was
  /// made for, loaded in this same TPM. `credentialBlob` and `encryptedSecret` are the contents
  /// of the TPM2B_ID_OBJECT and TPM2B_ENCRYPTED_SECRET (without their size fields). The EK is
  /// the persistent one at `persistentHandle`, whose public area `publicArea` was read and
  /// checked before (by `endorsementKey`, in this connection or an earlier one: no command),
  /// else re-created from its template. The AK stays loaded for what follows.
  public func activateCredential(
    attestationKey ak: TPMKeyBlob, credentialBlob: [UInt8], encryptedSecret: [UInt8], endorsementKey type: EndorsementKeyType = .eccP256,
    persistentHandle: UInt32? = nil, publicArea: [UInt8]? = nil
  ) throws(TPMError) -> [UInt8] {
    try operation { () throws(TPMError) -> [UInt8] in
      try activating(ak, credentialBlob, encryptedSecret, type, persistentHandle: persistentHandle, publicArea: publicArea)
    }
  }

  private func activating(
    _ ak: TPMKeyBlob, _ credentialBlob: [UInt8], _ encryptedSecret: [UInt8], _ type: EndorsementKeyType, persistentHandle: UInt32?,
    publicArea: [UInt8]?
  ) throws(TPMError) -> [UInt8] {
    let akHandle = try loaded(ak)
    if let persistentHandle, let publicArea {
      let ek: ESYS_TR
      if case .present(let handle, _) = endorsementKeys[persistentHandle] {
        ek = handle
      } else {
        ek = try persistentObject(persistentHandle, verifiedPublicArea: publicArea)
        endorsementKeys[persistentHandle] = .present(ek, try? TPMPublic(tpm2b: publicArea))
      }
      makeRoom(for: 1)  // the TPM loads the persistent EK for the command
      if let released = try activate(akHandle, ek, credentialBlob, encryptedSecret) { return released }
      // The persistent EK is gone (evicted, or the TPM cleared): re-created below.
      endorsementKeys[persistentHandle] = .absent
    }
    let (ek, _) = try createEndorsementKey(type)
    defer { _ = frp_Esys_FlushContext(esys, ek) }
    guard let released = try activate(akHandle, ek, credentialBlob, encryptedSecret) else {
      throw .failed(call: "Esys_ActivateCredential", detail: "the TPM does not know the endorsement key it just made")
    }
    return released
  }

  /// TPM2_ActivateCredential with the EK authorized by policy A (PolicySecret with the
  /// endorsement hierarchy), in a policy session the command ends. Nil when the TPM has no
  /// object at the EK's handle.
  private func activate(_ ak: ESYS_TR, _ ek: ESYS_TR, _ credentialBlob: [UInt8], _ encryptedSecret: [UInt8]) throws(TPMError) -> [UInt8]? {
    var session = ESYS_TR(ESYS_TR_NONE)
    var symmetric = TPMT_SYM_DEF()
    frp_no_symmetric(&symmetric)
    var rc = frp_Esys_StartAuthSession(
      esys, ESYS_TR(ESYS_TR_NONE), ESYS_TR(ESYS_TR_NONE), ESYS_TR(ESYS_TR_NONE), ESYS_TR(ESYS_TR_NONE), ESYS_TR(ESYS_TR_NONE), nil,
      frp_session_policy, &symmetric, frp_alg_sha256, &session)
    guard rc == TSS2_RC_SUCCESS else { throw Self.error("Esys_StartAuthSession", rc) }
    var ended = false
    defer {
      if ended { _ = frp_Esys_TR_Close(esys, &session) } else { _ = frp_Esys_FlushContext(esys, session) }
    }
    rc = frp_Esys_PolicySecret(
      esys, ESYS_TR(ESYS_TR_RH_ENDORSEMENT), session, ESYS_TR(ESYS_TR_PASSWORD), ESYS_TR(ESYS_TR_NONE), ESYS_TR(ESYS_TR_NONE), nil,
      nil, nil, 0, nil, nil)
    guard rc == TSS2_RC_SUCCESS else { throw Self.error("Esys_PolicySecret", rc) }
    // Without continueSession: the TPM flushes the session with the command's success.
    rc = frp_Esys_TRSess_SetAttributes(esys, session, 0, 0xFF)
    guard rc == TSS2_RC_SUCCESS else { throw Self.error("Esys_TRSess_SetAttributes", rc) }
    var blob = TPM2B_ID_OBJECT()
    Self.fill(&blob, credentialBlob)
    var secret = TPM2B_ENCRYPTED_SECRET()
    Self.fill(&secret, encryptedSecret)
    var info: UnsafeMutablePointer<TPM2B_DIGEST>?
    rc = frp_Esys_ActivateCredential(esys, ak, ek, ESYS_TR(ESYS_TR_PASSWORD), session, ESYS_TR(ESYS_TR_NONE), &blob, &secret, &info)
    defer { frp_Esys_Free(info) }
    if frp_rc_base(rc) == frp_rc_handle { return nil }
    guard rc == TSS2_RC_SUCCESS, let info else { throw Self.error("Esys_ActivateCredential", rc) }
    ended = true
    return withUnsafeBytes(of: info.pointee.buffer) { Array($0.prefix(Int(info.pointee.size))) }
  }

  /// TPM2_Certify of `key` by `ak` over `qualifyingData` (the server's nonce): the marshalled
  /// TPMS_ATTEST (the contents of TPM2B_ATTEST) and the AK's signature as raw R‖S. The TPM
  /// certifies only keys it has loaded, so the attestation names a key inside this TPM.
  public func certify(_ key: TPMKeyBlob, attestationKey ak: TPMKeyBlob, qualifyingData: [UInt8], keyAuthValue: [UInt8] = [])
    throws(TPMError) -> (attestation: [UInt8], signature: [UInt8])
  {
    try operation { () throws(TPMError) in try certifying(key, attestationKey: ak, qualifyingData, keyAuthValue) }
  }

  private func certifying(_ key: TPMKeyBlob, attestationKey ak: TPMKeyBlob, _ qualifyingData: [UInt8], _ keyAuthValue: [UInt8])
    throws(TPMError) -> (attestation: [UInt8], signature: [UInt8])
  {
    try throughParent(key.parent) { () throws(TPMError) in
      let akHandle = try loaded(ak)
      let keyHandle = try loaded(key)
      let auth = Self.authDigest(keyAuthValue)
      var authValue = TPM2B_AUTH()
      Self.fill(&authValue, auth)
      let rc = frp_Esys_TR_SetAuth(esys, keyHandle, &authValue)
      guard rc == TSS2_RC_SUCCESS else { throw Self.error("Esys_TR_SetAuth", rc) }
      // A PIN key's authValue reaches the TPM only as the salted session's HMAC.
      let session = auth.isEmpty ? ESYS_TR(ESYS_TR_PASSWORD) : try authorizationSession(continuing: true)
      return try certify(keyHandle, by: akHandle, session: session, qualifyingData)
    }
  }

  private func certify(_ keyHandle: ESYS_TR, by akHandle: ESYS_TR, session: ESYS_TR, _ qualifyingData: [UInt8]) throws(TPMError) -> (
    attestation: [UInt8], signature: [UInt8]
  ) {
    var data = TPM2B_DATA()
    Self.fill(&data, qualifyingData)
    var scheme = TPMT_SIG_SCHEME()
    frp_ecdsa_scheme(&scheme)
    var info: UnsafeMutablePointer<TPM2B_ATTEST>?
    var signature: UnsafeMutablePointer<TPMT_SIGNATURE>?
    let rc = frp_Esys_Certify(
      esys, keyHandle, akHandle, session, ESYS_TR(ESYS_TR_PASSWORD), ESYS_TR(ESYS_TR_NONE), &data, &scheme, &info, &signature)
    used(session, succeeded: rc == TSS2_RC_SUCCESS)
    defer {
      frp_Esys_Free(info)
      frp_Esys_Free(signature)
    }
    guard rc == TSS2_RC_SUCCESS, let info, let signature else { throw Self.error("Esys_Certify", rc) }
    return Self.signed(info, signature)
  }

  /// What TPM2_Certify and TPM2_Quote return: the TPMS_ATTEST's bytes and the ECDSA signature as
  /// R ‖ S (each padded to 32 bytes).
  static func signed(_ info: UnsafeMutablePointer<TPM2B_ATTEST>, _ signature: UnsafeMutablePointer<TPMT_SIGNATURE>) -> (
    attestation: [UInt8], signature: [UInt8]
  ) {
    let attestation = withUnsafeBytes(of: info.pointee.attestationData) { Array($0.prefix(Int(info.pointee.size))) }
    let ecdsa = signature.pointee.signature.ecdsa
    return (attestation, Self.padded(ecdsa.signatureR) + Self.padded(ecdsa.signatureS))
  }
}

/// The boot quote: TPM2_Quote of PCRs by the attestation key, and the PCRs' values.
extension TPMContext {
  /// TPM2_Quote of `pcrs` of the `bank` (a TPM_ALG_ID) by the attestation key over
  /// `qualifyingData`, and the PCRs' values read right after it. A PCR extended between the two
  /// commands makes the values disagree with the quote's digest: the caller checks and asks again.
  public func quote(attestationKey ak: TPMKeyBlob, qualifyingData: [UInt8], bank: UInt16, pcrs: [Int]) throws(TPMError)
    -> (attestation: [UInt8], signature: [UInt8], values: [Int: [UInt8]])
  {
    try operation { () throws(TPMError) in
      try throughParent(ak.parent) { () throws(TPMError) in
        let akHandle = try loaded(ak)
        var data = TPM2B_DATA()
        Self.fill(&data, qualifyingData)
        var scheme = TPMT_SIG_SCHEME()
        frp_ecdsa_scheme(&scheme)
        var selection = TPML_PCR_SELECTION()
        frp_pcr_selection(&selection, bank, Self.bitmap(pcrs))
        var quoted: UnsafeMutablePointer<TPM2B_ATTEST>?
        var signature: UnsafeMutablePointer<TPMT_SIGNATURE>?
        let rc = frp_Esys_Quote(
          esys, akHandle, ESYS_TR(ESYS_TR_PASSWORD), ESYS_TR(ESYS_TR_NONE), ESYS_TR(ESYS_TR_NONE), &data, &scheme, &selection, &quoted,
          &signature)
        defer {
          frp_Esys_Free(quoted)
          frp_Esys_Free(signature)
        }
        guard rc == TSS2_RC_SUCCESS, let quoted, let signature else { throw Self.error("Esys_Quote", rc) }
        let signed = Self.signed(quoted, signature)
        return (signed.attestation, signed.signature, try readingPCRs(bank: bank, pcrs))
      }
    }
  }

  /// The values of `pcrs` in the `bank`. TPM2_PCR_Read answers at most eight per command (and
  /// says which), so it is asked until every PCR has its value; a bank the TPM has not allocated
  /// answers none, and that is an error naming it.
  public func readPCRs(bank: UInt16, _ pcrs: [Int]) throws(TPMError) -> [Int: [UInt8]] {
    try operation { () throws(TPMError) in try readingPCRs(bank: bank, pcrs) }
  }

  private func readingPCRs(bank: UInt16, _ pcrs: [Int]) throws(TPMError) -> [Int: [UInt8]] {
    var values: [Int: [UInt8]] = [:]
    var remaining = Set(pcrs)
    while !remaining.isEmpty {
      var selection = TPML_PCR_SELECTION()
      frp_pcr_selection(&selection, bank, Self.bitmap(Array(remaining)))
      var counter: UInt32 = 0
      var selected: UnsafeMutablePointer<TPML_PCR_SELECTION>?
      var digests: UnsafeMutablePointer<TPML_DIGEST>?
      let rc = frp_Esys_PCR_Read(
        esys, ESYS_TR(ESYS_TR_NONE), ESYS_TR(ESYS_TR_NONE), ESYS_TR(ESYS_TR_NONE), &selection, &counter, &selected, &digests)
      defer {
        frp_Esys_Free(selected)
        frp_Esys_Free(digests)
      }
      guard rc == TSS2_RC_SUCCESS, let selected, let digests else { throw Self.error("Esys_PCR_Read", rc) }
      let banks = withUnsafeBytes(of: selected.pointee.pcrSelections) { raw in
        Array(raw.bindMemory(to: TPMS_PCR_SELECTION.self).prefix(min(Int(selected.pointee.count), 16)))
      }
      // The PCRs answered, ascending: the set bits of the bank's returned selection.
      let answered = banks.filter { $0.hash == bank }.flatMap { entry -> [Int] in
        withUnsafeBytes(of: entry.pcrSelect) { bitmap in
          (0..<min(Int(entry.sizeofSelect), bitmap.count) * 8).filter { bitmap[$0 / 8] >> UInt8($0 % 8) & 1 == 1 }
        }
      }
      let answers = withUnsafeBytes(of: digests.pointee.digests) { raw in
        Array(raw.bindMemory(to: TPM2B_DIGEST.self).prefix(min(Int(digests.pointee.count), 8)))
      }
      guard !answered.isEmpty, answered.count == answers.count, answered.allSatisfy(remaining.contains) else {
        throw .failed(
          call: "Esys_PCR_Read",
          detail:
            "the TPM gives no values of PCRs \(remaining.sorted().map(String.init).joined(separator: ", ")) in bank 0x\(String(bank, radix: 16)) (a bank it has not allocated?)"
        )
      }
      for (pcr, answer) in zip(answered, answers) {
        var digest = answer
        values[pcr] = withUnsafeBytes(of: &digest.buffer) { Array($0.prefix(min(Int(answer.size), 64))) }
        remaining.remove(pcr)
      }
    }
    return values
  }

  /// The PC Client selection bitmap of `pcrs` (PCR n is bit n of the 24-bit map).
  static func bitmap(_ pcrs: [Int]) -> UInt32 {
    pcrs.filter { (0..<24).contains($0) }.reduce(0) { $0 | 1 << UInt32($1) }
  }
}
