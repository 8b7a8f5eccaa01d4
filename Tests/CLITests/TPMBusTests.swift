import Crypto
import Foundation
import ProfileJSON
import TPMAttestation
import TPMProtocol
import TestSupport
import Testing

/// What fr-profile sends the TPM, as bench/tpm_commands.py's decoding proxy sees it
/// between tpm2-tss's swtpm TCTI and swtpm (the same proxy `make bench-tpm` counts with): the
/// fewest commands per operation, the persistent EK read instead of re-created, and no byte of a
/// PIN, or of the authValue made from it, on the bus in clear.
extension BindingCommandTests {
  /// One run of fr-profile through the proxy: its result, the commands as the proxy decoded them
  /// and every command byte as sent.
  struct ProxiedRun {
    var result: RunResult
    var commands: [JSON]
    var record: [UInt8]
    var names: [String] { commands.compactMap { $0["command"]?.stringValue } }
  }

  /// `fr-profile arguments` with every "{tcti}" replaced by the proxy's TCTI in front of `tpm`.
  func throughProxy(_ tpm: SWTPM, _ arguments: [String], _ device: Device, stdin: String? = nil) throws -> ProxiedRun {
    let files = device.directory + "/proxy-\(UUID().uuidString)"
    let result = try run(
      arguments, environment: device.environment, stdin: stdin,
      prefix: [
        "/usr/bin/setsid", "-w", "/usr/bin/python3", AMScript.packageRoot + "/bench/tpm_commands.py", "run", "--tpm-port",
        String(tpm.port), "--log", files + ".json", "--record", files + ".bin", "--",
      ])
    expectNoSecrets(result, device)
    let log = try JSONParser.parse(Array(try Data(contentsOf: URL(fileURLWithPath: files + ".json"))))
    let record = Array(try Data(contentsOf: URL(fileURLWithPath: files + ".bin")))
    return ProxiedRun(result: result, commands: log["commands"]?.arrayValue ?? [], record: record)
  }

  /// Whether `needle` occurs in `haystack`.
  func occurs(_ needle: [UInt8], in haystack: [UInt8]) -> Bool {
    guard !needle.isEmpty, haystack.count >= needle.count else { return false }
    return (0...(haystack.count - needle.count)).contains { start in haystack[start..<(start + needle.count)].elementsEqual(needle) }
  }

  /// The first authorization session of a decoded command ("password", "hmac", "policy").
  func firstSession(_ command: JSON) -> JSON? { command["sessions"]?.arrayValue?.first }

  /// Which of `pin`'s forms occur in `record`: the PIN, the SHA-256 fr-profile makes the key's
  /// authValue of, either half of that.
  func pinForms(_ pin: String, in record: [UInt8]) -> [String] {
    let authValue = Array(SHA256.hash(data: Array(pin.utf8)))
    return [
      ("the PIN", Array(pin.utf8)), ("the PIN's SHA-256 (the key's authValue)", authValue),
      ("the authValue's first half", Array(authValue.prefix(16))), ("the authValue's second half", Array(authValue.suffix(16))),
    ].filter { occurs($0.1, in: record) }.map(\.0)
  }

