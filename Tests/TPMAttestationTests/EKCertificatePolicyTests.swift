import Foundation
import ProfileJSON
import TPMAttestation
import TPMProtocol
import TestSupport
import Testing
import X509

/// The EK certificate as the TCG EK Credential Profile describes it: a certificate for
/// the recorded TPM's EK issued by openssl under a CA made here (an empty subject, as the profile
/// has it), with the subjectAltName and extendedKeyUsage each case needs, and validated at a time
/// the test chooses.
@Suite(.timeLimit(.minutes(10)))
struct EKCertificatePolicyTests {
  /// A CA and `leaf(…)`: certificates for the recorded EK with the extensions a case names.
  struct Issuer {
    let directory: String
    let root: Certificate
    let endorsementKey: TPMPublic

    init() throws {
      var template = Array((NSTemporaryDirectory() + "/fr-profile-ekcert.XXXXXX").utf8CString)
      guard let made = mkdtemp(&template) else { throw CocoaError(.fileWriteUnknown) }
      directory = String(cString: made)
      let request = try AttestationRequest(json: try RecordedEvidenceTests.document("request.json"))
      endorsementKey = try TPMPublic(tpm2b: request.endorsementKey)
      let certificate = try #require(request.endorsementCertificate)
      try Data(certificate).write(to: URL(fileURLWithPath: directory + "/ek.der"))
      let key = try TestProcess.run(
        ["/usr/bin/openssl", "x509", "-inform", "DER", "-in", directory + "/ek.der", "-pubkey", "-noout"], environment: [:], timeout: 60)
      try key.stdout.write(toFile: directory + "/ek.pub", atomically: true, encoding: .utf8)
      try Self.openssl(
        [
          "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", directory + "/ca.key",
          "-out", directory + "/ca.pem", "-subj", "/CN=fr-profile test TPM root", "-days", "3650",
          "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
        ])
      root = try Certificate(pemEncoded: try String(contentsOfFile: directory + "/ca.pem", encoding: .utf8))
    }

    func remove() { try? FileManager.default.removeItem(atPath: directory) }

    static func openssl(_ arguments: [String]) throws {
      let result = try TestProcess.run(["/usr/bin/openssl"] + arguments, environment: [:], timeout: 60)
      guard result.status == 0 else { throw CocoaError(.fileWriteUnknown, userInfo: ["openssl": result.stderr]) }
    }

    /// A certificate for the EK's key with an empty subject, issued by this CA for `days` with
    /// only the extensions in `extensions` (openssl x509v3_config lines; a `[tpm]` section may
    /// follow, its names prefixed "0." as openssl's config reads up to the first dot).
    func leaf(_ extensions: String, days: Int = 30) throws -> [UInt8] {
      let config = directory + "/ext.cnf"
      try ("[ext]\n" + extensions + "\n").write(toFile: config, atomically: true, encoding: .utf8)
      try Issuer.openssl(
        [
          "x509", "-new", "-subj", "/", "-force_pubkey", directory + "/ek.pub", "-CA", directory + "/ca.pem", "-CAkey",
          directory + "/ca.key", "-set_serial", "7", "-days", String(days), "-extfile", config, "-extensions", "ext", "-outform", "DER",
          "-out", directory + "/leaf.der",
        ])
      return Array(try Data(contentsOf: URL(fileURLWithPath: directory + "/leaf.der")))
    }

    /// nil when accepted, else the refusal's text.
    func verdict(_ der: [UInt8], at time: Date? = nil) async -> String? {
      do {
        try await EndorsementCertificate.verify(der, endorsementKey: endorsementKey, roots: [root], validationTime: time)
        return nil
      } catch { return error.description }
    }
  }

  /// The TPM's names as swtpm_localca writes them, in a directoryName.
  static let tpmNames = "[tpm]\n0.2.23.133.2.1 = id:00001014\n0.2.23.133.2.2 = swtpm\n0.2.23.133.2.3 = id:20191023\n"
  static let san = "subjectAltName = critical, dirName:tpm\n"
  static let leafBase = "basicConstraints = critical, CA:FALSE\nkeyUsage = critical, keyEncipherment\n"

  @Test("the profile's EK certificate passes: the TPM named in a critical subjectAltName, with or without tcg-kp-EKCertificate")
  func profileCertificatesPass() async throws {
    let issuer = try Issuer()
    defer { issuer.remove() }
    let withUsage = try issuer.leaf(Self.leafBase + Self.san + "extendedKeyUsage = 2.23.133.8.1\n" + Self.tpmNames)
    #expect(await issuer.verdict(withUsage) == nil)
    let withoutUsage = try issuer.leaf(Self.leafBase + Self.san + Self.tpmNames)
    #expect(await issuer.verdict(withoutUsage) == nil)
  }

  @Test(
    "an EKU without tcg-kp-EKCertificate, a subjectAltName naming no TPM or none at all are refused, each by name",
    arguments: [
      ("serverAuth", leafBase + san + "extendedKeyUsage = serverAuth\n" + tpmNames, "tcg-kp-EKCertificate"),
      ("no TPM model", leafBase + san + "[tpm]\n0.2.23.133.2.1 = id:00001014\n0.2.23.133.2.3 = id:20191023\n", "TPM model"),
      ("a DNS name", leafBase + "subjectAltName = DNS:tpm.example.com\nextendedKeyUsage = 2.23.133.8.1\n", "names no TPM"),
      ("no subjectAltName", leafBase + "extendedKeyUsage = 2.23.133.8.1\n", "names no TPM"),
    ])
  func nonProfileCertificatesAreRefused(name: String, extensions: String, expected: String) async throws {
    let issuer = try Issuer()
    defer { issuer.remove() }
    let verdict = await issuer.verdict(try issuer.leaf(extensions))
    #expect(verdict?.contains(expected) == true, "\(name): \(verdict ?? "accepted")")
  }

  @Test("the validation time is the caller's: a certificate valid now is refused at a time after its notAfter")
  func validationTimeIsAParameter() async throws {
    let issuer = try Issuer()
    defer { issuer.remove() }
    let leaf = try issuer.leaf(Self.leafBase + Self.san + "extendedKeyUsage = 2.23.133.8.1\n" + Self.tpmNames, days: 2)
    #expect(await issuer.verdict(leaf, at: Date()) == nil)
    #expect(await issuer.verdict(leaf, at: nil) == nil)
    let later = await issuer.verdict(leaf, at: Date().addingTimeInterval(10 * 86400))
    #expect(later?.contains("does not chain to a trusted TPM manufacturer root") == true, "\(later ?? "accepted")")
    // The recorded request, with the verifier's time set: accepted at its recording time.
    let request = try AttestationRequest(json: try RecordedEvidenceTests.document("request.json"))
    let verifier = AttestationVerifier(
      roots: try RecordedEvidenceTests.certificates("roots.pem"),
      intermediates: try RecordedEvidenceTests.certificates("intermediates.pem"),
      validationTime: Date(timeIntervalSince1970: 1_796_180_000))  // 2026-12-01
    let result = try await verifier.challenge(for: request)
    #expect(result.pending.endorsementCertified)
  }
}
