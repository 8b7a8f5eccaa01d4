import Foundation
import ProfileJSON
import SoftFIDO2
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// `fr-profile journey` through AM's WebAuthn nodes with a security key: the software CTAP2 keys
/// of the test executable (Tests/SoftFIDO2, plugged in through libfido2's own device seam, so the
/// real libfido2 1.12 drives them) against a fake AM (Support/webauthn-am.py) whose every
/// registration and assertion python3-fido2's Fido2Server judges.
@Suite(.timeLimit(.minutes(10))) struct WebAuthnJourneyTests {
  static let script = cliFixture("../Support/webauthn-am.py")
  static let origin = "https://localhost:8443"

  /// A fake AM run with `arguments`, its record and state files in `directory`.
  struct AM {
    let server: OAuthAM
    let record: String

    init(_ arguments: [String], directory: String) throws {
      record = directory + "/record.jsonl"
      server = try OAuthAM(
        ["--port-file", directory + "/port", "--record", record, "--state", directory + "/am-state.json"] + arguments,
        script: WebAuthnJourneyTests.script)
    }

    /// Every judged outcome so far, oldest first.
    func judged() throws -> [JSON] {
      guard let text = try? String(contentsOfFile: record, encoding: .utf8) else { return [] }
      return try text.split(separator: "\n").map { try JSONParser.parse(Array($0.utf8)) }
    }
  }

  /// A software key's state file in `directory`.
  func key(
    _ directory: String, _ name: String = "key", attestation: SoftKeyState.Attestation = .packed, pin: String? = nil,
    touch: SoftKeyState.Touch = .immediate
  ) throws -> String {
    let file = directory + "/\(name).json"
    try SoftKeyState.create(at: file, product: "SoftKey \(name)", path: "softkey:\(name)", attestation: attestation, pin: pin, touch: touch)
    return file
  }

  /// `fr-profile journey` (the seams executable) against `am` with the keys plugged in.
  func journey(_ am: AM, keys: [String], directory: String, _ extra: [String] = [], stdin: String? = nil) throws -> RunResult {
    try run(
      [
        "journey", "--server", am.server.url, "--realm", "alpha", "--tree", "WebAuthn", "--webauthn-origin", Self.origin, "--state-dir",
        directory + "/state",
      ]
        + extra, environment: ["FR_PROFILE_TEST_SECURITY_KEYS": keys.joined(separator: ":")], stdin: stdin)
  }

  func withDirectory(_ body: (String) throws -> Void) throws {
    let directory = try makeTemporaryDirectory("fr-profile-webauthn")
    defer { removeTemporaryDirectory(directory) }
    try body(directory)
  }

  @Test(
    "registration then authentication in one journey, for AM 7's metadata and AM 6.5's scripts, packed and none, JSON responses: Fido2Server accepts each"
  )
  func registerThenAuthenticate() throws {
    let cases: [([String], SoftKeyState.Attestation, String)] = [
      (["--shape", "am7", "--attestation", "direct"], .packed, "packed-self"),
      (["--shape", "am7", "--json-response"], .packed, "none"),
      (["--shape", "am65", "--attestation", "direct"], .packed, "packed-self"),
      (["--shape", "am65", "--attestation", "direct"], .none, "none"),
    ]
    for (arguments, attestation, judgedAs) in cases {
      try withDirectory { directory in
        let am = try AM(arguments, directory: directory)
        defer { am.server.stop() }
        let result = try journey(
          am, keys: [try key(directory, attestation: attestation)], directory: directory,
          ["--user", "demo", "--webauthn-device-name", "work key"])
        #expect(result.status == 0 && result.stdout.hasPrefix("AQIC5wM2LY4Sfcz-webauthn-am-token"), "\(arguments): \(result.stderr)")
        #expect(result.stderr.contains("Touch your security key (SoftKey key) to register with localhost."), "\(result.stderr)")
        #expect(result.stderr.contains("Touch your security key (SoftKey key) to sign in to localhost."), "\(result.stderr)")
        let judged = try am.judged()
        #expect(judged.map { $0["verdict"]?.stringValue } == ["ok", "ok"], "\(arguments): \(judged)")
        #expect(
          judged.first?["attestation"]?.stringValue == judgedAs && judged.first?["deviceName"]?.stringValue == "work key", "\(judged)")
        #expect(judged.first?["json"]?.boolValue == arguments.contains("--json-response"), "\(judged)")
        #expect(judged.first?["credentialId"] == judged.last?["credentialId"], "\(judged)")
      }
    }
  }

  @Test("a later journey signs in with the allow list AM sends, the counter rising each time; a wrong origin is refused by AM")
  func counterAndOrigin() throws {
    try withDirectory { directory in
      let keyFile = try key(directory)
      let register = try AM(["--tree", "register"], directory: directory)
      #expect(try journey(register, keys: [keyFile], directory: directory, ["--user", "demo"]).status == 0)
      register.server.stop()
      var counts: [Double] = []
      for _ in 0..<2 {
        let am = try AM(["--tree", "authenticate"], directory: directory)
        let result = try journey(am, keys: [keyFile], directory: directory, ["--user", "demo"])
        am.server.stop()
        #expect(result.status == 0, "\(result.stderr)")
        counts.append(try am.judged().last?["signCount"]?.numberValue ?? -1)
      }
      #expect(counts.count == 2 && counts[0] > 0 && counts[1] > counts[0], "\(counts)")
      #expect(try SoftKeyState.load(from: keyFile).counter == UInt32(counts[1]))
      // AM's node trusts only its origins: the key signs for localhost, AM refuses the origin.
      let am = try AM(["--tree", "authenticate"], directory: directory)
      defer { am.server.stop() }
      let foreign = try journey(
        am, keys: [keyFile], directory: directory, ["--user", "demo", "--webauthn-origin", "https://login.localhost"])
      #expect(foreign.status == 1 && foreign.stderr.contains("authentication failed"), "\(foreign.stderr)")
      let refused = try am.judged()
      #expect(refused.last?["reason"]?.stringValue?.hasPrefix("origin:") == true, "\(refused)")
    }
  }

  @Test(
    "usernameless: a resident key registered, then a sign-in with no user name and an empty allow list, the user handle naming the user")
  func usernameless() throws {
    try withDirectory { directory in
      let keyFile = try key(directory)
      let register = try AM(["--tree", "register", "--resident-key", "required"], directory: directory)
      #expect(try journey(register, keys: [keyFile], directory: directory, ["--user", "demo"]).status == 0)
      register.server.stop()
      #expect(try SoftKeyState.load(from: keyFile).credentials.first?.resident == true)
      let am = try AM(["--tree", "usernameless"], directory: directory)
      defer { am.server.stop() }
      let result = try journey(am, keys: [keyFile], directory: directory)
      #expect(result.status == 0, "\(result.stderr)")
      let judged = try #require(try am.judged().last)
      #expect(judged["verdict"]?.stringValue == "ok" && judged["user"]?.stringValue == "demo", "\(judged)")
      #expect(judged["userHandle"]?.stringValue?.isEmpty == false, "\(judged)")
    }
  }

  @Test("a key already registered: InvalidStateError is posted for the node's Error outcome, as the SDKs post a DOMException")
  func excluded() throws {
    try withDirectory { directory in
      let keyFile = try key(directory)
      let first = try AM(["--tree", "register"], directory: directory)
      #expect(try journey(first, keys: [keyFile], directory: directory, ["--user", "demo"]).status == 0)
      first.server.stop()
      let again = try AM(["--tree", "register", "--exclude-registered"], directory: directory)
      defer { again.server.stop() }
      let result = try journey(again, keys: [keyFile], directory: directory, ["--user", "demo"])
      #expect(result.status == 1 && result.stderr.contains("InvalidStateError"), "\(result.stderr)")
      let judged = try #require(try again.judged().last)
      #expect(judged["outcome"]?.stringValue == "error" && judged["domException"]?.stringValue == "InvalidStateError", "\(judged)")
    }
  }

  @Test(
    "several keys: the person touches the one to use (or --security-key names it); user verification required of a key without a PIN stops")
  func severalKeys() throws {
    try withDirectory { directory in
      let first = try key(directory, "a")
      let second = try key(directory, "b")
      let am = try AM(["--tree", "register"], directory: directory)
      defer { am.server.stop() }
      let touched = try journey(am, keys: [first, second], directory: directory, ["--user", "demo"])
      #expect(touched.status == 0, "\(touched.stderr)")
      #expect(
        touched.stderr.contains("Several security keys are plugged in: touch the key to use (SoftKey a, SoftKey b)."), "\(touched.stderr)")
      // Both blink; the software keys answer the touch at once, and the first one polled wins.
      #expect(try SoftKeyState.load(from: first).credentials.count == 1 && SoftKeyState.load(from: second).credentials.isEmpty)
      let named = try journey(am, keys: [first, second], directory: directory, ["--user", "demo", "--security-key", "softkey:b"])
      #expect(named.status == 0 && !named.stderr.contains("Several"), "\(named.stderr)")
      #expect(try SoftKeyState.load(from: second).credentials.count == 1)
      #expect(try am.judged().map { $0["verdict"]?.stringValue } == ["ok", "ok"])
    }
    try withDirectory { directory in
      let am = try AM(["--tree", "register", "--user-verification", "required"], directory: directory)
      defer { am.server.stop() }
      let result = try journey(am, keys: [try key(directory)], directory: directory, ["--user", "demo"])
      #expect(
        result.status == 2 && result.stderr.contains("requires user verification") && result.stderr.contains("set a PIN"),
        "\(result.stderr)")
      #expect(try am.judged().isEmpty)
    }
  }

  @Test("no key plugged in: \"Insert your security key\", then exit 2 with nothing posted; libfido2 missing: exit 69 naming libfido2-1")
  func noKeyNoLibrary() throws {
    try withDirectory { directory in
      let am = try AM([], directory: directory)
      defer { am.server.stop() }
      let result = try journey(am, keys: [], directory: directory, ["--user", "demo", "--webauthn-timeout", "1"])
      #expect(result.status == 2 && result.stderr.contains("Insert your security key."), "\(result.stderr)")
      #expect(result.stderr.contains("Nothing was sent to AM"), "\(result.stderr)")
      try Data("not a library".utf8).write(to: URL(fileURLWithPath: directory + "/libfido2.so.1"))
      let missing = try run(
        [
          "journey", "--server", am.server.url, "--realm", "alpha", "--tree", "WebAuthn", "--user", "demo", "--webauthn-origin",
          Self.origin, "--state-dir",
          directory + "/state",
        ],
        environment: ["LD_LIBRARY_PATH": directory])
      #expect(
        missing.status == 69 && missing.stderr.contains("libfido2-1") && missing.stderr.contains("libfido2.so.1"), "\(missing.stderr)")
      #expect(try am.judged().isEmpty)
    }
  }

  @Test("a key that fails (CTAP1_ERR_OTHER): exit 1 quoting libfido2's fido_strerr, nothing posted")
  func brokenKey() throws {
    try withDirectory { directory in
      let keyFile = try key(directory)
      var state = try SoftKeyState.load(from: keyFile)
      state.failWith = 0x7F
      try state.save(to: keyFile)
      let am = try AM(["--tree", "register"], directory: directory)
      defer { am.server.stop() }
      let result = try journey(am, keys: [keyFile], directory: directory, ["--user", "demo"])
      #expect(result.status == 1 && result.stderr.contains("the security key (SoftKey key) failed: FIDO_ERR_"), "\(result.stderr)")
      #expect(result.stderr.contains("(127)") && result.stderr.contains("Nothing was sent to AM"), "\(result.stderr)")
      #expect(try am.judged().isEmpty)
    }
  }

  @Test("a key nobody touches: after the node's wait ERROR::NotAllowedError is posted, and the tree's Error outcome decides")
  func untouched() throws {
    try withDirectory { directory in
      let am = try AM(["--tree", "register"], directory: directory)
      defer { am.server.stop() }
      let result = try journey(
        am, keys: [try key(directory, touch: .never)], directory: directory, ["--user", "demo", "--webauthn-timeout", "2"])
      #expect(result.status == 1, "\(result.stderr)")
      let judged = try #require(try am.judged().last)
      #expect(judged["outcome"]?.stringValue == "error" && judged["domException"]?.stringValue == "NotAllowedError", "\(judged)")
    }
  }

  /// `arguments` of the seams executable through the pseudo-terminal driver with `steps`.
  func typed(_ arguments: [String], keys: [String], steps: [JSON]) throws -> (screen: String, status: Int32, failed: String?) {
    let result = try run(
      [cliFixture("../Support/pty-drive.py"), JSONWriter.compact(.array(steps)), frProfileSeamsPath] + arguments,
      environment: ["TERM": "dumb", "PATH": "/usr/bin:/bin", "FR_PROFILE_TEST_SECURITY_KEYS": keys.joined(separator: ":")],
      executable: "/usr/bin/python3")
    let json = try JSONParser.parse(Array(result.stdout.utf8))
    return (
      json["screen"]?.stringValue ?? "", Int32(json["status"]?.numberValue ?? -99),
      json["failed"].flatMap { $0 == .null ? nil : JSONWriter.compact($0) }
    )
  }

  @Test(
    "a key with a PIN: asked without echo at the terminal, a wrong one asked again with the tries left; --key-pin-stdin without a terminal")
  func pin() throws {
    try withDirectory { directory in
      let keyFile = try key(directory, pin: "1234")
      let am = try AM([], directory: directory)
      defer { am.server.stop() }
      let arguments = [
        "journey", "--server", am.server.url, "--realm", "alpha", "--tree", "WebAuthn", "--webauthn-origin", Self.origin, "--state-dir",
        directory + "/state", "--user", "demo",
      ]
      let session = try typed(
        arguments, keys: [keyFile],
        steps: [
          ["expect": "PIN for your security key (SoftKey key): "], ["echo": true], ["send": "0000\r"],
          ["expect": "Wrong PIN: 7 tries left."],
          ["expect": "PIN for your security key"], ["send": "1234\r"], ["expect": "PIN for your security key"], ["send": "1234\r"],
        ])
      #expect(session.failed == nil && session.status == 0, "\(session.screen)")
      #expect(!session.screen.contains("1234") && !session.screen.contains("0000"), "\(session.screen)")
      let verified = try am.judged()
      #expect(verified.map { $0["userVerified"]?.boolValue } == [true, true], "\(verified)")
      // Without a terminal: the PIN on stdin; a wrong one stops before anything is posted.
      let piped = try journey(am, keys: [keyFile], directory: directory, ["--user", "demo", "--key-pin-stdin"], stdin: "1234\n")
      #expect(piped.status == 0, "\(piped.stderr)")
      let wrong = try journey(am, keys: [keyFile], directory: directory, ["--user", "demo", "--key-pin-stdin"], stdin: "9999\n")
      #expect(wrong.status == 1 && wrong.stderr.contains("tries left") && !wrong.stderr.contains("9999"), "\(wrong.stderr)")
      #expect(try am.judged().count == 4)
      let conflicting = try journey(am, keys: [keyFile], directory: directory, ["--user", "demo", "--key-pin-stdin", "--password-stdin"])
      #expect(conflicting.status == 64, "\(conflicting.stderr)")
    }
  }

  @Test("Ctrl-C while the key waits for a touch cancels its request and exits 130 with nothing posted")
  func interrupted() throws {
    try withDirectory { directory in
      let am = try AM(["--tree", "register"], directory: directory)
      defer { am.server.stop() }
      let session = try typed(
        [
          "journey", "--server", am.server.url, "--realm", "alpha", "--tree", "WebAuthn", "--webauthn-origin", Self.origin, "--state-dir",
          directory + "/state", "--user", "demo",
        ], keys: [try key(directory, touch: .never)],
        steps: [["expect": "Touch your security key"], ["send": "\u{3}"]])
      #expect(session.failed == nil && session.status == 130, "\(session.status): \(session.screen)")
      #expect(session.screen.contains("cancelled at the security key"), "\(session.screen)")
      #expect(try am.judged().isEmpty)
    }
  }

  @Test("the fake AM's own self-test: an independent Python authenticator, tampered signatures and stale counters refused")
  func fakeAMSelfTest() throws {
    let result = try run([cliFixture("../Support/webauthn-am-selftest.py")], executable: "/usr/bin/python3", timeout: 120)
    #expect(result.status == 0, "\(result.stdout.suffix(2000)) \(result.stderr.suffix(2000))")
  }
}
