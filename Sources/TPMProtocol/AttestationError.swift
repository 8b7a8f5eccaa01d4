/// Why a TPM structure, an attestation document or evidence was refused: which check failed.
/// The protocol's vocabulary, shared by the client (documents it reads) and the verifier.
///
/// A struct, not an enum, so that a release can add a check without breaking an embedder's
/// `switch`: new codes may be added in any release. Match on ``code`` (`error.code ==
/// .wrongNonce`, or `switch error.code` with a `default:`); ``description`` is the message.
public struct AttestationError: Error, Sendable, Hashable, CustomStringConvertible {
  /// Which check failed. New codes may be added in any release: switch with a `default:`.
  public struct Code: Hashable, Sendable, CustomStringConvertible {
    private enum Backing: Hashable, Sendable {
      case malformed, unsupported, attestationKeyNotRestricted, attestationKeyNotActivated, badSignature, notACertification
      case wrongNonce, certifiesAnotherKey, keyNotBoundToTheTPM, keyDiffersFromJWS, ekCertificateUntrusted
      case ekCertificateForAnotherKey, endorsementKeyUnknown, endorsementKeyNotCanonical, credentialNotReleased, noEvidence,
        clientCannotAttest
    }

    private var backing: Backing
    private init(_ backing: Backing) { self.backing = backing }

    /// A TPM structure or document does not parse.
    public static let malformed = Code(.malformed)
    /// A TPM structure or document is of a kind this library does not verify.
    public static let unsupported = Code(.unsupported)
    /// The attestation key is not a restricted signing key bound to its TPM.
    public static let attestationKeyNotRestricted = Code(.attestationKeyNotRestricted)
    /// The attestation key is not the one whose credential this TPM's EK activated.
    public static let attestationKeyNotActivated = Code(.attestationKeyNotActivated)
    /// The attestation's signature does not verify with the attestation key.
    public static let badSignature = Code(.badSignature)
    /// The signed structure is not a TPM2_Certify attestation.
    public static let notACertification = Code(.notACertification)
    /// The attestation answers another nonce (a replay).
    public static let wrongNonce = Code(.wrongNonce)
    /// The attestation certifies another key than the one presented.
    public static let certifiesAnotherKey = Code(.certifiesAnotherKey)
    /// The certified key may have been made or kept outside the TPM (fixedTPM, fixedParent,
    /// sensitiveDataOrigin not all set), or is not a signing key.
    public static let keyNotBoundToTheTPM = Code(.keyNotBoundToTheTPM)
    /// The certified key is not the key of the JWS.
    public static let keyDiffersFromJWS = Code(.keyDiffersFromJWS)
    /// The EK certificate does not chain to a configured manufacturer root (the validator's
    /// result), or is not an EK certificate as the TCG EK Credential Profile describes one.
    public static let ekCertificateUntrusted = Code(.ekCertificateUntrusted)
    /// The EK certificate certifies another key than the TPM's endorsement key.
    public static let ekCertificateForAnotherKey = Code(.ekCertificateForAnotherKey)
    /// The TPM sent no EK certificate and its EK is not among the trusted ones.
    public static let endorsementKeyUnknown = Code(.endorsementKeyUnknown)
    /// The EK public area is not exactly the TCG template's (L-1 RSA 2048, L-2 ECC P-256) for its
    /// key: the same key under other bytes would give one TPM many EK names.
    public static let endorsementKeyNotCanonical = Code(.endorsementKeyNotCanonical)
    /// The client's answer is not the credential sealed to its EK: its TPM did not release it.
    public static let credentialNotReleased = Code(.credentialNotReleased)
    /// The JWS carries no `tpmEvidence` claim (a file key, or a client that does not attest).
    public static let noEvidence = Code(.noEvidence)
    /// The client said it cannot attest (no TPM, a file key…), with its reason.
    public static let clientCannotAttest = Code(.clientCannotAttest)

    public var description: String { String(describing: backing) }
  }

  /// Which check failed.
  public let code: Code
  /// What the failure names: the malformed or unsupported part (``Code/malformed``,
  /// ``Code/unsupported``), why the EK certificate is refused (``Code/ekCertificateUntrusted``),
  /// the client's reason (``Code/clientCannotAttest``).
  public let reason: String?
  /// One line saying what is wrong.
  public let description: String

