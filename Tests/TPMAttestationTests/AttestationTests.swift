import Crypto
import Foundation
import TPMAttestation
import TPMKeys
import TPMProtocol
import TestSupport
import Testing
import X509

/// Evidence from a real TPM protocol implementation (swtpm), checked by the verifier.
@Suite("TPM attestation against swtpm", .timeLimit(.minutes(10)))
struct AttestationTests {
  /// A TPM for one test, with its endorsement key's public area and an attestation key.
  final class Device {
    let tpm: SWTPM
    let context: TPMContext
    let endorsementKey: TPMPublic
    let attestationKey: TPMKeyBlob

    init() throws {
      tpm = try SWTPM()
      context = try TPMContext.open(tcti: tpm.tcti)
      endorsementKey = try TPMPublic(tpm2b: try context.endorsementPublicArea())
      attestationKey = try context.createAttestationKey()
    }

    var attestationKeyName: [UInt8] { get throws { try TPMPublic(tpm2b: attestationKey.publicArea).name } }

    deinit {
      tpm.stop()
      tpm.removeState()
    }
  }

  @Test("the TPM releases a credential made in software for its own EK and AK")
  func credentialActivationRoundTrips() throws {
    let device = try Device()
    #expect(device.endorsementKey.has(.restricted) && device.endorsementKey.has(.decrypt) && device.endorsementKey.has(.adminWithPolicy))
    // The TPM's own EK is the template's area for its key, byte for byte (the verifier's rule).
    #expect(device.endorsementKey.isCanonicalEndorsementKey)
    let secret = (0..<32).map { _ in UInt8.random(in: 0...255) }
    let challenge = try CredentialChallenge.make(
      endorsementKey: device.endorsementKey, objectName: try device.attestationKeyName, credential: secret)
    let released = try device.context.activateCredential(
      attestationKey: device.attestationKey, credentialBlob: challenge.credentialBlob, encryptedSecret: challenge.encryptedSecret)
    #expect(released == secret)
  }

