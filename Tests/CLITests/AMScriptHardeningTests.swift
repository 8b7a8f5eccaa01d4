import Foundation
import ProfileJSON
import SWTPMSupport
import TPMAttestation
import Testing

/// am/fr-tpm-attestation.js given what a hostile device (or a miswired journey) sends: each
/// case must end in outcome "false" with a reason, never "true" or "activated", never a crash.
@Suite(.serialized) struct AMScriptHardeningTests {
  let binding = BindingCommandTests()

  /// One run of the script as a node: its outcome, the callback it sent, its reason and log.
  struct NodeRun {
    var outcome: String?
    var sentId: String?
    var refused: String?
    var log: [String]
    var sharedState: JSON
  }

  func node(
    sharedState: JSON = [:], jws: String? = nil, callbacks: [(id: String, value: String)] = [], config: JSON = Self.noTrust
  ) throws -> NodeRun {
    let transient: JSON = jws.map { ["DeviceSigningVerifierNode.JWT": .string($0)] } ?? [:]
    let result = try AMScript.run(context: [
      "sharedState": sharedState, "transientState": transient, "config": config,
      "callbacks": .array(callbacks.map { ["id": .string($0.id), "value": .string($0.value)] }),
    ])
    return NodeRun(
      outcome: result["outcome"]?.stringValue, sentId: result["callbacks"]?.arrayValue?.first?["id"]?.stringValue,
      refused: result["sharedState"]?["frTpmAttestation.refused"]?.stringValue,
      log: result["log"]?.arrayValue?.compactMap(\.stringValue) ?? [], sharedState: result["sharedState"] ?? [:])
  }

  static let noTrust: JSON = ["rootsPem": "", "intermediatesPem": "", "trustedEkNames": []]

  /// The shared state the activation node leaves (the AK is not looked at before the JWS is).
  static let activated: JSON = [
    "frTpmAttestation": #"{"akPublic":"AAAA","ekName":"000b","ekCertified":true,"activated":true}"#
  ]
  static let pending: JSON = [
    "frTpmAttestation": #"{"akPublic":"AAAA","credentialDigest":"AAAA","ekName":"000b","ekCertified":true,"activated":false}"#
  ]

  static func b64(_ text: String) -> String { Base64URL.encode(Array(text.utf8)) }

  /// A compact JWS of these header and claims texts (its signature is never reached).
  static func jws(header: String = #"{"alg":"ES256","kid":"k"}"#, claims: String = #"{"challenge":"c"}"#) -> String {
    b64(header) + "." + b64(claims) + "." + Base64URL.encode([UInt8](repeating: 1, count: 64))
  }

  @Test("AMScript.run kills a script that runs past its time limit and fails")
  func runawayScriptIsKilled() throws {
    let directory = try makeTemporaryDirectory("fr-profile-am")
    defer { removeTemporaryDirectory(directory) }
    try "while (true) {}\n".write(toFile: directory + "/loop.js", atomically: true, encoding: .utf8)
    let start = Date()
    #expect(throws: AMScript.ScriptError.self) { try AMScript.run(directory + "/loop.js", context: [:], timeout: 5) }
    #expect(Date().timeIntervalSince(start) < 30)
  }
}
