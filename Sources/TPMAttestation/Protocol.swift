import Crypto
import ProfileJSON
import TPMProtocol
import X509

// Date only, as swift-certificates takes it (FoundationEssentials, not the whole of Foundation).
#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// What the verifier keeps between its challenge and the client's answer. Holds no secret: the
/// credential is kept as its SHA-256 only, so the record may travel in AM's shared state.
public struct PendingActivation: Sendable, Equatable {
  /// The attestation key's TPM2B_PUBLIC.
  public var attestationKey: [UInt8]
  /// SHA-256 of the credential sealed to the EK.
  public var credentialDigest: [UInt8]
  /// The endorsement key's name (nameAlg ‖ SHA-256 of its public area), and whether its
  /// certificate chained to a configured root.
  public var endorsementKeyName: [UInt8]
  public var endorsementCertified: Bool

  public var json: JSON {
    [
      "v": .number(Double(AttestationProtocol.version)), "akPublic": .string(Base64URL.encode(attestationKey)),
      "credentialDigest": .string(Base64URL.encode(credentialDigest)), "ekName": .string(Base64URL.encode(endorsementKeyName)),
      "ekCertified": .bool(endorsementCertified),
    ]
  }

  public init(json: JSON) throws(AttestationError) {
    let message = try Message(json, "verifier state")
    attestationKey = try message.bytes("akPublic")
    credentialDigest = try message.bytes("credentialDigest")
    endorsementKeyName = try message.bytes("ekName")
    guard let certified = json["ekCertified"]?.boolValue else { throw .malformed("the verifier state has no boolean ekCertified") }
    endorsementCertified = certified
  }

  init(attestationKey: [UInt8], credentialDigest: [UInt8], endorsementKeyName: [UInt8], endorsementCertified: Bool) {
    self.attestationKey = attestationKey
    self.credentialDigest = credentialDigest
    self.endorsementKeyName = endorsementKeyName
    self.endorsementCertified = endorsementCertified
  }
}

/// The server half: checks a request and seals a credential to its EK for its AK; checks the
/// answer; checks the evidence a JWS carries. Each refusal is an `AttestationError` naming the
/// check.
public struct AttestationVerifier: Sendable {
  /// The TPM manufacturers' root certificates an EK certificate must chain to.
  public var roots: [Certificate]
  /// Their issuing CAs, when the TPM's NV holds only the leaf.
  public var intermediates: [Certificate]
  /// Names (nameAlg ‖ SHA-256) of endorsement keys trusted without a certificate (a TPM whose
  /// manufacturer stored none; the administrator recorded its EK at enrolment).
  public var trustedEndorsementKeys: [[UInt8]]
  /// The time EK certificates are validated at; nil: the clock when each is checked.
  public var validationTime: Date?

  public init(
    roots: [Certificate], intermediates: [Certificate] = [], trustedEndorsementKeys: [[UInt8]] = [], validationTime: Date? = nil
  ) {
    self.roots = roots
    self.intermediates = intermediates
    self.trustedEndorsementKeys = trustedEndorsementKeys
    self.validationTime = validationTime
  }

  /// Checks the request — the EK certificate chains to a root and certifies the EK (or the EK is
  /// listed), the AK is a restricted signing key of its TPM — and returns the challenge for the
  /// client (its `json` is the document sent) and the state to keep.
  public func challenge(for request: AttestationRequest) async throws(AttestationError) -> (
    challenge: AttestationChallenge, pending: PendingActivation
  ) {
    let ek = try TPMPublic(tpm2b: request.endorsementKey)
    let ak = try TPMPublic(tpm2b: request.attestationKey)
    guard (ek.type == TPMPublic.algECC) == (request.endorsementKeyType == "eccP256") else {
      throw .malformed("the request's ekType \(request.endorsementKeyType) is not its EK's type")
    }
    // One TPM, one EK name: the area must be the template's for its key, byte for byte, before
    // its key is compared with a certificate or its name with the trusted ones.
    guard ek.isCanonicalEndorsementKey else { throw .endorsementKeyNotCanonical }
    var certified = false
    if let certificate = request.endorsementCertificate {
      try await EndorsementCertificate.verify(
        certificate, endorsementKey: ek, roots: roots, intermediates: intermediates, validationTime: validationTime)
      certified = true
    } else if !trustedEndorsementKeys.contains(ek.name) {
      throw .endorsementKeyUnknown
    }
    guard ak.has(.restricted), ak.has(.sign), ak.has(.fixedTPM), ak.has(.fixedParent), ak.has(.sensitiveDataOrigin),
      !ak.has(.decrypt)
    else { throw .attestationKeyNotRestricted }
    let credential = (0..<32).map { _ in UInt8.random(in: 0...255) }
    let sealed = try CredentialChallenge.make(endorsementKey: ek, objectName: ak.name, credential: credential)
    let challenge = AttestationChallenge(credentialBlob: sealed.credentialBlob, encryptedSecret: sealed.encryptedSecret)
    let pending = PendingActivation(
      attestationKey: request.attestationKey, credentialDigest: Array(SHA256.hash(data: credential)), endorsementKeyName: ek.name,
      endorsementCertified: certified)
    return (challenge, pending)
  }

