import Foundation
import ProfileJSON
import TPMAttestation
import TPMProtocol
import TestSupport
import Testing

/// TPM attestation end to end: swtpm manufactured with EK certificates (swtpm_setup and its local
/// CA as the manufacturer), fr-profile as the device, and two verifiers that must agree — the
/// Swift one (`fr-profile attest`, TPMAttestation) and the AM script am/fr-tpm-attestation.js run
/// under Rhino with AM's bindings stubbed, inside the loopback AM's journeys.
extension BindingCommandTests {
  /// A manufactured TPM for one test: its swtpm, its CA's root and issuing certificates.
  final class ManufacturedTPM {
    let directory: String
    let tpm: SWTPM
    let root: String
    let issuer: String

    init(persistentSRK: Bool = false) throws {
      directory = try makeTemporaryDirectory("fr-profile-ek")
      let made = try SWTPM.manufacture(in: directory, persistentSRK: persistentSRK)
      tpm = try SWTPM(stateDirectory: made.state)
      root = made.root
      issuer = made.issuer
    }

    var tcti: String { tpm.tcti }
    var rootsPEM: String { (try? String(contentsOfFile: root, encoding: .utf8)) ?? "" }
    var issuerPEM: String { (try? String(contentsOfFile: issuer, encoding: .utf8)) ?? "" }
    /// The AM script's configuration trusting this TPM's manufacturer. swtpm has no firmware and
    /// no event log, so the boot quote round goes "quote only" unless a test gives a log
    /// (BootQuoteCommandTests) and asks for Secure Boot.
    var scriptConfig: JSON { scriptConfig(requireSecureBoot: false) }

    func scriptConfig(requireSecureBoot: Bool) -> JSON {
      [
        "rootsPem": .string(rootsPEM), "intermediatesPem": .string(issuerPEM), "trustedEkNames": [],
        "boot": ["quote": true, "requireSecureBoot": .bool(requireSecureBoot)],
      ]
    }

    deinit {
      tpm.stop()
      removeTemporaryDirectory(directory)
    }
  }

