import Foundation
import ProfileJSON
import TestSupport
import Testing

/// The sign-in's device: a key bound with a PIN, and the identity in the TPM. In the serialized
/// suite of SigninPAMTests (pam_wrapper's copies of the service directory collide otherwise).

extension SigninPAMTests {
  @Test("a sign-in key bound with APPLICATION_PIN: enrolment sets its PIN at the terminal, each sign-in asks it through PAM without echo")
  func enrolWithAPINThenSign() throws {
    let binding = BindingServer()
    binding.authenticationType = "APPLICATION_PIN"
    try withSignin(custom: binding, users: ["demo"]) { setup in
      try setup.writeConfig(["tree": "Sign"])
      let screen = try enroll(
        setup, user: "demo", tree: "Bind",
        steps: [
          ["expect": "Password"], ["send": .string(Self.password + "\n")], ["expect": "New PIN: "], ["echo": false], ["send": "482916\n"],
          ["expect": "Repeat the PIN: "], ["send": "482916\n"], ["expect": "bound:"],
        ])
      #expect(screen["status"] == 0, "\(screen)")
      #expect(screen["echo"] == [false], "the PIN is typed without echo: \(screen)")
      // pamtester answers each prompt with a line of stdin: the password, then the key's PIN.
      let signed = try setup.pamtester(user: "demo", stdin: Self.password + "\n482916\n")
      #expect(signed.status == 0, "\(signed.stdout)\n\(signed.stderr)")
      #expect(signed.stdout.contains("PIN of your sign-in key:") || signed.stderr.contains("PIN of your sign-in key:"), "\(signed.stdout)")
      #expect(binding.outcomes.suffix(2) == ["binding: success", "signing: success"], "\(binding.outcomes)")
      #expect(!Self.syslog(signed).contains("482916"))
      // A wrong PIN cannot unlock the key: nothing is signed, the sign-in fails.
      let wrong = try setup.pamtester(user: "demo", stdin: Self.password + "\n000000\n")
      #expect(wrong.status != 0, "\(wrong.stdout)\n\(wrong.stderr)")
      #expect(binding.outcomes.last != "signing: success", "\(binding.outcomes)")
    }
  }