  /// A DeviceSigningVerifierCallback step for `user`'s key.
  func signingStep(user: String, in directory: String) throws -> String {
    let path = directory + "/signing-\(user).json"
    try #"""
    {"authId": "bus", "callbacks": [{"type": "DeviceSigningVerifierCallback", "output": [
      {"name": "userId", "value": "id=\#(user),ou=user,o=alpha,ou=services,ou=am-config"},
      {"name": "challenge", "value": "CS3+g40VkHXx+dN7rpnJKhrEAvwZaYgbaXoEcpO5twM="}, {"name": "title", "value": "Sign"},
      {"name": "subtitle", "value": "Signing"}, {"name": "description", "value": "bus"}, {"name": "timeout", "value": 60}],
      "input": [{"name": "IDToken1jws", "value": ""}, {"name": "IDToken1clientError", "value": ""}]}]}
    """#.write(toFile: path, atomically: true, encoding: .utf8)
    return path
  }

  /// The DeviceBindingCallback fixture for `user`, with `authenticationType`.
  func bindingStep(user: String, authenticationType: String, in directory: String) throws -> String {
    let path = directory + "/binding-\(user).json"
    try String(contentsOfFile: cliFixture("callbacks/device-binding.json"), encoding: .utf8)
      .replacingOccurrences(of: "APPLICATION_PIN", with: authenticationType).replacingOccurrences(of: "demo", with: user)
      .write(toFile: path, atomically: true, encoding: .utf8)
    return path
  }

  @Test(
    "no PIN-derived byte reaches the TPM in clear: a journey that binds a PIN key and signs with it, with evidence, sends neither the PIN nor its SHA-256 authValue"
  )
  func pinNeverCrossesTheBusInClear() throws {
    let made = try ManufacturedTPM()
    let pin = "482916"
    try withDevice { device in
      try withServer({
        $0.attestationConfig = made.scriptConfig
        $0.authenticationType = "APPLICATION_PIN"
      }) { server, tree in
        let proxied = try throughProxy(
          made.tpm,
          [
            "journey", "--server", server.url, "--realm", "alpha", "--tree", "AttestedBind", "--user", "demo", "--password-stdin",
            "--key-store", "tpm", "--tcti", "{tcti}", "--pin-file", try device.pinFile(pin),
          ] + device.arguments, device, stdin: password + "\n")
        #expect(proxied.result.status == 0, "\(proxied.result.stderr)")
        #expect(tree.outcomes == ["attestation: activated", "binding: success", "signing: success", "attestation: true"])
        // The premise: the commands that carry the PIN's authValue went through the proxy.
        let creations = ["Create", "CreateLoaded"]
        #expect(proxied.names.contains(where: creations.contains) && proxied.names.contains("Certify") && proxied.names.contains("Sign"))
        #expect(proxied.record.count > 1000)
        #expect(pinForms(pin, in: proxied.record).isEmpty, "crossed the bus in clear: \(pinForms(pin, in: proxied.record))")
        // How: a salted HMAC session with AES-128-CFB parameter encryption authorizes every use of
        // the PIN key and carries the new key's authValue in the encrypted first parameter of
        // Create (or CreateLoaded).
        let sessions = proxied.commands.filter { $0["command"]?.stringValue == "StartAuthSession" && $0["sessionType"] == "hmac" }
        #expect(!sessions.isEmpty && sessions.allSatisfy { $0["salted"] == true && $0["symmetric"] == "aes" }, "\(sessions)")
        for command in proxied.commands where ["Sign", "Certify"].contains(command["command"]?.stringValue ?? "") {
          #expect(firstSession(command)?["kind"] == "hmac", "\(command)")
        }
        let creates = proxied.commands.filter { creations.contains($0["command"]?.stringValue ?? "") }
        #expect(creates.contains { firstSession($0)?["kind"] == "hmac" && firstSession($0)?["decrypt"] == true }, "\(creates)")
        // The whole attested journey, the attestation key made in it, without a persistent SRK:
        // the issue's 22 commands, two for the SRK this TPM makes from its template, and the boot
        // quote round's three (Quote, and two PCR_Reads for nine PCRs, eight at most a read).
        #expect(proxied.commands.count <= 27, "\(proxied.names)")
        #expect(
          proxied.names.filter { $0 == "Quote" }.count == 1 && proxied.names.filter { $0 == "PCR_Read" }.count == 2, "\(proxied.names)")
      }
    }
  }

  @Test(
    "each operation within its goal (bench/README.md) on a TPM set up like a PC (RSA EK certificate, persistent EK and SRK): the SRK checked by one CreatePrimary once, then remembered; no PIN-derived byte in clear"
  )
  func operationsWithinTheirGoals() throws {
    let made = try ManufacturedTPM(persistentSRK: true)
    let pin = "271828"
    try withDevice { device in
      let files = device.directory
      let attest = ["--tcti", "{tcti}"]
      let tpm = ["--key-store", "tpm"] + attest
      let pinFile = ["--pin-file", try device.pinFile(pin)]
      var record: [UInt8] = []
      /// Runs one operation through the proxy: it succeeds and sends at most `goal` commands.
      func operation(_ name: String, goal: Int?, checksSRK: Bool = false, _ arguments: [String]) throws -> ProxiedRun {
        let proxied = try throughProxy(made.tpm, arguments + device.arguments, device)
        #expect(proxied.result.status == 0, "\(name): \(proxied.result.stderr)")
        if let goal { #expect(proxied.commands.count <= goal, "\(name): \(proxied.commands.count) > \(goal): \(proxied.names)") }
        // The persistent EK is read, never made; the persistent SRK is checked once to be the
        // TCG template's primary (one CreatePrimary, its name then remembered in the
        // state directory), never made.
        #expect(proxied.names.filter { $0 == "CreatePrimary" }.count == (checksSRK ? 1 : 0), "\(name): \(proxied.names)")
        record += proxied.record
        return proxied
      }
      _ = try operation("attest request", goal: nil, checksSRK: true, ["attest", "request", "-o", files + "/request.json"] + attest)
      #expect(FileManager.default.fileExists(atPath: device.state + "/tpm-storage-keys"))
      let later = try operation("attest request, later", goal: 2, ["attest", "request", "-o", files + "/request.json"] + attest)
      #expect(later.names == ["ReadPublic", "ReadPublic"])
      let challenge = try run([
        "attest", "challenge", files + "/request.json", "--roots", made.root, "--intermediates", made.issuer, "--state",
        files + "/state.json", "-o", files + "/challenge.json",
      ])
      #expect(challenge.status == 0, "\(challenge.stderr)")
      _ = try operation("attest answer", goal: 6, ["attest", "answer", files + "/challenge.json", "-o", files + "/answer.json"] + attest)
      let open = try bindingStep(user: "open", authenticationType: "NONE", in: files)
      let guarded = try bindingStep(user: "guarded", authenticationType: "APPLICATION_PIN", in: files)
      _ = try operation("bind", goal: 5, ["callback", open] + tpm)
      _ = try operation("bind, PIN", goal: nil, ["callback", guarded] + tpm + pinFile)
      _ = try operation("sign", goal: 4, ["callback", try signingStep(user: "open", in: files)] + tpm)
      // A PIN: one salted session more.
      _ = try operation("sign, PIN", goal: 5, ["callback", try signingStep(user: "guarded", in: files)] + tpm + pinFile)
      _ = try operation("sign with evidence", goal: 7, ["callback", try signingStep(user: "open", in: files), "--tpm-evidence"] + tpm)
      let evidence = try operation(
        "sign with evidence, PIN", goal: 8, ["callback", try signingStep(user: "guarded", in: files), "--tpm-evidence"] + tpm + pinFile)
      for command in evidence.commands where ["Sign", "Certify"].contains(command["command"]?.stringValue ?? "") {
        #expect(firstSession(command)?["kind"] == "hmac", "\(command)")
      }
      #expect(pinForms(pin, in: record).isEmpty, "crossed the bus in clear: \(pinForms(pin, in: record))")
    }
  }

  @Test("the search finds a PIN sent the way tpm2-tools sends a new key's authValue (no parameter encryption): the checks above can fail")
  func aPasswordSessionIsCaught() throws {
    try withSWTPM { tpm in
      let directory = try makeTemporaryDirectory("fr-profile-bus")
      defer { removeTemporaryDirectory(directory) }
      let pin = "482916"
      var record: [UInt8] = []
      var commands: [JSON] = []
      for tool in [
        // Each tool leaves what it made loaded: flushed before the next, the TPM has 3 slots.
        ["tpm2_createprimary", "-C", "o", "-c", "primary.ctx"], ["tpm2_flushcontext", "-t"],
        ["tpm2_create", "-C", "primary.ctx", "-p", pin, "-G", "ecc", "-c", "key.ctx"], ["tpm2_flushcontext", "-t"],
        ["tpm2_sign", "-c", "key.ctx", "-p", pin, "-g", "sha256", "-o", "sig.bin", "primary.ctx"],
      ] {
        let log = directory + "/log.json"
        let result = try TestProcess.run(
          [
            "/usr/bin/python3", AMScript.packageRoot + "/bench/tpm_commands.py", "run", "--tpm-port", String(tpm.port), "--log", log,
            "--record", directory + "/record.bin", "--", "/usr/bin/" + tool[0], "-T", "{tcti}",
          ] + tool.dropFirst(), environment: ["PATH": "/usr/bin:/bin"], directory: directory, timeout: 60)
        try #require(result.status == 0, "\(tool[0]): \(result.stderr)")
        commands += try JSONParser.parse(Array(try Data(contentsOf: URL(fileURLWithPath: log))))["commands"]?.arrayValue ?? []
        record += Array(try Data(contentsOf: URL(fileURLWithPath: directory + "/record.bin")))
      }
      // tpm2-tools' authValue is the PIN's bytes, in CreateLoaded's inSensitive, which no session
      // encrypts (its Sign is authorized by an HMAC session: the PIN is not in it).
      #expect(pinForms(pin, in: record) == ["the PIN"])
      let create = try #require(commands.first { $0["command"] == "CreateLoaded" || $0["command"] == "Create" })
      #expect(firstSession(create)?["decrypt"] == false, "\(create)")
    }
  }
}
