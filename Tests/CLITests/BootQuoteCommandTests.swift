import Crypto
import Foundation
import ProfileJSON
import TPMAttestation
import TPMProtocol
import TestSupport
import Testing

/// The boot quote end to end: swtpm's PCRs extended with the digests of an event log
/// built in code (swtpm has no firmware), `attest quote` by the activated AK, and three judges —
/// `attest verify --boot` (TPMAttestation), tpm2-tools' `tpm2_checkquote`, and the AM script in
/// a journey's third round.
extension BindingCommandTests {
  /// Extends the TPM's SHA-256 PCRs with the log's digests, in log order, as firmware would
  /// (`tpm2_pcrextend`, one process for all of them).
  func extend(_ made: ManufacturedTPM, with log: BuiltLog, extra: [(pcr: Int, digest: [UInt8])] = []) throws {
    let extends =
      log.records.filter { $0.type != 0x3 }.map { "\($0.pcr):sha256=\(Self.hex($0.sha256))" }
      + extra.map { "\($0.pcr):sha256=\(Self.hex($0.digest))" }
    let result = try run(extends, environment: ["TPM2TOOLS_TCTI": made.tcti], executable: "/usr/bin/tpm2_pcrextend")
    #expect(result.status == 0, "tpm2_pcrextend: \(result.stderr)")
  }

  static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

  /// A fresh nonce, base64url.
  static func nonce() -> String { Base64URL.encode((0..<32).map { _ in UInt8.random(in: 0...255) }) }

  /// Request, challenge and answer for `device` on `made`: the files `attest verify` needs.
  func activated(_ made: ManufacturedTPM, _ device: Device) throws -> (state: String, answer: String) {
    let files = device.directory
    let steps: [[String]] = [
      ["attest", "request", "--tcti", made.tcti, "-o", files + "/request.json"] + device.arguments,
      [
        "attest", "challenge", files + "/request.json", "--roots", made.root, "--intermediates", made.issuer, "--state",
        files + "/state.json", "-o", files + "/challenge.json",
      ],
      ["attest", "answer", files + "/challenge.json", "--tcti", made.tcti, "-o", files + "/answer.json"] + device.arguments,
    ]
    for step in steps {
      let result = try run(step)
      #expect(result.status == 0, "\(step[1]): \(result.stderr)")
    }
    return (files + "/state.json", files + "/answer.json")
  }

  /// `attest quote` over `nonce` with `log` (written to a file) or none.
  func quote(_ made: ManufacturedTPM, _ device: Device, nonce: String, log: [UInt8]?, name: String = "quote") throws -> String {
    let path = device.directory + "/\(name).json"
    var eventLog = "none"
    if let log {
      eventLog = device.directory + "/\(name).log"
      try Data(log).write(to: URL(fileURLWithPath: eventLog))
    }
    let result = try run(
      ["attest", "quote", "--tcti", made.tcti, "--nonce", nonce, "--event-log", eventLog, "-o", path] + device.arguments)
    #expect(result.status == 0, "attest quote: \(result.stderr)")
    return path
  }

