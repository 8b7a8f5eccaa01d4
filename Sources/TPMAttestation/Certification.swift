import Crypto
import ProfileJSON
import TPMProtocol

extension KeyCertification {
  /// Checks the certification the way the attestation anchors do, each check failing with its
  /// own error: the attestation key is `activatedName` (the AK whose credential the EK
  /// released) and a restricted signing key; its signature verifies; the structure is a
  /// certification over `nonce` of the presented key, which is fixedTPM, fixedParent,
  /// sensitiveDataOrigin and a signing key; and that key is `expectedKey` (the JWS's `jwk`).
  /// Returns the certified key.
  @discardableResult
  public func verify(nonce: [UInt8], activatedName: [UInt8], expectedKey: P256.Signing.PublicKey? = nil) throws(AttestationError)
    -> P256.Signing.PublicKey
  {
    let ak = try TPMPublic(tpm2b: attestationKey)
    guard ak.name == activatedName else { throw .attestationKeyNotActivated }
    guard ak.has(.restricted), ak.has(.sign), ak.has(.fixedTPM), ak.has(.fixedParent), ak.has(.sensitiveDataOrigin) else {
      throw .attestationKeyNotRestricted
    }
    guard signature.count == 64, let parsed = try? P256.Signing.ECDSASignature(rawRepresentation: signature),
      try ak.signingKey().isValidSignature(parsed, for: SHA256.hash(data: attestation))
    else { throw .badSignature }
    let attest: TPMAttest
    do { attest = try TPMAttest(attestation) } catch { throw .notACertification }
    guard case .certify(let certifiedName, _) = attest.attested else { throw .notACertification }
    guard attest.extraData == nonce else { throw .wrongNonce }
    let certified = try TPMPublic(tpm2b: key)
    guard certifiedName == certified.name else { throw .certifiesAnotherKey }
    guard certified.has(.fixedTPM), certified.has(.fixedParent), certified.has(.sensitiveDataOrigin), certified.has(.sign) else {
      throw .keyNotBoundToTheTPM
    }
    let publicKey = try certified.signingKey()
    if let expectedKey, expectedKey.rawRepresentation != publicKey.rawRepresentation { throw .keyDiffersFromJWS }
    return publicKey
  }
}
