import Crypto

/// A TPM's public area (TPMT_PUBLIC) of an ECC P-256 or RSA key, parsed from the bytes the TPM
/// marshals: what the verifier checks (attributes, the point) and names (nameAlg ‖ SHA-256 of
/// the area). Pure Swift: a server verifies evidence without tpm2-tss.
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
    /// An RSA modulus and public exponent (0 in the area means 65537).
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

  static let algECC: UInt16 = 0x0023
  static let algRSA: UInt16 = 0x0001
  static let algSHA256: UInt16 = 0x000B
  static let algNull: UInt16 = 0x0010
  static let curveP256: UInt16 = 0x0003

  /// Parses a marshalled TPM2B_PUBLIC (2-byte size, then the area) of an ECC P-256 or RSA key.
  public init(tpm2b bytes: [UInt8]) throws(AttestationError) {
    var reader = TPMReader(bytes)
    let area = try reader.sized()
    guard reader.atEnd else { throw .malformed("a public area has trailing bytes") }
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
      material = .rsa(modulus: try reader.sized(), exponent: exponent == 0 ? 65537 : exponent)
    } else {
      let curve = try reader.u16()
      if try reader.u16() != Self.algNull { _ = try reader.u16() }  // kdf
      let x = try reader.sized()
      let y = try reader.sized()
      guard curve == Self.curveP256, x.count <= 32, y.count <= 32 else { throw .unsupported("a curve other than NIST P-256") }
      material = .eccP256(x: x, y: y)
    }
    guard reader.atEnd else { throw .malformed("a public area has trailing bytes") }
  }

  /// The TPM's name of the object: nameAlg ‖ SHA-256(TPMT_PUBLIC).
  public var name: [UInt8] { Self.name(area: area) }

  /// The name of the object whose TPMT_PUBLIC is `area` (nameAlg SHA-256).
  public static func name<Area: Collection<UInt8>>(area: Area) -> [UInt8] { [0x00, 0x0B] + Array(SHA256.hash(data: Array(area))) }

  /// The uncompressed point 04 ‖ X ‖ Y, each coordinate padded to 32 bytes.
  func x963() throws(AttestationError) -> [UInt8] {
    guard case .eccP256(let x, let y) = material else { throw .unsupported("an RSA key where a P-256 key is needed") }
    return [0x04] + Self.padded(x) + Self.padded(y)
  }

  static func padded(_ bytes: [UInt8]) -> [UInt8] { [UInt8](repeating: 0, count: max(0, 32 - bytes.count)) + bytes }

  public func signingKey() throws(AttestationError) -> P256.Signing.PublicKey {
    let point = try x963()
    do { return try P256.Signing.PublicKey(x963Representation: point) } catch { throw .malformed("the public point is not on P-256") }
  }

  func agreementKey() throws(AttestationError) -> P256.KeyAgreement.PublicKey {
    let point = try x963()
    do { return try P256.KeyAgreement.PublicKey(x963Representation: point) } catch {
      throw .malformed("the public point is not on P-256")
    }
  }
}

/// Big-endian reading of TPM structures.
struct TPMReader {
  let bytes: [UInt8]
  var index = 0
  init(_ bytes: [UInt8]) { self.bytes = bytes }
  var atEnd: Bool { index == bytes.count }

  mutating func take(_ count: Int) throws(AttestationError) -> [UInt8] {
    guard count >= 0, index + count <= bytes.count else { throw .malformed("a TPM structure is truncated") }
    defer { index += count }
    return Array(bytes[index..<(index + count)])
  }
  mutating func u8() throws(AttestationError) -> UInt8 { try take(1)[0] }
  mutating func u16() throws(AttestationError) -> UInt16 { try take(2).reduce(0) { $0 << 8 | UInt16($1) } }
  mutating func u32() throws(AttestationError) -> UInt32 { try take(4).reduce(0) { $0 << 8 | UInt32($1) } }
  mutating func u64() throws(AttestationError) -> UInt64 { try take(8).reduce(0) { $0 << 8 | UInt64($1) } }
  /// A TPM2B: a 2-byte size, then that many bytes.
  mutating func sized() throws(AttestationError) -> [UInt8] { try take(Int(try u16())) }
}

/// A TPM2B: `bytes` after their 2-byte big-endian size.
func sized(_ bytes: [UInt8]) -> [UInt8] { [UInt8(bytes.count >> 8), UInt8(bytes.count & 0xFF)] + bytes }

/// Why evidence was refused: which check failed.
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
  /// The EK certificate does not chain to a configured manufacturer root (the validator's result).
  case ekCertificateUntrusted(String)
  /// The EK certificate certifies another key than the TPM's endorsement key.
  case ekCertificateForAnotherKey
  /// The TPM sent no EK certificate and its EK is not among the trusted ones.
  case endorsementKeyUnknown
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
    case .ekCertificateUntrusted(let result): "the EK certificate does not chain to a trusted TPM manufacturer root (\(result))"
    case .ekCertificateForAnotherKey: "the EK certificate certifies another key than this TPM's endorsement key"
    case .endorsementKeyUnknown: "the TPM sent no EK certificate and its endorsement key is not among the trusted ones"
    case .credentialNotReleased: "the answer is not the credential sealed to the endorsement key: that TPM did not release it"
    case .noEvidence: "the JWS carries no tpmEvidence claim (a file key, or a client that does not attest)"
    case .clientCannotAttest(let reason): "the client cannot attest: \(reason)"
    }
  }
}
