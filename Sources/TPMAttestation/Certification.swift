import Crypto
import ProfileJSON

/// What a client presents for one key: TPM2_Certify of the key by its attestation key, over
/// the server's nonce, with both keys' public areas.
public struct KeyCertification: Sendable, Equatable {
  /// The marshalled TPMS_ATTEST the TPM signed.
  public var attestation: [UInt8]
  /// The attestation key's ECDSA signature over SHA-256(attestation), raw R ‖ S.
  public var signature: [UInt8]
  /// The attestation key's TPM2B_PUBLIC.
  public var attestationKey: [UInt8]
  /// The certified key's TPM2B_PUBLIC.
  public var key: [UInt8]

  public init(attestation: [UInt8], signature: [UInt8], attestationKey: [UInt8], key: [UInt8]) {
    self.attestation = attestation
    self.signature = signature
    self.attestationKey = attestationKey
    self.key = key
  }

  /// The evidence document (`AttestationProtocol`: the `tpmEvidence` claim).
  public var json: JSON {
    [
      "v": .number(Double(AttestationProtocol.version)), "attest": .string(Base64URL.encode(attestation)),
      "signature": .string(Base64URL.encode(signature)), "akPublic": .string(Base64URL.encode(attestationKey)),
      "keyPublic": .string(Base64URL.encode(key)),
    ]
  }

  public init(json: JSON) throws(AttestationError) {
    let message = try Message(json, "evidence")
    self.init(
      attestation: try message.bytes("attest"), signature: try message.bytes("signature"),
      attestationKey: try message.bytes("akPublic"), key: try message.bytes("keyPublic"))
  }

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
    var reader = TPMReader(attestation)
    // TPM_GENERATED_VALUE, then TPM_ST_ATTEST_CERTIFY.
    guard try reader.u32() == 0xFF54_4347, try reader.u16() == 0x8017 else { throw .notACertification }
    _ = try reader.sized()  // qualifiedSigner
    let extraData = try reader.sized()
    _ = try reader.take(8 + 4 + 4 + 1 + 8)  // clockInfo, firmwareVersion
    let certifiedName = try reader.sized()
    _ = try reader.sized()  // qualifiedName
    guard extraData == nonce else { throw .wrongNonce }
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