  /// The claims of a compact JWS.
  func claims(_ jws: String) throws -> JSON {
    let parts = jws.split(separator: ".").map(String.init)
    return try JSONParser.parse(try #require(Base64URL.decode(parts[1])))
  }

  /// The same JWS with its claims changed (its signature no longer matches them).
  func changingClaims(_ jws: String, _ change: (inout JSONObject) -> Void) throws -> String {
    let parts = jws.split(separator: ".").map(String.init)
    var object = try #require(try claims(jws).objectValue)
    change(&object)
    return parts[0] + "." + Base64URL.encode(Array(JSONWriter.compact(.object(object)).utf8)) + "." + parts[2]
  }

  /// The AK the script activated, from the shared state it left.
  func activatedKey(_ sharedState: [String: String]) throws -> TPMPublic {
    let state = try JSONParser.parse(Array(try #require(sharedState["frTpmAttestation"]).utf8))
    return try TPMPublic(tpm2b: try #require(state["akPublic"]?.stringValue.flatMap(Base64URL.decode)))
  }

  @Test("a journey binds in a manufactured TPM and signs with evidence the AM script and the Swift verifier both accept")
  func attestedBindingJourney() throws {
    let made = try ManufacturedTPM()
    try withDevice { device in
      try withServer({ $0.attestationConfig = made.scriptConfig }) { server, tree in
        let result = try journey(server, device, tree: "AttestedBind", ["--key-store", "tpm", "--tcti", made.tcti])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(tree.outcomes == ["attestation: activated", "binding: success", "signing: success", "attestation: true"])
        // Both JWSs carry evidence for their key, and the Swift verifier accepts it with the AK
        // the script activated.
        let ak = try activatedKey(try #require(tree.sharedStates.first))
        #expect(tree.jwsReceived.count == 2)
        for jws in tree.jwsReceived {
          #expect(try claims(jws)["tpmEvidence"] != nil)
          try AttestationVerifier.verify(jws: jws, attestationKey: ak)
        }
        // The key the script verified is the bound key.
        let bound = try #require(tree.boundDevices("demo").first)
        let key = try #require(tree.sharedStates.first?["frTpmAttestation.key"].flatMap(Base64URL.decode))
        #expect(
          key == Array(try #require(bound.jwk["x"]?.stringValue.flatMap(Base64URL.decode)))
            + Array(try #require(bound.jwk["y"]?.stringValue.flatMap(Base64URL.decode))))
      }
    }
  }

  @Test("a file key is refused by the AM script: at the request when keys are files, at the JWS when a file key signs")
  func fileKeysAreRefusedByTheScript() throws {
    let made = try ManufacturedTPM()
    try withDevice { device in
      try withServer({ $0.attestationConfig = made.scriptConfig }) { server, tree in
        let files = try journey(server, device, tree: "AttestedBind", ["--key-store", "file", "--tcti", made.tcti])
        #expect(files.status == 1, "\(files.stderr)")
        #expect(files.stderr.contains("the server asks for TPM attestation and this device cannot give it"))
        #expect(tree.outcomes.count == 1 && tree.outcomes[0].hasPrefix("attestation: false (the client cannot attest"))
        #expect(tree.boundDevices("demo").isEmpty)
        // A file key bound without attestation, then used where the TPM can attest: the
        // activation succeeds, the file key's JWS has no evidence, the script refuses it.
        #expect(try journey(server, device, tree: "Bind", ["--key-store", "file"]).status == 0)
        let signed = try journey(server, device, tree: "AttestedSign", ["--tcti", made.tcti])
        #expect(signed.status == 1, "\(signed.stderr)")
        #expect(signed.stderr.contains("the key is not in the TPM, so its JWS carries no TPM evidence"))
        #expect(
          Array(tree.outcomes.suffix(3)) == [
            "attestation: activated", "signing: success",
            "attestation: false (the JWS carries no tpmEvidence claim (a file key, or a client that does not attest))",
          ])
      }
    }
  }

  @Test("a TPM without an EK certificate is refused unless its EK is trusted by name (the ECC P-256 EK, ECDH in Rhino)")
  func uncertifiedTPMNeedsItsEKByName() throws {
    try withSWTPM { tpm in
      try withDevice { device in
        let request = try run(["attest", "request", "--tcti", tpm.tcti] + device.arguments)
        #expect(request.status == 0, "\(request.stderr)")
        let parsed = try AttestationRequest(json: try JSONParser.parse(Array(request.stdout.utf8)))
        #expect(parsed.endorsementKeyType == "eccP256" && parsed.endorsementCertificate == nil)
        let name = try TPMPublic(tpm2b: parsed.endorsementKey).name.map { String(format: "%02x", $0) }.joined()
        try withServer { server, tree in
          let refused = try journey(server, device, tree: "AttestedBind", ["--key-store", "tpm", "--tcti", tpm.tcti])
          #expect(refused.status == 1)
          #expect(
            tree.outcomes == [
              "attestation: false (the TPM sent no EK certificate and its endorsement key is not among the trusted ones)"
            ])
          tree.attestationConfig = [
            "rootsPem": "", "intermediatesPem": "", "trustedEkNames": [.string(name)], "boot": ["quote": true, "requireSecureBoot": false],
          ]
          let trusted = try journey(server, device, tree: "AttestedBind", ["--key-store", "tpm", "--tcti", tpm.tcti])
          #expect(trusted.status == 0, "\(trusted.stderr)")
          #expect(
            Array(tree.outcomes.suffix(4)) == ["attestation: activated", "binding: success", "signing: success", "attestation: true"])
        }
      }
    }
  }

  /// The offline flow: request, challenge, answer, a binding answered by `callback
  /// --tpm-evidence`. Returns the files and the binding JWS.
  func offlineAttestation(_ made: ManufacturedTPM, _ device: Device, roots: String? = nil) throws -> (
    state: String, answer: String, jws: String, request: String, challenge: String
  ) {
    let files = device.directory
    let request = try run(["attest", "request", "--tcti", made.tcti, "-o", files + "/request.json"] + device.arguments)
    #expect(request.status == 0, "\(request.stderr)")
    let challenge = try run([
      "attest", "challenge", files + "/request.json", "--roots", roots ?? made.root, "--intermediates", made.issuer, "--state",
      files + "/state.json", "-o", files + "/challenge.json",
    ])
    #expect(challenge.status == 0, "\(challenge.stderr)")
    let answer = try run(
      ["attest", "answer", files + "/challenge.json", "--tcti", made.tcti, "-o", files + "/answer.json"] + device.arguments)
    #expect(answer.status == 0, "\(answer.stderr)")
    let bound = try run(
      [
        "callback", cliFixture("callbacks/device-binding.json"), "--key-store", "tpm", "--tcti", made.tcti, "--tpm-evidence", "--pin-file",
        try device.pinFile("271828"),
      ] + device.arguments, environment: device.environment)
    #expect(bound.status == 0, "\(bound.stderr)")
    let step = try JSONParser.parse(Array(bound.stdout.utf8))
    let jws = try #require(step["callbacks"]?[0]?["input"]?[0]?["value"]?.stringValue)
    try jws.write(toFile: files + "/jws.txt", atomically: true, encoding: .utf8)
    return (files + "/state.json", files + "/answer.json", files + "/jws.txt", files + "/request.json", files + "/challenge.json")
  }

  @Test("offline: attest request, challenge, answer and verify accept a PIN key's evidence and name each refusal")
  func offlineCommands() throws {
    let made = try ManufacturedTPM()
    try withDevice { device in
      let files = try offlineAttestation(made, device)
      let verify = ["attest", "verify", "--state", files.state, "--answer", files.answer]
      let accepted = try run(verify + ["--challenge", "CS3+g40VkHXx+dN7rpnJKhrEAvwZaYgbaXoEcpO5twM=", "--json", files.jws])
      #expect(accepted.status == 0, "\(accepted.stderr)")
      expectValid(accepted.stdout, schema: "attestation-verdict")
      for (file, schema) in [
        (files.request, "attestation-request"), (files.challenge, "attestation-challenge"), (files.answer, "attestation-answer"),
        (files.state, "attestation-state"), (device.state + "/attestation-key.json", "attestation-key"),
      ] {
        expectValid(try String(contentsOfFile: file, encoding: .utf8), schema: schema)
      }
      #expect(try JSONParser.parse(Array(accepted.stdout.utf8))["ekCertified"] == true)
      // Another journey's challenge: the evidence is replayed.
      let replayed = try run(verify + ["--challenge", "another", files.jws])
      #expect(replayed.status == 1 && replayed.stderr.contains("the attestation is for another nonce"))
      // The claims changed to another challenge, evidence kept: the nonce check fails first.
      let moved = device.directory + "/moved.txt"
      try changingClaims(try String(contentsOfFile: files.jws, encoding: .utf8)) { $0["challenge"] = "another" }
        .write(toFile: moved, atomically: true, encoding: .utf8)
      #expect(try run(verify + [moved]).stderr.contains("another nonce"))
      // An answer that is not the released credential.
      try #"{"v":1,"secret":"AAAA"}"#.write(toFile: device.directory + "/bad-answer.json", atomically: true, encoding: .utf8)
      let guessed = try run(["attest", "verify", "--state", files.state, "--answer", device.directory + "/bad-answer.json", files.jws])
      #expect(guessed.status == 1 && guessed.stderr.contains("that TPM did not release it"))
      // A verifier with another manufacturer's root refuses the request.
      let other = try makeTemporaryDirectory("fr-profile-ek")
      defer { removeTemporaryDirectory(other) }
      let otherRoot = try SWTPM.manufacture(in: other).root
      let untrusted = try run([
        "attest", "challenge", files.request, "--roots", otherRoot, "--intermediates", made.issuer, "--state",
        device.directory + "/s2.json",
      ])
      #expect(
        untrusted.status == 1 && untrusted.stderr.contains("does not chain to a trusted TPM manufacturer root"), "\(untrusted.stderr)")
      // The identity key, moved into the TPM, certified over a challenge of the verifier's.
      let moved2 = try run(["identifier", "--move-to-tpm", "--tcti", made.tcti] + device.arguments)
      #expect(moved2.status == 0, "\(moved2.stderr)")
      let evidence = device.directory + "/identity-evidence.json"
      let certified = try run(
        ["attest", "certify", "--identity", "--challenge", "nonce-42", "--tcti", made.tcti, "-o", evidence] + device.arguments)
      #expect(certified.status == 0, "\(certified.stderr)")
      expectValid(try String(contentsOfFile: evidence, encoding: .utf8), schema: "attestation-evidence")
      let byEvidence = try run(verify + ["--evidence", evidence, "--challenge", "nonce-42"])
      #expect(byEvidence.status == 0 && byEvidence.stdout.hasPrefix("verified: the certified key"), "\(byEvidence.stderr)")
      #expect(try run(verify + ["--evidence", evidence, "--challenge", "nonce-43"]).stderr.contains("another nonce"))
      // A PIN key is certified only under its lock policy, through a signing.
      let kid = try #require(try keyList(device).first?["kid"]?.stringValue)
      let pinKey = try run(["attest", "certify", kid, "--challenge", "x", "--tcti", made.tcti] + device.arguments)
      #expect(pinKey.status == 1 && pinKey.stderr.contains("has a PIN"), "\(pinKey.stderr)")
      // Bad input names its file, exit 65.
      let malformed = try run(["attest", "verify", "--state", files.jws, "--answer", files.answer, files.jws])
      #expect(malformed.status == 65 && malformed.stderr.contains(files.jws))
      // A state file another user planted or may write is never written or trusted.
      if canDropPrivileges {
        chmod(device.directory, 0o755)  // nobody must reach the shared directory
        let shared = device.directory + "/shared"
        mkdir(shared, 0o1777)
        chmod(shared, 0o1777)
        let planted = shared + "/state.json"
        let planting = try run(["-c", "umask 0; : > \(planted)"], executable: "/bin/sh", prefix: asNobody)
        #expect(planting.status == 0, "\(planting.stderr)")
        let challenge = ["attest", "challenge", files.request, "--roots", made.root, "--intermediates", made.issuer]
        let refused = try run(challenge + ["--state", planted])
        #expect(refused.status == 77 && refused.stderr.contains("belongs to uid 65534"), "\(refused.stderr)")
        #expect(try String(contentsOfFile: planted, encoding: .utf8).isEmpty)
        chown(files.state, 65534, 65534)
        let untrustedState = try run(verify + [files.jws])
        #expect(untrustedState.status == 77 && untrustedState.stderr.contains("belongs to uid 65534"), "\(untrustedState.stderr)")
        chown(files.state, 0, 0)
        chmod(files.state, 0o666)
        #expect(try run(verify + [files.jws]).status == 77)
        chmod(files.state, 0o600)
      }
    }
  }

  @Test("an AK of a second TPM presented with the first TPM's EK certificate is never activated (CVE-2022-1053), by either verifier")
  func anotherTPMsAttestationKeyIsNeverActivated() throws {
    let made = try ManufacturedTPM()
    try withSWTPM { software in
      try withDevice { device in
        let files = try offlineAttestation(made, device)
        // The software TPM's AK, presented with the manufactured TPM's EK and certificate.
        let softwareState = device.directory + "/software-state"
        let other = try run(["attest", "request", "--tcti", software.tcti, "--state-dir", softwareState])
        #expect(other.status == 0, "\(other.stderr)")
        var request = try #require(try JSONParser.parse(Array(try String(contentsOfFile: files.request, encoding: .utf8).utf8)).objectValue)
        request["akPublic"] = try JSONParser.parse(Array(other.stdout.utf8))["akPublic"]
        let forged = device.directory + "/forged.json"
        try JSONWriter.compact(.object(request)).write(toFile: forged, atomically: true, encoding: .utf8)
        let challenge = try run([
          "attest", "challenge", forged, "--roots", made.root, "--intermediates", made.issuer, "--state",
          device.directory + "/forged-state.json",
          "-o", device.directory + "/forged-challenge.json",
        ])
        #expect(challenge.status == 0, "\(challenge.stderr)")
        // Neither TPM releases the credential: the software TPM lacks the EK, the real one the AK.
        let bySoftware = try run([
          "attest", "answer", device.directory + "/forged-challenge.json", "--tcti", software.tcti, "--state-dir", softwareState,
        ])
        #expect(bySoftware.status != 0)
        let byReal = try run(["attest", "answer", device.directory + "/forged-challenge.json", "--tcti", made.tcti] + device.arguments)
        #expect(byReal.status != 0)
        // The AM script, given the same forged request, seals to the real EK too; an answer it did not
        // release is refused.
        let sent = try AMScript.run(context: [
          "sharedState": [:], "transientState": [:], "config": made.scriptConfig,
          "callbacks": [["id": "frTpmAttestationRequest", "value": .string(JSONWriter.compact(.object(request)))]],
        ])
        #expect(sent["callbacks"]?[0]?["id"] == "frTpmAttestationChallenge")
        let refused = try AMScript.run(context: [
          "sharedState": sent["sharedState"] ?? [:], "transientState": [:], "config": made.scriptConfig,
          "callbacks": [["id": "frTpmAttestationChallenge", "value": #"{"v":1,"secret":"AAAA"}"#]],
        ])
        #expect(refused["outcome"] == "false")
        #expect(refused["sharedState"]?["frTpmAttestation.refused"]?.stringValue?.contains("did not release") == true)
      }
    }
  }

  @Test("the Swift verifier and the AM script accept and refuse the same evidence")
  func bothVerifiersAgree() throws {
    let made = try ManufacturedTPM()
    try withDevice { device in
      let files = try offlineAttestation(made, device)
      let jws = try String(contentsOfFile: files.jws, encoding: .utf8)
      // The script activates the same AK (a challenge of its own, answered by the device).
      let sent = try AMScript.run(context: [
        "sharedState": [:], "transientState": [:], "config": made.scriptConfig,
        "callbacks": [["id": "frTpmAttestationRequest", "value": .string(try String(contentsOfFile: files.request, encoding: .utf8))]],
      ])
      let challengeFile = device.directory + "/script-challenge.json"
      try #require(sent["callbacks"]?[0]?["value"]?.stringValue).write(toFile: challengeFile, atomically: true, encoding: .utf8)
      let answered = try run(["attest", "answer", challengeFile, "--tcti", made.tcti] + device.arguments)
      #expect(answered.status == 0, "\(answered.stderr)")
      // The credential released, the script asks for the boot quote; `attest quote` answers it.
      let quoteRound = try AMScript.run(context: [
        "sharedState": sent["sharedState"] ?? [:], "transientState": [:], "config": made.scriptConfig,
        "callbacks": [["id": "frTpmAttestationChallenge", "value": .string(answered.stdout)]],
      ])
      #expect(quoteRound["callbacks"]?[0]?["id"] == .string(AttestationProtocol.quoteCallbackId))
      let quoteRequest = try BootQuoteRequest(
        json: try JSONParser.parse(Array(try #require(quoteRound["callbacks"]?[0]?["value"]?.stringValue).utf8)))
      let quoted = try run(
        ["attest", "quote", "--tcti", made.tcti, "--nonce", Base64URL.encode(quoteRequest.nonce), "--event-log", "none"] + device.arguments)
      #expect(quoted.status == 0, "\(quoted.stderr)")
      let activated = try AMScript.run(context: [
        "sharedState": quoteRound["sharedState"] ?? [:], "transientState": [:], "config": made.scriptConfig,
        "callbacks": [["id": .string(AttestationProtocol.quoteCallbackId), "value": .string(quoted.stdout)]],
      ])
      #expect(activated["outcome"] == "activated")
      let sharedState = activated["sharedState"] ?? [:]
      let ak = try activatedKey(
        Dictionary(uniqueKeysWithValues: (sharedState.objectValue?.members ?? []).map { ($0.key, $0.value.stringValue ?? "") }))
      func script(_ token: String) throws -> String? {
        let result = try AMScript.run(context: [
          "sharedState": sharedState, "transientState": ["DeviceSigningVerifierNode.JWT": .string(token)], "config": made.scriptConfig,
          "callbacks": [],
        ])
        return result["outcome"] == "true" ? nil : result["sharedState"]?["frTpmAttestation.refused"]?.stringValue ?? "refused"
      }
      func swift(_ token: String) -> String? {
        do { try AttestationVerifier.verify(jws: token, attestationKey: ak) } catch { return error.description }
        return nil
      }
      let evidence = try #require(try claims(jws)["tpmEvidence"]?.objectValue)
      func withEvidence(_ change: (inout JSONObject) -> Void) throws -> String {
        try changingClaims(jws) { claims in
          var changed = evidence
          change(&changed)
          claims["tpmEvidence"] = .object(changed)
        }
      }
      let flipped = try #require(evidence["attest"]?.stringValue.flatMap(Base64URL.decode))
      let otherKey = try run(["attest", "request", "--tcti", made.tcti, "--replace", "--state-dir", device.directory + "/other-state"])
      let cases: [(String, String, String?)] = [
        ("genuine", jws, nil),
        ("replayed", try changingClaims(jws) { $0["challenge"] = "another" }, "another nonce"),
        ("no evidence (a file key)", try changingClaims(jws) { $0["tpmEvidence"] = nil }, "no tpmEvidence"),
        (
          "forged attestation", try withEvidence { $0["attest"] = .string(Base64URL.encode(flipped.dropLast() + [flipped.last! ^ 1])) },
          "signature"
        ),
        (
          "another AK", try withEvidence { $0["akPublic"] = try? JSONParser.parse(Array(otherKey.stdout.utf8))["akPublic"] },
          "not activated"
        ),
        ("another key", try withEvidence { $0["keyPublic"] = $0["akPublic"] }, "another key"),
      ]
      for (name, token, expected) in cases {
        let bySwift = swift(token)
        let byScript = try script(token)
        if let expected {
          #expect(bySwift?.contains(expected) == true, "\(name): Swift says \(bySwift ?? "accepted")")
          #expect(byScript?.contains(expected) == true, "\(name): the script says \(byScript ?? "accepted")")
        } else {
          #expect(bySwift == nil && byScript == nil, "\(name): \(bySwift ?? "") / \(byScript ?? "")")
        }
      }
    }
  }

  @Test("a state directory copied to another TPM, or a TPM wiped, is detected (exit 81) and never answered with a new AK silently")
  func changedTPMIsDetected() throws {
    let made = try ManufacturedTPM()
    try withSWTPM { other in
      try withDevice { device in
        #expect(try run(["attest", "request", "--tcti", made.tcti] + device.arguments).status == 0)
        let before = try String(contentsOfFile: device.state + "/attestation-key.json", encoding: .utf8)
        #expect(fileMode(device.state + "/attestation-key.json") == 0o600)
        let copied = try run(["attest", "request", "--tcti", other.tcti] + device.arguments)
        #expect(copied.status == 81, "\(copied.stderr)")
        #expect(copied.stderr.contains("endorsement key is not the one") && copied.stderr.contains("--replace"))
        #expect(try String(contentsOfFile: device.state + "/attestation-key.json", encoding: .utf8) == before)
        // Wiped: the same swtpm state directory made anew (new seeds).
        made.tpm.stop()
        let wipedDirectory = try makeTemporaryDirectory("fr-profile-wiped")
        defer { removeTemporaryDirectory(wipedDirectory) }
        try withSWTPM(stateDirectory: wipedDirectory) { wiped in
          let afterWipe = try run(["attest", "request", "--tcti", wiped.tcti] + device.arguments)
          #expect(afterWipe.status == 81 && afterWipe.stderr.contains("replaced"), "\(afterWipe.stderr)")
          // The way out: a new AK on purpose.
          let replaced = try run(["attest", "request", "--replace", "--tcti", wiped.tcti] + device.arguments)
          #expect(replaced.status == 0, "\(replaced.stderr)")
          #expect(try String(contentsOfFile: device.state + "/attestation-key.json", encoding: .utf8) != before)
        }
      }
    }
  }
}

extension JSON {
  /// The element at `index` of an array.
  fileprivate subscript(index: Int) -> JSON? {
    guard let items = arrayValue, items.indices.contains(index) else { return nil }
    return items[index]
  }
}

/// The smaller breaks of the attest commands.
extension BindingCommandTests {
  @Test("--trusted-ek in full-width digits is a usage error (it crashed with SIGILL)")
  func fullWidthDigitsAreAUsageError() throws {
    let fullWidth = "０００ｂ" + String(repeating: "０", count: 64)
    let result = try run(["attest", "challenge", "-", "--trusted-ek", fullWidth, "--state", "/nonexistent/state.json"], stdin: "{}")
    #expect(result.status == 64, "\(result.stderr)")
    #expect(result.stderr.contains("--trusted-ek"))
  }

  @Test("text the device chose reaches the verifier's stderr as one bounded, printable line")
  func deviceTextIsOneBoundedLine() throws {
    try withDevice { device in
      let forged =
        "no TPM\nverified: the JWS's key (x AAAA) was made in the TPM\u{1B}]52;c;cm0gLXJmIH4=\u{07}\u{2028}"
        + String(repeating: "x", count: 10_000)
      let file = device.directory + "/request.json"
      try JSONWriter.compact(["v": 1, "error": .string(forged)]).write(toFile: file, atomically: true, encoding: .utf8)
      let result = try run([
        "attest", "challenge", file, "--trusted-ek", "000b" + String(repeating: "0", count: 64), "--state", device.directory + "/s.json",
      ])
      #expect(result.status == 1, "\(result.stderr)")
      #expect(result.stderr.hasPrefix("fr-profile: error: refused: the client cannot attest: no TPM?verified"), "\(result.stderr)")
      #expect(result.stderr.filter { $0 == "\n" }.count == 1 && result.stderr.count < 400, "\(result.stderr.count) characters")
      #expect(!result.stderr.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x07 || $0.value == 0x2028 })
    }
  }

  /// Ended by the library's deadline on the TPM's sockets, with its
  /// message naming the TPM, not by the command line's watchdog (its backstop, 2 s later).
  @Test("attest request, answer, certify and quote end at --max-time when the TPM stops answering (exit 75), the TPM named")
  func attestClientVerbsHaveADeadline() throws {
    try withSWTPM { first in
      try withDevice { device in
        // The identity key and the attestation key in the TPM.
        #expect(try run(["identifier", "--move-to-tpm", "--tcti", first.tcti] + device.arguments).status == 0)
        #expect(try run(["attest", "request", "--tcti", first.tcti] + device.arguments).status == 0)
        let state = first.stateDirectory
        first.stop()
        try #"{"v":1,"credentialBlob":"AAAA","encryptedSecret":"AAAA"}"#.write(
          toFile: device.directory + "/challenge.json", atomically: true, encoding: .utf8)
        for verb in [
          ["request"], ["answer", device.directory + "/challenge.json"], ["certify", "--identity", "--challenge", "x"],
          ["quote", "--nonce", "AAAAAAAAAAAAAAAAAAAAAA", "--event-log", "none"],
        ] {
          // Each verb meets the same TPM, started anew and stopped (SIGSTOP) before it: a
          // stopped swtpm's listen backlog fills with the connections earlier verbs abandoned,
          // and a connect to a full backlog waits for the kernel's SYN retries, which no
          // deadline on the TCTI's connected sockets reaches (the watchdog does; docs/tpm.md).
          try withSWTPM(stateDirectory: state) { tpm in
            #expect(kill(tpm.pid, SIGSTOP) == 0)
            let started = Date()
            let stalled = try run(["attest"] + verb + ["--tcti", tpm.tcti, "--max-time", "2"] + device.arguments)
            let took = Date().timeIntervalSince(started)
            #expect(stalled.status == 75, "\(verb): \(stalled.stderr)")
            #expect(
              stalled.stderr.contains("the TPM did not answer within 2 s") && stalled.stderr.contains(tpm.tcti),
              "\(verb): \(stalled.stderr)")
            #expect(took < 10, "took \(took) s")
          }
        }
      }
    }
  }
}
