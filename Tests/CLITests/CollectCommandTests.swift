import Foundation
import Testing

/// `fr-profile collect` end to end: the built binary on recorded machine trees.
@Suite(.timeLimit(.minutes(10))) struct CollectCommandTests {
  static let machines = ["laptop", "raspberry-pi", "cloud-vm", "container"]
  static let identifierPattern = try! NSRegularExpression(pattern: #""identifier":"([0-9a-f]{16}-)?[0-9a-f]{40}""#)
  static let storagePattern = try! NSRegularExpression(pattern: #""storage":[1-9][0-9]*"#)

  /// Replaces the two values a fixture cannot pin (a fresh key; the size of the test machine's
  /// disk, as statvfs sees it) after checking their shape.
  func normalise(_ text: String) -> String {
    var result = text
    for (pattern, placeholder) in [
      (Self.identifierPattern, #""identifier":"<identifier>""#), (Self.storagePattern, #""storage":"<storage>""#),
    ] {
      result = pattern.stringByReplacingMatches(in: result, range: NSRange(result.startIndex..., in: result), withTemplate: placeholder)
    }
    return result
  }

  @Test("golden profiles of the fixture machines", arguments: machines)
  func matchesGoldenProfile(machine: String) throws {
    let state = try makeTemporaryDirectory()
    defer { removeTemporaryDirectory(state) }
    let result = try run(["collect", "--root", machineRoot(machine), "--state-dir", state + "/s"])
    #expect(result.status == 0)
    let normalised = normalise(result.stdout)
    #expect(normalised.contains("<identifier>") && normalised.contains("<storage>"))
    expectValid(result.stdout, schema: "profile")
    let golden = cliFixture("golden/\(machine).json")
    if ProcessInfo.processInfo.environment["FR_PROFILE_RECORD"] == "1" {
      try normalised.write(toFile: golden, atomically: true, encoding: .utf8)
    }
    #expect(
      normalised == (try String(contentsOfFile: golden, encoding: .utf8)), "re-record with FR_PROFILE_RECORD=1 if the change is intended")
    #expect(result.stdout.utf8.count <= 1536)
  }

  @Test func twoRunsPrintIdenticalBytes() throws {
    let state = try makeTemporaryDirectory()
    defer { removeTemporaryDirectory(state) }
    let env = ["FR_PROFILE_HOME": state + "/s"]
    let first = try run(["collect"], environment: env)
    let second = try run(["collect"], environment: env)
    #expect(first.status == 0)
    #expect(first.stdout == second.stdout)
    #expect(first.stdout.hasPrefix(#"{"identifier":""#))
  }

  @Test func containerWithoutMachineIDSaysSoOnStderr() throws {
    let state = try makeTemporaryDirectory()
    defer { removeTemporaryDirectory(state) }
    let result = try run(["collect", "--root", machineRoot("container"), "--state-dir", state])
    #expect(result.status == 0)
    #expect(result.stderr.contains("no usable /etc/machine-id"))
    let profile = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
    let identifier = try #require(profile["identifier"] as? String)
    #expect(identifier.count == 40 && identifier.allSatisfy(\.isHexDigit))
  }

  @Test func prettyAndNoMetadata() throws {
    let state = try makeTemporaryDirectory()
    defer { removeTemporaryDirectory(state) }
    let result = try run(["collect", "--no-metadata", "--pretty", "--state-dir", state])
    #expect(result.status == 0)
    let lines = result.stdout.split(separator: "\n")
    #expect(lines.count == 4)
    #expect(lines[2] == #"  "version": "1.0""#)
  }

  @Test func locationFromFlagsEnvironmentAndFile() throws {
    let state = try makeTemporaryDirectory()
    defer { removeTemporaryDirectory(state) }
    let flags = try run(["collect", "--no-metadata", "--location", "--latitude", "52.52", "--longitude", "13.405", "--state-dir", state])
    #expect(flags.stdout.hasSuffix(#","location":{"latitude":52.52,"longitude":13.405}}"# + "\n"))
    let env = try run(
      ["collect", "--no-metadata", "--location", "--state-dir", state], environment: ["FR_PROFILE_LOCATION": "-33.8688,151.2093"])
    #expect(env.stdout.contains(#""location":{"latitude":-33.8688,"longitude":151.2093}"#))
    try "# office\n48.8566,2.3522\n".write(toFile: state + "/location", atomically: true, encoding: .utf8)
    let file = try run(["collect", "--no-metadata", "--location", "--state-dir", state])
    #expect(file.stdout.contains(#""location":{"latitude":48.8566,"longitude":2.3522}"#))
    let notAsked = try run(["collect", "--no-metadata", "--state-dir", state], environment: ["FR_PROFILE_LOCATION": "1,2"])
    #expect(!notAsked.stdout.contains("location"))
  }

  @Test func locationAskedButNotConfiguredIsOmittedWithANote() throws {
    let state = try makeTemporaryDirectory()
    defer { removeTemporaryDirectory(state) }
    let result = try run(["collect", "--location", "--state-dir", state])
    #expect(result.status == 0)
    #expect(!result.stdout.contains("\"location\""))
    #expect(result.stderr.contains("no position is configured"))
  }

  @Test(
    "bad input gets its exit code and a one-line error",
    arguments: [
      (["collect", "--latitude", "1"], [:], Int32(64), "--latitude"),
      (["collect", "--location", "--latitude", "1"], [:], 64, "--latitude and --longitude"),
      (["collect", "--root", "/nonexistent/tree"], [:], 66, "/nonexistent/tree"),
      (["collect", "--location"], ["FR_PROFILE_LOCATION": "99,0"], 65, "FR_PROFILE_LOCATION"),
      (["collect", "--location", "--location-file", "/nonexistent/loc"], [:], 66, "/nonexistent/loc"),
      (["collect", "--output", "/nonexistent/dir/p.json"], [:], 73, "/nonexistent/dir/p.json"),
      (["collect", "--pretty", "--compact"], [:], 64, "--pretty"),
    ] as [([String], [String: String], Int32, String)])
  func badInput(arguments: [String], environment: [String: String], status: Int32, mentions: String) throws {
    let state = try makeTemporaryDirectory()
    defer { removeTemporaryDirectory(state) }
    let result = try run(arguments + ["--state-dir", state], environment: environment)
    #expect(result.status == status)
    #expect(result.stderr.contains(mentions))
    #expect(result.stdout.isEmpty)
    #expect(!result.stderr.contains("Fatal error") && !result.stderr.contains("Stack dump"))
  }

  @Test func outputFileIsWrittenAtomically() throws {
    let state = try makeTemporaryDirectory()
    defer { removeTemporaryDirectory(state) }
    try "old".write(toFile: state + "/p.json", atomically: true, encoding: .utf8)
    let result = try run(["collect", "--output", state + "/p.json", "--state-dir", state + "/s"])
    #expect(result.status == 0)
    #expect(result.stdout.isEmpty)
    let written = try String(contentsOfFile: state + "/p.json", encoding: .utf8)
    #expect(written.hasPrefix(#"{"identifier""#))
    #expect(try FileManager.default.contentsOfDirectory(atPath: state).sorted() == ["p.json", "s"])
  }

  @Test func verboseExplainsLocationSource() throws {
    let state = try makeTemporaryDirectory()
    defer { removeTemporaryDirectory(state) }
    let result = try run(["collect", "-v", "--location", "--state-dir", state], environment: ["FR_PROFILE_LOCATION": "1,2"])
    #expect(result.stderr.contains("location from FR_PROFILE_LOCATION"))
  }

  @Test func oversizedProfileWarnsAboutAMsLimit() throws {
    let state = try makeTemporaryDirectory()
    defer { removeTemporaryDirectory(state) }
    let result = try run(["collect", "--user-agent", String(repeating: "x", count: 3100), "--state-dir", state])
    #expect(result.status == 0)
    #expect(result.stderr.contains("above AM's default Maximum Profile Size"))
  }
}

/// Odd /proc, /sys and /etc content drops keys; it never crashes the collector.
@Suite(.timeLimit(.minutes(10))) struct CollectRobustnessTests {
  @Test(arguments: [0, 1, 2, 3, 4])
  func garbageInEveryFileStillGivesAProfile(seed: Int) throws {
    let work = try makeTemporaryDirectory()
    defer { removeTemporaryDirectory(work) }
    let tree = work + "/tree"
    try FileManager.default.copyItem(atPath: machineRoot("laptop"), toPath: tree)
    var generator = SeededGenerator(seed: UInt64(seed))
    let files = FileManager.default.enumerator(atPath: tree)!.compactMap { $0 as? String }
    for file in files {
      let path = tree + "/" + file
      var isDirectory: ObjCBool = false
      guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue else { continue }
      let length = Int.random(in: 0...300, using: &generator)
      var bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
      if seed % 2 == 1 { bytes += Array("MemTotal: 18446744073709551615 kB\nprocessor : x\n0-9223372036854775807\n".utf8) }
      try Data(bytes).write(to: URL(fileURLWithPath: path))
    }
    let result = try run(["collect", "--root", tree, "--state-dir", work + "/s"])
    #expect(result.status == 0)
    let profile = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
    #expect(profile?["identifier"] != nil)
    #expect(!result.stderr.contains("Fatal error"))
  }
}

/// A small deterministic generator (SplitMix64) so failures reproduce.
struct SeededGenerator: RandomNumberGenerator {
  var state: UInt64
  init(seed: UInt64) { state = seed &+ 0x9E37_79B9_7F4A_7C15 }
  mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
}
