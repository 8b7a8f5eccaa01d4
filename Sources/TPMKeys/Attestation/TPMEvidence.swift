// swift-format-ignore-file: NoBlockComments

import CTSS2

/// The client half of TPM attestation (issue 21): the endorsement key and its certificate, an
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
    guard
      frp_Esys_TR_FromTPMPublic(esys, index, ESYS_TR(ESYS_TR_NONE), ESYS_TR(ESYS_TR_NONE), ESYS_TR(ESYS_TR_NONE), &nv)
        == TSS2_RC_SUCCESS
    else { return nil }
    defer { _ = frp_Esys_TR_Close(esys, &nv) }
    var info: UnsafeMutablePointer<TPM2B_NV_PUBLIC>?
    var rc = frp_Esys_NV_ReadPublic(esys, nv, ESYS_TR(ESYS_TR_NONE), ESYS_TR(ESYS_TR_NONE), ESYS_TR(ESYS_TR_NONE), &info, nil)
    guard rc == TSS2_RC_SUCCESS, let info else { throw Self.error("Esys_NV_ReadPublic", rc) }
    let size = Int(info.pointee.nvPublic.dataSize)
    frp_Esys_Free(info)
    var bytes: [UInt8] = []
    while bytes.count < size {
      // 512 bytes a read: below every TPM's MAX_NV_BUFFER_SIZE.
      let chunk = UInt16(min(size - bytes.count, 512))
      var data: UnsafeMutablePointer<TPM2B_MAX_NV_BUFFER>?
      rc = frp_Esys_NV_Read(
        esys, ESYS_TR(ESYS_TR_RH_OWNER), nv, ESYS_TR(ESYS_TR_PASSWORD), ESYS_TR(ESYS_TR_NONE), ESYS_TR(ESYS_TR_NONE), chunk,
        UInt16(bytes.count), &data)
      guard rc == TSS2_RC_SUCCESS, let data else { throw Self.error("Esys_NV_Read", rc) }
      bytes += withUnsafeBytes(of: data.pointee.buffer) { Array($0.prefix(Int(data.pointee.size))) }
      frp_Esys_Free(data)
    }
    return bytes
  }

  /// A new attestation key under the storage key: restricted signing (it signs only what the
  /// TPM produced), P-256 ECDSA/SHA-256, noDA, no authValue.
  public func createAttestationKey() throws(TPMError) -> TPMKeyBlob {
    try createKey(authValue: [], template: frp_ak_template)
  }

  /// Answers a credential challenge (TPM2_ActivateCredential): the TPM releases the secret only
  /// if its EK can decrypt `encryptedSecret` and `ak` is the key whose name the challenge was
  /// made for, loaded in this same TPM. `credentialBlob` and `encryptedSecret` are the contents
  /// of the TPM2B_ID_OBJECT and TPM2B_ENCRYPTED_SECRET (without their size fields).
  public func activateCredential(
    attestationKey ak: TPMKeyBlob, credentialBlob: [UInt8], encryptedSecret: [UInt8], endorsementKey type: EndorsementKeyType = .eccP256
  ) throws(TPMError) -> [UInt8] {
    let (akHandle, _) = try withParent(ak.parent) { (parent) throws(TPMError) in try load(ak, parent: parent) }
    defer { _ = frp_Esys_FlushContext(esys, akHandle) }
    let (ek, _) = try createEndorsementKey(type)
    defer { _ = frp_Esys_FlushContext(esys, ek) }
    // The EK is usable only through policy A: PolicySecret with the endorsement hierarchy.
    var session = ESYS_TR(ESYS_TR_NONE)
    var symmetric = TPMT_SYM_DEF()
    frp_no_symmetric(&symmetric)
    var rc = frp_Esys_StartAuthSession(
      esys, ESYS_TR(ESYS_TR_NONE), ESYS_TR(ESYS_TR_NONE), ESYS_TR(ESYS_TR_NONE), ESYS_TR(ESYS_TR_NONE), ESYS_TR(ESYS_TR_NONE), nil,
      frp_session_policy, &symmetric, frp_alg_sha256, &session)
    guard rc == TSS2_RC_SUCCESS else { throw Self.error("Esys_StartAuthSession", rc) }
    defer { _ = frp_Esys_FlushContext(esys, session) }
    rc = frp_Esys_PolicySecret(
      esys, ESYS_TR(ESYS_TR_RH_ENDORSEMENT), session, ESYS_TR(ESYS_TR_PASSWORD), ESYS_TR(ESYS_TR_NONE), ESYS_TR(ESYS_TR_NONE), nil,
      nil, nil, 0, nil, nil)
    guard rc == TSS2_RC_SUCCESS else { throw Self.error("Esys_PolicySecret", rc) }
    var blob = TPM2B_ID_OBJECT()
    Self.fill(&blob, credentialBlob)
    var secret = TPM2B_ENCRYPTED_SECRET()
    Self.fill(&secret, encryptedSecret)
    var info: UnsafeMutablePointer<TPM2B_DIGEST>?
    rc = frp_Esys_ActivateCredential(
      esys, akHandle, ek, ESYS_TR(ESYS_TR_PASSWORD), session, ESYS_TR(ESYS_TR_NONE), &blob, &secret, &info)
    defer { frp_Esys_Free(info) }
    guard rc == TSS2_RC_SUCCESS, let info else { throw Self.error("Esys_ActivateCredential", rc) }
    return withUnsafeBytes(of: info.pointee.buffer) { Array($0.prefix(Int(info.pointee.size))) }
  }

  /// TPM2_Certify of `key` by `ak` over `qualifyingData` (the server's nonce): the marshalled
  /// TPMS_ATTEST (the contents of TPM2B_ATTEST) and the AK's signature as raw R‖S. The TPM
  /// certifies only keys it has loaded, so the attestation names a key inside this TPM.
  public func certify(_ key: TPMKeyBlob, attestationKey ak: TPMKeyBlob, qualifyingData: [UInt8], keyAuthValue: [UInt8] = [])
    throws(TPMError) -> (attestation: [UInt8], signature: [UInt8])
  {
    let (akHandle, _) = try withParent(ak.parent) { (parent) throws(TPMError) in try load(ak, parent: parent) }
    defer { _ = frp_Esys_FlushContext(esys, akHandle) }
    let (keyHandle, _) = try withParent(key.parent) { (parent) throws(TPMError) in try load(key, parent: parent) }
    defer { _ = frp_Esys_FlushContext(esys, keyHandle) }
    var auth = TPM2B_AUTH()
    Self.fill(&auth, Self.authDigest(keyAuthValue))
    var rc = frp_Esys_TR_SetAuth(esys, keyHandle, &auth)
    guard rc == TSS2_RC_SUCCESS else { throw Self.error("Esys_TR_SetAuth", rc) }
    var data = TPM2B_DATA()
    Self.fill(&data, qualifyingData)
    var scheme = TPMT_SIG_SCHEME()
    frp_ecdsa_scheme(&scheme)
    var info: UnsafeMutablePointer<TPM2B_ATTEST>?
    var signature: UnsafeMutablePointer<TPMT_SIGNATURE>?
    rc = frp_Esys_Certify(
      esys, keyHandle, akHandle, ESYS_TR(ESYS_TR_PASSWORD), ESYS_TR(ESYS_TR_PASSWORD), ESYS_TR(ESYS_TR_NONE), &data, &scheme, &info,
      &signature)
    defer {
      frp_Esys_Free(info)
      frp_Esys_Free(signature)
    }
    guard rc == TSS2_RC_SUCCESS, let info, let signature else { throw Self.error("Esys_Certify", rc) }
    let attestation = withUnsafeBytes(of: info.pointee.attestationData) { Array($0.prefix(Int(info.pointee.size))) }
    let ecdsa = signature.pointee.signature.ecdsa
    return (attestation, Self.padded(ecdsa.signatureR) + Self.padded(ecdsa.signatureS))
  }
}
