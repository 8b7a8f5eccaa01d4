import Foundation
import ProfileJSON
import TPMAttestation
import TPMProtocol
import TestSupport
import Testing

/// am/fr-tpm-attestation.js given what a hostile device (or a miswired journey) sends: each
/// case must end in outcome "false" with a reason, never "true" or "activated", never a crash.
@Suite(.serialized, .timeLimit(.minutes(10))) struct AMScriptHardeningTests {
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

  @Test("base64url that is not the canonical spelling of its bytes is refused (\"QR\" decoded to what \"QQ\" does)")
  func nonCanonicalBase64URLIsRefused() throws {
    let run = try node(sharedState: Self.pending, callbacks: [(id: "frTpmAttestationChallenge", value: #"{"v":1,"secret":"QR"}"#)])
    #expect(run.outcome == "false", "\(run)")
    #expect(run.refused?.contains("not canonical base64url") == true, "\(run)")
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
      (
        "answer",
        try node(sharedState: Self.pending, callbacks: [(id: "frTpmAttestationChallenge", value: #"{"v":1,"x":"# + Self.deep + "}")])
      ),
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
    #expect(
      request.outcome == "false" && request.refused?.contains("the callback value is longer than 65536 characters") == true,
      "\(request.refused ?? "")")
  }

  // MARK: The EK public area is the TCG template of its certificate's key

  /// `fr-profile attest request` on `tcti`, as a JSON object.
  func attestationRequest(_ tcti: String, stateDirectory: String) throws -> JSONObject {
    let result = try run(["attest", "request", "--tcti", tcti, "--state-dir", stateDirectory])
    try #require(result.status == 0, "\(result.stderr)")
    return try #require(try JSONParser.parse(Array(result.stdout.utf8)).objectValue)
  }

  /// The request's EK TPMT_PUBLIC (the content of its TPM2B_PUBLIC).
  func ekArea(_ request: JSONObject) throws -> [UInt8] {
    Array(try #require(request["ekPublic"]?.stringValue.flatMap(Base64URL.decode)).dropFirst(2))
  }

  /// The request as sent, with another EK area and optionally another ekType.
  func sending(_ request: JSONObject, ekArea area: [UInt8], ekType: String? = nil) -> String {
    var changed = request
    changed["ekPublic"] = .string(Base64URL.encode([UInt8(area.count >> 8), UInt8(area.count & 0xFF)] + area))
    if let ekType { changed["ekType"] = .string(ekType) }
    return JSONWriter.compact(.object(changed))
  }

  func challengeRound(_ request: String, config: JSON) throws -> NodeRun {
    try node(callbacks: [(id: "frTpmAttestationRequest", value: request)], config: config)
  }

  static let notTemplate = "the EK public area is not the TCG template for its certificate's key"

  @Test("an RSA EK area other than template L-1 for its certificate's key is refused (zero-padded unique, keyBits, authPolicy, exponent 3)")
  func rsaEKAreaMustBeTheTemplate() throws {
    let made = try BindingCommandTests.ManufacturedTPM()
    let request = try attestationRequest(made.tcti, stateDirectory: made.directory + "/device")
    #expect(request["ekType"] == "rsa2048" && request["ekCertificate"] != nil)
    // TPMT_PUBLIC: type, nameAlg, attributes, authPolicy at 8, symmetric at 42 (keyBits 44),
    // scheme 48, keyBits 50, exponent 52, unique at 56.
    let area = try ekArea(request)
    try #require(area.count == 314 && area[0] == 0x00 && area[1] == 0x01)
    let genuine = try challengeRound(JSONWriter.compact(.object(request)), config: made.scriptConfig)
    #expect(genuine.sentId == "frTpmAttestationChallenge", "\(genuine)")
    var zeroPadded = area
    zeroPadded.replaceSubrange(56..<58, with: [0x01, 0x01, 0x00])
    var keyBits = area
    keyBits.replaceSubrange(44..<46, with: [0x01, 0x00])
    var policy = area
    policy[10] ^= 0x01
    var exponent = area
    exponent.replaceSubrange(52..<56, with: [0, 0, 0, 3])
    for (name, mutated) in [("zero-padded unique", zeroPadded), ("keyBits", keyBits), ("authPolicy", policy), ("exponent 3", exponent)] {
      let run = try challengeRound(sending(request, ekArea: mutated), config: made.scriptConfig)
      #expect(run.outcome == "false" && run.refused == Self.notTemplate, "\(name): \(run)")
    }
  }

  @Test("an ECC EK area other than template L-2 for its certificate's key is refused (keyBits, authPolicy, attributes, zero-padded x)")
  func eccEKAreaMustBeTheTemplate() throws {
    let made = try BindingCommandTests.ManufacturedTPM()
    try withSWTPM { tpm in
      // The P-256 EK of an unmanufactured swtpm, certified here by the manufactured TPM's CA.
      var request = try attestationRequest(tpm.tcti, stateDirectory: made.directory + "/device")
      #expect(request["ekType"] == "eccP256" && request["ekCertificate"] == nil)
      // TPMT_PUBLIC: authPolicy at 8, symmetric at 42 (keyBits 44), x at 54, y at 88.
      let area = try ekArea(request)
      try #require(area.count == 122 && area[0] == 0x00 && area[1] == 0x23)
      let spki: [UInt8] =
        [
          0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x02, 0x01, 0x06, 0x08, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03,
          0x01, 0x07, 0x03, 0x42, 0x00, 0x04,
        ] + area[56..<88] + area[90..<122]
      let files = made.directory + "/ecc-ek"
      try FileManager.default.createDirectory(atPath: files, withIntermediateDirectories: true)
      try Data(spki).write(to: URL(fileURLWithPath: files + "/ek.spki"))
      let openssl = "/usr/bin/openssl"
      let pem = try run(["pkey", "-pubin", "-inform", "DER", "-in", files + "/ek.spki", "-out", files + "/ek.pem"], executable: openssl)
      try #require(pem.status == 0, "\(pem.stderr)")
      let certificate = try run(
        [
          "x509", "-new", "-subj", "/CN=fr-profile test P-256 EK", "-force_pubkey", files + "/ek.pem", "-CA", made.issuer, "-CAkey",
          made.directory + "/ca/signkey.pem", "-days", "2", "-outform", "DER", "-out", files + "/ek.der",
        ], executable: openssl)
      try #require(certificate.status == 0, "\(certificate.stderr)")
      request["ekCertificate"] = .string(Base64URL.encode(try Data(contentsOf: URL(fileURLWithPath: files + "/ek.der"))))
      let genuine = try challengeRound(JSONWriter.compact(.object(request)), config: made.scriptConfig)
      #expect(genuine.sentId == "frTpmAttestationChallenge", "\(genuine)")
      var keyBits = area
      keyBits.replaceSubrange(44..<46, with: [0x01, 0x00])
      var policy = area
      policy[41] ^= 0x80
      var attributes = area
      attributes[7] |= 0x40  // userWithAuth
      for (name, mutated) in [("keyBits", keyBits), ("authPolicy", policy), ("attributes", attributes)] {
        let run = try challengeRound(sending(request, ekArea: mutated), config: made.scriptConfig)
        #expect(run.outcome == "false" && run.refused == Self.notTemplate, "\(name): \(run)")
      }
      var zeroPadded = area
      zeroPadded.replaceSubrange(54..<56, with: [0x00, 0x21, 0x00])
      #expect(try challengeRound(sending(request, ekArea: zeroPadded), config: made.scriptConfig).outcome == "false")
    }
  }

  @Test("an EK trusted by name is refused when sent with an ekType other than its area's")
  func trustedEKNeedsItsType() throws {
    try withSWTPM { tpm in
      let directory = try makeTemporaryDirectory("fr-profile-am")
      defer { removeTemporaryDirectory(directory) }
      let request = try attestationRequest(tpm.tcti, stateDirectory: directory + "/device")
      let area = try ekArea(request)
      let name = TPMPublic.name(area: area).map { String(format: "%02x", $0) }.joined()
      let config: JSON = ["rootsPem": "", "intermediatesPem": "", "trustedEkNames": [.string(name)]]
      #expect(try challengeRound(sending(request, ekArea: area), config: config).sentId == "frTpmAttestationChallenge")
      let run = try challengeRound(sending(request, ekArea: area, ekType: "rsa2048"), config: config)
      #expect(run.outcome == "false" && run.refused == "the ekType is not the type of the EK public area", "\(run)")
    }
  }

  // MARK: RSA keys

  @Test("an RSA key with an even exponent, an exponent below 3, or a modulus outside 2048–4096 bits is refused")
  func unsoundRSAKeysAreRefused() throws {
    let made = try BindingCommandTests.ManufacturedTPM()
    var request = try attestationRequest(made.tcti, stateDirectory: made.directory + "/device")
    request["ekCertificate"] = nil
    let area = try ekArea(request)
    try #require(area.count == 314 && area[0] == 0x00 && area[1] == 0x01)
    /// The EK area with another exponent, or another modulus (and keyBits to match).
    func variant(exponent: UInt32 = 0, modulusBits: Int = 2048) -> [UInt8] {
      var generator = SystemRandomNumberGenerator()
      var modulus = (0..<modulusBits / 8).map { _ in UInt8.random(in: 0...255, using: &generator) }
      modulus[0] |= 0x80
      modulus[modulus.count - 1] |= 1
      let keyBits = UInt16(modulusBits)
      return Array(area[0..<50]) + [UInt8(keyBits >> 8), UInt8(keyBits & 0xFF)]
        + [24, 16, 8, 0].map { UInt8(exponent >> UInt32($0) & 0xFF) }
        + [UInt8(modulus.count >> 8), UInt8(modulus.count & 0xFF)] + modulus
    }
    let cases: [(String, [UInt8], String?)] = [
      ("exponent 3", variant(exponent: 3), nil),
      ("4096 bits", variant(modulusBits: 4096), nil),
      ("exponent 1", variant(exponent: 1), "an RSA key with exponent 1 (it must be odd and at least 3)"),
      ("exponent 65536", variant(exponent: 65536), "an RSA key with exponent 65536 (it must be odd and at least 3)"),
      ("1024 bits", variant(modulusBits: 1024), "an RSA key of 1024 bits (it must have 2048 to 4096)"),
      ("8192 bits", variant(modulusBits: 8192), "an RSA key of 8192 bits (it must have 2048 to 4096)"),
    ]
    // Each trusted by its name, so only the key's own soundness decides.
    let names = cases.map { JSON.string(TPMPublic.name(area: $0.1).map { String(format: "%02x", $0) }.joined()) }
    let config: JSON = ["rootsPem": "", "intermediatesPem": "", "trustedEkNames": .array(names)]
    for (name, mutated, refusal) in cases {
      let run = try challengeRound(sending(request, ekArea: mutated), config: config)
      if let refusal {
        #expect(run.outcome == "false" && run.refused == refusal, "\(name): \(run)")
      } else {
        #expect(run.sentId == "frTpmAttestationChallenge", "\(name): \(run)")
      }
    }
  }

  // MARK: Device text in logs

  @Test("device text in a refusal (the client's error, an unknown callback id) is logged bounded, without control characters")
  func deviceTextIsCleanedForLogs() throws {
    let hostile =
      "no TPM\nerror: fr-profile TPM attestation accepted\r\u{1B}[2J\u{7F}\u{85}\u{9B}\u{2028}\u{2029}|"
      + String(repeating: "x", count: 5000)
    let error = try node(callbacks: [(id: "frTpmAttestationRequest", value: JSONWriter.compact(["v": 1, "error": .string(hostile)]))])
    #expect(
      error.refused?.hasPrefix("the client cannot attest: no TPM?error: fr-profile TPM attestation accepted??[2J?????|xx") == true,
      "\(error.refused?.prefix(120).debugDescription ?? "no reason")")
    let unknown = try node(callbacks: [(id: hostile, value: "{}")])
    #expect(unknown.refused?.hasPrefix("an unexpected callback no TPM?error") == true)
    for run in [error, unknown] {
      #expect(run.outcome == "false" && run.log.count == 1, "\(run)")
      for text in run.log + [run.refused ?? ""] {
        #expect(text.count < 300, "\(text.count) characters")
        let control = text.unicodeScalars.filter {
          $0.value < 0x20 || (0x7F...0x9F).contains($0.value) || $0.value == 0x2028 || $0.value == 0x2029
        }
        #expect(control.isEmpty, "\(text.debugDescription)")
      }
    }
  }
}
