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

  // MARK: "true" only for a verified JWS

  @Test("the verification node refuses when no JWS is in transient state, instead of starting an activation")
  func activatedStateWithoutJWSIsRefused() throws {
    for callbacks in [[], [(id: "frTpmAttestationRequest", value: #"{"v":1}"#)]] {
      let run = try node(sharedState: Self.activated, callbacks: callbacks)
      #expect(run.outcome == "false" && run.sentId == nil, "\(run)")
      #expect(run.refused == "no JWS from the Device Signing Verifier node in transient state")
      #expect(run.log == ["error: fr-profile TPM attestation refused: no JWS from the Device Signing Verifier node in transient state"])
    }
  }

  @Test("a JWS without an activated attestation key in shared state is refused")
  func jwsWithoutActivationIsRefused() throws {
    for state in [[:], Self.pending] as [JSON] {
      let run = try node(sharedState: state, jws: Self.jws())
      #expect(run.outcome == "false" && run.sentId == nil, "\(run)")
      #expect(run.refused?.contains("no activated attestation key") == true, "\(run)")
    }
  }

  @Test("an answer without a pending activation is refused")
  func answerWithoutPendingStateIsRefused() throws {
    for state in [[:], Self.activated] as [JSON] {
      let run = try node(sharedState: state, callbacks: [(id: "frTpmAttestationChallenge", value: #"{"v":1,"secret":"AAAA"}"#)])
      #expect(run.outcome == "false", "\(run)")
      // With activated state and no JWS the missing JWS is named first.
      #expect(run.refused?.contains(state == [:] ? "an answer without a pending activation" : "no JWS") == true, "\(run)")
    }
  }

  @Test("a journey whose signing node leaves no JWS fails at the verification node, never re-activates")
  func journeyWithoutJWSFails() throws {
    let made = try BindingCommandTests.ManufacturedTPM()
    try binding.withDevice { device in
      try binding.withServer({
        $0.attestationConfig = made.scriptConfig
        $0.signingLeavesJWS = false
      }) { server, tree in
        let result = try binding.journey(server, device, tree: "AttestedBind", ["--key-store", "tpm", "--tcti", made.tcti])
        #expect(result.status == 1, "\(result.stderr)")
        #expect(
          tree.outcomes == [
            "attestation: activated", "binding: success", "signing: success",
            "attestation: false (no JWS from the Device Signing Verifier node in transient state)",
          ])
      }
    }
  }

  // MARK: Bounded parsing

  static let deep = String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)

  @Test("JSON nested 10,000 deep, in a JWS's header or claims or in a callback, is refused before parsing")
  func deepNestingIsRefused() throws {
    let cases: [(String, NodeRun)] = [
      ("header", try node(sharedState: Self.activated, jws: Self.jws(header: #"{"alg":"ES256","x":"# + Self.deep + "}"))),
      ("claims", try node(sharedState: Self.activated, jws: Self.jws(claims: #"{"challenge":"# + Self.deep + "}"))),
      ("request", try node(callbacks: [(id: "frTpmAttestationRequest", value: Self.deep)])),
      ("answer", try node(sharedState: Self.pending, callbacks: [(id: "frTpmAttestationChallenge", value: #"{"v":1,"x":"# + Self.deep + "}")])),
    ]
    for (name, run) in cases {
      #expect(run.outcome == "false", "\(name): \(run)")
      #expect(run.refused?.contains("nested deeper than 16") == true, "\(name): \(run.refused ?? "no reason")")
    }
  }

  @Test("a 1.3 MB JWS and a 1.3 MB callback value are refused by their size")
  func largeDocumentsAreRefused() throws {
    let padding = String(repeating: "A", count: 1_000_000)
    let big = try node(sharedState: Self.activated, jws: Self.jws(claims: #"{"challenge":"c","x":""# + padding + #""}"#))
    #expect(big.outcome == "false" && big.refused?.contains("the JWS is longer than 65536 characters") == true, "\(big.refused ?? "")")
    let request = try node(callbacks: [(id: "frTpmAttestationRequest", value: #"{"v":1,"x":""# + padding + #"","y":""# + padding + #""}"#)])
    #expect(request.outcome == "false" && request.refused?.contains("the callback value is longer than 65536 characters") == true, "\(request.refused ?? "")")
  }
}
