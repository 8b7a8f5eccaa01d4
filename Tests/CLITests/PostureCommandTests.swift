import Foundation
import ProfileJSON
import TestSupport
import Testing

/// `fr-profile posture` through the built binary: on this machine (as root and as nobody), on
/// the fixture layouts, on garbage; and the posture signed into a JWS and judged by the AM script.
@Suite(.timeLimit(.minutes(10))) struct PostureCommandTests {
  static let stableFacts = [
    "distributionId", "distributionVersion", "rootEncrypted", "homeEncrypted", "swapEncrypted", "secureBootEnabled",
    "secureBootSetupMode", "firewallServiceEnabled", "screenLockOnIdle", "passwordQualityEnforced", "selinuxEnforcing",
    "apparmorEnabled",
  ]

  func posture(_ arguments: [String], prefix: [String] = []) throws -> JSON {
    let result = try run(["posture", "--json"] + arguments, prefix: prefix)
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stderr.isEmpty, "\(result.stderr)")
    expectValid(result.stdout, schema: "posture")
    return try JSONParser.parse(Array(result.stdout.utf8))
  }

  /// Every fact of `document` is present, with a value of its kind and a reason.
  func expectEveryFactExplained(_ document: JSON) {
    let stable = document["stable"]?.objectValue
    #expect(stable?.members.map(\.key) == Self.stableFacts)
    let volatile = document["volatile"]?.objectValue
    #expect(volatile?.members.map(\.key) == ["kernelRelease", "daysSincePackageChange"])
    for (name, fact) in (stable?.members ?? []) + (volatile?.members ?? []) {
      #expect((fact["reason"]?.stringValue ?? "").count > 10, "\(name) has no reason")
      #expect(fact["value"] != nil, "\(name) has no value")
    }
  }

  @Test func thisMachinesPostureIsSchemaValidAndExplained() throws {
    let document = try posture([])
    expectEveryFactExplained(document)
    let release = try String(contentsOfFile: "/proc/sys/kernel/osrelease", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
    #expect(document["volatile"]?["kernelRelease"]?["value"]?.stringValue == release)
  }

  @Test(.enabled(if: canDropPrivileges, "needs root to run as nobody"))
  func nobodyReadsTheSameFactsWithoutRoot() throws {
    let asRoot = try posture([])
    let asNobody = try posture([], prefix: asNobody)
    expectEveryFactExplained(asNobody)
    // What depends on who asks: the screen lock (the user's own session), and AppArmor's profile
    // list (root only). Everything else must be readable without root.
    for name in Self.stableFacts where name != "screenLockOnIdle" && name != "apparmorEnabled" {
      #expect(asNobody["stable"]?[name]?["value"] == asRoot["stable"]?[name]?["value"], "\(name)")
      #expect(asNobody["stable"]?[name]?["reason"] == asRoot["stable"]?[name]?["reason"], "\(name)")
    }
  }

  @Test func textByDefaultWithEveryFactAndItsReason() throws {
    let result = try run(["posture", "--root", postureFixture("lvm-on-luks"), "--user", "sam"])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stdout.hasPrefix("stable\n  distributionId"))
    for name in Self.stableFacts { #expect(result.stdout.contains("\n  \(name) "), "\(name)") }
    #expect(result.stdout.contains("  rootEncrypted            true\n"))
    #expect(result.stdout.contains("  screenLockOnIdle         false\n"))
    #expect(result.stdout.contains("Autolock=false"))
    let pretty = try run(["posture", "--pretty"])
    #expect(pretty.status == 64 && pretty.stderr.contains("add --json"))
  }

  @Test func fixtureLayoutsThroughTheBinary() throws {
    let luks = try posture(["--root", postureFixture("luks"), "--user", "alex"])
    #expect(luks["stable"]?["rootEncrypted"]?["value"] == true)
    #expect(luks["stable"]?["screenLockOnIdle"]?["lockAfterSeconds"] == 300)
    let zfs = try posture(["--root", postureFixture("zfs"), "--user", "1000"])
    #expect(zfs["stable"]?["rootEncrypted"]?["value"] == .null)
    let unknownUser = try run(["posture", "--root", postureFixture("zfs"), "--user", "nosuchuser"])
    #expect(unknownUser.status == 66 && unknownUser.stderr.contains("no such user"))
  }

  /// The files only posture reads: the profile must not change with them, so collect never opens
  /// one (strace sees every path a process names); posture itself, the control, opens them all.
  @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/strace"), "needs strace"))
  func collectNeverReadsPosturesFiles() throws {
    let directory = try makeTemporaryDirectory("fr-profile-strace")
    defer { removeTemporaryDirectory(directory) }
    let postureOnly = ["/proc/self/mountinfo", "/proc/swaps", "/etc/pam.d/passwd", "/run/systemd/sessions", "/var/lib/dpkg/status"]
    func paths(_ arguments: [String]) throws -> String {
      let trace = directory + "/trace-\(arguments[0])"
      let result = try run(
        arguments, environment: ["FR_PROFILE_HOME": directory + "/state"],
        prefix: ["/usr/bin/strace", "-f", "-qq", "-e", "trace=%file", "-o", trace])
      #expect(result.status == 0, "\(arguments): \(result.stderr)")
      return try String(contentsOfFile: trace, encoding: .utf8)
    }
    let collected = try paths(["collect", "--compact"])
    #expect(collected.contains("/proc/meminfo"), "strace saw nothing: \(collected.prefix(300))")
    for path in postureOnly { #expect(!collected.contains("\"\(path)"), "collect opened \(path)") }
    let posture = try paths(["posture", "--json"])
    for path in postureOnly { #expect(posture.contains("\"\(path)"), "posture did not open \(path)") }
  }

  /// A FIFO planted as the user's dconf database: the run ends promptly, the screen lock unknown.
  @Test func aFIFOInTheUsersHomeDoesNotHangPosture() throws {
    let tree = try TemporaryTree()
    defer { tree.remove() }
    try tree.write("/etc/passwd", "kim:x:1001:1001::/home/kim:/bin/sh\n")
    try tree.write("/run/systemd/sessions/6", "UID=1001\nTYPE=wayland\nDESKTOP=GNOME\n")
    try tree.makeDirectory("/home/kim/.config/dconf")
    #expect(mkfifo(tree.root + "/home/kim/.config/dconf/user", 0o644) == 0)
    let result = try run(["posture", "--json", "--root", tree.root, "--user", "kim"], timeout: 30)
    #expect(!result.timedOut && result.status == 0, "\(result.stderr)")
    let lock = (try? JSONParser.parse(Array(result.stdout.utf8)))?["stable"]?["screenLockOnIdle"]
    #expect(lock?["value"] == .null)
    #expect(lock?["reason"]?.stringValue?.contains("/home/kim/.config/dconf/user is a FIFO") == true, "\(result.stdout)")
  }

  @Test func garbageInEveryFileIsUnknownNotACrash() throws {
    let tree = try TemporaryTree()
    defer { tree.remove() }
    for path in [
      "/proc/self/mountinfo", "/proc/swaps", "/etc/os-release", "/etc/passwd", "/sys/fs/selinux/enforce", "/etc/pam.d/passwd",
      "/sys/kernel/security/lsm", "/proc/sys/kernel/osrelease", "/etc/ufw/ufw.conf",
    ] {
      try tree.write(path, bytes: [0xFF, 0x00, 0x1B, 0x5B, 0x32, 0x4A, 0x0A, 0xC3])
    }
    try tree.write("/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c", bytes: [6, 0])
    let document = try posture(["--root", tree.root])
    expectEveryFactExplained(document)
    #expect(document["stable"]?["rootEncrypted"]?["value"] == .null)
    #expect(document["stable"]?["secureBootEnabled"]?["value"] == .null)
    #expect(document["stable"]?["selinuxEnforcing"]?["value"] == .null)
    let text = try run(["posture", "--root", tree.root])
    #expect(text.status == 0)
    #expect(!text.stdout.contains("\u{1B}"), "a file's escape sequence reached the terminal")
  }
}

/// Tests/PostureTests/Fixtures/<name>.
func postureFixture(_ name: String) -> String {
  URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("PostureTests/Fixtures/\(name)").path
}

extension BindingCommandTests {
  /// `--posture` signs this machine's posture (not --root's) into the JWS the test AM verifies,
  /// and am/fr-posture.js decides on it as a Scripted Decision node after Device Signing Verifier.
  @Test func postureIsSignedAndTheAMScriptDecidesOnIt() throws {
    try withDevice { device in
      try withServer { server, tree in
        #expect(try journey(server, device, tree: "Bind").status == 0)
        let signed = try journey(server, device, tree: "Sign", ["--posture"])
        #expect(signed.status == 0, "\(signed.stderr)")
        #expect(tree.outcomes.last == "signing: success")
        let jws = try #require(tree.jwsReceived.last)
        let posture = try #require(BindingServer.parse(jws)?.claims["posture"])
        expectValid(JSONWriter.compact(posture), schema: "posture")
        let release = try String(contentsOfFile: "/proc/sys/kernel/osrelease", encoding: .utf8)
          .trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(posture["volatile"]?["kernelRelease"]?["value"]?.stringValue == release, "the posture is not this machine's")

        let here = posture["stable"]?["rootEncrypted"]?["value"]
        let strict = try AMScript.run(AMScript.postureScript, context: ["transientState": ["DeviceSigningVerifierNode.JWT": .string(jws)]])
        #expect(strict["outcome"] == (here == true ? "true" : "false"))
        if here != true {
          #expect(strict["sharedState"]?["frPosture.refused"]?.stringValue?.hasPrefix("rootEncrypted is ") == true)
        }
        // A policy this machine meets: its SELinux state as it is, any package age.
        let selinux = posture["stable"]?["selinuxEnforcing"]?["value"]
        let policy: JSON = [
          selinux == true ? "require" : "forbid": ["selinuxEnforcing"], "maxDaysSincePackageChange": 100000, "allowUnknown": [],
        ]
        let met = try AMScript.run(
          AMScript.postureScript, context: ["transientState": ["DeviceSigningVerifierNode.JWT": .string(jws)], "posturePolicy": policy])
        #expect(met["outcome"] == "true", "\(met)")
        let kept = try JSONParser.parse(Array((met["sharedState"]?["frPosture"]?.stringValue ?? "").utf8))
        #expect(kept == posture)

        // Without --posture the script refuses, and naming the claim twice is a usage error.
        #expect(try journey(server, device, tree: "Sign").status == 0)
        let bare = try AMScript.run(
          AMScript.postureScript,
          context: ["transientState": ["DeviceSigningVerifierNode.JWT": .string(tree.jwsReceived.last ?? "")], "posturePolicy": policy])
        #expect(bare["outcome"] == "false")
        #expect(bare["sharedState"]?["frPosture.refused"]?.stringValue?.contains("no posture claim") == true)
        let twice = try journey(server, device, tree: "Sign", ["--posture", "--claim", "posture={}"])
        #expect(twice.status == 64 && twice.stderr.contains("--posture"))
      }
    }
  }
}

/// am/fr-posture.js on JWSs it must refuse without a stack overflow or a pass.
@Suite(.timeLimit(.minutes(10))) struct PostureScriptTests {
  func jws(claims: String) -> String {
    func encode(_ text: String) -> String {
      Data(text.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        .replacingOccurrences(of: "=", with: "")
    }
    return encode("{\"alg\":\"ES256\"}") + "." + encode(claims) + ".c2ln"
  }

  func outcome(_ transient: JSON) throws -> (String?, String?) {
    let result = try AMScript.run(AMScript.postureScript, context: ["transientState": transient])
    return (result["outcome"]?.stringValue, result["sharedState"]?["frPosture.refused"]?.stringValue)
  }

  @Test func refusesWithoutAJWS() throws {
    let (outcome, reason) = try outcome([:])
    #expect(outcome == "false" && reason?.contains("no JWS") == true)
  }

  @Test func refusesDeepNestingAndUnknownFacts() throws {
    let deep = String(repeating: "[", count: 5000)
    let (deepOutcome, deepReason) = try outcome(["DeviceSigningVerifierNode.JWT": .string(jws(claims: "{\"posture\":\(deep)}"))])
    #expect(deepOutcome == "false" && deepReason?.contains("nested deeper") == true)
    let unknown = """
      {"posture":{"v":1,"stable":{"rootEncrypted":{"value":null,"reason":"ZFS"}},"volatile":{}}}
      """
    let (unknownOutcome, unknownReason) = try outcome(["DeviceSigningVerifierNode.JWT": .string(jws(claims: unknown))])
    #expect(unknownOutcome == "false" && unknownReason?.hasPrefix("rootEncrypted is null") == true)
  }
}
