import Crypto
import CryptoExtras
import Foundation
import ProfileJSON
import TPMAttestation
import TPMProtocol
import TestSupport
import Testing

/// The verifier's hand-written crypto judged without swtpm, by implementations the
/// project did not write — swift-crypto's RSA-OAEP decryption (BoringSSL), OpenSSL's with a
/// label, tpm2-tools' TPM2_MakeCredential, Python's HMAC — over data in Fixtures/ made by
/// Fixtures/make-vectors.py.
@Suite(.timeLimit(.minutes(10)))
struct CryptoVectorsTests {
  static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures").path

  static func json(_ name: String) throws -> JSON {
    try JSONParser.parse(Array(try Data(contentsOf: URL(fileURLWithPath: fixtures + "/" + name))))
  }

  static func hex(_ text: String?) -> [UInt8] {
    let digits = Array((text ?? "").utf8)
    return stride(from: 0, to: digits.count - 1, by: 2).map { UInt8(String(decoding: digits[$0...$0 + 1], as: UTF8.self), radix: 16)! }
  }

  static let rsaKeys: [String] = [2048, 3072, 4096].flatMap { bits in [3, 17, 65537].map { "\(bits)-e\($0).pem" } }

  @Test(
    "RSA-OAEP (SHA-256, empty label) as swift-crypto decrypts it, over 2048/3072/4096-bit keys and e = 3, 17, 65537", arguments: rsaKeys)
  func oaepAgreesWithSwiftCrypto(keyFile: String) throws {
    let pem = try String(contentsOfFile: Self.fixtures + "/rsa/" + keyFile, encoding: .utf8)
    let key = try _RSA.Encryption.PrivateKey(pemRepresentation: pem)
    let primitives = try key.publicKey.getKeyPrimitives()
    let exponent = Array(primitives.publicExponent).reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
    for length in [0, 1, 32, 190] {
      let message = (0..<length).map { _ in UInt8.random(in: 0...255) }
      let sealed = try RSAOAEP.encrypt(message, modulus: Array(primitives.modulus), exponent: exponent, label: [])
      #expect(sealed.count == Array(primitives.modulus).count)
      let opened = try key.decrypt(sealed, padding: .PKCS1_OAEP_SHA256)
      #expect(Array(opened) == message, "\(keyFile), \(length) bytes")
    }
  }

  @Test("RSA-OAEP with TPM2_MakeCredential's label \"IDENTITY\\0\", as OpenSSL decrypts it")
  func oaepLabelAgreesWithOpenSSL() throws {
    let path = Self.fixtures + "/rsa/2048-e65537.pem"
    let key = try _RSA.Encryption.PrivateKey(pemRepresentation: try String(contentsOfFile: path, encoding: .utf8))
    let primitives = try key.publicKey.getKeyPrimitives()
    let seed = (0..<32).map { _ in UInt8.random(in: 0...255) }
    let label = Array("IDENTITY".utf8) + [0]
    let sealed = try RSAOAEP.encrypt(seed, modulus: Array(primitives.modulus), exponent: 65537, label: label)
    let file = NSTemporaryDirectory() + "fr-profile-oaep-\(UUID().uuidString)"
    try Data(sealed).write(to: URL(fileURLWithPath: file))
    defer { try? FileManager.default.removeItem(atPath: file) }
    let labelHex = label.map { String(format: "%02x", $0) }.joined()
    func openssl(_ hexLabel: String) throws -> TestProcess.Result {
      try TestProcess.run(
        [
          "/usr/bin/openssl", "pkeyutl", "-decrypt", "-inkey", path, "-in", file, "-pkeyopt", "rsa_padding_mode:oaep", "-pkeyopt",
          "rsa_oaep_md:sha256", "-pkeyopt", "rsa_mgf1_md:sha256", "-pkeyopt", "rsa_oaep_label:" + hexLabel,
        ], environment: [:], timeout: 30)
    }
    let opened = try openssl(labelHex)
    #expect(opened.status == 0, "\(opened.stderr)")
    #expect(opened.output == seed)
    #expect(try openssl("4944454e54495459").status != 0, "the label without its NUL must not open it")
  }

  @Test("KDFa against Python's HMAC (SP 800-108 counter mode), 128 to 512 bits")
  func kdfaKnownAnswers() throws {
    for vector in try Self.json("kdfa.json").arrayValue ?? [] {
      let output = CredentialChallenge.kdfa(
        Self.hex(vector["key"]?.stringValue), label: vector["label"]?.stringValue ?? "",
        contextU: Self.hex(vector["contextU"]?.stringValue),
        contextV: Self.hex(vector["contextV"]?.stringValue), bits: Int(vector["bits"]?.numberValue ?? 0))
      #expect(output == Self.hex(vector["output"]?.stringValue), "\(vector["label"]?.stringValue ?? "")")
    }
    #expect((try Self.json("kdfa.json").arrayValue ?? []).count == 4)
  }

