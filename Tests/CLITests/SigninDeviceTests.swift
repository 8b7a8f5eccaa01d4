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
}
