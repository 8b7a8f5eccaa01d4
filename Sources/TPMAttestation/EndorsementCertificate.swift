import Crypto
import CryptoExtras
import ProfileJSON
import SwiftASN1
import TPMProtocol
@_spi(FixedExpiryValidationTime) import X509

// Date only, as swift-certificates takes it (FoundationEssentials, not the whole of Foundation).
#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The EK certificate check: the certificate a TPM's manufacturer stored in its NV chains to one
/// of the configured manufacturer roots (RFC 5280 path validation, swift-certificates), and it
/// certifies the endorsement key the TPM re-created — so a credential sealed to that key can
/// only be opened inside a TPM that manufacturer made.
public enum EndorsementCertificate {
  /// Checks `der` against `roots` (through `intermediates`, e.g. the manufacturer's issuing CA)
  /// at `validationTime` (nil: the clock when the chain is checked), as the TCG EK Credential
  /// Profile describes an EK certificate (`EKCertificatePolicy`), and that it certifies
  /// `endorsementKey`. Throws `.ekCertificateUntrusted` or `.ekCertificateForAnotherKey`,
  /// naming which.
  public static func verify(
    _ der: [UInt8], endorsementKey: TPMPublic, roots: [Certificate], intermediates: [Certificate] = [],
    validationTime: Date? = nil
  ) async throws(AttestationError) {
    let leaf: Certificate
    do { leaf = try Certificate(derEncoded: der) } catch {
      throw .malformed("the EK certificate is not DER X.509: \(PrintableText.line("\(error)"))")
    }
    if let reason = EKCertificatePolicy.check(leaf) { throw .ekCertificateUntrusted(reason) }
    var verifier = Verifier(rootCertificates: CertificateStore(roots)) {
      if let validationTime { RFC5280Policy(fixedExpiryValidationTime: validationTime) } else { RFC5280Policy() }
      EKCertificatePolicy()
    }
    let result = await verifier.validate(leaf: leaf, intermediates: CertificateStore(intermediates))
    // The result describes the device's certificates (their names): printable, bounded.
    guard case .validCertificate = result else {
      throw .ekCertificateUntrusted(
        "it does not chain to a trusted TPM manufacturer root at \(validationTime.map { "\($0)" } ?? "this time") ("
          + PrintableText.line("\(result)", limit: 400) + ")")
    }
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

/// What the TCG EK Credential Profile (2.5, §3.2) asks of an EK certificate beyond RFC 5280 path
/// validation, checked on the leaf:
/// - subjectAltName (critical when the subject is empty, as it usually is) holds a directoryName
///   with the TPM's manufacturer (2.23.133.2.1), model (2.23.133.2.2) and version (2.23.133.2.3):
///   the extension this policy declares handled is handled, and a certificate that names no TPM
///   is refused.
/// - extendedKeyUsage, where the certificate has one, includes tcg-kp-EKCertificate
///   (2.23.133.8.1): a certificate issued for another use (a TLS server's, say) by a CA that is
///   also a TPM root is not an EK certificate. The profile's older versions and some
///   manufacturers' certificates carry no EKU at all, and those stay accepted.
struct EKCertificatePolicy: VerifierPolicy {
  static let tpmManufacturer = try! ASN1ObjectIdentifier(dotRepresentation: "2.23.133.2.1")
  static let tpmModel = try! ASN1ObjectIdentifier(dotRepresentation: "2.23.133.2.2")
  static let tpmVersion = try! ASN1ObjectIdentifier(dotRepresentation: "2.23.133.2.3")
  static let ekCertificateUsage = try! ASN1ObjectIdentifier(dotRepresentation: "2.23.133.8.1")

  let verifyingCriticalExtensions: [ASN1ObjectIdentifier] = [.X509ExtensionID.subjectAlternativeName]

  func chainMeetsPolicyRequirements(chain: UnverifiedCertificateChain) async -> PolicyEvaluationResult {
    Self.check(chain.leaf).map { .failsToMeetPolicy(reason: $0) } ?? .meetsPolicy
  }

  /// Why `leaf` is not an EK certificate, or nil.
  static func check(_ leaf: Certificate) -> String? {
    let names: SubjectAlternativeNames?
    do { names = try leaf.extensions.subjectAlternativeNames } catch { return "its subjectAltName cannot be read: \(error)" }
    var attributes: Set<ASN1ObjectIdentifier> = []
    for name in names.map(Array.init) ?? [] {
      guard case .directoryName(let directory) = name else { continue }
      for relative in directory { for attribute in relative { attributes.insert(attribute.type) } }
    }
    let wanted: [(String, ASN1ObjectIdentifier)] = [("manufacturer", tpmManufacturer), ("model", tpmModel), ("version", tpmVersion)]
    let missing = wanted.filter { !attributes.contains($0.1) }.map { $0.0 }
    guard missing.isEmpty else {
      return "it names no TPM: its subjectAltName has no directoryName with the TPM " + missing.joined(separator: ", ")
        + " (TCG EK Credential Profile)"
    }
    let usages: ExtendedKeyUsage?
    do { usages = try leaf.extensions.extendedKeyUsage } catch { return "its extendedKeyUsage cannot be read: \(error)" }
    if let usages, !usages.contains(where: { ASN1ObjectIdentifier($0) == ekCertificateUsage }) {
      return "its extendedKeyUsage (\(usages)) does not include tcg-kp-EKCertificate (2.23.133.8.1): it was issued for another use"
    }
    return nil
  }
}
