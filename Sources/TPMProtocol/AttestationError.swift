/// Why a TPM structure, an attestation document or evidence was refused: which check failed.
/// The protocol's vocabulary, shared by the client (documents it reads) and the verifier.
public enum AttestationError: Error, Sendable, Equatable, CustomStringConvertible {
  case malformed(String)
  case unsupported(String)
  /// The attestation key is not a restricted signing key bound to its TPM.
  case attestationKeyNotRestricted
  /// The attestation key is not the one whose credential this TPM's EK activated.
  case attestationKeyNotActivated
  /// The attestation's signature does not verify with the attestation key.
  case badSignature
  /// The signed structure is not a TPM2_Certify attestation.
  case notACertification
  /// The attestation answers another nonce (a replay).
  case wrongNonce
  /// The attestation certifies another key than the one presented.
  case certifiesAnotherKey
  /// The certified key may have been made or kept outside the TPM (fixedTPM, fixedParent,
  /// sensitiveDataOrigin not all set), or is not a signing key.
  case keyNotBoundToTheTPM
  /// The certified key is not the key of the JWS.
  case keyDiffersFromJWS
  /// The EK certificate does not chain to a configured manufacturer root (the validator's
  /// result), or is not an EK certificate as the TCG EK Credential Profile describes one.
  case ekCertificateUntrusted(String)
  /// The EK certificate certifies another key than the TPM's endorsement key.
  case ekCertificateForAnotherKey
  /// The TPM sent no EK certificate and its EK is not among the trusted ones.
  case endorsementKeyUnknown
  /// The EK public area is not exactly the TCG template's (L-1 RSA 2048, L-2 ECC P-256) for its
  /// key: the same key under other bytes would give one TPM many EK names.
  case endorsementKeyNotCanonical
  /// The client's answer is not the credential sealed to its EK: its TPM did not release it.
  case credentialNotReleased
  /// The JWS carries no `tpmEvidence` claim (a file key, or a client that does not attest).
  case noEvidence
  /// The client said it cannot attest (no TPM, a file key…), with its reason.
  case clientCannotAttest(String)

  public var description: String {
    switch self {
    case .malformed(let what): "malformed evidence: \(what)"
    case .unsupported(let what): "unsupported evidence: \(what)"
    case .attestationKeyNotRestricted: "the attestation key is not a restricted TPM signing key"
    case .attestationKeyNotActivated: "the attestation key was not activated with this TPM's endorsement key"
    case .badSignature: "the attestation's signature does not verify with the attestation key"
    case .notACertification: "the signed structure is not a TPM2_Certify attestation"
    case .wrongNonce: "the attestation is for another nonce (replayed?)"
    case .certifiesAnotherKey: "the attestation certifies another key"
    case .keyNotBoundToTheTPM: "the certified key is not bound to its TPM (fixedTPM, fixedParent, sensitiveDataOrigin, sign)"
    case .keyDiffersFromJWS: "the certified key is not the key in the JWS"
    case .ekCertificateUntrusted(let reason): "the EK certificate is refused: \(reason)"
    case .ekCertificateForAnotherKey: "the EK certificate certifies another key than this TPM's endorsement key"
    case .endorsementKeyUnknown: "the TPM sent no EK certificate and its endorsement key is not among the trusted ones"
    case .endorsementKeyNotCanonical:
      "the EK public area is not the TCG EK template's (L-1 RSA 2048 or L-2 ECC P-256) for its key, byte for byte"
    case .credentialNotReleased: "the answer is not the credential sealed to the endorsement key: that TPM did not release it"
    case .noEvidence: "the JWS carries no tpmEvidence claim (a file key, or a client that does not attest)"
    case .clientCannotAttest(let reason): "the client cannot attest: \(reason)"
    }
  }
}
