import Foundation
import ProfileJSON
import Testing

/// A hostile server's text on its way to the screen: a binding callback's title at
/// the PIN prompt, and the username it makes fr-profile store, shown later by the key selector
/// and `keys list`; and what a server can make fr-profile store at all.
extension BindingCommandTests {
  /// OSC 0 (window title), OSC 52 (clipboard write), CSI 2J (clear screen), BEL, a C1 CSI and
  /// a right-to-left override.
  static let hostile = "\u{1B}]0;pwned\u{07}\u{1B}]52;c;ZXZpbA==\u{07}\u{1B}[2J\u{9B}31m\u{202E}evil"

  /// Whether `text` holds anything that drives a terminal: ESC, BEL, C1, bidi overrides.
  func drivesTheTerminal(_ text: String) -> Bool {
    text.unicodeScalars.contains { [0x1B, 0x07, 0x9B, 0x202E].contains($0.value) }
  }

  func serverHost(_ server: AuthenticateServer) -> String {
    String(server.url.dropFirst("http://".count).prefix { $0 != "/" })
  }

  @Test("a hostile title at the PIN prompt is shown sanitized, after the server's host")
  func pinPromptShowsTheHostAndSanitizesTheTitle() throws {
    try withDevice { device in
      try withServer({
        $0.authenticationType = "APPLICATION_PIN"
        $0.title = "Bind " + Self.hostile
      }) { server, tree in
        let screen = try typed(
          journeyArguments(server, device, tree: "Bind") + ["--user", "demo"], device,
          steps: [
            ["expect": "Password"], ["send": .string(password + "\n")],
            ["expect": "New PIN"], ["send": "271828\n"], ["expect": "Repeat the PIN"], ["send": "271828\n"],
            ["expect": .string(tree.token)],
          ])
        #expect(screen.failed == nil, "[\(screen.text)]")
        #expect(screen.status == 0, "\(screen.text)")
        #expect(!drivesTheTerminal(screen.text), "[\(screen.text)]")
        #expect(screen.text.contains("Server: \(serverHost(server))"))
        #expect(screen.text.contains("evil"))
      }
    }
  }

  /// Binds NONE keys for demo and bjensen, whose binding callbacks carry hostile usernames.
  func bindHostileUsernames(_ server: AuthenticateServer, _ device: Device) throws {
    for (user, password) in [("demo", password), ("bjensen", "0ther-Passw0rd")] {
      let bound = try journey(server, device, tree: "Bind", user: user, password: password)
      #expect(bound.status == 0, "\(bound.stderr)")
    }
  }

  @Test("the key selector of usernameless signing lists stored usernames sanitized and signs with the key chosen")
  func keySelectorChoosesAmongSeveralKeys() throws {
    try withDevice { device in
      try withServer({ $0.callbackUsernames = ["demo": "demo" + Self.hostile, "bjensen": "bjensen" + Self.hostile] }) {
        server, tree in
        try bindHostileUsernames(server, device)
        let records = try keyList(device)
        #expect(records.count == 2)
        let chosen = try #require(records.last?["kid"]?.stringValue)
        let screen = try typed(
          journeyArguments(server, device, tree: "SignUsernameless"), device,
          steps: [
            ["expect": "Which bound key signs?"], ["expect": "Key [0-1]"], ["echo": true], ["send": "1\n"],
            ["expect": .string(tree.token)],
          ])
        #expect(screen.failed == nil, "[\(screen.text)]")
        #expect(screen.status == 0, "\(screen.text)")
        #expect(!drivesTheTerminal(screen.text), "[\(screen.text)]")
        #expect(screen.text.contains("demo") && screen.text.contains("bjensen") && screen.text.contains("-(NONE)-("))
        #expect(tree.outcomes.last == "signing: success")
        #expect(BindingServer.parse(try #require(tree.jwsReceived.last))?.header["kid"]?.stringValue == chosen)
      }
    }
  }

