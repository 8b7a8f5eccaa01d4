import Foundation
import ProfileJSON
import Testing

/// Every example in `--help` and in the README runs, as printed, in a scratch directory that
/// holds the files the examples name (stored.json, incoming.json, step.json, …), with the built
/// fr-profile first on PATH and a throwaway state directory. What needs the world is replaced,
/// and only that: an AM (`https://am.example.com/am`, `$AM`, `https://am.internal:8443/am` with
/// its CA file) by the loopback `AuthenticateServer` serving the example's realm and tree
/// (HTTPS with a test CA for am.internal), `pass show am/demo` by the test password, and a
/// position by `FR_PROFILE_LOCATION`. `make …` lines are what CI itself runs, so they are left out.
@Suite(.timeLimit(.minutes(10))) struct ExampleTests {
  struct Example: CustomStringConvertible, Sendable {
    var source: String
    var command: String
    var description: String { "\(source): \(command)" }
  }

  static let commands = ["", "collect", "identifier", "tamper", "posture", "match", "callback", "journey", "token", "logout"]
  static let password = "s3cret-Passw0rd"

  /// The lines under "EXAMPLES:" of each command's --help, continuation lines joined.
  static func helpExamples() -> [Example] {
    var examples: [Example] = []
    for command in commands {
      let arguments = command.isEmpty ? ["--help"] : [command, "--help"]
      guard let help = try? run(arguments).stdout else { continue }
      var inExamples = false
      var lines: [String] = []
      for line in help.split(separator: "\n", omittingEmptySubsequences: false) {
        if line.hasSuffix("EXAMPLES:") {
          inExamples = true
        } else if inExamples {
          guard line.hasPrefix("  ") else { break }
          lines.append(String(line))
        }
      }
      let source = "fr-profile \(command) --help".replacingOccurrences(of: "  ", with: " ")
      examples += joined(lines).map { Example(source: source, command: $0) }
    }
    return examples
  }

  /// Commands in the README's ```sh and ```console blocks (console: the lines after "$ ").
  static func readmeExamples() -> [Example] {
    let readme = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent().appendingPathComponent("README.md").path
    guard let text = try? String(contentsOfFile: readme, encoding: .utf8) else { return [] }
    var examples: [Example] = []
    var block: String?
    var lines: [String] = []
    for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
      if line.hasPrefix("```") {
        if let kind = block {
          for command in joined(lines) where !command.hasPrefix("make ") && !command.hasPrefix("#") {
            examples.append(Example(source: "README.md (block ending at line \(number + 1), \(kind))", command: command))
          }
          block = nil
        } else if line == "```sh" || line == "```console" {
          block = String(line.dropFirst(3))
          lines = []
        }
        continue
      }
      guard let kind = block else { continue }
      if kind == "console" {
        if line.hasPrefix("$ ") {
          lines.append(String(line.dropFirst(2)))
        } else if lines.last?.hasSuffix("\\") == true {
          lines.append(String(line))
        }
      } else {
        lines.append(String(line))
      }
    }
    return examples
  }

  /// Lines ending in a backslash continue on the next one; a variable assignment on a line of
  /// its own (`tree="…"`) is kept for the commands after it.
  static func joined(_ lines: [String]) -> [String] {
    var commands: [String] = []
    var prelude = ""
    var current = ""
    for line in lines {
      let trimmed = line.trimmingCharacters(in: .whitespaces)
      if trimmed.hasSuffix("\\") {
        current += trimmed.dropLast() + " "
        continue
      }
      current += trimmed
      if current.range(of: #"^[A-Za-z_][A-Za-z0-9_]*="[^"]*"$"#, options: .regularExpression) != nil {
        prelude += current + "\n"
      } else if !current.isEmpty {
        commands.append(prelude + current)
      }
      current = ""
    }
    if !current.isEmpty { commands.append(prelude + current) }
    return commands
  }

  static let examples = helpExamples() + readmeExamples()

  @Test func everyCommandHasExamplesAndTheyFitEightyColumns() throws {
    for command in Self.commands {
      let help = try run(command.isEmpty ? ["--help"] : [command, "--help"]).stdout
      #expect(help.contains("EXAMPLES:"), "fr-profile \(command) --help has no examples")
      let section = help.components(separatedBy: "EXAMPLES:").last ?? ""
      for line in section.split(separator: "\n") where line.hasPrefix("  ") {
        #expect(line.count <= 80, "wrapped example line in fr-profile \(command) --help: \(line)")
      }
    }
    #expect(Self.examples.count >= 25)
    #expect(Self.examples.contains { $0.source.hasPrefix("README") && $0.command.contains("journey") })
  }

  @Test("the example runs", arguments: examples)
  func exampleRuns(_ example: Example) throws {
    let directory = try makeTemporaryDirectory("fr-profile-example")
    defer { removeTemporaryDirectory(directory) }
    var environment = [
      "PATH": productsDirectory + ":/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
      "HOME": directory, "FR_PROFILE_HOME": directory + "/state", "FR_PROFILE_LOCATION": "52.52,13.405",
    ]
    let stored = try prepare(directory, environment)
    var command = example.command.replacingOccurrences(of: "pass show am/demo", with: "printf '%s\\n' \(Self.password)")

    // OAuth 2.0 examples (token, logout, journey --client-id): the Authlib test AM, logged in
    // first unless the example logs in itself.
    var oauthServer: OAuthAM?
    defer { oauthServer?.stop() }
    if command.contains("fr-profile token") || command.contains("fr-profile logout") || command.contains("--client-id") {
      let started = try OAuthAM()
      oauthServer = started
      command = command.replacingOccurrences(of: "https://am.example.com/am", with: started.url)
        .replacingOccurrences(of: "printf '%s\\n' \(Self.password)", with: "printf '%s\\n' '\(OAuthAM.password)'")
      if !command.contains(" journey ") {
        let login = try run(
          [
            "journey", "--server", started.url, "--realm", "alpha", "--tree", "Login", "--user", OAuthAM.user, "--password-stdin",
            "--client-id", OAuthAM.clientId, "--root", machineRoot("laptop"),
          ], environment: environment, stdin: OAuthAM.password + "\n")
        try #require(login.status == 0, "\(login.stderr)")
      }
    }

    // The AM the example talks to, if any: the loopback server with its realm and tree.
    var server: AuthenticateServer?
    if command.contains("am.example.com") || command.contains("am.internal") || command.contains("$AM") {
      var configuration = AuthenticateServer.Configuration()
      let words = command.split(separator: " ").map(String.init)
      // Without --realm, a --resume example takes the realm of $LINK below (/alpha).
      let realm = words.firstIndex(of: "--realm").map { words[$0 + 1] } ?? (command.contains("--resume") ? "alpha" : "root")
      configuration.path = realm == "root" ? "/json/realms/root/authenticate" : "/json/realms/root/realms/\(realm)/authenticate"
      if let tree = words.firstIndex(of: "--tree").map({ words[$0 + 1] }) {
        configuration.tree = tree
      } else if let range = command.range(of: "authIndexValue=") {
        configuration.tree = String(command[range.upperBound...].prefix { $0.isLetter || $0.isNumber })
        configuration.profileFirst = true
      }
      configuration.storedProfiles = ["": [stored], "demo": [stored]]
      if command.contains("am.internal") {
        configuration.tls = try makeSelfSignedCertificate(in: directory)
        command = command.replacingOccurrences(of: "/etc/ssl/private-ca.pem", with: configuration.tls!.certificate)
      }
      configuration.match.matchLocation = false
      let started = try AuthenticateServer(configuration)
      for url in ["https://am.example.com/am", "https://am.internal:8443/am"] {
        command = command.replacingOccurrences(of: url, with: started.url)
      }
      environment["AM"] = started.url
      environment["LINK"] = started.url + "/XUI/?realm=/alpha&suspendedId=example-suspended-id"
      server = started
    }
    defer { server?.stop() }

    // setsid: no controlling terminal, so a prompt cannot wait for a person.
    let result = try run(
      ["-c", "set -o pipefail\n" + command], environment: environment, executable: "/bin/bash",
      prefix: ["/usr/bin/setsid", "-w"], directory: directory)
    let interactive = command.contains(" journey ") && !command.contains("--password-stdin") && !command.contains("--answers")
    if interactive {
      // Asks for the password on a terminal; here there is none: exit 2, saying so.
      #expect(result.status == 2, "\(example): \(result.stderr)")
      #expect(result.stderr.contains("terminal"), "\(example): \(result.stderr)")
    } else if command.contains("fr-profile match") {
      #expect([0, 1, 3].contains(result.status), "\(example): exit \(result.status): \(result.stderr)")
    } else {
      #expect(result.status == 0, "\(example): exit \(result.status): \(result.stderr)")
    }
    if !interactive { #expect(!result.stderr.contains("error:"), "\(example): \(result.stderr)") }
    if let server, !interactive {
      #expect(server.outcomes.last == "success", "\(example): the AM saw \(server.outcomes)")
    }
  }

  /// The files the examples name, in `directory`; returns the machine's profile (as stored).
  func prepare(_ directory: String, _ environment: [String: String]) throws -> JSON {
    let collected = try run(["collect", "--location", "--compact"], environment: environment)
    #expect(collected.status == 0, "\(collected.stderr)")
    let profile = collected.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    let files = [
      "stored.json": profile, "incoming.json": profile, "am-devices.json": #"{"result":[\#(profile)]}"#,
      "logins.jsonl": profile + "\n" + profile, "pw": Self.password,
      "strict.json": #"{"maxUnmatchedAttrs": 0, "allowedRadius": 50}"#,
      "step.json": try String(contentsOfFile: cliFixture("callbacks/authenticate-device-profile-All.json"), encoding: .utf8),
    ]
    for (name, text) in files { try (text + "\n").write(toFile: directory + "/" + name, atomically: true, encoding: .utf8) }
    // journey's --answers and --session-file examples: the caller's 0600 files in HOME.
    try FileManager.default.createDirectory(atPath: directory + "/.config/fr-profile", withIntermediateDirectories: true)
    let secrets = [
      ".config/fr-profile/kiosk-answers.json":
        #"{"answers": [{"type": "NameCallback", "value": "demo"}, {"type": "PasswordCallback", "value": "\#(Self.password)"}]}"#,
      ".am-token": "AQIC5wM2LY4Sfcz-example-session.*",
    ]
    for (name, text) in secrets {
      try (text + "\n").write(toFile: directory + "/" + name, atomically: true, encoding: .utf8)
      chmod(directory + "/" + name, 0o600)
    }
    let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent()
    try FileManager.default.createSymbolicLink(
      atPath: directory + "/Tests", withDestinationPath: repository.appendingPathComponent("Tests").path)
    try FileManager.default.copyItem(
      atPath: repository.appendingPathComponent("match-config.json").path, toPath: directory + "/match-config.json")
    return try JSONParser.parse(Array(profile.utf8))
  }
}