  /// tpm2-tools' judgement of a quote document: the AK's public key as PEM, the TPMS_ATTEST, the
  /// signature as a TPMT_SIGNATURE (ECDSA, SHA-256, R and S as TPM2Bs), the PCR values and the
  /// nonce. The values go in the file `tpm2_quote -o` writes (tpm2-tools 5.4 refuses nine bare
  /// values with `-l`: "Failed to hash PCR values"): its C structures as they lie in memory on
  /// x86-64 — TPML_PCR_SELECTION (132 bytes), a UINT32 count of lists, then TPML_DIGESTs of at
  /// most eight TPM2B_DIGESTs each (532 bytes), as PCR_Read answered them.
  func checkquote(_ quotePath: String, nonce: String, in directory: String) throws -> RunResult {
    let quote = try JSONParser.parse(Array(try String(contentsOfFile: quotePath, encoding: .utf8).utf8))
    func bytes(_ name: String) throws -> [UInt8] { try #require(quote[name]?.stringValue.flatMap(Base64URL.decode)) }
    let ak = try TPMPublic(tpm2b: try bytes("akPublic"))
    let signature = try bytes("signature")
    func sized(_ part: ArraySlice<UInt8>) -> [UInt8] { [0, UInt8(part.count)] + part }
    let tpmtSignature: [UInt8] = [0x00, 0x18, 0x00, 0x0B] + sized(signature.prefix(32)) + sized(signature.suffix(32))
    let values = try AttestationProtocol.bootPCRs.map { pcr in
      try #require(quote["pcrs"]?[String(pcr)]?.stringValue.flatMap(Base64URL.decode))
    }
    func le32(_ value: Int) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }
    var selection = le32(1) + [0x0B, 0x00, 3, 0xFF, 0x40, 0x00, 0x00, 0x00]
    selection += [UInt8](repeating: 0, count: 132 - selection.count)
    let lists = stride(from: 0, to: values.count, by: 8).map { Array(values[$0..<min($0 + 8, values.count)]) }
    var pcrs = selection + le32(lists.count)
    for list in lists {
      var digests = le32(list.count)
      for value in list { digests += [UInt8(value.count), 0] + value + [UInt8](repeating: 0, count: 64 - value.count) }
      pcrs += digests + [UInt8](repeating: 0, count: 532 - digests.count)
    }
    let files = [
      "ak.pem": Array(try ak.signingKey().pemRepresentation.utf8), "msg": try bytes("attest"), "sig": tpmtSignature, "pcrs": pcrs,
    ]
    for (name, content) in files { try Data(content).write(to: URL(fileURLWithPath: directory + "/checkquote-" + name)) }
    return try run(
      [
        "-u", directory + "/checkquote-ak.pem", "-m", directory + "/checkquote-msg", "-s", directory + "/checkquote-sig", "-f",
        directory + "/checkquote-pcrs", "-g", "sha256", "-q",
        Self.hex(try #require(Base64URL.decode(nonce))),
      ], executable: "/usr/bin/tpm2_checkquote")
  }

  @Test("attest quote and verify --boot: Secure Boot and the boot application read from a replayed log, tpm2_checkquote agrees")
  func bootQuoteWithEventLog() throws {
    let made = try ManufacturedTPM()
    try withDevice { device in
      let files = try activated(made, device)
      let log = BuiltLog.standard()
      try extend(made, with: log)
      let nonce = Self.nonce()
      let quotePath = try quote(made, device, nonce: nonce, log: log.bytes)
      expectValid(try String(contentsOfFile: quotePath, encoding: .utf8), schema: "attestation-quote")
      let verify = ["attest", "verify", "--state", files.state, "--answer", files.answer]
      let verified = try run(verify + ["--boot", quotePath, "--nonce", nonce, "--json"])
      #expect(verified.status == 0, "\(verified.stderr)")
      expectValid(verified.stdout, schema: "attestation-verdict")
      let boot = try JSONParser.parse(Array(verified.stdout.utf8))["boot"]
      #expect(boot?["method"] == "eventLog")
      #expect(boot?["secureBoot"] == true)
      #expect(boot?["bootApplications"] == [.string(Self.hex(Array(SHA256.hash(data: Array("shim".utf8)))))])
      #expect(boot?["pcrs"]?["7"]?.stringValue == Self.hex(try #require(log.pcrs[7])))
      // tpm2-tools accepts the same quote, PCR values and nonce, and refuses another nonce.
      let checked = try checkquote(quotePath, nonce: nonce, in: device.directory)
      #expect(checked.status == 0, "tpm2_checkquote: \(checked.stderr)")
      let otherNonce = try checkquote(quotePath, nonce: Self.nonce(), in: device.directory)
      #expect(otherNonce.status != 0)
      // The verifier refuses it for another nonce, naming the check.
      let replayed = try run(verify + ["--boot", quotePath, "--nonce", Self.nonce()])
      #expect(replayed.status == 1 && replayed.stderr.contains("refused (nonce)"), "\(replayed.stderr)")
      // The text verdict says what was proven.
      let text = try run(verify + ["--boot", quotePath, "--nonce", nonce])
      #expect(text.status == 0 && text.stdout.contains("Secure Boot on") && text.stdout.contains("not that the measured code is good"))
    }
  }

  @Test(
    "verify --boot refuses, naming the check: Secure Boot off, an extend outside the log, a debug-mode boot, a quote by an unactivated key")
  func bootQuoteRefusals() throws {
    let cases: [(log: BuiltLog, extra: [(pcr: Int, digest: [UInt8])], refusal: String)] = [
      (BuiltLog.standard(secureBoot: 0), [], "refused (secureBootOff)"),
      (BuiltLog.standard(), [(4, Array(SHA256.hash(data: [1, 2, 3])))], "refused (replay): PCR 4"),
      (BuiltLog.standard(debugMode: true), [], "refused (debugMode)"),
    ]
    for (log, extra, refusal) in cases {
      let made = try ManufacturedTPM()
      try withDevice { device in
        let files = try activated(made, device)
        try extend(made, with: log, extra: extra)
        let nonce = Self.nonce()
        let quotePath = try quote(made, device, nonce: nonce, log: log.bytes)
        let result = try run(["attest", "verify", "--state", files.state, "--answer", files.answer, "--boot", quotePath, "--nonce", nonce])
        #expect(result.status == 1 && result.stderr.contains(refusal), "\(refusal): \(result.stderr)")
      }
    }
    // A second device's AK (on the same TPM) quotes; the verifier activated the first's.
    let made = try ManufacturedTPM()
    try withDevice { first in
      try withDevice { second in
        let files = try activated(made, first)
        _ = try activated(made, second)
        let nonce = Self.nonce()
        let quotePath = try quote(made, second, nonce: nonce, log: nil)
        let refused = try run(
          [
            "attest", "verify", "--state", files.state, "--answer", files.answer, "--boot", quotePath, "--nonce", nonce,
            "--allow-secure-boot-off",
          ])
        #expect(refused.status == 1 && refused.stderr.contains("refused (signature)"), "\(refused.stderr)")
      }
    }
  }

  @Test("without an event log: quote only when Secure Boot is not required, the enrolled PCRs compared when given")
  func bootQuoteWithoutEventLog() throws {
    let made = try ManufacturedTPM()
    try withDevice { device in
      let files = try activated(made, device)
      // A base64url nonce may begin with "-" (one in 64 did, and was taken for an option).
      let nonce = "-" + Self.nonce().dropFirst()
      let quotePath = try quote(made, device, nonce: nonce, log: nil)
      let verify = ["attest", "verify", "--state", files.state, "--answer", files.answer, "--boot", quotePath, "--nonce", nonce]
      let required = try run(verify)
      #expect(required.status == 1 && required.stderr.contains("refused (noEventLog)"), "\(required.stderr)")
      let quoteOnly = try run(verify + ["--allow-secure-boot-off", "--json"])
      #expect(quoteOnly.status == 0, "\(quoteOnly.stderr)")
      let state = try JSONParser.parse(Array(quoteOnly.stdout.utf8))["boot"]
      #expect(state?["method"] == "quoteOnly" && state?["secureBoot"] == .null)
      // Trust on first use: the verdict's PCRs, enrolled, are compared next time.
      let enrolled = device.directory + "/enrolled.json"
      try JSONWriter.compact(try #require(state?["pcrs"])).write(toFile: enrolled, atomically: true, encoding: .utf8)
      let same = try run(verify + ["--allow-secure-boot-off", "--enrolled-pcrs", enrolled, "--json"])
      #expect(try JSONParser.parse(Array(same.stdout.utf8))["boot"]?["method"] == "enrolledPCRs", "\(same.stderr)")
      try extend(made, with: BuiltLog(), extra: [(0, Array(SHA256.hash(data: [9])))])
      let nonce2 = Self.nonce()
      let changed = try quote(made, device, nonce: nonce2, log: nil, name: "changed")
      let refused = try run(
        [
          "attest", "verify", "--state", files.state, "--answer", files.answer, "--boot", changed, "--nonce", nonce2,
          "--allow-secure-boot-off",
          "--enrolled-pcrs", enrolled,
        ])
      #expect(refused.status == 1 && refused.stderr.contains("refused (enrolledPcrs): PCR 0"), "\(refused.stderr)")
      // Usage: --boot needs --nonce; a missing --event-log file is exit 66.
      #expect(try run(["attest", "verify", "--state", files.state, "--answer", files.answer, "--boot", quotePath]).status == 64)
      let missing = try run(
        ["attest", "quote", "--tcti", made.tcti, "--nonce", nonce, "--event-log", device.directory + "/absent"] + device.arguments)
      #expect(missing.status == 66 && missing.stderr.contains("--event-log"), "\(missing.stderr)")
    }
  }

  @Test(
    "a journey carries posture and a boot quote: the AM script and the Swift verifier accept both with the log, and refuse Secure Boot off")
  func bootQuoteJourney() throws {
    for (secureBoot, expected) in [
      (UInt8(1), "attestation: activated"), (0, "attestation: false (the firmware event log says Secure Boot is off"),
    ] {
      let made = try ManufacturedTPM()
      let log = BuiltLog.standard(secureBoot: secureBoot)
      try extend(made, with: log)
      try withDevice { device in
        let logPath = device.directory + "/firmware.log"
        try Data(log.bytes).write(to: URL(fileURLWithPath: logPath))
        try withServer({ $0.attestationConfig = made.scriptConfig(requireSecureBoot: true) }) { server, tree in
          let result = try journey(
            server, device, tree: "AttestedBind", ["--key-store", "tpm", "--tcti", made.tcti, "--posture"],
            environment: ["FR_PROFILE_EVENT_LOG": logPath])
          #expect((result.status == 0) == (secureBoot == 1), "\(result.stderr)")
          #expect(tree.outcomes.first?.hasPrefix(expected) == true, "\(tree.outcomes)")
          // The Swift verifier reaches the script's verdict on the same nonce and quote.
          let nonce = try #require(
            tree.hiddenValues.first { $0.direction == "sent" && $0.id == AttestationProtocol.quoteCallbackId }.map {
              try BootQuoteRequest(json: try JSONParser.parse(Array($0.value.utf8))).nonce
            })
          let quote = try #require(
            tree.hiddenValues.first { $0.direction == "answered" && $0.id == AttestationProtocol.quoteCallbackId }.map {
              try JSONParser.parse(Array($0.value.utf8))
            })
          let ak = try TPMPublic(tpm2b: try #require(quote["akPublic"]?.stringValue.flatMap(Base64URL.decode)))
          let swift = Result { () throws(BootRefusal) in
            try AttestationVerifier.verifyBoot(quote: quote, nonce: nonce, attestationKey: ak, policy: BootPolicy(requireSecureBoot: true))
          }
          if secureBoot == 1 {
            let boot = try JSONParser.parse(Array(try #require(tree.sharedStates.first?["frTpmAttestation.boot"]).utf8))
            #expect(boot["method"] == "eventLog" && boot["secureBoot"] == true, "\(boot)")
            #expect((try? swift.get())?.json["pcrs"] == boot["pcrs"])
            // Both JWSs carry the key's TPM evidence; the signing JWS (custom claims, as the
            // SDKs' signing carries them) the posture.
            #expect(tree.jwsReceived.count == 2)
            for jws in tree.jwsReceived { #expect(BindingServer.parse(jws)?.claims["tpmEvidence"] != nil) }
            let last = try #require(tree.jwsReceived.last)
            let signing = try #require(BindingServer.parse(last)?.claims)
            expectValid(JSONWriter.compact(try #require(signing["posture"])), schema: "posture")
          } else {
            #expect(throws: BootRefusal(.secureBootOff, "the firmware event log says Secure Boot is off")) { try swift.get() }
          }
        }
      }
    }
  }
}
