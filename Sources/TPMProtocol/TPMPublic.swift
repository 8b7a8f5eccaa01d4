import Crypto

/// A TPM's public area (TPMT_PUBLIC, TPM 2.0 Part 2 §12.2.4) of an ECC P-256 or RSA key, parsed
/// from the bytes the TPM marshals: what a verifier checks (attributes, the key) and names
/// (nameAlg ‖ SHA-256 of the area). The one parser of public areas in fr-profile — the
/// verifier's, the key files' (`TPMKeyBlob`) and collect's identity key — so one fuzz target
/// (`fuzz-tpm-wire`) covers them all. Pure Swift: no tpm2-tss.
public struct TPMPublic: Sendable, Equatable {
  /// The marshalled TPMT_PUBLIC (without the TPM2B size).
  public let area: [UInt8]
  public let type: UInt16
  public let nameAlg: UInt16
  public let attributes: UInt32
  public let authPolicy: [UInt8]
  /// The signing scheme (TPM_ALG_ECDSA 0x0018, or TPM_ALG_NULL 0x0010).
  public let scheme: UInt16
  public let material: Material

  /// The key itself.
  public enum Material: Sendable, Equatable {
    /// A NIST P-256 point (coordinates as the TPM gives them, at most 32 bytes each).
    case eccP256(x: [UInt8], y: [UInt8])
    /// An RSA modulus (as the area holds it) and public exponent (0 in the area means 65537).
    case rsa(modulus: [UInt8], exponent: UInt32)
  }

  /// TPMA_OBJECT bits.
  public enum Attribute: UInt32, Sendable, CaseIterable {
    case fixedTPM = 0x2
    case fixedParent = 0x10
    case sensitiveDataOrigin = 0x20
    case userWithAuth = 0x40
    case adminWithPolicy = 0x80
    case noDA = 0x400
    case restricted = 0x10000
    case decrypt = 0x20000
    case sign = 0x40000
  }

  public func has(_ attribute: Attribute) -> Bool { attributes & attribute.rawValue != 0 }

  package static let algECC: UInt16 = 0x0023
  package static let algRSA: UInt16 = 0x0001
  package static let algSHA256: UInt16 = 0x000B
  package static let algNull: UInt16 = 0x0010
  package static let algAES: UInt16 = 0x0006
  package static let algCFB: UInt16 = 0x0043
  package static let curveP256: UInt16 = 0x0003

  /// The RSA keys accepted anywhere: the TCG EK profiles' sizes, and an odd public exponent of
  /// at least 3. A larger modulus is no stronger here and costs the verifier's hand-written
  /// exponentiation quadratic time (a 65,000-byte modulus took 338 s); e = 1 or an
  /// even e is no RSA key at all.
  public static let rsaModulusBits = 2048...4096

  /// Parses a marshalled TPM2B_PUBLIC (2-byte size, then the area) of an ECC P-256 or RSA key.
  public init(tpm2b bytes: [UInt8]) throws(AttestationError) {
    var reader = TPMReader(bytes)
    let area = try reader.sized()
    try reader.expectEnd("a public area")
    try self.init(area: area)
  }

  /// Parses a marshalled TPMT_PUBLIC of an ECC P-256 or RSA key.
  public init(area: [UInt8]) throws(AttestationError) {
    var reader = TPMReader(area)
    self.area = area
    type = try reader.u16()
    nameAlg = try reader.u16()
    attributes = try reader.u32()
    authPolicy = try reader.sized()
    guard type == Self.algECC || type == Self.algRSA else {
      throw .unsupported("a public area of type 0x\(String(type, radix: 16)), neither ECC nor RSA")
    }
    guard nameAlg == Self.algSHA256 else { throw .unsupported("a name algorithm other than SHA-256") }
    // symmetric: algorithm, then keyBits and mode unless it is NULL
    if try reader.u16() != Self.algNull {
      _ = try reader.u16()
      _ = try reader.u16()
    }
    scheme = try reader.u16()
    if scheme != Self.algNull { _ = try reader.u16() }  // the scheme's hash
    if type == Self.algRSA {
      _ = try reader.u16()  // keyBits
      let exponent = try reader.u32()
      let modulus = try reader.sized()
      material = .rsa(modulus: modulus, exponent: exponent == 0 ? 65537 : exponent)
      try Self.checkRSA(modulus: modulus, exponent: exponent == 0 ? 65537 : exponent)
    } else {
      let curve = try reader.u16()
      if try reader.u16() != Self.algNull { _ = try reader.u16() }  // kdf
      let x = try reader.sized()
      let y = try reader.sized()
      guard curve == Self.curveP256, x.count <= 32, y.count <= 32 else { throw .unsupported("a curve other than NIST P-256") }
      material = .eccP256(x: x, y: y)
    }
    try reader.expectEnd("a public area")
  }

