import SwiftASN1
import TPMProtocol

/// Whether an EK certificate (DER) names the key of a TPM public area: the client's check that
/// the persistent EK it reads is the key the manufacturer certified, so that the
/// TPM need not re-create the EK from its template. Only the subject's key is read, with
/// SwiftASN1; the certificate's chain is the verifier's to check (TPMAttestation).
enum EndorsementCertificateKey {
  static func certifies(_ certificate: [UInt8], _ area: TPMPublic) -> Bool {
    guard let key = try? subjectPublicKey(certificate) else { return false }
    switch area.material {
    case .eccP256(let x, let y):
      return key == [0x04] + TPMPublic.padded(x) + TPMPublic.padded(y)
    case .rsa(let modulus, let exponent):
      // RSAPublicKey ::= SEQUENCE { modulus INTEGER, publicExponent INTEGER }
      guard let sequence = try? DER.parse(key), sequence.identifier == .sequence, case .constructed(let fields) = sequence.content
      else { return false }
      let integers = fields.compactMap { field -> [UInt8]? in
        guard field.identifier == .integer, case .primitive(let bytes) = field.content else { return nil }
        return Array(bytes.drop { $0 == 0 })
      }
      let e = withUnsafeBytes(of: exponent.bigEndian) { Array($0.drop { $0 == 0 }) }
      return integers.count == 2 && integers[0] == Array(modulus.drop { $0 == 0 }) && integers[1] == e
    }
  }

  /// The subjectPublicKey BIT STRING's bytes: Certificate → tbsCertificate → ([0] version),
  /// serialNumber, signature, issuer, validity, subject, subjectPublicKeyInfo (RFC 5280, 4.1).
  static func subjectPublicKey(_ der: [UInt8]) throws -> [UInt8]? {
    let certificate = try DER.parse(der)
    guard case .constructed(let parts) = certificate.content, let tbs = parts.first(where: { _ in true }),
      case .constructed(let fields) = tbs.content
    else { return nil }
    var items = Array(fields)
    if let first = items.first, first.identifier.tagClass == .contextSpecific { items.removeFirst() }
    guard items.count > 5, case .constructed(let info) = items[5].content else { return nil }
    let members = Array(info)
    guard members.count == 2, members[1].identifier == .bitString, case .primitive(let bits) = members[1].content,
      bits.first == 0
    else { return nil }
    return Array(bits.dropFirst())
  }
}
