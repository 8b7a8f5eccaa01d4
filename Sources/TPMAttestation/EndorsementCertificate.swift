import Crypto
import CryptoExtras
import ProfileJSON
import SwiftASN1
import TPMProtocol
import X509

/// The EK certificate check: the certificate a TPM's manufacturer stored in its NV chains to one
/// of the configured manufacturer roots (RFC 5280 path validation, swift-certificates), and it
/// certifies the endorsement key the TPM re-created — so a credential sealed to that key can
/// only be opened inside a TPM that manufacturer made.
public enum EndorsementCertificate {
  /// Checks `der` against `roots` (through `intermediates`, e.g. the manufacturer's issuing CA)
  /// now, and that it certifies `endorsementKey`. Throws `.ekCertificateUntrusted` or
  /// `.ekCertificateForAnotherKey`, naming which.
  public static func verify(
    _ der: [UInt8], endorsementKey: TPMPublic, roots: [Certificate], intermediates: [Certificate] = []
  ) async throws(AttestationError) {
    let leaf: Certificate
    do { leaf = try Certificate(derEncoded: der) } catch {
      throw .malformed("the EK certificate is not DER X.509: \(PrintableText.line("\(error)"))")
    }
    var verifier = Verifier(rootCertificates: CertificateStore(roots)) {
      RFC5280Policy()
      EKCertificatePolicy()
    }
    let result = await verifier.validate(leaf: leaf, intermediates: CertificateStore(intermediates))
    // The result describes the device's certificates (their names): printable, bounded.
    guard case .validCertificate = result else { throw .ekCertificateUntrusted(PrintableText.line("\(result)", limit: 400)) }
    guard leaf.publicKey == (try certificateKey(endorsementKey)) else { throw .ekCertificateForAnotherKey }
  }

  /// Every certificate of a PEM text (a roots or intermediates file).
  public static func certificates(pem text: String) throws(AttestationError) -> [Certificate] {
    do {
      let documents = try PEMDocument.parseMultiple(pemString: text)
      guard !documents.isEmpty else { throw AttestationError.malformed("no PEM certificate") }
      return try documents.map { try Certificate(pemDocument: $0) }
    } catch let error as AttestationError {
      throw error
    } catch {
      throw .malformed("not PEM certificates (\(error))")
    }
  }

  /// The endorsement key as X.509 sees it.
  static func certificateKey(_ key: TPMPublic) throws(AttestationError) -> Certificate.PublicKey {
    switch key.material {
    case .eccP256:
      return Certificate.PublicKey(try key.signingKey())
    case .rsa(let modulus, let exponent):
      do {
        return Certificate.PublicKey(try _RSA.Signing.PublicKey(n: modulus, e: RSAOAEP.minimalBytes(exponent)))
      } catch {
        throw .unsupported("an RSA endorsement key swift-crypto refuses: \(error)")
      }
    }
  }
}

/// What an EK certificate carries that generic path validation does not know: a critical
/// subjectAltName holding the TPM's manufacturer, model and version (TCG EK Credential Profile,
/// the subject is empty), which this policy declares handled.
struct EKCertificatePolicy: VerifierPolicy {
  let verifyingCriticalExtensions: [ASN1ObjectIdentifier] = [.X509ExtensionID.subjectAlternativeName]

  func chainMeetsPolicyRequirements(chain: UnverifiedCertificateChain) async -> PolicyEvaluationResult { .meetsPolicy }
}
