import Crypto
import Foundation
import ProfileJSON
import TPMAttestation
import TestSupport
import Testing

/// Issue 31: what fr-profile sends the TPM, as bench/tpm_commands.py's decoding proxy sees it
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
        let authValue = Array(SHA256.hash(data: Array(pin.utf8)))
        for (what, bytes) in [
          ("the PIN", Array(pin.utf8)), ("the PIN's SHA-256 (the key's authValue)", authValue),
          ("the authValue's first half", Array(authValue.prefix(16))), ("the authValue's second half", Array(authValue.suffix(16))),
        ] {
          let leaked = occurs(bytes, in: proxied.record)
          #expect(!leaked, "\(what) crossed the bus in clear")
        }
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
        // the 22 commands and two for the SRK this TPM makes from its template.
        #expect(proxied.commands.count <= 24, "\(proxied.names)")
      }
    }
  }
}
