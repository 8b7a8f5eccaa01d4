import Crypto
import CryptoExtras
import TPMProtocol

/// The server half of credential activation (TPM2_MakeCredential, done in software): a secret
/// only the TPM holding the EK can release, and only for the object named `objectName` loaded
/// in that TPM. The TPM 2.0 specification, part 1, "Credential Protection" and "Secret
/// Sharing" (ECDH with KDFe for an ECC EK; for an RSA EK a random seed under RSA-OAEP with the
/// label "IDENTITY"), with KDFa for the symmetric and HMAC keys:
///
///     Z         = x(ECDH(ephemeral, EK))
///     seed      = KDFe(SHA-256, Z, "IDENTITY", x(ephemeral), x(EK), 256)
///     symKey    = KDFa(SHA-256, seed, "STORAGE", name, "", 128)
///     encIdentity = AES-128-CFB(symKey, IV 0, TPM2B(credential))
///     hmacKey   = KDFa(SHA-256, seed, "INTEGRITY", "", "", 256)
///     blob      = TPM2B(HMAC(hmacKey, encIdentity ‖ name)) ‖ encIdentity
///     secret    = TPMS_ECC_POINT(ephemeral)
///
/// Hand-written from the specification (no Swift library does it); the tests check it against
/// swtpm's TPM2_ActivateCredential.
public enum CredentialChallenge {
  /// A credential for `objectName` (an AK's name), sealed to the EK `endorsementKey`:
  /// `credentialBlob` and `encryptedSecret` are the contents of TPM2B_ID_OBJECT and
  /// TPM2B_ENCRYPTED_SECRET (without their size fields).
  public static func make(endorsementKey ek: TPMPublic, objectName: [UInt8], credential: [UInt8]) throws(AttestationError) -> (
    credentialBlob: [UInt8], encryptedSecret: [UInt8]
  ) {
    guard ek.has(.restricted), ek.has(.decrypt) else { throw .unsupported("the endorsement key is not a restricted decryption key") }
    guard credential.count <= 32 else { throw .unsupported("a credential longer than 32 bytes") }
    let seed: [UInt8]
    let encryptedSecret: [UInt8]
    switch ek.material {
    case .eccP256(let x, _):
      let ephemeral = P256.KeyAgreement.PrivateKey()
      let shared: SharedSecret
      do { shared = try ephemeral.sharedSecretFromKeyAgreement(with: try ek.agreementKey()) } catch {
        throw .malformed("the endorsement key's point")
      }
      let z = shared.withUnsafeBytes { Array($0) }
      let point = Array(ephemeral.publicKey.x963Representation)
      let ephemeralX = Array(point[1..<33])
      seed = kdfe(z, label: "IDENTITY", partyU: ephemeralX, partyV: TPMPublic.padded(x))
      encryptedSecret = TPMWriter.sized(ephemeralX) + TPMWriter.sized(Array(point[33..<65]))
    case .rsa(let modulus, let exponent):
      // A random seed of the name algorithm's size, sealed to the EK with OAEP.
      seed = (0..<32).map { _ in UInt8.random(in: 0...255) }
      encryptedSecret = try RSAOAEP.encrypt(seed, modulus: modulus, exponent: exponent, label: Array("IDENTITY".utf8) + [0])
    }
    let symmetricKey = kdfa(seed, label: "STORAGE", contextU: objectName, contextV: [], bits: 128)
    let encIdentity: [UInt8]
    do {
      encIdentity = Array(
        try AES._CFB.encrypt(
          TPMWriter.sized(credential), using: SymmetricKey(data: symmetricKey), iv: AES._CFB.IV(ivBytes: [UInt8](repeating: 0, count: 16))))
    } catch {
      throw .malformed("AES-CFB failed: \(error)")
    }
    let hmacKey = kdfa(seed, label: "INTEGRITY", contextU: [], contextV: [], bits: 256)
    let integrity = Array(HMAC<SHA256>.authenticationCode(for: encIdentity + objectName, using: SymmetricKey(data: hmacKey)))
    return (TPMWriter.sized(integrity) + encIdentity, encryptedSecret)
  }

  /// KDFa (SP 800-108 counter mode with HMAC-SHA-256): `bits` of output.
  package static func kdfa(_ key: [UInt8], label: String, contextU: [UInt8], contextV: [UInt8], bits: Int) -> [UInt8] {
    var output: [UInt8] = []
    var counter: UInt32 = 1
    while output.count * 8 < bits {
      let input = bigEndian(counter) + Array(label.utf8) + [0] + contextU + contextV + bigEndian(UInt32(bits))
      output += HMAC<SHA256>.authenticationCode(for: input, using: SymmetricKey(data: key))
      counter += 1
    }
    return Array(output.prefix(bits / 8))
  }

  /// KDFe (SP 800-56A concatenation KDF with SHA-256) for 256 bits: one block.
  package static func kdfe(_ z: [UInt8], label: String, partyU: [UInt8], partyV: [UInt8]) -> [UInt8] {
    Array(SHA256.hash(data: bigEndian(UInt32(1)) + z + Array(label.utf8) + [0] + partyU + partyV))
  }

  static func bigEndian(_ value: UInt32) -> [UInt8] {
    [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
  }
}
