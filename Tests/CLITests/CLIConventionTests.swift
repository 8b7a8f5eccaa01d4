import Foundation
import ProfileJSON
import Testing

/// The command line's conventions: one-line usage errors with exit 64,
/// negative coordinates, `-o -`, one output convention, no silently ignored options.
@Suite(.timeLimit(.minutes(10))) struct CLIConventionTests {
  /// A usage error: exit 64 and exactly one line on stderr naming the help to read.
  func expectUsageError(
    _ arguments: [String], help: String, contains text: String, executable: String = frProfilePath
  ) throws {
    let state = try makeTemporaryDirectory()
    defer { removeTemporaryDirectory(state) }
    let result = try run(arguments, environment: ["FR_PROFILE_HOME": state], executable: executable)
    #expect(result.status == 64, "\(arguments): \(result.stderr)")
    #expect(result.stdout.isEmpty)
    let lines = result.stderr.split(separator: "\n", omittingEmptySubsequences: false)
    #expect(lines.count == 2 && lines[1].isEmpty, "\(arguments) printed \(lines.count - 1) lines: \(result.stderr)")
    #expect(result.stderr.hasPrefix("fr-profile: error: "), "\(result.stderr)")
    #expect(result.stderr.hasSuffix("(see '\(help) --help')\n"), "\(result.stderr)")
    #expect(result.stderr.contains(text), "\(arguments): \(result.stderr)")
    #expect(!result.stderr.contains("Error:") && !result.stderr.contains("USAGE"))
  }

  @Test func noCommandIsAUsageError() throws {
    try expectUsageError([], help: "fr-profile", contains: "no command given; the commands are collect, identifier")
  }

  @Test func mistypedCommandGetsDidYouMean() throws {
    try expectUsageError(["colect"], help: "fr-profile", contains: "unknown command 'colect'; did you mean 'collect'?")
    try expectUsageError(["help", "foo"], help: "fr-profile", contains: "unknown command 'foo'; the commands are")
    try expectUsageError(["--verison"], help: "fr-profile", contains: "did you mean '--version'?")
  }

  @Test func subcommandUsageErrorsAreOneLine() throws {
    try expectUsageError(["collect", "--prety"], help: "fr-profile collect", contains: "did you mean '--pretty'?")
    try expectUsageError(["collect", "--pretty", "--compact"], help: "fr-profile collect", contains: "--pretty and --compact")
    try expectUsageError(["match", "a.json"], help: "fr-profile match", contains: "missing expected argument")
    try expectUsageError(["callback", "--latitude", "1"], help: "fr-profile callback", contains: "--latitude and --longitude")
  }

  @Test func mistypedCommandOfACommandGroupGetsDidYouMean() throws {
    try expectUsageError(["keys", "lst"], help: "fr-profile keys", contains: "unknown command 'lst'; did you mean 'list'?")
    try expectUsageError(["keys", "zzz"], help: "fr-profile keys", contains: "the commands are list, delete, unlock")
  }

  @Test("binding policies given as flags are checked before anything runs")
  func bindingPolicyFlagsAreValidated() throws {
    try expectUsageError(["callback", "--pin-policy", "MINLEN=x", "-"], help: "fr-profile callback", contains: "--pin-policy")
    try expectUsageError(
      ["journey", "--server", "https://am.example/am", "--realm", "root", "--tree", "T", "--lock-policy", "lock:-1"],
      help: "fr-profile journey", contains: "--lock-policy")
  }

  /// Every EXIT CODES section lists each code once, and only codes from `ExitStatus`.
  @Test("each command's EXIT CODES come from one list, each code once")
  func exitCodesInHelpAreConsistent() throws {
    let known: Set<Int> = [0, 1, 2, 3, 4, 64, 65, 66, 67, 68, 69, 73, 74, 75, 76, 77, 78, 80, 81, 82, 83, 130]
    for command in [[], ["identifier"], ["match"], ["callback"], ["journey"], ["keys"], ["keys", "delete"], ["policy"]] {
      let help = try run(command + ["--help"]).stdout
      guard let start = help.range(of: "EXIT CODES:") else {
        Issue.record("\(command): no EXIT CODES section")
        continue
      }
      var codes: [Int] = []
      for line in help[start.upperBound...].split(separator: "\n").dropFirst(0) {
        let trimmed = line.drop { $0 == " " }
        guard line.hasPrefix("  "), let number = Int(trimmed.prefix { $0.isNumber }), trimmed.first?.isNumber == true else {
          if line.hasPrefix("  ") { continue }  // a wrapped row
          break
        }
        codes.append(number)
      }
      #expect(!codes.isEmpty, "\(command)")
      #expect(Set(codes).count == codes.count, "\(command) lists a code twice: \(codes)")
      #expect(Set(codes).isSubset(of: known), "\(command): \(codes)")
    }
  }

  @Test func journeyWithoutArgumentsIsOneLine() throws {
    try expectUsageError(["journey"], help: "fr-profile journey", contains: "--server")
  }

  @Test func helpAndVersionStillExitZero() throws {
    for arguments in [["--help"], ["help"], ["help", "collect"], ["collect", "--help"], ["journey", "--help"]] {
      let result = try run(arguments)
      #expect(result.status == 0, "\(arguments)")
      #expect(result.stdout.contains("USAGE:"), "\(arguments)")
    }
    let version = try run(["--version"])
    #expect(version.status == 0)
    #expect(version.stdout.contains(" (commit "))
    #expect(try run(["help", "journey"]).stdout == (try run(["journey", "--help"]).stdout))
    let journeyVersion = try run(["journey", "--version"])
    #expect(journeyVersion.stdout == version.stdout)
  }

  @Test("negative coordinates take the space-separated spelling")
  func negativeCoordinates() throws {
    let state = try makeTemporaryDirectory()
    defer { removeTemporaryDirectory(state) }
    let collect = try run([
      "collect", "--no-metadata", "--location", "--latitude", "-33.8688", "--longitude", "-70.6693", "--state-dir", state,
    ])
    #expect(collect.status == 0, "\(collect.stderr)")
    #expect(collect.stdout.hasSuffix(#""location":{"latitude":-33.8688,"longitude":-70.6693}}"# + "\n"))
    // ArgumentParser's path (FastCollectTests holds the two parsers equal on this spelling).
    let parsed = try run([
      "collect", "--no-metadata", "--location", "--latitude", "-33.8688", "--longitude", "-70.6693", "--state-dir", state, "-v",
    ])
    #expect(parsed.stdout == collect.stdout, "\(parsed.stderr)")
    let callback = try run(
      [
        "callback", "--latitude", "-33.8688", "--longitude", "-70.6693", "--state-dir", state,
        cliFixture("callbacks/authenticate-device-profile-LocationOnly.json"),
      ])
    #expect(callback.status != 64, "\(callback.stderr)")
    #expect(!callback.stderr.contains("Missing value"))
  }

  @Test func journeyTakesNegativeCoordinates() throws {
    let state = try makeTemporaryDirectory()
    defer { removeTemporaryDirectory(state) }
    // Nothing listens on port 1: parsing succeeded when the error is "cannot connect" (68).
    let result = try run(
      [
        "journey", "--server", "http://127.0.0.1:1/am", "--realm", "alpha", "--tree", "Login", "--user", "demo",
        "--password-stdin", "--latitude", "-33.8688", "--longitude", "-70.6693", "--state-dir", state + "/s",
      ], stdin: "pw\n")
    #expect(result.status == 68, "\(result.stderr)")
  }

  @Test("-o - is standard output, not a file named -")
  func dashIsStandardOutput() throws {
    let directory = try makeTemporaryDirectory()
    defer { removeTemporaryDirectory(directory) }
    let env = ["FR_PROFILE_HOME": directory + "/state"]
    for arguments in [
      ["collect", "-o", "-"], ["collect", "--no-metadata", "--output", "-"], ["identifier", "-o", "-"], ["tamper", "-o", "-"],
      ["posture", "-o", "-"],
    ] {
      let result = try run(arguments, environment: env, directory: directory)
      #expect(result.status == 0, "\(arguments): \(result.stderr)")
      #expect(!result.stdout.isEmpty, "\(arguments)")
      #expect(!FileManager.default.fileExists(atPath: directory + "/-"), "\(arguments) wrote a file named -")
    }
  }

  @Test func everyCommandWritesItsResultWithDashO() throws {
    let directory = try makeTemporaryDirectory()
    defer { removeTemporaryDirectory(directory) }
    let env = ["FR_PROFILE_HOME": directory + "/state"]
    let commands: [(String, [String])] = [
      ("collect", ["collect"]), ("identifier", ["identifier", "--json"]), ("tamper", ["tamper", "--json"]),
      ("posture", ["posture", "--json"]),
      ("callback", ["callback", cliFixture("callbacks/authenticate-device-profile-LocationOnly.json")]),
    ]
    for (name, arguments) in commands {
      let file = directory + "/\(name).json"
      let result = try run(arguments + ["-o", file], environment: env)
      #expect(result.status == 0, "\(name): \(result.stderr)")
      #expect(result.stdout.isEmpty, "\(name) printed to stdout with -o")
      let text = try String(contentsOfFile: file, encoding: .utf8)
      #expect((try? JSONParser.parse(Array(text.utf8))) != nil, "\(name) wrote no JSON: \(text)")
      #expect(text.hasSuffix("}\n") && !text.contains("\n  "), "\(name): a file gets compact JSON")
      let pretty = try run(arguments + ["--pretty"], environment: env)
      #expect(pretty.stdout.contains("\n  \""), "\(name) --pretty")
    }
  }

  @Test func identifierJSONHoldsTheIdentifier() throws {
    let state = try makeTemporaryDirectory()
    defer { removeTemporaryDirectory(state) }
    let env = ["FR_PROFILE_HOME": state]
    let plain = try run(["identifier"], environment: env)
    let json = try run(["identifier", "--json"], environment: env)
    expectValid(json.stdout, schema: "identifier")
    #expect(json.stdout == #"{"identifier":""# + plain.stdout.dropLast() + "\"}\n")
    let key = try run(["identifier", "--json", "--public-key"], environment: env)
    let body = try JSONParser.parse(Array(key.stdout.utf8))
    #expect(body["publicKey"]?.stringValue?.hasPrefix("-----BEGIN PUBLIC KEY-----") == true)
  }

  @Test("options a command does not use are rejected")
  func ignoredOptionsAreRejected() throws {
    try expectUsageError(["identifier", "--latitude", "1", "--longitude", "2"], help: "fr-profile identifier", contains: "--latitude")
    try expectUsageError(["identifier", "--user-agent", "x"], help: "fr-profile identifier", contains: "--user-agent")
    try expectUsageError(["identifier", "--pretty"], help: "fr-profile identifier", contains: "add --json")
    try expectUsageError(["tamper", "--compact"], help: "fr-profile tamper", contains: "add --json")
    try expectUsageError(["collect", "--latitude", "1", "--longitude", "2"], help: "fr-profile collect", contains: "need --location")
  }

  @Test("-v says where every key of the profile came from", arguments: CollectCommandTests.machines)
  func verboseExplainsEveryKey(machine: String) throws {
    let state = try makeTemporaryDirectory()
    defer { removeTemporaryDirectory(state) }
    let result = try run(
      [
        "collect", "-v", "--location", "--latitude", "-33.8688", "--longitude", "151.2093", "--root", machineRoot(machine), "--state-dir",
        state,
      ])
    #expect(result.status == 0, "\(result.stderr)")
    var leaves: [String] = []
    func walk(_ value: JSON, _ path: String) {
      if case .object(let object) = value {
        for (key, member) in object.members { walk(member, path.isEmpty ? key : path + "." + key) }
      } else {
        leaves.append(path)
      }
    }
    walk(try JSONParser.parse(Array(result.stdout.utf8)), "")
    #expect(leaves.count >= 15)
    for leaf in leaves {
      let line = result.stderr.split(separator: "\n").first { $0.hasPrefix("fr-profile: detail: \(leaf) = ") }
      #expect(line?.contains(" ← ") == true, "\(machine): no source for \(leaf)")
    }
    #expect(!result.stderr.contains("no rule recorded"))
  }

  @Test("a reset that cannot read the key does not advise a reset", .enabled(if: canDropPrivileges))
  func resetAdviceDoesNotLoop() throws {
    let directory = try makeTemporaryDirectory()
    defer { removeTemporaryDirectory(directory) }
    chmod(directory, 0o755)
    let state = directory + "/state"
    #expect(try run(["identifier", "--state-dir", state]).status == 0)  // root's key, 0700 directory
    for arguments in [["identifier", "--reset"], ["identifier"], ["collect"]] {
      let result = try run(arguments + ["--state-dir", state], prefix: asNobody)
      #expect(result.status == 77, "\(arguments): \(result.stderr)")
      #expect(!result.stderr.contains("--reset"), "\(arguments) advises a reset that cannot work: \(result.stderr)")
      #expect(result.stderr.contains("--state-dir"))
    }
  }

  @Test("make run collects with a throwaway state directory, never /var/lib/fr-profile")
  func makeRunUsesAThrowawayStateDirectory() throws {
    let checkout = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent().path
    let result = try run(["-n", "-C", checkout, "run"], executable: "/usr/bin/make")
    let line = try #require(result.stdout.split(separator: "\n").first { $0.contains("fr-profile collect") })
    #expect(line.hasPrefix("FR_PROFILE_HOME=\"\(checkout)/.build-release/run-state\" "), "\(line)")
  }

  @Test func passwordOptionPointsToPasswordStdin() throws {
    try expectUsageError(
      ["journey", "--server", "https://am.example.com/am", "--realm", "alpha", "--tree", "Login", "--password", "secret"],
      help: "fr-profile journey", contains: "--password-stdin")
    try expectUsageError(["journey", "--password=secret"], help: "fr-profile journey", contains: "--password-stdin")
  }
  @Test("a match config that is not JSON says so, naming the file, on one line")
  func matchConfigNotJSONNamesTheConfig() throws {
    let directory = try makeTemporaryDirectory()
    defer { removeTemporaryDirectory(directory) }
    try "not json\n".write(toFile: directory + "/notjson.json", atomically: true, encoding: .utf8)
    try "{}\n".write(toFile: directory + "/a.json", atomically: true, encoding: .utf8)
    let result = try run(
      ["match", "--config", directory + "/notjson.json", directory + "/a.json", directory + "/a.json"])
    #expect(result.status == 78)
    #expect(result.stdout.isEmpty)
    #expect(result.stderr.hasPrefix("fr-profile: error: \(directory)/notjson.json:1:"), "\(result.stderr)")
    #expect(result.stderr.contains("match config is not JSON"), "\(result.stderr)")
    #expect(result.stderr.filter { $0 == "\n" }.count == 1, "\(result.stderr)")
  }
  @Test("match takes the output convention: -o FILE, --pretty/--compact with --json; exit codes unchanged")
  func matchTakesTheOutputOptions() throws {
    let directory = try makeTemporaryDirectory()
    defer { removeTemporaryDirectory(directory) }
    try (JSONWriter.compact(MatchCommandTests.incoming) + "\n").write(
      toFile: directory + "/p.json", atomically: true, encoding: .utf8)
    var other = MatchCommandTests.incoming.objectValue ?? [:]
    other["identifier"] = "another-device"
    try (JSONWriter.compact(.object(other)) + "\n").write(toFile: directory + "/q.json", atomically: true, encoding: .utf8)
    let base = ["match", "--script-defaults", directory + "/p.json"]
    for incoming in ["p.json", "q.json"] {
      let plain = try run(base + [directory + "/" + incoming])
      #expect([0, 1, 3].contains(plain.status), "\(plain.stderr)")
      let file = directory + "/result-\(incoming).txt"
      let written = try run(base + [directory + "/" + incoming, "-o", file])
      #expect(written.status == plain.status, "\(incoming): -o changed the exit code: \(written.stderr)")
      #expect(written.stdout.isEmpty)
      #expect(try String(contentsOfFile: file, encoding: .utf8) == plain.stdout)
      let jsonFile = directory + "/result-\(incoming).json"
      let json = try run(base + [directory + "/" + incoming, "--json", "--output", jsonFile])
      #expect(json.status == plain.status && json.stdout.isEmpty, "\(json.stderr)")
      let text = try String(contentsOfFile: jsonFile, encoding: .utf8)
      #expect((try? JSONParser.parse(Array(text.utf8))) != nil, "\(text)")
      #expect(text.hasSuffix("}\n") && !text.contains("\n  "), "a file gets compact JSON: \(text)")
      let pretty = try run(base + [directory + "/" + incoming, "--json", "--pretty", "-o", "-"])
      #expect(pretty.status == plain.status && pretty.stdout.contains("\n  \""), "\(pretty.stdout)")
    }
    #expect(try run(base + [directory + "/q.json"]).status == 3)
    try expectUsageError(base + [directory + "/p.json", "--pretty"], help: "fr-profile match", contains: "--json")
    try expectUsageError(
      base + [directory + "/p.json", "--json", "--each", "--pretty"], help: "fr-profile match", contains: "JSON Lines")
  }

  @Test("journey -o FILE writes the token (a credential) with mode 0600, also over a 0644 file")
  func journeyWritesTheTokenWithModeSixHundred() throws {
    let directory = try makeTemporaryDirectory()
    defer { removeTemporaryDirectory(directory) }
    let device = [
      "--state-dir", directory + "/state", "--root", machineRoot("laptop"), "--latitude", "52.52", "--longitude", "13.405",
    ]
    let collected = try run(["collect", "--location", "--compact"] + device)
    #expect(collected.status == 0, "\(collected.stderr)")
    var configuration = AuthenticateServer.Configuration()
    configuration.storedProfiles["demo"] = [try JSONParser.parse(Array(collected.stdout.utf8))]
    let server = try AuthenticateServer(configuration)
    defer { server.stop() }
    let password = configuration.users["demo"]!
    let journey = [
      "journey", "--server", server.url, "--realm", "alpha", "--tree", "DeviceProfiling", "--user", "demo", "--password-stdin",
    ]
    func mode(_ path: String) throws -> Int {
      try (FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) ?? -1
    }
    let token = directory + "/token"
    let result = try run(journey + device + ["-o", token], stdin: password + "\n")
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stdout.isEmpty)
    #expect(try String(contentsOfFile: token, encoding: .utf8) == server.token + "\n")
    #expect(try mode(token) == 0o600)

    let replaced = directory + "/body.json"
    try "old\n".write(toFile: replaced, atomically: false, encoding: .utf8)
    chmod(replaced, 0o644)
    let json = try run(journey + device + ["--json", "--compact", "-o", replaced], stdin: password + "\n")
    #expect(json.status == 0 && json.stdout.isEmpty, "\(json.stderr)")
    let body = try JSONParser.parse(Array(try String(contentsOfFile: replaced, encoding: .utf8).utf8))
    #expect(body["tokenId"]?.stringValue == server.token)
    #expect(try mode(replaced) == 0o600)
    #expect(try String(contentsOfFile: replaced, encoding: .utf8).hasSuffix("}\n"))

    // A token file nobody planted is refused, and keeps no token.
    if canDropPrivileges {
      let planted = directory + "/planted-token"
      try "planted\n".write(toFile: planted, atomically: false, encoding: .utf8)
      chmod(planted, 0o666)
      chown(planted, 65534, 65534)
      let refused = try run(journey + device + ["-o", planted], stdin: password + "\n")
      #expect(refused.status == 77, "\(refused.stderr)")
      #expect(try String(contentsOfFile: planted, encoding: .utf8) == "planted\n")
    }

    try expectUsageError(journey + device + ["--pretty"], help: "fr-profile journey", contains: "--json")
  }
}
