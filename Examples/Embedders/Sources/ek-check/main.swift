import Foundation
import ProfileJSON
import TPMAttestation
import TPMProtocol
import X509

// usage: ek-check REQUEST.json ROOTS.pem [INTERMEDIATES.pem] [UNIX_TIME]
// Checks a device's attestation request (`fr-profile attest request`) as a verifier does: the EK
// certificate chains to one of the roots and certifies the EK, the AK is a restricted signing
// key of the same TPM. Prints the EK's name and the size of the credential challenge sealed to
// it. UNIX_TIME validates the certificates at that time instead of now (recorded evidence).
let arguments = CommandLine.arguments
guard (3...5).contains(arguments.count) else {
  FileHandle.standardError.write(Data("usage: ek-check REQUEST.json ROOTS.pem [INTERMEDIATES.pem] [UNIX_TIME]\n".utf8))
  exit(2)
}

func certificates(_ path: String) throws -> [Certificate] {
  let end = "-----END CERTIFICATE-----"
  let text = try String(contentsOfFile: path, encoding: .utf8)
  return try text.components(separatedBy: end).filter { $0.contains("-----BEGIN CERTIFICATE-----") }
    .map { try Certificate(pemEncoded: $0.trimmingCharacters(in: .whitespacesAndNewlines) + "\n" + end) }
}

do {
  let request = try AttestationRequest(json: try JSONParser.parse(Array(try Data(contentsOf: URL(fileURLWithPath: arguments[1])))))
  let intermediates = arguments.count >= 4 ? try certificates(arguments[3]) : []
  let time = arguments.count == 5 ? Double(arguments[4]).map { Date(timeIntervalSince1970: $0) } : nil
  let verifier = AttestationVerifier(roots: try certificates(arguments[2]), intermediates: intermediates, validationTime: time)
  let result = try await verifier.challenge(for: request)
  let name = result.pending.endorsementKeyName.map { String(format: "%02x", $0) }.joined()
  print(
    "EK \(name) certified: \(result.pending.endorsementCertified); challenge: \(result.challenge.credentialBlob.count)-byte credential blob"
  )
} catch {
  FileHandle.standardError.write(Data("ek-check: \(error)\n".utf8))
  exit(1)
}
