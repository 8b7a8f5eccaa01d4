import Crypto
import CryptoExtras
import TPMAttestation
import TPMProtocol
import Testing

/// One TPM has one EK name (the area must be the TCG
/// template's for its key, byte for byte), and RSA keys are accepted only at the EK profiles'
/// sizes with an odd exponent of at least 3.
@Suite(.timeLimit(.minutes(10)))
struct WireRulesTests {
  /// A restricted P-256 signing key's area, as `attest request` sends an AK.
  static func attestationKey() -> [UInt8] {
    let point = Array(P256.Signing.PrivateKey().publicKey.x963Representation)
    let area: [UInt8] =
      [0x00, 0x23, 0x00, 0x0B, 0x00, 0x05, 0x04, 0x72, 0x00, 0x00, 0x00, 0x10, 0x00, 0x18, 0x00, 0x0B, 0x00, 0x03, 0x00, 0x10]
      + [0x00, 0x20] + point[1..<33] + [0x00, 0x20] + point[33..<65]
    return [UInt8(area.count >> 8), UInt8(area.count & 0xFF)] + area
  }

  static func tpm2b(_ area: [UInt8]) -> [UInt8] { [UInt8(area.count >> 8), UInt8(area.count & 0xFF)] + area }

  /// The challenge a verifier that trusts `area` by name gives for it (or its refusal).
  func challenge(ekType: String, area: [UInt8]) async throws {
    let verifier = AttestationVerifier(roots: [], trustedEndorsementKeys: [TPMPublic.name(area: area)])
    let request = AttestationRequest(
      endorsementKeyType: ekType, endorsementKey: Self.tpm2b(area), endorsementCertificate: nil, attestationKey: Self.attestationKey())
    _ = try await verifier.challenge(for: request)
  }

  static func eccArea() -> [UInt8] {
    let point = Array(P256.KeyAgreement.PrivateKey().publicKey.x963Representation)
    return TPMPublic.endorsementKeyArea(for: .eccP256(x: Array(point[1..<33]), y: Array(point[33..<65])))!
  }

  static func rsaArea() throws -> [UInt8] {
    let modulus = Array(try _RSA.Encryption.PrivateKey(keySize: .bits2048).publicKey.getKeyPrimitives().modulus)
    return TPMPublic.endorsementKeyArea(for: .rsa(modulus: modulus, exponent: 65537))!
  }

  @Test("the templates' EKs are accepted when trusted by name")
  func canonicalAreasPass() async throws {
    try await challenge(ekType: "eccP256", area: Self.eccArea())
    try await challenge(ekType: "rsa2048", area: try Self.rsaArea())
  }

  /// Each change keeps the key (or only re-spells it) and changes the name.
  static let mutations: [(String, @Sendable ([UInt8]) -> [UInt8])] = [
    (
      "symmetric keyBits 256",
      {
        var a = $0
        a[44] = 0x01
        a[45] = 0x00
        return a
      }
    ),
    (
      "another authPolicy byte",
      {
        var a = $0
        a[10] ^= 0x01
        return a
      }
    ),
    (
      "userWithAuth added",
      {
        var a = $0
        a[7] |= 0x40
        return a
      }
    ),
    (
      "noDA added",
      {
        var a = $0
        a[6] |= 0x04
        return a
      }
    ),
  ]

  @Test("an ECC EK area that is not the template's for its key is refused even when trusted by name", arguments: 0..<4)
  func mutatedECCAreasAreRefused(index: Int) async throws {
    let (what, mutate) = Self.mutations[index]
    let area = mutate(Self.eccArea())
    #expect(area != Self.eccArea(), "\(what)")
    await #expect(throws: AttestationError.endorsementKeyNotCanonical, "\(what)") {
      try await challenge(ekType: "eccP256", area: area)
    }
  }

  @Test("an RSA EK area with the modulus re-spelled (a leading zero byte) or another exponent is refused")
  func respelledRSAAreasAreRefused() async throws {
    let area = try Self.rsaArea()
    // type, nameAlg, attributes, authPolicy (0…41), symmetric, scheme (42…49), keyBits (50),
    // exponent (52…55), unique: size 0x0100 at 56, the modulus after it.
    let leadingZero = Array(area[0..<56]) + [0x01, 0x01, 0x00] + Array(area[58...])
    await #expect(throws: AttestationError.endorsementKeyNotCanonical) { try await challenge(ekType: "rsa2048", area: leadingZero) }
    var exponent3 = area
    exponent3[55] = 3
    await #expect(throws: AttestationError.endorsementKeyNotCanonical) { try await challenge(ekType: "rsa2048", area: exponent3) }
    var explicit65537 = area
    explicit65537[53] = 0x01
    explicit65537[55] = 0x01
    await #expect(throws: AttestationError.endorsementKeyNotCanonical) { try await challenge(ekType: "rsa2048", area: explicit65537) }
  }

  @Test("the request's ekType must be its EK's type")
  func ekTypeMustMatch() async throws {
    await #expect(throws: AttestationError.self) { try await challenge(ekType: "rsa2048", area: Self.eccArea()) }
  }

  @Test(
    "RSA keys anywhere: 2048–4096 bits, odd e ≥ 3; anything else is refused at parsing, before any arithmetic",
    arguments: [
      (2047, 65537, false), (2048, 65537, true), (4096, 3, true), (4097, 65537, false), (520_000, 65537, false), (2048, 1, false),
      (2048, 65536, false), (3072, 0, true),
    ])
  func rsaLimits(bits: Int, exponent: UInt32, accepted: Bool) {
    // A modulus of `bits` bits: top bit set, the rest arbitrary.
    var modulus = [UInt8](repeating: 0xA5, count: (bits + 7) / 8)
    modulus[0] = UInt8(1 << ((bits - 1) % 8)) | (bits % 8 == 0 ? 0x80 : 0)
    let area: [UInt8] =
      [0x00, 0x01, 0x00, 0x0B, 0x00, 0x04, 0x00, 0x72, 0x00, 0x00, 0x00, 0x10, 0x00, 0x10]
      + [UInt8(bits >> 8 & 0xFF), UInt8(bits & 0xFF)]
      + [UInt8(exponent >> 24), UInt8(exponent >> 16 & 0xFF), UInt8(exponent >> 8 & 0xFF), UInt8(exponent & 0xFF)]
      + [UInt8(modulus.count >> 8 & 0xFF), UInt8(modulus.count & 0xFF)] + modulus
    let parsed = Result { () throws(AttestationError) in try TPMPublic(area: area) }
    if case .failure(let error) = parsed, accepted { Issue.record("refused: \(error)") }
    if case .success = parsed, !accepted { Issue.record("accepted \(bits) bits, e = \(exponent)") }
  }
}