  /// The attestation key, once the client's answer shows its TPM released the credential.
  public static func activate(_ pending: PendingActivation, answer: JSON) throws(AttestationError) -> TPMPublic {
    let secret = try AttestationAnswer(json: answer).secret
    guard Array(SHA256.hash(data: secret)) == pending.credentialDigest else { throw .credentialNotReleased }
    return try TPMPublic(tpm2b: pending.attestationKey)
  }

  /// Checks the evidence a binding or signing JWS carries for its key: certified by the
  /// activated `attestationKey` over SHA-256 of the JWS's `challenge` (and `challenge` must be
  /// the one the server sent when given), the key bound to its TPM, the JWS's `jwk` (when it
  /// has one) that key, and the JWS's own signature made by it. Returns the key.
  @discardableResult
  public static func verify(jws: String, attestationKey: TPMPublic, challenge expected: String? = nil) throws(AttestationError)
    -> P256.Signing.PublicKey
  {
    let token = try CompactJWS.es256(jws)
    guard let challenge = token.claims["challenge"]?.stringValue else { throw .malformed("the JWS has no challenge claim") }
    if let expected, challenge != expected { throw .wrongNonce }
    guard let claim = token.claims[AttestationProtocol.evidenceClaim] else { throw .noEvidence }
    var jwk: P256.Signing.PublicKey?
    if case .object(let object)? = token.header["jwk"] { jwk = try CompactJWS.key(object) }
    let key = try verify(evidence: claim, challenge: challenge, attestationKey: attestationKey, expectedKey: jwk)
    guard token.verifies(with: key) else { throw .keyDiffersFromJWS }
    return key
  }

  /// Checks one evidence document (the `tpmEvidence` claim, or `fr-profile attest certify`'s
  /// output): TPM2_Certify by the activated `attestationKey` over SHA-256 of `challenge`, of a key
  /// bound to its TPM (and equal to `expectedKey` when given). Returns the key.
  @discardableResult
  public static func verify(
    evidence: JSON, challenge: String, attestationKey: TPMPublic, expectedKey: P256.Signing.PublicKey? = nil
  ) throws(AttestationError) -> P256.Signing.PublicKey {
    return try KeyCertification(json: evidence).verify(
      nonce: AttestationProtocol.nonce(challenge: challenge), activatedName: attestationKey.name, expectedKey: expectedKey)
  }
}

/// A compact ES256 JWS, as far as the verifier reads it (ProfileJSON's `CompactJWS` splits and
/// decodes it).
extension CompactJWS {
  static func es256(_ text: String) throws(AttestationError) -> CompactJWS {
    let jws: CompactJWS
    do throws(CompactJWS.Malformed) { jws = try CompactJWS(text) } catch { throw .malformed("not a compact JWS") }
    guard jws.header["alg"]?.stringValue == "ES256" else { throw .unsupported("a JWS not signed with ES256") }
    return jws
  }

  func verifies(with key: P256.Signing.PublicKey) -> Bool {
    guard let parsed = try? P256.Signing.ECDSASignature(rawRepresentation: signature) else { return false }
    return key.isValidSignature(parsed, for: signingInput)
  }

  /// An EC P-256 JWK's key.
  static func key(_ jwk: JSONObject) throws(AttestationError) -> P256.Signing.PublicKey {
    guard let raw = P256JWK.raw(jwk), let key = try? P256.Signing.PublicKey(rawRepresentation: raw) else {
      throw .malformed("the JWS's jwk is not an EC P-256 key")
    }
    return key
  }
}
