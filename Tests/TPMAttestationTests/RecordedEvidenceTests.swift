import Crypto
import CryptoExtras
import Foundation
import ProfileJSON
import TPMAttestation
import TPMProtocol
import Testing
import X509

/// The verifier on documents a manufactured swtpm produced once (Fixtures/recorded, made by
/// Fixtures/record-evidence.sh): its checks run on every machine, with no TPM and no swtpm.
@Suite(.timeLimit(.minutes(10)))
struct RecordedEvidenceTests {
  static let directory = CryptoVectorsTests.fixtures + "/recorded/"
  static let challenge = "recorded-challenge"

  static func document(_ name: String) throws -> JSON {
    try JSONParser.parse(Array(try Data(contentsOf: URL(fileURLWithPath: directory + name))))
  }

  static func certificates(_ name: String) throws -> [Certificate] {
    try EndorsementCertificate.certificates(pem: try String(contentsOfFile: directory + name, encoding: .utf8))
  }

  static func request() throws -> AttestationRequest { try AttestationRequest(json: try document("request.json")) }

  @Test("the recorded request passes: RSA EK certificate chained to the manufacturer's CA, canonical EK, restricted AK")
  func requestIsAccepted() async throws {
    let request = try Self.request()
    let verifier = AttestationVerifier(roots: try Self.certificates("roots.pem"), intermediates: try Self.certificates("intermediates.pem"))
    let result = try await verifier.challenge(for: request)
    #expect(result.pending.endorsementCertified)
    #expect(result.pending.endorsementKeyName == (try TPMPublic(tpm2b: request.endorsementKey)).name)
    // The typed challenge is the document sent: it reads back as itself.
    #expect(try AttestationChallenge(json: result.challenge.json) == result.challenge)
    #expect(!result.challenge.credentialBlob.isEmpty && !result.challenge.encryptedSecret.isEmpty)
    // With no manufacturer root configured, the chain does not close.
    let untrusted = AttestationVerifier(roots: [], intermediates: try Self.certificates("intermediates.pem"))
    do {
      _ = try await untrusted.challenge(for: request)
      Issue.record("a certificate chained to no configured root was accepted")
    } catch {
      guard error.code == .ekCertificateUntrusted else { throw error }
    }
  }

  @Test("the recorded request with its EK re-spelled or another TPM's certificate is refused by name")
  func alteredRequestsAreRefused() async throws {
    let verifier = AttestationVerifier(roots: try Self.certificates("roots.pem"), intermediates: try Self.certificates("intermediates.pem"))
    var respelled = try Self.request()
    // symmetric keyBits 128 → 256 in the EK area (after its 2-byte size: offset 2 + 44).
    respelled.endorsementKey[46] = 0x01
    respelled.endorsementKey[47] = 0x00
    await #expect(throws: AttestationError.endorsementKeyNotCanonical) { try await verifier.challenge(for: respelled) }
    var otherKey = try Self.request()
    let modulus = try _RSAKeyForTest.modulus()
    otherKey.endorsementKey = TPMPublic.endorsementKeyArea(for: .rsa(modulus: modulus, exponent: 65537)).map { TPMWriter.sized($0) }!
    await #expect(throws: AttestationError.ekCertificateForAnotherKey) { try await verifier.challenge(for: otherKey) }
  }

  @Test("the recorded evidence verifies for its AK and challenge, and each change fails its own check")
  func evidenceVerifiesAndTamperingFailsByName() throws {
    let request = try Self.request()
    let ak = try TPMPublic(tpm2b: request.attestationKey)
    let evidence = try Self.document("evidence.json")
    let nonce = AttestationProtocol.nonce(challenge: Self.challenge)
    let certification = try KeyCertification(json: evidence)
    try certification.verify(nonce: nonce, activatedName: ak.name)
    #expect(throws: AttestationError.wrongNonce) {
      try certification.verify(nonce: AttestationProtocol.nonce(challenge: "another"), activatedName: ak.name)
    }
    #expect(throws: AttestationError.attestationKeyNotActivated) {
      try certification.verify(nonce: nonce, activatedName: [0x00, 0x0B] + [UInt8](repeating: 7, count: 32))
    }
    var badSignature = certification
    badSignature.signature[10] ^= 1
    #expect(throws: AttestationError.badSignature) { try badSignature.verify(nonce: nonce, activatedName: ak.name) }
    var otherKey = certification
    otherKey.key = request.attestationKey  // the AK itself presented as the certified key
    #expect(throws: AttestationError.certifiesAnotherKey) { try otherKey.verify(nonce: nonce, activatedName: ak.name) }
    var wrongType = certification
    wrongType.attestation[5] = 0x18  // TPM_ST_ATTEST_QUOTE: the signature no longer verifies first
    #expect(throws: AttestationError.badSignature) { try wrongType.verify(nonce: nonce, activatedName: ak.name) }
    let expected = try TPMPublic(tpm2b: certification.key).signingKey()
    try certification.verify(nonce: nonce, activatedName: ak.name, expectedKey: expected)
    #expect(throws: AttestationError.keyDiffersFromJWS) {
      try certification.verify(nonce: nonce, activatedName: ak.name, expectedKey: P256.Signing.PrivateKey().publicKey)
    }
  }
}

/// A 2048-bit RSA modulus that is not the recorded EK's.
enum _RSAKeyForTest {
  static func modulus() throws -> [UInt8] {
    let pem = try String(contentsOfFile: CryptoVectorsTests.fixtures + "/rsa/2048-e65537.pem", encoding: .utf8)
    return Array(try _RSA.Encryption.PrivateKey(pemRepresentation: pem).publicKey.getKeyPrimitives().modulus)
  }
}