  @Test("an empty answer or Ctrl-C at the key selector signs nothing")
  func keySelectorCancels() throws {
    for (key, name) in [("\n", "empty answer"), ("\u{03}", "Ctrl-C")] {
      try withDevice { device in
        try withServer { server, tree in
          try bindHostileUsernames(server, device)
          let screen = try typed(
            journeyArguments(server, device, tree: "SignUsernameless"), device,
            steps: [["expect": "Key [0-1]"], ["send": .string(key)]])
          #expect(screen.failed == nil, "\(name): [\(screen.text)]")
          #expect(screen.status != 0 && screen.status != -9, "\(name): \(screen.status) \(screen.text)")
          #expect(!tree.outcomes.contains("signing: success"), "\(name): \(tree.outcomes)")
        }
      }
    }
  }

  @Test("keys list shows a stored hostile username sanitized, and --json escapes its controls")
  func keysListSanitizesStoredUsernames() throws {
    try withDevice { device in
      try withServer({ $0.callbackUsernames = ["demo": "demo" + Self.hostile] }) { server, _ in
        let bound = try journey(server, device, tree: "Bind")
        #expect(bound.status == 0, "\(bound.stderr)")
        let table = try run(["keys", "list", "--state-dir", device.state])
        #expect(table.status == 0 && table.stdout.contains("demo?]0;pwned?"), "\(table.stdout)")
        #expect(!drivesTheTerminal(table.stdout))
        let json = try run(["keys", "list", "--json", "--state-dir", device.state])
        #expect(!drivesTheTerminal(json.stdout), "\(json.stdout)")
        #expect(json.stdout.contains(#"\u001b]0;pwned\u0007"#) && json.stdout.contains(#"\u009b31m\u202eevil"#))
        // Still the same JSON value: the username as the server sent it.
        #expect(try JSONParser.parse(Array(json.stdout.utf8)).arrayValue?.first?["username"]?.stringValue == "demo" + Self.hostile)
      }
    }
  }

  @Test("a username above what a key may store is refused at binding with Abort, and nothing is stored")
  func anOversizedUsernameIsRefusedAtBinding() throws {
    try withDevice { device in
      try withServer({ $0.callbackUsernames = ["demo": String(repeating: "u", count: 70_000)] }) { server, tree in
        let result = try journey(server, device, tree: "Bind")
        #expect(result.status == 1 && result.stderr.contains("username is 70000 bytes"), "\(result.stderr)")
        #expect(tree.outcomes == ["binding: clientError Abort"])
        #expect(try keyList(device).isEmpty)
      }
    }
  }

  @Test("a damaged record is skipped and named by list and sign, and keys delete removes it; the others keep working")
  func aDamagedRecordDoesNotTakeTheStoreDown() throws {
    try withDevice { device in
      try withServer { server, tree in
        let bound = try journey(server, device, tree: "Bind")
        #expect(bound.status == 0, "\(bound.stderr)")
        let directory = device.state + "/bound-keys/"
        let good = try #require(try keyList(device).first?["kid"]?.stringValue)
        let corrupt = "0d6f2c3e-1b4a-4c5d-8e9f-a0b1c2d3e4f5"
        let large = "1d6f2c3e-1b4a-4c5d-8e9f-a0b1c2d3e4f5"
        let linked = "2d6f2c3e-1b4a-4c5d-8e9f-a0b1c2d3e4f5"
        try "not a key".write(toFile: directory + corrupt + ".json", atomically: true, encoding: .utf8)
        try String(repeating: "x", count: 70_000).write(toFile: directory + large + ".json", atomically: true, encoding: .utf8)
        #expect(link(directory + good + ".json", directory + linked + ".json") == 0)
        for name in [corrupt, large, linked] { chmod(directory + name + ".json", 0o600) }

        let listed = try run(["keys", "list", "--json", "--state-dir", device.state])
        #expect(listed.status == 0, "\(listed.stderr)")
        #expect(try JSONParser.parse(Array(listed.stdout.utf8)).arrayValue?.compactMap { $0["kid"]?.stringValue } == [good])
        for name in [corrupt, large, linked] {
          #expect(listed.stderr.contains("skipped the bound key \(name)"), "\(listed.stderr)")
        }
        #expect(try journey(server, device, tree: "Sign").status == 0)
        #expect(tree.outcomes.last == "signing: success")
        // Without a key of its own, signing names the damaged files.
        #expect(try run(["keys", "delete", good, "--state-dir", device.state]).status == 0)
        let missing = try journey(server, device, tree: "Sign")
        #expect(missing.status != 0 && missing.stderr.contains("3 bound key files are damaged and skipped"), "\(missing.stderr)")
        for name in [corrupt, large, linked] {
          let deleted = try run(["keys", "delete", name, "--state-dir", device.state])
          #expect(deleted.status == 0, "\(name): \(deleted.stderr)")
          #expect(!FileManager.default.fileExists(atPath: directory + name + ".json"))
        }
        let clean = try run(["keys", "list", "--state-dir", device.state])
        #expect(clean.status == 0 && !clean.stderr.contains("skipped"), "\(clean.stderr)")
        #expect(try keyList(device).isEmpty)
      }
    }
  }