  /// Refuses an RSA key outside `rsaModulusBits` or with an exponent that is even or below 3.
  public static func checkRSA(modulus: [UInt8], exponent: UInt32) throws(AttestationError) {
    guard exponent >= 3, exponent & 1 == 1 else { throw .unsupported("an RSA public exponent of \(exponent) (odd and at least 3 only)") }
    let significant = modulus.drop { $0 == 0 }
    let bits = significant.isEmpty ? 0 : significant.count * 8 - significant.first!.leadingZeroBitCount
    guard rsaModulusBits.contains(bits) else {
      throw .unsupported("an RSA modulus of \(bits) bits (\(rsaModulusBits.lowerBound)–\(rsaModulusBits.upperBound) only)")
    }
  }

  /// The TPM's name of the object: nameAlg ‖ SHA-256(TPMT_PUBLIC).
  public var name: [UInt8] { Self.name(area: area) }

  /// The name of the object whose TPMT_PUBLIC is `area` (nameAlg SHA-256).
  public static func name<Area: Collection<UInt8>>(area: Area) -> [UInt8] { [0x00, 0x0B] + Array(SHA256.hash(data: Array(area))) }

  /// The marshalled TPM2B_PUBLIC of this area.
  public var tpm2b: [UInt8] { TPMWriter.sized(area) }

  /// The uncompressed point 04 ‖ X ‖ Y, each coordinate padded to 32 bytes.
  package func x963() throws(AttestationError) -> [UInt8] {
    guard case .eccP256(let x, let y) = material else { throw .unsupported("an RSA key where a P-256 key is needed") }
    return [0x04] + Self.padded(x) + Self.padded(y)
  }

  /// A P-256 coordinate left-padded to 32 bytes.
  package static func padded(_ bytes: [UInt8]) -> [UInt8] { [UInt8](repeating: 0, count: max(0, 32 - bytes.count)) + bytes }

  public func signingKey() throws(AttestationError) -> P256.Signing.PublicKey {
    let point = try x963()
    do { return try P256.Signing.PublicKey(x963Representation: point) } catch { throw .malformed("the public point is not on P-256") }
  }

  package func agreementKey() throws(AttestationError) -> P256.KeyAgreement.PublicKey {
    let point = try x963()
    do { return try P256.KeyAgreement.PublicKey(x963Representation: point) } catch {
      throw .malformed("the public point is not on P-256")
    }
  }
}

// MARK: - The endorsement key templates

extension TPMPublic {
  /// TPM2_PolicySecret(TPM_RH_ENDORSEMENT): policy A of the TCG EK Credential Profile, the only
  /// way to use a standard EK.
  public static let endorsementPolicyA: [UInt8] = [
    0x83, 0x71, 0x97, 0x67, 0x44, 0x84, 0xB3, 0xF8, 0x1A, 0x90, 0xCC, 0x8D, 0x46, 0xA5, 0xD7, 0x24,
    0xFD, 0x52, 0xD7, 0x6E, 0x06, 0x52, 0x0B, 0x64, 0xF2, 0xA1, 0xDA, 0x1B, 0x33, 0x14, 0x69, 0xAA,
  ]

  /// fixedTPM, fixedParent, sensitiveDataOrigin, adminWithPolicy, restricted, decrypt.
  public static let endorsementAttributes: UInt32 = 0x0003_00B2

  /// The public area a TPM makes from the TCG EK Credential Profile's template L-1 (RSA 2048)
  /// or L-2 (ECC NIST P-256) for the key `material` — byte for byte, so that one TPM has one EK
  /// name: the verifier requires a presented EK to be exactly this for its certificate's key
  /// (a key compared alone let one TPM pass under many names). Nil for a key no
  /// such template makes (an RSA key that is not 2048 bits with e = 65537, a coordinate
  /// longer than 32 bytes).
  public static func endorsementKeyArea(for material: Material) -> [UInt8]? {
    let head =
      TPMWriter.u16(0) + TPMWriter.u16(algSHA256) + TPMWriter.u32(endorsementAttributes) + TPMWriter.sized(endorsementPolicyA)
      + TPMWriter.u16(algAES) + TPMWriter.u16(128) + TPMWriter.u16(algCFB) + TPMWriter.u16(algNull)
    switch material {
    case .eccP256(let x, let y):
      guard x.count <= 32, y.count <= 32 else { return nil }
      return TPMWriter.u16(algECC) + head.dropFirst(2) + TPMWriter.u16(curveP256) + TPMWriter.u16(algNull)
        + TPMWriter.sized(padded(x)) + TPMWriter.sized(padded(y))
    case .rsa(let modulus, let exponent):
      let significant = Array(modulus.drop { $0 == 0 })
      guard exponent == 65537, significant.count == 256, significant[0] & 0x80 != 0 else { return nil }
      return TPMWriter.u16(algRSA) + head.dropFirst(2) + TPMWriter.u16(2048) + TPMWriter.u32(0) + TPMWriter.sized(significant)
    }
  }

  /// Whether this is exactly the standard EK area (L-1 or L-2) for its own key.
  public var isCanonicalEndorsementKey: Bool { Self.endorsementKeyArea(for: material) == area }
}