  @Test("with the identity moved into the TPM, the sign-in's DeviceProfileCallback carries the TPM key's identifier")
  func deviceProfileWithTheIdentityInTheTPM() throws {
    let profile = NodeTree.callback(
      "DeviceProfileCallback", [("metadata", false), ("location", false), ("message", "")], inputs: [("IDToken1", "")])
    let nodes: [String: NodeTree.Node] = [
      "start": Self.loginNode(then: .node("profile")),
      "profile": NodeTree.Node(callbacks: [profile]) { _, _ in .success },
    ]
    try withSWTPM { tpm in
      try withSignin(nodes) { setup, tree in
        let state = setup.directory + "/state"
        try setup.writeConfig(["tcti": .string(tpm.tcti)])
        let before = try run(["identifier", "--state-dir", state]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let moved = try run(["identifier", "--move-to-tpm", "--state-dir", state, "--tcti", tpm.tcti])
        #expect(moved.status == 0, "\(moved.stderr)")
        let inTPM = try run(["identifier", "--state-dir", state, "--tcti", tpm.tcti]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(!before.isEmpty && inTPM != before && FileManager.default.fileExists(atPath: state + "/device-key.tpm"))
        let result = try setup.pamtester(stdin: Self.password + "\n")
        #expect(result.status == 0, "\(result.stderr)")
        let posted = NodeTree.Answers(callbacks: tree.answered.last?["callbacks"]?.arrayValue ?? [])
        let sent = try JSONParser.parse(Array((posted.text("DeviceProfileCallback") ?? "").utf8))
        #expect(sent["identifier"]?.stringValue == inTPM, "\(sent) vs \(inTPM)")
      }
    }
  }

  /// scrypt of `password` with `salt` as Python's hashlib computes it (OpenSSL's scrypt, not
  /// ours): N = 2^15, r = 8, p = 1, 32 bytes, base64url without padding.
  static func pythonScrypt(_ password: String, salt: String) throws -> String {
    let program = """
      import base64, hashlib, sys
      salt = base64.urlsafe_b64decode(sys.argv[2] + "=" * (-len(sys.argv[2]) % 4))
      key = hashlib.scrypt(sys.argv[1].encode(), salt=salt, n=32768, r=8, p=1, maxmem=64 * 1024 * 1024, dklen=32)
      print(base64.urlsafe_b64encode(key).decode().rstrip("="))
      """
    let result = try run(["-c", program, password, salt], executable: "/usr/bin/python3")
    return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
  }

  @Test(
    "offline with a TPM: the entry's scrypt hash is keyed in the TPM (HMAC), so the disk alone cannot test a guess; another TPM cannot use it"
  )
  func offlineKeyedInTheTPM() throws {
    try withSignin(["start": Self.loginNode()]) { setup, _ in
      let offline: JSON = ["maxAgeSeconds": 60, "maxFailures": 3]
      let entryDirectory = setup.directory + "/state/offline"
      func entry() throws -> JSONObject {
        let names = try FileManager.default.contentsOfDirectory(atPath: entryDirectory).filter { $0.hasSuffix(".json") }
        try #require(names.count == 1, "\(names)")
        return try JSONParser.parse(Array(try Data(contentsOf: URL(fileURLWithPath: entryDirectory + "/" + names[0])))).objectValue ?? [:]
      }
      // Without a TPM the stored hash is scrypt's, as an independent scrypt computes it.
      try setup.writeConfig(["offline": offline])
      #expect(try setup.pamtester(stdin: Self.password + "\n").status == 0)
      let plain = try entry()
      #expect(plain["tpm"] == nil)
      let plainSalt = try #require(plain["salt"]?.stringValue)
      #expect(plain["hash"]?.stringValue == (try Self.pythonScrypt(Self.password, salt: plainSalt)))
      try withSWTPM { tpm in
        try setup.writeConfig(["offline": offline, "tcti": .string(tpm.tcti)])
        #expect(try setup.pamtester(stdin: Self.password + "\n").status == 0)
        let keyed = try entry()
        let salt = try #require(keyed["salt"]?.stringValue)
        #expect(keyed["tpm"]?["mac"] == "HMAC-SHA256" && keyed["tpm"]?["private"]?.stringValue?.isEmpty == false, "\(keyed)")
        #expect(keyed["hash"]?.stringValue != (try Self.pythonScrypt(Self.password, salt: salt)), "the hash on disk is scrypt's alone")
        // AM unreachable: this TPM checks the password.
        try setup.writeConfig(["offline": offline, "tcti": .string(tpm.tcti), "server": "http://127.0.0.1:1"])
        let right = try setup.pamtester(stdin: Self.password + "\n")
        #expect(right.status == 0 && Self.syslog(right).contains("signed in offline"), "\(right.stderr)")
        let wrong = try setup.pamtester(stdin: "not-it\n")
        #expect(wrong.status != 0 && Self.syslog(wrong).contains("a wrong password"), "\(wrong.stderr)")
      }
      // The disk copied to a machine with another TPM: the entry cannot be checked there, and
      // that is no wrong password (the count stays).
      let failures = try entry()["failures"]
      try withSWTPM { other in
        try setup.writeConfig(["offline": offline, "tcti": .string(other.tcti), "server": "http://127.0.0.1:1"])
        let elsewhere = try setup.pamtester(stdin: Self.password + "\n")
        #expect(elsewhere.status != 0 && Self.syslog(elsewhere).contains("does not key the offline entry"), "\(elsewhere.stderr)")
        #expect(try entry()["failures"] == failures)
      }
    }
  }

  @Test("the password and the code typed through PAM are in no process's argv or environment while the helper works, nor on the screen")
  func secretsStayOutOfArgvAndEnvironment() throws {
    let nodes: [String: NodeTree.Node] = [
      "start": Self.loginNode(then: .node("otp")),
      "otp": NodeTree.Node(callbacks: [EnterpriseJourneyTests.passwordCallback("One Time Password")]) { answers, _ in
        answers.text("PasswordCallback") == "731904" ? .success : .failure("Login failure")
      },
    ]
    try withSignin(nodes) { setup, _ in
      // pty-drive.py's "absent" looks through the argv and environment of pamtester and every
      // process under it (the module's helper among them) at that moment.
      let screen = try pamtesterAtTerminal(
        setup,
        steps: [
          ["expect": "Password"], ["send": .string(Self.password + "\n")], ["expect": "One Time Password"],
          ["absent": .string(Self.password)], ["send": "731904\n"], ["expect": "successfully authenticated"],
        ])
      #expect(screen["failed"] == .null && screen["status"] == 0, "\(screen)")
      #expect(screen["absent"] == [true], "the password was found in a process's argv or environment: \(screen)")
      let text = screen["screen"]?.stringValue ?? ""
      #expect(!text.contains(Self.password) && !text.contains("731904"), "\(text)")
    }
  }
}