  private init(_ code: Code, reason: String? = nil, _ description: String) {
    self.code = code
    self.reason = reason
    self.description = description
  }

  /// A TPM structure or document does not parse.
  public static func malformed(_ what: String) -> Self { Self(.malformed, reason: what, "malformed evidence: \(what)") }

  /// A TPM structure or document is of a kind this library does not verify.
  public static func unsupported(_ what: String) -> Self { Self(.unsupported, reason: what, "unsupported evidence: \(what)") }

  /// The attestation key is not a restricted signing key bound to its TPM.
  public static var attestationKeyNotRestricted: Self {
    Self(.attestationKeyNotRestricted, "the attestation key is not a restricted TPM signing key")
  }

  /// The attestation key is not the one whose credential this TPM's EK activated.
  public static var attestationKeyNotActivated: Self {
    Self(.attestationKeyNotActivated, "the attestation key was not activated with this TPM's endorsement key")
  }

  /// The attestation's signature does not verify with the attestation key.
  public static var badSignature: Self {
    Self(.badSignature, "the attestation's signature does not verify with the attestation key")
  }

  /// The signed structure is not a TPM2_Certify attestation.
  public static var notACertification: Self { Self(.notACertification, "the signed structure is not a TPM2_Certify attestation") }

  /// The attestation answers another nonce (a replay).
  public static var wrongNonce: Self { Self(.wrongNonce, "the attestation is for another nonce (replayed?)") }

  /// The attestation certifies another key than the one presented.
  public static var certifiesAnotherKey: Self { Self(.certifiesAnotherKey, "the attestation certifies another key") }

  /// The certified key may have been made or kept outside the TPM (fixedTPM, fixedParent,
  /// sensitiveDataOrigin not all set), or is not a signing key.
  public static var keyNotBoundToTheTPM: Self {
    Self(.keyNotBoundToTheTPM, "the certified key is not bound to its TPM (fixedTPM, fixedParent, sensitiveDataOrigin, sign)")
  }

  /// The certified key is not the key of the JWS.
  public static var keyDiffersFromJWS: Self { Self(.keyDiffersFromJWS, "the certified key is not the key in the JWS") }

  /// The EK certificate does not chain to a configured manufacturer root (the validator's
  /// result), or is not an EK certificate as the TCG EK Credential Profile describes one.
  public static func ekCertificateUntrusted(_ reason: String) -> Self {
    Self(.ekCertificateUntrusted, reason: reason, "the EK certificate is refused: \(reason)")
  }

  /// The EK certificate certifies another key than the TPM's endorsement key.
  public static var ekCertificateForAnotherKey: Self {
    Self(.ekCertificateForAnotherKey, "the EK certificate certifies another key than this TPM's endorsement key")
  }

  /// The TPM sent no EK certificate and its EK is not among the trusted ones.
  public static var endorsementKeyUnknown: Self {
    Self(.endorsementKeyUnknown, "the TPM sent no EK certificate and its endorsement key is not among the trusted ones")
  }

  /// The EK public area is not exactly the TCG template's (L-1 RSA 2048, L-2 ECC P-256) for its
  /// key: the same key under other bytes would give one TPM many EK names.
  public static var endorsementKeyNotCanonical: Self {
    Self(
      .endorsementKeyNotCanonical,
      "the EK public area is not the TCG EK template's (L-1 RSA 2048 or L-2 ECC P-256) for its key, byte for byte")
  }

  /// The client's answer is not the credential sealed to its EK: its TPM did not release it.
  public static var credentialNotReleased: Self {
    Self(.credentialNotReleased, "the answer is not the credential sealed to the endorsement key: that TPM did not release it")
  }

  /// The JWS carries no `tpmEvidence` claim (a file key, or a client that does not attest).
  public static var noEvidence: Self {
    Self(.noEvidence, "the JWS carries no tpmEvidence claim (a file key, or a client that does not attest)")
  }

  /// The client said it cannot attest (no TPM, a file key…), with its reason.
  public static func clientCannotAttest(_ reason: String) -> Self {
    Self(.clientCannotAttest, reason: reason, "the client cannot attest: \(reason)")
  }
}
