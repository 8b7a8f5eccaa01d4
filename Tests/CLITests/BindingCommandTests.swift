import Foundation
import ProfileJSON
import Testing

/// Device binding end to end: the built fr-profile against
/// `BindingServer`, AM's Device Binding and Device Signing Verifier nodes.
@Suite(.serialized, .timeLimit(.minutes(10))) struct BindingCommandTests {
  let password = "s3cret-Passw0rd"

  /// A scratch directory: a state directory, a PIN file, a PAM configuration directory and
  /// a copy of a fixture machine (so tests can change it).
  struct Device {
    let directory: String
    var state: String { directory + "/state" }
    var root: String { directory + "/machine" }
    var pamDirectory: String { directory + "/pam.d" }
    var arguments: [String] { ["--state-dir", state, "--root", root] }
    /// The seams of `fr-profile-seams`, which `run` picks for this environment: PAM services from
    /// `pamDirectory`, app policies evaluated on `root` (fr-profile evaluates them on / whatever
    /// --root says).
    var environment: [String: String] { [pamConfigurationVariable: pamDirectory, "FR_PROFILE_TEST_POLICY_ROOT": root] }

    /// A 0600 file holding `pin` (named by a hash, so no output can show the PIN by its path).
    func pinFile(_ pin: String) throws -> String {
      let path = directory + "/pin-\(pin.utf8.reduce(7) { ($0 &* 31 &+ Int($1)) & 0xFFFF })"
      try (pin + "\n").write(toFile: path, atomically: true, encoding: .utf8)
      chmod(path, 0o600)
      return path
    }

    /// PAM services: `fr-profile` and `fr-profile-biometric` with the given module lines.
    func configurePAM(fallback: String? = "pam_permit.so", biometric: String? = "pam_permit.so") throws {
      try? FileManager.default.createDirectory(atPath: pamDirectory, withIntermediateDirectories: true)
      for (service, module) in [("fr-profile", fallback), ("fr-profile-biometric", biometric)] {
        let path = pamDirectory + "/" + service
        if let module {
          try "auth required \(module)\naccount required pam_permit.so\n".write(toFile: path, atomically: true, encoding: .utf8)
        } else {
          try? FileManager.default.removeItem(atPath: path)
        }
      }
    }

    /// Makes the machine copy look like `fixture` (its DMI and cpuinfo), keeping its machine-id.
    func become(_ fixture: String) throws {
      let source = machineRoot(fixture)
      for relative in ["sys/class/dmi/id", "proc/cpuinfo"] {
        try? FileManager.default.removeItem(atPath: root + "/" + relative)
        try FileManager.default.copyItem(atPath: source + "/" + relative, toPath: root + "/" + relative)
      }
    }
  }

  func withDevice(machine: String = "laptop", _ body: (Device) throws -> Void) throws {
    let directory = try makeTemporaryDirectory("fr-profile-binding")
    defer { removeTemporaryDirectory(directory) }
    let device = Device(directory: directory)
    try FileManager.default.copyItem(atPath: machineRoot(machine), toPath: device.root)
    try device.configurePAM(fallback: nil, biometric: nil)
    try body(device)
  }

  func withServer(_ configure: (BindingServer) -> Void = { _ in }, _ body: (AuthenticateServer, BindingServer) throws -> Void) throws {
    let tree = BindingServer()
    configure(tree)
    var configuration = AuthenticateServer.Configuration()
    configuration.behaviour = .custom(tree)
    let server = try AuthenticateServer(configuration)
    defer { server.stop() }
    try body(server, tree)
  }

  /// `fr-profile journey` on tree `Bind`, `Sign` or `SignUsernameless`, without a terminal
  /// (setsid), so nothing can be asked.
  func journey(
    _ server: AuthenticateServer, _ device: Device, tree: String, user: String = "demo", password: String? = nil,
    _ extra: [String] = [], environment: [String: String] = [:]
  ) throws -> RunResult {
    var arguments = ["journey", "--server", server.url, "--realm", "alpha", "--tree", tree]
    if tree != "SignUsernameless" { arguments += ["--user", user, "--password-stdin"] }
    let result = try run(
      arguments + device.arguments + extra, environment: device.environment.merging(environment) { $1 },
      stdin: tree == "SignUsernameless" ? "" : (password ?? self.password) + "\n",
      prefix: ["/usr/bin/setsid", "-w"])
    expectNoSecrets(result, device)
    return result
  }

  /// No PIN, password or key material in any output.
  func expectNoSecrets(_ result: RunResult, _ device: Device) {
    for secret in [password, "271828", "000000"] {
      #expect(!result.stdout.contains(secret) && !result.stderr.contains(secret))
    }
    let keys = (try? FileManager.default.contentsOfDirectory(atPath: device.state + "/bound-keys")) ?? []
    for name in keys where name.hasSuffix(".json") {
      guard let text = try? String(contentsOfFile: device.state + "/bound-keys/" + name, encoding: .utf8),
        let json = try? JSONParser.parse(Array(text.utf8))
      else { continue }
      for secret in [json["key"]?["d"]?.stringValue, json["key"]?["sealed"]?.stringValue].compactMap({ $0 }) {
        #expect(!result.stdout.contains(secret) && !result.stderr.contains(secret))
      }
    }
  }

  func keyList(_ device: Device) throws -> [JSON] {
    let listed = try run(["keys", "list", "--json", "--state-dir", device.state])
    #expect(listed.status == 0, "\(listed.stderr)")
    expectValid(listed.stdout, schema: "keys-list")
    // The key files themselves (root reads them as their owner's peer).
    for name in (try? FileManager.default.contentsOfDirectory(atPath: device.state + "/bound-keys")) ?? [] where name.hasSuffix(".json") {
      expectValid(try String(contentsOfFile: device.state + "/bound-keys/" + name, encoding: .utf8), schema: "bound-key")
    }
    return try JSONParser.parse(Array(listed.stdout.utf8)).arrayValue ?? []
  }

  // MARK: Bind, then sign

  @Test(arguments: ["NONE", "APPLICATION_PIN", "BIOMETRIC_ALLOW_FALLBACK", "BIOMETRIC_ONLY"])
  func bindThenSign(type: String) throws {
    try withDevice { device in
      try device.configurePAM()
      try withServer({ $0.authenticationType = type }) { server, tree in
        let pin = ["--pin-file", try device.pinFile("271828")]
        let bound = try journey(server, device, tree: "Bind", pin + ["--device-name", "Office ThinkPad"])
        #expect(bound.status == 0, "\(bound.stderr)")
        #expect(bound.stdout == tree.token + "\n")
        let devices = tree.boundDevices("demo")
        #expect(devices.count == 1 && devices.first?.deviceName == "Office ThinkPad")
        #expect(devices.first?.deviceId.isEmpty == false)
        let records = try keyList(device)
        #expect(records.count == 1 && records.first?["authType"]?.stringValue == type)
        #expect(records.first?["kid"]?.stringValue == devices.first?.kid)
        let signed = try journey(server, device, tree: "Sign", pin)
        #expect(signed.status == 0, "\(signed.stderr)")
        #expect(tree.outcomes == ["binding: success", "signing: success"])
      }
    }
  }

  @Test func bindingTheDeviceIdIsTheProfileIdentifier() throws {
    try withDevice { device in
      try withServer { server, tree in
        #expect(try journey(server, device, tree: "Bind").status == 0)
        let identifier = try run(["identifier", "--state-dir", device.state, "--root", device.root])
        #expect(tree.boundDevices("demo").first?.deviceId == identifier.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        // Without --device-name: the profile's platform.deviceName (or the host name).
        #expect(tree.boundDevices("demo").first?.deviceName.isEmpty == false)
      }
    }
  }

  @Test func anApplicationIdTheNodeDoesNotListFails() throws {
    try withDevice { device in
      try withServer { server, tree in
        let result = try journey(server, device, tree: "Bind", ["--app-id", "com.example.other"])
        #expect(result.status == 1)
        #expect(tree.outcomes == ["binding: failure (INVALID_CLAIM iss)"])
      }
    }
  }

  @Test func biometricWithoutAPAMServiceIsUnsupported() throws {
    try withDevice { device in
      try withServer({ $0.authenticationType = "BIOMETRIC_ONLY" }) { server, tree in
        let result = try journey(server, device, tree: "Bind")
        #expect(result.status == 1)
        #expect(result.stderr.contains("answered Unsupported"))
        #expect(tree.outcomes == ["binding: clientError Unsupported"])
        #expect(try keyList(device).isEmpty)
      }
    }
  }

  @Test func attestationIsUnsupported() throws {
    try withDevice { device in
      try withServer({ $0.attestation = true }) { server, tree in
        let result = try journey(server, device, tree: "Bind")
        #expect(result.status == 1)
        #expect(tree.outcomes == ["binding: clientError Unsupported"])
      }
    }
  }

  @Test("an expired interaction: past the callback's timeout, Timeout and no key")
  func slowUserVerificationTimesOut() throws {
    try withDevice { device in
      // The sleep stands for a user slow to verify (a PAM stack that takes 3 s), not a wait.
      try device.configurePAM(fallback: "pam_exec.so /bin/sleep 3")
      try withServer({
        $0.authenticationType = "BIOMETRIC_ALLOW_FALLBACK"
        $0.timeout = 1
      }) { server, tree in
        let result = try journey(server, device, tree: "Bind")
        #expect(result.status == 1)
        #expect(tree.outcomes == ["binding: clientError Timeout"])
        #expect(try keyList(device).isEmpty)
      }
    }
  }

  // MARK: Usernameless signing

  @Test func usernamelessSigningWithZeroOneAndTwoKeys() throws {
    try withDevice { device in
      try withServer { server, tree in
        #expect(try journey(server, device, tree: "SignUsernameless").status == 1)
        #expect(tree.outcomes.last == "signing: clientError ClientNotRegistered")

        #expect(try journey(server, device, tree: "Bind").status == 0)
        #expect(try journey(server, device, tree: "SignUsernameless").status == 0)
        #expect(tree.outcomes.last == "signing: success")

        #expect(try journey(server, device, tree: "Bind", user: "bjensen", password: "0ther-Passw0rd").status == 0)
        let ambiguous = try journey(server, device, tree: "SignUsernameless")
        #expect(ambiguous.status == 1)
        #expect(ambiguous.stderr.contains("--bound-user"))
        #expect(tree.outcomes.last == "signing: clientError Abort")

        let chosen = try journey(server, device, tree: "SignUsernameless", ["--bound-user", "bjensen"])
        #expect(chosen.status == 0, "\(chosen.stderr)")
        #expect(tree.outcomes.last == "signing: success")
        let jws = try #require(tree.jwsReceived.last)
        #expect(BindingServer.parse(jws)?.claims["sub"]?.stringValue == tree.universalId("bjensen"))
      }
    }
  }

  @Test func signingWithoutABindingIsClientNotRegistered() throws {
    try withDevice { device in
      try withServer { server, tree in
        #expect(try journey(server, device, tree: "Bind").status == 0)
        let keys = try keyList(device)
        let kid = try #require(keys.first?["kid"]?.stringValue)
        #expect(try run(["keys", "delete", kid, "--state-dir", device.state]).status == 0)
        #expect(try journey(server, device, tree: "Sign").status == 1)
        #expect(tree.outcomes.last == "signing: clientError ClientNotRegistered")
      }
    }
  }

  @Test func customClaimsAreSignedAndReservedOnesAbort() throws {
    try withDevice { device in
      try withServer { server, tree in
        #expect(try journey(server, device, tree: "Bind").status == 0)
        let signed = try journey(server, device, tree: "Sign", ["--claim", "os=\"linux\"", "--claim", "isCompanyPhone=true"])
        #expect(signed.status == 0)
        let claims = try #require(BindingServer.parse(tree.jwsReceived.last ?? "")?.claims)
        #expect(claims["os"] == "linux" && claims["isCompanyPhone"] == true)
        let reserved = try journey(server, device, tree: "Sign", ["--claim", "sub=\"someone\""])
        #expect(reserved.status == 1)
        #expect(tree.outcomes.last == "signing: clientError Abort")
        let bad = try journey(server, device, tree: "Sign", ["--claim", "os=linux"])
        #expect(bad.status == 64 && bad.stderr.contains("not JSON"))
      }
    }
  }

  // MARK: Wrong PINs under each lock policy

  func bindPIN(_ server: AuthenticateServer, _ device: Device, lock: String) throws {
    let result = try journey(server, device, tree: "Bind", ["--pin-file", try device.pinFile("271828"), "--lock-policy", lock])
    #expect(result.status == 0, "\(result.stderr)")
  }

  func sign(_ server: AuthenticateServer, _ device: Device, pin: String) throws -> RunResult {
    try journey(server, device, tree: "Sign", ["--pin-file", try device.pinFile(pin)])
  }

  @Test func lockPolicyLocksAfterNWrongPINs() throws {
    try withDevice { device in
      try withServer({ $0.authenticationType = "APPLICATION_PIN" }) { server, tree in
        try bindPIN(server, device, lock: "lock:2")
        let first = try sign(server, device, pin: "000000")
        #expect(first.status == 1 && first.stderr.contains("wrong PIN") && first.stderr.contains("1 of 2"))
        #expect(try sign(server, device, pin: "000000").stderr.contains("now locked"))
        let locked = try sign(server, device, pin: "271828")
        #expect(locked.status == 1 && locked.stderr.contains("bind this device again"))
        #expect(Array(tree.outcomes.suffix(3)) == Array(repeating: "signing: clientError Abort", count: 3))
        #expect(try run(["keys", "list", "--state-dir", device.state]).stdout.contains("locked after 2 wrong PINs"))
        // Binding again replaces the locked key.
        try bindPIN(server, device, lock: "lock:2")
        #expect(try sign(server, device, pin: "271828").status == 0)
      }
    }
  }

  @Test func delayPolicyMakesTheNextAttemptWait() throws {
    try withDevice { device in
      try withServer({ $0.authenticationType = "APPLICATION_PIN" }) { server, _ in
        // Through the command: a wrong PIN sets the delay, and an attempt within it is refused
        // unread. The doubling and the wait's end are the clocked unit tests' (PINTests), not
        // wall-clock sleeps here. A 1 s wait can pass before the next process starts on a busy
        // machine, so the record is then given the count twelve wrong PINs leave (a wait of an
        // hour from the real refusal's time): the refusal below cannot depend on scheduling.
        try bindPIN(server, device, lock: "delay")
        #expect(try sign(server, device, pin: "000000").stderr.contains("next attempt in 1 s"))
        let records = try FileManager.default.contentsOfDirectory(atPath: device.state + "/bound-keys").filter { $0.hasSuffix(".json") }
        try #require(records.count == 1)
        let path = device.state + "/bound-keys/" + records[0]
        let record = try String(contentsOfFile: path, encoding: .utf8)
        try #require(record.contains("\"failures\":1,"))
        try record.replacingOccurrences(of: "\"failures\":1,", with: "\"failures\":12,").write(
          toFile: path, atomically: false, encoding: .utf8)
        let early = try sign(server, device, pin: "271828")
        #expect(early.status == 1 && early.stderr.contains("can be tried again in"), "\(early.stderr)")
        #expect(try String(contentsOfFile: path, encoding: .utf8).contains("\"failures\":12,"), "a refused attempt is not counted")
      }
    }
  }

  @Test func silentPolicySendsASignatureAMRejects() throws {
    try withDevice { device in
      try withServer({ $0.authenticationType = "APPLICATION_PIN" }) { server, tree in
        try bindPIN(server, device, lock: "silent")
        let wrong = try sign(server, device, pin: "000000")
        #expect(wrong.status == 1 && !wrong.stderr.contains("wrong PIN"))
        #expect(tree.outcomes.last == "signing: INVALID_SIGNATURE")
        #expect(try sign(server, device, pin: "271828").status == 0)
      }
    }
  }

  @Test func nonePolicyAllowsRetries() throws {
    try withDevice { device in
      try withServer({ $0.authenticationType = "APPLICATION_PIN" }) { server, _ in
        try bindPIN(server, device, lock: "none")
        for _ in 0..<3 { #expect(try sign(server, device, pin: "000000").status == 1) }
        #expect(try sign(server, device, pin: "271828").status == 0)
      }
    }
  }

  @Test func aPINFileOthersCanReadGetsAWarning() throws {
    try withDevice { device in
      try withServer({ $0.authenticationType = "APPLICATION_PIN" }) { server, _ in
        let pin = try device.pinFile("271828")
        chmod(pin, 0o644)
        let result = try journey(server, device, tree: "Bind", ["--pin-file", pin])
        #expect(result.status == 0 && result.stderr.contains("readable by others"))
      }
    }
  }

  @Test func aPINAgainstThePINPolicyIsNotBound() throws {
    try withDevice { device in
      try withServer({ $0.authenticationType = "APPLICATION_PIN" }) { server, tree in
        let result = try journey(server, device, tree: "Bind", ["--pin-file", try device.pinFile("123456")])
        #expect(result.status == 1 && result.stderr.contains("PIN policy"))
        #expect(tree.outcomes == ["binding: clientError Abort"])
        #expect(try keyList(device).isEmpty)
      }
    }
  }

  // MARK: App policies

  @Test("a tampered device breaches deviceTampering: the key locks until the policy holds again")
  func tamperedDeviceLocksTheKey() throws {
    try withDevice { device in
      try withServer { server, tree in
        let bound = try journey(server, device, tree: "Bind", ["--policies", #"{"deviceTampering":{"score":0.3}}"#])
        #expect(bound.status == 0, "\(bound.stderr)")
        #expect(try journey(server, device, tree: "Sign").status == 0)
        try device.become("cloud-vm")  // virtualization evidence: jailBreakScore 0.5
        let breached = try journey(server, device, tree: "Sign")
        #expect(breached.status == 1 && breached.stderr.contains("deviceTampering"))
        #expect(tree.outcomes.last == "signing: clientError Abort")
        let record = try #require(try keyList(device).first)
        #expect(record["locked"] == true && record["lockingPolicy"] == "deviceTampering")
        let kid = try #require(record["kid"]?.stringValue)
        let refused = try run(["keys", "unlock", kid, "--state-dir", device.state], environment: device.environment)
        #expect(refused.status == 1 && refused.stderr.contains("still breached"))
        try device.become("laptop")
        #expect(try run(["keys", "unlock", kid, "--state-dir", device.state], environment: device.environment).status == 0)
        #expect(try journey(server, device, tree: "Sign").status == 0)
      }
    }
  }

  @Test func policyCommandReportsTheFirstBreach() throws {
    try withDevice(machine: "cloud-vm") { device in
      let holds = try run(
        ["policy", "--policies", #"{"deviceTampering":{"score":0.8}}"#] + ["--state-dir", device.state], environment: device.environment)
      #expect(holds.status == 0 && holds.stdout.hasPrefix("deviceTampering\tholds"))
      let breached = try run(
        ["policy", "--json", "--policies", #"{"deviceTampering":{"score":0.3}}"#] + ["--state-dir", device.state],
        environment: device.environment)
      #expect(breached.status == 1 && breached.stderr.contains("deviceTampering is breached"))
      #expect(try JSONParser.parse(Array(breached.stdout.utf8))[0]?["holds"] == false)
      expectValid(breached.stdout, schema: "policy")
      let bad = try run(["policy", "--policies", #"{"rooted":{}}"#] + ["--state-dir", device.state], environment: device.environment)
      #expect(bad.status == 65 && bad.stderr.contains("unknown policy"))
      let biometric = try run(
        ["policy", "--policies", #"{"biometricAvailable":{}}"#] + ["--state-dir", device.state], environment: device.environment)
      #expect(biometric.status == 1)
      try device.configurePAM()
      #expect(
        try run(["policy", "--policies", #"{"biometricAvailable":{}}"#] + ["--state-dir", device.state], environment: device.environment)
          .status == 0)
    }
  }

  // MARK: Copies and attackers

  @Test("a copied state directory signs only where the machine-id matches")
  func copiedStateDirectory() throws {
    try withDevice { device in
      try withServer { server, tree in
        #expect(try journey(server, device, tree: "Bind").status == 0)
        // The copy on another machine (another machine-id): the identifier differs.
        let copy = Device(directory: device.directory + "/copy")
        try FileManager.default.createDirectory(atPath: copy.directory, withIntermediateDirectories: false)
        #expect(try run(["-a", device.state, copy.state], executable: "/bin/cp").status == 0)
        try FileManager.default.copyItem(atPath: machineRoot("raspberry-pi"), toPath: copy.root)
        let elsewhere = try journey(server, copy, tree: "Sign")
        #expect(elsewhere.status == 1 && elsewhere.stderr.contains("copied"))
        #expect(tree.outcomes.last == "signing: clientError ClientNotRegistered")
        // The same copy with the original machine-id is indistinguishable (docs/identity.md says so).
        try FileManager.default.removeItem(atPath: copy.root)
        try FileManager.default.copyItem(atPath: device.root, toPath: copy.root)
        #expect(try journey(server, copy, tree: "Sign").status == 0)
      }
    }
  }

  /// An unsafe key file is never used; it is skipped and named (one bad file must not stop the
  /// other users' keys), and `keys delete` removes it.
  @Test func unsafeKeyFilesAreSkippedAndNamed() throws {
    try withDevice { device in
      try withServer { server, _ in
        #expect(try journey(server, device, tree: "Bind").status == 0)
        let kid = try #require(try keyList(device).first?["kid"]?.stringValue)
        let path = device.state + "/bound-keys/\(kid).json"
        chmod(path, 0o644)
        let open = try journey(server, device, tree: "Sign")
        #expect(open.status == 1 && open.stderr.contains("1 bound key file is damaged and skipped (\(kid))"), "\(open.stderr)")
        let listed = try run(["keys", "list", "--state-dir", device.state])
        #expect(listed.status == 0 && listed.stderr.contains("skipped the bound key \(kid)") && listed.stderr.contains("0644"))
        chmod(path, 0o600)
        try FileManager.default.moveItem(atPath: path, toPath: device.directory + "/moved.json")
        symlink(device.directory + "/moved.json", path)
        let linked = try run(["keys", "list", "--state-dir", device.state])
        #expect(linked.status == 0 && linked.stderr.contains("not a regular file"), "\(linked.stderr)")
        try FileManager.default.removeItem(atPath: path)
        try FileManager.default.moveItem(atPath: device.directory + "/moved.json", toPath: path)
        if geteuid() == 0 {
          chown(path, 65534, 65534)
          let foreign = try run(["keys", "list", "--state-dir", device.state])
          #expect(foreign.status == 0 && foreign.stderr.contains("uid 65534"), "\(foreign.stderr)")
          #expect(try run(["keys", "delete", kid, "--state-dir", device.state]).status == 0)
          #expect(!FileManager.default.fileExists(atPath: path))
        }
      }
    }
  }

  @Test("nobody cannot use or list root's bound keys", .enabled(if: canDropPrivileges, "needs root to run as nobody"))
  func otherUsersAreRefused() throws {
    try withDevice { device in
      try withServer { server, _ in
        #expect(try journey(server, device, tree: "Bind").status == 0)
        chmod(device.directory, 0o755)
        let result = try run(["keys", "list", "--state-dir", device.state], prefix: asNobody)
        #expect(result.status == 77 || result.status == 74, "\(result.stderr)")
        #expect(result.stdout.isEmpty)
      }
    }
  }

  @Test("20 concurrent signings all succeed")
  func concurrentSignings() throws {
    try withDevice { device in
      try withServer { server, tree in
        let bound = try journey(server, device, tree: "Bind")
        #expect(bound.status == 0)
        let results = StatusCollector()
        DispatchQueue.concurrentPerform(iterations: 20) { _ in
          let result = try? journey(server, device, tree: "Sign")
          results.add(result?.status ?? -1)
        }
        #expect(results.values == Array(repeating: 0, count: 20))
        #expect(tree.outcomes.filter { $0 == "signing: success" }.count == 20)
      }
    }
  }

  // MARK: Commands

  @Test func keysListAndDelete() throws {
    try withDevice { device in
      #expect(try run(["keys", "list", "--state-dir", device.state]).stderr.contains("no keys are bound"))
      try withServer { server, _ in
        #expect(try journey(server, device, tree: "Bind").status == 0)
        let records = try keyList(device)
        let record = try #require(records.first)
        #expect(
          record.objectValue?.keys == [
            "kid", "userId", "username", "authType", "createdAt", "store", "locked", "lockingPolicy", "policies",
          ])
        #expect(record["createdAt"]?.stringValue?.hasSuffix("Z") == true && record["store"] == "file")
        let kid = try #require(record["kid"]?.stringValue)
        let table = try run(["keys", "list", "--state-dir", device.state])
        #expect(table.stdout.contains(kid) && table.stdout.contains("demo\tNONE"))
        #expect(try run(["keys", "delete", kid, "--state-dir", device.state]).status == 0)
        #expect(try keyList(device).isEmpty)
        #expect(try run(["keys", "delete", kid, "--state-dir", device.state]).status == 1)
      }
    }
  }

  @Test func keysDeleteWithServerDeletesAMsRecordFirst() throws {
    try withDevice { device in
      try withServer { server, tree in
        #expect(try journey(server, device, tree: "Bind").status == 0)
        let kid = try #require(try keyList(device).first?["kid"]?.stringValue)
        let delete = ["keys", "delete", kid, "--state-dir", device.state, "--server", server.url, "--realm", "alpha", "--token-stdin"]
        // A token AM does not accept: refused, the local key is kept.
        let refused = try run(delete, stdin: "not-a-session\n")
        #expect(refused.status == 1 && refused.stderr.contains("HTTP 401") && refused.stderr.contains("kept"))
        #expect(try keyList(device).count == 1 && tree.boundDevices("demo").count == 1)
        let deleted = try run(delete, stdin: tree.token + "\n")
        #expect(deleted.status == 0, "\(deleted.stderr)")
        #expect(!deleted.stderr.contains(tree.token))
        #expect(try tree.boundDevices("demo").isEmpty && keyList(device).isEmpty)
        #expect(tree.outcomes.last == "delete: \(kid)")
        let request = try #require(server.requests.last)
        #expect(request.method == "DELETE" && request.headers["accept-api-version"] == "resource=1.0")
        #expect(request.target.contains("/users/id%3Ddemo%2Cou%3Duser%2Co%3Dalpha%2Cou%3Dservices%2Cou%3Dam-config/devices/2fa/binding/"))
        // --force deletes locally when AM refuses.
        #expect(try journey(server, device, tree: "Bind").status == 0)
        let second = try #require(try keyList(device).first?["kid"]?.stringValue)
        let forced = try run(
          ["keys", "delete", second, "--state-dir", device.state, "--server", server.url, "--realm", "alpha", "--token-stdin", "--force"],
          stdin: "not-a-session\n")
        #expect(forced.status == 1 && forced.stderr.contains("anyway"))
        #expect(try keyList(device).isEmpty && tree.boundDevices("demo").count == 1)
        #expect(try run(["keys", "delete", second, "--state-dir", device.state, "--server", server.url]).status == 64)
      }
    }
  }

  @Test func callbackAnswersBindingStepsWithoutAsking() throws {
    try withDevice { device in
      let step = cliFixture("callbacks/device-binding.json")
      let result = try run(
        ["callback", step, "--pin-file", try device.pinFile("271828")] + device.arguments, environment: device.environment)
      #expect(result.status == 0, "\(result.stderr)")
      let body = try JSONParser.parse(Array(result.stdout.utf8))
      let inputs = try #require(body["callbacks"]?[0]?["input"]?.arrayValue)
      #expect(inputs[0]["value"]?.stringValue?.split(separator: ".").count == 3)
      #expect(inputs[3]["value"] == "")
      // Without --pin-file there is no one to ask: the client error goes to AM.
      let unasked = try run(["callback", step] + device.arguments, environment: device.environment, prefix: ["/usr/bin/setsid", "-w"])
      #expect(unasked.status == 0)
      let answered = try JSONParser.parse(Array(unasked.stdout.utf8))
      #expect(answered["callbacks"]?[0]?["input"]?[3]?["value"] == "Unsupported")
      #expect(unasked.stderr.contains("--pin-file"))
    }
  }
}

extension JSON {
  fileprivate subscript(index: Int) -> JSON? {
    guard case .array(let items) = self, items.indices.contains(index) else { return nil }
    return items[index]
  }
}

/// Exit statuses collected from concurrent runs, sorted.
final class StatusCollector: @unchecked Sendable {
  private let lock = NSLock()
  private var collected: [Int32] = []
  func add(_ value: Int32) { lock.withLock { collected.append(value) } }
  var values: [Int32] { lock.withLock { collected.sorted() } }
}