  @Test("--max-time bounds the PIN prompt: the journey ends with 75 though the callback allows 60 s")
  func maxTimeBoundsThePINPrompt() throws {
    try withDevice { device in
      try withServer({ $0.authenticationType = "APPLICATION_PIN" }) { server, _ in
        let started = Date()
        let screen = try typed(
          journeyArguments(server, device, tree: "Bind") + ["--user", "demo", "--max-time", "4"], device,
          steps: [["expect": "Password"], ["send": .string(password + "\n")], ["expect": "New PIN"]])
        #expect(screen.failed == nil, "[\(screen.text)]")
        #expect(screen.status == 75, "\(screen.status): \(screen.text)")
        #expect(Date().timeIntervalSince(started) < 20)
        let keys = (try? FileManager.default.contentsOfDirectory(atPath: device.state + "/bound-keys")) ?? []
        #expect(keys.filter { !$0.hasPrefix(".") }.isEmpty, "\(keys)")
      }
    }
  }

  @Test("BIOMETRIC keys: PAM's conversation asks on the terminal without echo, after the server's host; a wrong answer binds nothing")
  func pamConversationOfBiometricKeys() throws {
    for (answer, binds) in [("stand-in-for-a-finger", true), ("wrong-finger", false)] {
      try withDevice { device in
        // pam_exec with expose_authtok asks the conversation for a password and hands it to the
        // script on stdin: a real PAM conversation without a fingerprint reader.
        let check = device.directory + "/check.sh"
        try "#!/bin/sh\nread -r answer\n[ \"$answer\" = stand-in-for-a-finger ]\n".write(
          toFile: check, atomically: true, encoding: .utf8)
        chmod(check, 0o755)
        try device.configurePAM(fallback: nil, biometric: "pam_exec.so expose_authtok quiet \(check)")
        try withServer({ $0.authenticationType = "BIOMETRIC_ONLY" }) { server, tree in
          let screen = try typed(
            journeyArguments(server, device, tree: "Bind") + ["--user", "demo"], device,
            steps: [
              ["expect": "Password"], ["send": .string(password + "\n")],
              ["expect": .string("Server: \(serverHost(server))")], ["expect": "Password"], ["echo": false],
              ["absent": .string(answer)], ["send": .string(answer + "\n")],
            ])
          #expect(screen.failed == nil, "[\(screen.text)]")
          #expect(screen.echo == [false])
          #expect(screen.absent == [true])
          #expect(!screen.text.contains(answer))
          #expect(screen.status == (binds ? 0 : 1), "\(screen.text)")
          #expect(tree.outcomes == [binds ? "binding: success" : "binding: clientError Abort"], "\(tree.outcomes)")
          #expect(try keyList(device).count == (binds ? 1 : 0))
        }
      }
    }
  }
}
