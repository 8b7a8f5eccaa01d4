import Foundation
import ProfileJSON
import Testing

/// What a person types, through a pseudo-terminal that is the command's controlling terminal
/// (`Support/pty-drive.py`): echo is off while a secret is typed and on for a name, a PIN
/// prompt's deadline expires, Ctrl-C and end of input leave no key half-made, and while a prompt
/// waits the secret is in no process's argv or environment.
extension BindingCommandTests {
  struct Screen {
    var text: String
    var echo: [Bool]
    var absent: [Bool]
    var status: Int32
    var failed: String?
  }

  /// Runs `arguments` under the driver with `steps`; the environment is the device's.
  func typed(_ arguments: [String], _ device: Device, steps: [JSON]) throws -> Screen {
    let driver = cliFixture("../Support/pty-drive.py")
    let environment = device.environment.merging(["TERM": "dumb", "PATH": "/usr/bin:/bin"]) { $1 }
    let result = try run(
      [driver, JSONWriter.compact(.array(steps)), frProfile(for: environment)] + arguments, environment: environment,
      executable: "/usr/bin/python3")
    let json = try JSONParser.parse(Array(result.stdout.utf8))
    return Screen(
      text: json["screen"]?.stringValue ?? "", echo: json["echo"]?.arrayValue?.compactMap(\.boolValue) ?? [],
      absent: json["absent"]?.arrayValue?.compactMap(\.boolValue) ?? [], status: Int32(json["status"]?.numberValue ?? -99),
      failed: json["failed"].flatMap { $0 == .null ? nil : JSONWriter.compact($0) })
  }

  func journeyArguments(_ server: AuthenticateServer, _ device: Device, tree: String) -> [String] {
    ["journey", "--server", server.url, "--realm", "alpha", "--tree", tree] + device.arguments
  }

  @Test("the name echoes, the password does not, and the token is printed")
  func passwordPromptHidesWhatIsTyped() throws {
    try withDevice { device in
      try withServer { server, tree in
        let screen = try typed(
          journeyArguments(server, device, tree: "Bind"), device,
          steps: [
            ["expect": "User Name"], ["echo": true], ["send": "demo\n"],
            ["expect": "Password"], ["echo": false], ["send": .string(password + "\n")],
            ["expect": .string(tree.token)],
          ])
        #expect(screen.failed == nil, "[\(screen.text)]")
        #expect(screen.echo == [true, false])
        #expect(screen.status == 0, "\(screen.text)")
        #expect(screen.text.contains("demo") && !screen.text.contains(password))
      }
    }
  }

  @Test("a new PIN is typed twice without echo, in no argv or environment, and the server's prompt is sanitized")
  func pinPromptIsHiddenAndSanitized() throws {
    try withDevice { device in
      try withServer({ $0.authenticationType = "APPLICATION_PIN" }) { server, tree in
        let screen = try typed(
          journeyArguments(server, device, tree: "Bind") + ["--user", "demo"], device,
          steps: [
            ["expect": "Password"], ["send": .string(password + "\n")],
            ["expect": "New PIN"], ["echo": false], ["send": "271828\n"],
            ["expect": "Repeat the PIN"], ["echo": false], ["absent": "271828"], ["absent": .string(password)],
            ["send": "271828\n"], ["expect": .string(tree.token)],
          ])
        #expect(screen.failed == nil, "[\(screen.text)]")
        #expect(screen.echo == [false, false])
        #expect(screen.absent == [true, true], "a secret was in a process's argv or environment")
        #expect(screen.status == 0, "\(screen.text)")
        #expect(!screen.text.contains("271828") && !screen.text.contains(password))
        // The server's title and description are shown, with nothing that could drive the terminal.
        #expect(screen.text.contains("Authentication required"))
        #expect(!screen.text.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x07 })
        #expect(tree.outcomes == ["binding: success"])
      }
    }
  }

  @Test("Ctrl-C and end of input at the PIN prompt leave no key half-made")
  func interruptedPINPromptLeavesNoKey() throws {
    for (key, name) in [("\u{03}", "Ctrl-C"), ("\u{04}", "Ctrl-D")] {
      try withDevice { device in
        try withServer({ $0.authenticationType = "APPLICATION_PIN" }) { server, tree in
          let screen = try typed(
            journeyArguments(server, device, tree: "Bind") + ["--user", "demo"], device,
            steps: [["expect": "Password"], ["send": .string(password + "\n")], ["expect": "New PIN"], ["send": .string(key)]])
          #expect(screen.failed == nil, "\(name): [\(screen.text)]")
          #expect(screen.status != 0, "\(name): the binding went on: \(screen.text)")
          #expect(screen.status != -9, "\(name): the command did not end: \(screen.text)")
          let keys = (try? FileManager.default.contentsOfDirectory(atPath: device.state + "/bound-keys")) ?? []
          #expect(keys.filter { !$0.hasPrefix(".") }.isEmpty, "\(name) left \(keys)")
          #expect(tree.boundDevices("demo").isEmpty, "\(name): AM bound a device")
        }
      }
    }
  }

  @Test("a PIN prompt ends at the callback's deadline: Timeout to AM, no key")
  func pinPromptDeadlineExpires() throws {
    try withDevice { device in
      try withServer({
        $0.authenticationType = "APPLICATION_PIN"
        $0.timeout = 2
      }) { server, tree in
        let started = Date()
        let screen = try typed(
          journeyArguments(server, device, tree: "Bind") + ["--user", "demo"], device,
          steps: [["expect": "Password"], ["send": .string(password + "\n")], ["expect": "New PIN"]])
        #expect(screen.failed == nil, "[\(screen.text)]")
        #expect(Date().timeIntervalSince(started) < 20)
        #expect(tree.outcomes.contains { $0.contains("Timeout") }, "\(tree.outcomes) \(screen.status) \(screen.text)")
        let keys = (try? FileManager.default.contentsOfDirectory(atPath: device.state + "/bound-keys")) ?? []
        #expect(keys.filter { !$0.hasPrefix(".") }.isEmpty, "\(keys)")
      }
    }
  }
}
