import Foundation
import ProfileJSON
import Testing

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
}