  /// TPM2_ActivateCredential in software, with our KDFa: the credential tpm2-tools sealed, or nil
  /// when the blob's integrity does not check.
  static func activate(seed: [UInt8], name: [UInt8], blob: [UInt8]) throws -> [UInt8]? {
    let integritySize = Int(blob[0]) << 8 | Int(blob[1])
    let integrity = Array(blob[2..<(2 + integritySize)])
    let encIdentity = Array(blob[(2 + integritySize)...])
    let hmacKey = CredentialChallenge.kdfa(seed, label: "INTEGRITY", contextU: [], contextV: [], bits: 256)
    let expected = Array(HMAC<SHA256>.authenticationCode(for: encIdentity + name, using: SymmetricKey(data: hmacKey)))
    guard expected == integrity else { return nil }
    let symmetricKey = CredentialChallenge.kdfa(seed, label: "STORAGE", contextU: name, contextV: [], bits: 128)
    let plain = Array(
      try AES._CFB.decrypt(encIdentity, using: SymmetricKey(data: symmetricKey), iv: AES._CFB.IV(ivBytes: [UInt8](repeating: 0, count: 16)))
    )
    return Array(plain.dropFirst(2))
  }

  @Test("TPM2_MakeCredential by tpm2-tools for an ECC EK opens with our KDFe and KDFa (and not for another name)")
  func eccCredentialFromTPM2Tools() throws {
    let vector = try Self.json("credential-ecc.json")
    let ek = try P256.KeyAgreement.PrivateKey(pemRepresentation: vector["ekPrivateKeyPEM"]?.stringValue ?? "")
    let secret = Self.hex(vector["encryptedSecret"]?.stringValue)
    // TPMS_ECC_POINT: x and y, each a TPM2B.
    let x = Array(secret[2..<34])
    let y = Array(secret[36..<68])
    let ephemeral = try P256.KeyAgreement.PublicKey(x963Representation: [0x04] + x + y)
    let z = try ek.sharedSecretFromKeyAgreement(with: ephemeral).withUnsafeBytes { Array($0) }
    let ekX = Array(Array(ek.publicKey.x963Representation)[1..<33])
    let seed = CredentialChallenge.kdfe(z, label: "IDENTITY", partyU: x, partyV: ekX)
    let name = Self.hex(vector["name"]?.stringValue)
    let blob = Self.hex(vector["credentialBlob"]?.stringValue)
    #expect(try Self.activate(seed: seed, name: name, blob: blob) == Self.hex(vector["credential"]?.stringValue))
    var otherName = name
    otherName[5] ^= 1
    #expect(try Self.activate(seed: seed, name: otherName, blob: blob) == nil)
  }

  @Test("TPM2_MakeCredential by tpm2-tools for an RSA EK opens with our KDFa, from the seed OpenSSL decrypted")
  func rsaCredentialFromTPM2Tools() throws {
    let vector = try Self.json("credential-rsa.json")
    let seed = Self.hex(vector["seed"]?.stringValue)
    #expect(seed.count == 32)
    let opened = try Self.activate(
      seed: seed, name: Self.hex(vector["name"]?.stringValue), blob: Self.hex(vector["credentialBlob"]?.stringValue))
    #expect(opened == Self.hex(vector["credential"]?.stringValue))
  }

  @Test("our MakeCredential for an ECC EK opens with the EK's private key (the reverse direction, in software)")
  func ourECCCredentialOpens() throws {
    let ek = P256.KeyAgreement.PrivateKey()
    let point = Array(ek.publicKey.x963Representation)
    let area = TPMPublic.endorsementKeyArea(for: .eccP256(x: Array(point[1..<33]), y: Array(point[33..<65])))!
    let name = [0x00, 0x0B] + (0..<32).map { _ in UInt8.random(in: 0...255) }
    let credential = (0..<32).map { _ in UInt8.random(in: 0...255) }
    let sealed = try CredentialChallenge.make(endorsementKey: try TPMPublic(area: area), objectName: name, credential: credential)
    let secret = sealed.encryptedSecret
    let x = Array(secret[2..<34])
    let ephemeral = try P256.KeyAgreement.PublicKey(x963Representation: [0x04] + x + Array(secret[36..<68]))
    let z = try ek.sharedSecretFromKeyAgreement(with: ephemeral).withUnsafeBytes { Array($0) }
    let seed = CredentialChallenge.kdfe(z, label: "IDENTITY", partyU: x, partyV: Array(point[1..<33]))
    #expect(try Self.activate(seed: seed, name: name, blob: sealed.credentialBlob) == credential)
  }
}