  @Test("an AK of a second TPM presented with the first TPM's EK is never activated (keylime's CVE-2022-1053)")
  func anotherTPMsAttestationKeyIsNotActivated() throws {
    let real = try Device()
    let software = try Device()
    // The server seals to the real EK for the other TPM's AK: the other TPM cannot open it…
    let challenge = try CredentialChallenge.make(
      endorsementKey: real.endorsementKey, objectName: try software.attestationKeyName, credential: [1, 2, 3])
    #expect(throws: TPMError.self) {
      try software.context.activateCredential(
        attestationKey: software.attestationKey, credentialBlob: challenge.credentialBlob, encryptedSecret: challenge.encryptedSecret)
    }
    // …and the real TPM cannot load the other TPM's AK.
    #expect(throws: TPMError.self) {
      try real.context.activateCredential(
        attestationKey: software.attestationKey, credentialBlob: challenge.credentialBlob, encryptedSecret: challenge.encryptedSecret)
    }
    // A credential made for the real AK's name does not open for the other AK either.
    let forReal = try CredentialChallenge.make(
      endorsementKey: real.endorsementKey, objectName: try real.attestationKeyName, credential: [4, 5, 6])
    #expect(throws: TPMError.self) {
      try software.context.activateCredential(
        attestationKey: software.attestationKey, credentialBlob: forReal.credentialBlob, encryptedSecret: forReal.encryptedSecret)
    }
  }

  func certification(_ device: Device, key: TPMKeyBlob, nonce: [UInt8]) throws -> KeyCertification {
    let (attestation, signature) = try device.context.certify(key, attestationKey: device.attestationKey, qualifyingData: nonce)
    return KeyCertification(
      attestation: attestation, signature: signature, attestationKey: device.attestationKey.publicArea, key: key.publicArea)
  }

  @Test("a bound key certified by the activated AK over the server's nonce verifies, and names the key")
  func certificationVerifies() throws {
    let device = try Device()
    let key = try device.context.createSigningKey()
    let nonce = Array("journey challenge 42".utf8)
    let evidence = try certification(device, key: key, nonce: nonce)
    let expected = try TPMContext.publicKey(of: key)
    let verified = try evidence.verify(nonce: nonce, activatedName: try device.attestationKeyName, expectedKey: expected)
    #expect(verified.rawRepresentation == expected.rawRepresentation)
  }

  @Test("each tampering fails its own check")
  func tamperedEvidenceFailsByName() throws {
    let device = try Device()
    let key = try device.context.createSigningKey()
    let nonce = Array("nonce-A".utf8)
    let evidence = try certification(device, key: key, nonce: nonce)
    let akName = try device.attestationKeyName
    // Replayed for another nonce.
    #expect(throws: AttestationError.wrongNonce) { try evidence.verify(nonce: Array("nonce-B".utf8), activatedName: akName) }
    // An AK whose credential was never activated.
    let other = try device.context.createAttestationKey()
    #expect(throws: AttestationError.attestationKeyNotActivated) {
      try evidence.verify(nonce: nonce, activatedName: try TPMPublic(tpm2b: other.publicArea).name)
    }
    // Another key presented with this attestation (e.g. a file key's).
    var swapped = evidence
    swapped.key = try device.context.createSigningKey().publicArea
    #expect(throws: AttestationError.certifiesAnotherKey) { try swapped.verify(nonce: nonce, activatedName: akName) }
    // A flipped bit in the signed structure.
    var forged = evidence
    forged.attestation[forged.attestation.count - 1] ^= 1
    #expect(throws: AttestationError.badSignature) { try forged.verify(nonce: nonce, activatedName: akName) }
    // The JWS carries a key made outside the TPM.
    let fileKey = P256.Signing.PrivateKey().publicKey
    #expect(throws: AttestationError.keyDiffersFromJWS) { try evidence.verify(nonce: nonce, activatedName: akName, expectedKey: fileKey) }
    // A plain signing key offered as the attestation key.
    var unrestricted = evidence
    let plain = try device.context.createSigningKey()
    unrestricted.attestationKey = plain.publicArea
    #expect(throws: AttestationError.attestationKeyNotRestricted) {
      try unrestricted.verify(nonce: nonce, activatedName: try TPMPublic(tpm2b: plain.publicArea).name)
    }
  }

  @Test("a TPM without EK certificates in NV has none to give")
  func noEndorsementCertificateInAFreshSWTPM() throws {
    let device = try Device()
    #expect(try device.context.endorsementCertificate() == nil)
  }

  func manufacture(in directory: String) throws -> (state: String, root: String) {
    let made = try SWTPM.manufacture(in: directory)
    return (made.state, made.root)
  }

  @Test("a manufactured TPM: its RSA EK certificate is read from NV and certifies the RSA EK, and a credential sealed to that EK opens")
  func rsaEndorsementKeyWithItsCertificate() throws {
    let directory = NSTemporaryDirectory() + "fr-profile-ek-\(UInt32.random(in: 0...UInt32.max))"
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let (state, _) = try manufacture(in: directory)
    try withSWTPM(stateDirectory: state) { tpm in
      let context = try TPMContext.open(tcti: tpm.tcti)
      let certificate = try #require(try context.endorsementCertificate())
      let ek = try TPMPublic(tpm2b: try context.endorsementPublicArea(.rsa2048))
      guard case .rsa(let modulus, let exponent) = ek.material else {
        Issue.record("the RSA EK is not RSA")
        return
      }
      #expect(modulus.count == 256 && exponent == 65537)
      #expect(ek.isCanonicalEndorsementKey)
      // The certificate's key is this EK's (openssl reads the DER).
      let der = directory + "/ek.der"
      #expect(FileManager.default.createFile(atPath: der, contents: Data(certificate)))
      let openssl = try TestProcess.run(
        ["/usr/bin/openssl", "x509", "-inform", "DER", "-in", der, "-noout", "-modulus"], environment: [:], timeout: 30)
      let text = openssl.stdout
      #expect(text.trimmingCharacters(in: .whitespacesAndNewlines) == "Modulus=" + modulus.map { String(format: "%02X", $0) }.joined())
      // Credential activation through the RSA EK.
      let ak = try context.createAttestationKey()
      let secret = (0..<32).map { _ in UInt8.random(in: 0...255) }
      let challenge = try CredentialChallenge.make(
        endorsementKey: ek, objectName: try TPMPublic(tpm2b: ak.publicArea).name, credential: secret)
      let released = try context.activateCredential(
        attestationKey: ak, credentialBlob: challenge.credentialBlob, encryptedSecret: challenge.encryptedSecret, endorsementKey: .rsa2048)
      #expect(released == secret)
    }
  }

  func certificate(_ path: String) throws -> Certificate {
    try Certificate(pemEncoded: try String(contentsOfFile: path, encoding: .utf8))
  }

  @Test("the EK certificate chains to the manufacturer's root and certifies the EK; another CA's root or another TPM's EK fail by name")
  func endorsementCertificateChainsToTheManufacturer() async throws {
    let directory = NSTemporaryDirectory() + "fr-profile-ek-\(UInt32.random(in: 0...UInt32.max))"
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let (state, root) = try manufacture(in: directory + "/a")
    let (_, otherRoot) = try manufacture(in: directory + "/b")
    try await withSWTPM(stateDirectory: state) { tpm in
      let context = try TPMContext.open(tcti: tpm.tcti)
      let der = try #require(try context.endorsementCertificate())
      let ek = try TPMPublic(tpm2b: try context.endorsementPublicArea(.rsa2048))
      let issuer = try certificate(directory + "/a/ca/issuercert.pem")
      try await EndorsementCertificate.verify(der, endorsementKey: ek, roots: [try certificate(root)], intermediates: [issuer])
      let foreign = await #expect(throws: AttestationError.self) {
        try await EndorsementCertificate.verify(der, endorsementKey: ek, roots: [try certificate(otherRoot)], intermediates: [issuer])
      }
      #expect("\(foreign.map { "\($0)" } ?? "")".contains("does not chain to a trusted TPM manufacturer root"))
      // The genuine certificate, presented with a software TPM's EK.
      try await withSWTPM { software in
        let otherEK = try TPMPublic(tpm2b: try TPMContext.open(tcti: software.tcti).endorsementPublicArea(.rsa2048))
        await #expect(throws: AttestationError.ekCertificateForAnotherKey) {
          try await EndorsementCertificate.verify(der, endorsementKey: otherEK, roots: [try certificate(root)], intermediates: [issuer])
        }
      }
    }
  }
}
