import Foundation
import ProfileJSON
import Synchronization
import TestSupport
import Testing

/// `pam_frprofile.so` as a Linux sign-in runs it: pamtester with a PAM service of the test's own
/// (pam_wrapper, so /etc/pam.d is not touched), in a private mount namespace whose /etc/passwd
/// holds the test's user (the real one is not touched either), the module starting the release
/// helper against a loopback AM tree. Serialized: pam_wrapper copies each run's service
/// directory to /tmp/pam.<letter>, and two runs at once were seen to take each other's.
@Suite(.serialized, .timeLimit(.minutes(10)))
struct SigninPAMTests {
  typealias C = NodeTree
  static let user = "frsignin"
  static let password = "s3cret-Passw0rd"

  static let login = [EnterpriseJourneyTests.name("User Name"), EnterpriseJourneyTests.passwordCallback("Password")]

  /// The login page: the PAM user and the password go on to `next`, anything else fails.
  static func loginNode(then next: NodeTree.Next = .success) -> NodeTree.Node {
    NodeTree.Node(callbacks: login) { answers, _ in
      answers.text("NameCallback") == user && answers.text("PasswordCallback") == password ? next : .failure("Login failure")
    }
  }

  /// A sign-in set-up in a temporary directory under /tmp (root's sticky directory): the
  /// configuration, the PAM service, /etc/passwd with the test user.
  struct Setup {
    let directory: String
    /// AM's base URL.
    let serverURL: String
    var config: String { directory + "/signin.json" }

    init(directory: String, server: AuthenticateServer) { self.init(directory: directory, serverURL: server.url) }

    init(directory: String, serverURL: String) {
      self.directory = directory
      self.serverURL = serverURL
    }

    func writeConfig(_ extra: [String: JSON] = [:], mode: mode_t = 0o600) throws {
      var object: JSONObject = [
        "server": .string(serverURL), "realm": "alpha", "tree": "Login", "stateDirectory": .string(directory + "/state"),
        "timeoutSeconds": 30,
      ]
      for (key, value) in extra { object[key] = value }
      unlink(config)  // a new file: root's, whatever the last test made of the old one
      let text = JSONWriter.pretty(.object(object)) + "\n"
      if !extra.keys.contains("sever") { expectValid(text, schema: "signin") }
      try text.write(toFile: config, atomically: false, encoding: .utf8)
      chmod(config, mode)
    }

    /// The PAM service's lines: `MODULE`, `CONFIG` and `HELPER` replaced, and `auth required
    /// MODULE` given the configuration and the helper.
    func writeStack(_ stack: String) throws {
      let lines = stack.replacingOccurrences(of: "auth required MODULE", with: "auth required MODULE config=CONFIG helper=HELPER")
        .replacingOccurrences(of: "MODULE", with: SigninPAMTests.module).replacingOccurrences(of: "CONFIG", with: config)
        .replacingOccurrences(of: "HELPER", with: frProfilePath)
      try (lines + "\n").write(toFile: directory + "/pam.d/frprofile-test", atomically: false, encoding: .utf8)
    }

    /// pamtester's run of `operations` for `user`, `stdin` answering its prompts.
    func pamtester(
      user: String = SigninPAMTests.user, stdin: String, operations: [String] = ["authenticate"], items: [String] = [],
      environment: [String] = []
    ) throws -> RunResult {
      let script = """
        mount --bind "$1/passwd" /etc/passwd && mount --bind "$1/group" /etc/group || exit 99
        dir=$1; callers=$2; shift 2
        exec env -i $callers PATH=/usr/bin:/bin LD_PRELOAD=libpam_wrapper.so PAM_WRAPPER=1 PAM_WRAPPER_DEBUGLEVEL=2 PAM_WRAPPER_SERVICE_DIR="$dir/pam.d" \
          pamtester -v "$@"
        """
      return try run(
        ["--mount", "--propagation", "private", "/bin/sh", "-c", script, "sh", directory, environment.joined(separator: " ")]
          + items.map { "-I" + $0 } + [
            "frprofile-test", user,
          ]
          + operations, stdin: stdin, executable: "/usr/bin/unshare")
    }
  }

  /// pamtester at a terminal (pty-drive.py answering `steps`, the screen its stdout and stderr
  /// together), in the set-up's namespace: what pty-drive.py prints.
  func pamtesterAtTerminal(_ setup: Setup, user: String = Self.user, steps: [JSON], operations: [String] = ["authenticate"]) throws
    -> JSON
  {
    let script = """
      mount --bind "$1/passwd" /etc/passwd && mount --bind "$1/group" /etc/group || exit 99
      dir=$1; drive=$2; steps=$3; user=$4; shift 4
      exec env -i PATH=/usr/bin:/bin TERM=dumb /usr/bin/python3 "$drive" "$steps" /usr/bin/env LD_PRELOAD=libpam_wrapper.so PAM_WRAPPER=1 \\
        PAM_WRAPPER_SERVICE_DIR="$dir/pam.d" /usr/bin/pamtester frprofile-test "$user" "$@"
      """
    let result = try run(
      [
        "--mount", "--propagation", "private", "/bin/sh", "-c", script, "sh", setup.directory, cliFixture("../Support/pty-drive.py"),
        JSONWriter.compact(.array(steps)), user,
      ] + operations, executable: "/usr/bin/unshare")
    return try JSONParser.parse(Array(result.stdout.utf8))
  }

  /// The module's path, as a stack line names it.
  static let module = productsDirectory + "/pam_frprofile.so"

  /// `stack`: the PAM service's lines, `MODULE` and `CONFIG` replaced (default: the module
  /// required for auth and account).
  func withSignin(
    _ nodes: [String: NodeTree.Node], stack: String = "auth required MODULE\naccount required MODULE",
    _ body: (Setup, NodeTree) throws -> Void
  ) throws {
    let tree = NodeTree(nodes: nodes)
    try withSignin(custom: tree, users: [Self.user], stack: stack) { setup in try body(setup, tree) }
  }

  /// A sign-in set-up against `custom` (a loopback AM's tree), `users` added to the namespace's
  /// /etc/passwd.
  func withSignin(
    custom: any CustomTree, users: [String], stack: String = "auth required MODULE\naccount required MODULE",
    _ body: (Setup) throws -> Void
  ) throws {
    var configuration = AuthenticateServer.Configuration()
    configuration.behaviour = .custom(custom)
    let server = try AuthenticateServer(configuration)
    defer { server.stop() }
    try withSignin(serverURL: server.url, users: users, stack: stack, body)
  }

  /// A sign-in set-up against the AM at `serverURL`; with `homes`, each user has a home of their
  /// own (theirs, under the set-up's directory) and /bin/sh.
  func withSignin(
    serverURL: String, users: [String], homes: Bool = false, stack: String = "auth required MODULE\naccount required MODULE",
    _ body: (Setup) throws -> Void
  ) throws {
    let directory = try makeTemporaryDirectory("fr-profile-signin")
    defer { removeTemporaryDirectory(directory) }
    chmod(directory, 0o755)
    let setup = Setup(directory: directory, serverURL: serverURL)
    try setup.writeConfig()
    try FileManager.default.createDirectory(atPath: directory + "/pam.d", withIntermediateDirectories: false)
    try setup.writeStack(stack)
    let passwd = try String(contentsOfFile: "/etc/passwd", encoding: .utf8)
    let group = try String(contentsOfFile: "/etc/group", encoding: .utf8)
    var addedUsers = ""
    var addedGroups = ""
    for (offset, user) in users.enumerated() {
      let uid = 4711 + offset
      var home = "/nonexistent"
      if homes {
        home = directory + "/home-" + user
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: false)
        chown(home, uid_t(uid), gid_t(uid))
        chmod(home, 0o700)
      }
      addedUsers += "\(user):x:\(uid):\(uid):fr-profile sign-in test:\(home):\(homes ? "/bin/sh" : "/usr/sbin/nologin")\n"
      addedGroups += "\(user):x:\(4711 + offset):\n"
    }
    try (passwd + addedUsers).write(toFile: directory + "/passwd", atomically: false, encoding: .utf8)
    try (group + addedGroups).write(toFile: directory + "/group", atomically: false, encoding: .utf8)
    try body(setup)
  }

  @Test("the journey signs in: the PAM user answers the name, the password and an OTP are asked; a wrong password fails")
  func passwordThenOTP() throws {
    let nodes: [String: NodeTree.Node] = [
      "start": Self.loginNode(then: .node("mfa")),
      "mfa": NodeTree.Node(callbacks: [EnterpriseJourneyTests.passwordCallback("One Time Password")]) { answers, _ in
        answers.text("PasswordCallback") == "884422" ? .success : .failure("Wrong code")
      },
    ]
    try withSignin(nodes) { setup, tree in
      // The caller's proxies do not reach the helper (a clean environment): through this one
      // nothing would.
      let result = try setup.pamtester(
        stdin: Self.password + "\n884422\n", operations: ["authenticate", "acct_mgmt"],
        environment: ["http_proxy=http://127.0.0.1:1", "HTTPS_PROXY=http://127.0.0.1:1", "ALL_PROXY=http://127.0.0.1:1"])
      #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
      #expect(
        result.stderr.contains("successfully authenticated") || result.stdout.contains("successfully authenticated"), "\(result.stderr)")
      #expect((result.stdout + result.stderr).contains("One Time Password"))
      let first = NodeTree.Answers(callbacks: tree.answered.first?["callbacks"]?.arrayValue ?? [])
      #expect(first.text("NameCallback") == Self.user)
      #expect(tree.events == ["node start", "node mfa", "success"], "\(tree.events)")

      let wrong = try setup.pamtester(stdin: "not-it\n")
      #expect(wrong.status != 0, "\(wrong.stdout)\n\(wrong.stderr)")
      #expect((wrong.stdout + wrong.stderr).contains("Authentication failure"), "\(wrong.stdout)\n\(wrong.stderr)")
    }
  }

  /// `fr-profile signin enroll` at a terminal (pty-drive.py answering `steps`), in the
  /// set-up's namespace (its /etc/passwd).
  func enroll(_ setup: Setup, user: String, tree: String, steps: [JSON]) throws -> JSON {
    let script = """
      mount --bind "$1/passwd" /etc/passwd && mount --bind "$1/group" /etc/group || exit 99
      shift
      exec env -i PATH=/usr/bin:/bin TERM=dumb /usr/bin/python3 "$@"
      """
    let result = try run(
      [
        "--mount", "--propagation", "private", "/bin/sh", "-c", script, "sh", setup.directory, cliFixture("../Support/pty-drive.py"),
        JSONWriter.compact(.array(steps)), frProfilePath, "signin", "enroll", user, "--tree", tree, "--config", setup.config,
      ], executable: "/usr/bin/unshare")
    return try JSONParser.parse(Array(result.stdout.utf8))
  }

  @Test("enrolled at a terminal, the user's sign-ins sign AM's DeviceSigningVerifierCallback with this machine's key")
  func enrolThenSignWithTheBoundKey() throws {
    let binding = BindingServer()
    try withSignin(custom: binding, users: ["demo"]) { setup in
      try setup.writeConfig(["tree": "Sign"])
      // Before enrolment there is no key: AM's signing node gets the client error and refuses.
      let before = try setup.pamtester(user: "demo", stdin: Self.password + "\n")
      #expect(before.status != 0, "\(before.stderr)")
      let screen = try enroll(
        setup, user: "demo", tree: "Bind",
        steps: [["expect": "Password"], ["echo": false], ["send": .string(Self.password + "\n")], ["expect": "bound:"]])
      #expect(screen["status"] == 0, "\(screen)")
      #expect(screen["screen"]?.stringValue?.contains("User Name") == false, "the name is the user's, never asked: \(screen)")
      let signed = try setup.pamtester(user: "demo", stdin: Self.password + "\n")
      #expect(signed.status == 0, "\(signed.stderr)")
      #expect(binding.outcomes.suffix(2) == ["binding: success", "signing: success"], "\(binding.outcomes)")
      // The key is root's, in the sign-in state directory.
      let owner = try FileManager.default.attributesOfItem(atPath: setup.directory + "/state")[.ownerAccountID] as? NSNumber
      #expect(owner?.intValue == 0)
    }
  }

  /// What the module wrote to the system log (pam_wrapper shows pam_syslog on stderr).
  static func syslog(_ result: RunResult) -> String {
    result.stderr.split(separator: "\n").filter { $0.contains("PWRAP") && $0.contains("SYSLOG") }.joined(separator: "\n")
  }

  @Test("a configuration others could change, or that does not parse, fails the sign-in with a log line and no request to AM")
  func unsafeOrBadConfiguration() throws {
    try withSignin(["start": Self.loginNode()]) { setup, tree in
      try setup.writeConfig(mode: 0o620)
      let groupWritable = try setup.pamtester(stdin: Self.password + "\n")
      #expect(groupWritable.status != 0)
      #expect(
        Self.syslog(groupWritable).contains("refusing the configuration: ") && Self.syslog(groupWritable).contains("has mode 0620"),
        "\(groupWritable.stderr)")
      try setup.writeConfig()
      chown(setup.config, 65534, 65534)
      let foreign = try setup.pamtester(stdin: Self.password + "\n")
      #expect(foreign.status != 0 && Self.syslog(foreign).contains("uid 65534"), "\(foreign.stderr)")
      try setup.writeConfig(["sever": "typo"])
      let unknownKey = try setup.pamtester(stdin: Self.password + "\n")
      #expect(unknownKey.status != 0 && Self.syslog(unknownKey).contains("unknown key \"sever\""), "\(unknownKey.stderr)")
      unlink(setup.config)
      try "{\"server\": ".write(toFile: setup.config, atomically: false, encoding: .utf8)
      chmod(setup.config, 0o600)
      let notJSON = try setup.pamtester(stdin: Self.password + "\n")
      #expect(notJSON.status != 0 && Self.syslog(notJSON).contains("not JSON"), "\(notJSON.stderr)")
      // A directory above it that others may change (not sticky): refused too.
      try setup.writeConfig()
      chmod(setup.directory, 0o777)
      let openDirectory = try setup.pamtester(stdin: Self.password + "\n")
      chmod(setup.directory, 0o755)
      #expect(openDirectory.status != 0 && Self.syslog(openDirectory).contains("refusing the configuration"), "\(openDirectory.stderr)")
      #expect(tree.answered.isEmpty && tree.events.isEmpty, "a request reached AM: \(tree.events)")
    }
  }

  @Test("users the module does not handle are PAM_IGNORE (the stack goes on), an unknown user PAM_USER_UNKNOWN: no request either way")
  func ignoredAndUnknownUsers() throws {
    let stack = """
      auth [success=done ignore=ignore user_unknown=die default=die] MODULE config=CONFIG helper=HELPER
      auth required pam_permit.so
      """
    try withSignin(["start": Self.loginNode()], stack: stack) { setup, tree in
      try setup.writeConfig(["users": ["someone-else"]])
      let ignored = try setup.pamtester(stdin: "")
      #expect(ignored.status == 0, "PAM_IGNORE lets pam_permit decide: \(ignored.stderr)")
      try setup.writeConfig(["minUid": 5000])
      let belowMinimum = try setup.pamtester(stdin: "")
      #expect(belowMinimum.status == 0, "\(belowMinimum.stderr)")
      let root = try setup.pamtester(user: "root", stdin: "")
      #expect(root.status == 0, "root is never handled: \(root.stderr)")
      let unknown = try setup.pamtester(user: "no-such-user-frp", stdin: "")
      #expect(unknown.status != 0, "\(unknown.stderr)")
      #expect(tree.events.isEmpty, "\(tree.events)")
    }
  }

  @Test("the first password becomes PAM_AUTHTOK for the modules after it; use_first_pass takes an earlier module's")
  func passwordBecomesAuthtok() throws {
    try withSignin(["start": Self.loginNode()]) { setup, tree in
      let seen = setup.directory + "/authtok"
      let script = setup.directory + "/show-authtok.sh"
      try "#!/bin/sh\ncat > \(seen)\n".write(toFile: script, atomically: false, encoding: .utf8)
      chmod(script, 0o700)
      let stack =
        "auth required \(Self.module) config=\(setup.config) helper=\(frProfilePath)\nauth required pam_exec.so expose_authtok quiet \(script)\n"
      try stack.write(toFile: setup.directory + "/pam.d/frprofile-test", atomically: false, encoding: .utf8)
      let result = try setup.pamtester(stdin: Self.password + "\n")
      #expect(result.status == 0, "\(result.stderr)")
      #expect((try? String(contentsOfFile: seen, encoding: .utf8))?.hasPrefix(Self.password) == true)
      // An earlier module's password (pam_exec cannot set one: the prompt of pam_unix-like
      // modules is what sets it; here the module itself asks and a second instance reuses it).
      let reuse =
        "auth required \(Self.module) config=\(setup.config) helper=\(frProfilePath)\nauth required \(Self.module) config=\(setup.config) helper=\(frProfilePath) use_first_pass\n"
      try reuse.write(toFile: setup.directory + "/pam.d/frprofile-test", atomically: false, encoding: .utf8)
      let twice = try setup.pamtester(stdin: Self.password + "\n")
      #expect(twice.status == 0, "\(twice.stderr)")
      #expect(twice.stderr.components(separatedBy: "Password:").count == 2, "asked once: \(twice.stderr)")
      #expect(tree.events.filter { $0 == "success" }.count == 3, "\(tree.events)")
    }
  }

  @Test("Push over SSH (PAM_RHOST set): the person is asked to press Enter once approved, and AM is polled until it moves on")
  func pushOverSSH() throws {
    let polls = NSLockedCounter()
    let polling = C.callback("PollingWaitCallback", [("waitTime", "200"), ("message", "Approve the sign-in on your phone")])
    let nodes: [String: NodeTree.Node] = [
      "start": Self.loginNode(then: .node("push")),
      "push": NodeTree.Node(callbacks: [polling]) { _, _ in polls.increment() < 1 ? .node("push") : .success },
    ]
    try withSignin(nodes) { setup, tree in
      let result = try setup.pamtester(stdin: Self.password + "\n\n\n", operations: ["authenticate"], items: ["rhost=192.0.2.7"])
      #expect(result.status == 0, "\(result.stderr)")
      #expect(result.stderr.contains("Approve the sign-in on your phone\nPress Enter once you have approved"), "\(result.stderr)")
      #expect(tree.events.filter { $0 == "node push" }.count >= 2, "\(tree.events)")
    }
  }

  @Test("offline: after an online success the same password signs in while AM is unreachable, within maxAgeSeconds, until maxFailures")
  func offlineWindow() throws {
    let nodes: [String: NodeTree.Node] = [
      "start": NodeTree.Node(callbacks: Self.login) { answers, _ in
        guard answers.text("NameCallback") == Self.user else { return .failure("Login failure") }
        switch answers.text("PasswordCallback") {
        case Self.password: return .success
        case "lock-me": return .failure("User Locked Out.")
        default: return .failure("Login failure")
        }
      }
    ]
    try withSignin(nodes) { setup, tree in
      let offline: JSON = ["maxAgeSeconds": 60, "maxFailures": 2]
      let unreachable: [String: JSON] = ["offline": offline, "server": "http://127.0.0.1:1"]
      try setup.writeConfig(unreachable)
      let none = try setup.pamtester(stdin: Self.password + "\n")
      #expect(none.status != 0 && Self.syslog(none).contains("no offline entry"), "\(none.stderr)")

      try setup.writeConfig(["offline": offline])
      #expect(try setup.pamtester(stdin: Self.password + "\n").status == 0)
      let entries = try FileManager.default.contentsOfDirectory(atPath: setup.directory + "/state/offline").filter { $0.hasSuffix(".json") }
      try #require(entries.count == 1)
      let entryPath = setup.directory + "/state/offline/" + entries[0]
      let entryText = try String(contentsOfFile: entryPath, encoding: .utf8)
      #expect(!entryText.contains(Self.password) && entryText.contains("\"kdf\":\"scrypt\""))
      #expect((try FileManager.default.attributesOfItem(atPath: entryPath)[.posixPermissions] as? Int) == 0o600)
      #expect((try FileManager.default.attributesOfItem(atPath: setup.directory + "/state/offline")[.posixPermissions] as? Int) == 0o700)

      try setup.writeConfig(unreachable)
      let right = try setup.pamtester(stdin: Self.password + "\n")
      #expect(right.status == 0 && Self.syslog(right).contains("signed in offline"), "\(right.stderr)")
      #expect(right.stderr.contains("Password: "))
      for _ in 0..<2 {
        let wrong = try setup.pamtester(stdin: "not-it\n")
        #expect(wrong.status != 0, "\(wrong.stderr)")
      }
      let locked = try setup.pamtester(stdin: Self.password + "\n")
      #expect(locked.status != 0 && Self.syslog(locked).contains("locked after 2 wrong passwords"), "\(locked.stderr)")

      // An online success unlocks it; an entry older than maxAgeSeconds is not used.
      try setup.writeConfig(["offline": offline])
      #expect(try setup.pamtester(stdin: Self.password + "\n").status == 0)
      try setup.writeConfig(unreachable)
      #expect(try setup.pamtester(stdin: Self.password + "\n").status == 0)
      var aged = try JSONParser.parse(Array(try String(contentsOfFile: entryPath, encoding: .utf8).utf8)).objectValue ?? [:]
      aged["onlineAt"] = .number(Double(time(nil)) - 120)
      try JSONWriter.compact(.object(aged)).write(toFile: entryPath, atomically: false, encoding: .utf8)
      let old = try setup.pamtester(stdin: Self.password + "\n")
      #expect(old.status != 0 && Self.syslog(old).contains("older than offline.maxAgeSeconds"), "\(old.stderr)")

      // A TLS failure (a certificate no CA of the machine's signed) fails closed, even with a
      // usable offline entry: no offline prompt.
      try setup.writeConfig(["offline": offline])
      #expect(try setup.pamtester(stdin: Self.password + "\n").status == 0)
      var tlsConfiguration = AuthenticateServer.Configuration()
      tlsConfiguration.tls = try makeSelfSignedCertificate(in: setup.directory)
      let untrusted = try AuthenticateServer(tlsConfiguration)
      defer { untrusted.stop() }
      try setup.writeConfig(["offline": offline, "server": .string(untrusted.url)])
      let tls = try setup.pamtester(stdin: Self.password + "\n")
      #expect(tls.status != 0 && !tls.stderr.contains("Password: "), "\(tls.stderr)")
      #expect(Self.syslog(tls).contains("failed") && !Self.syslog(tls).contains("cannot be reached"), "\(tls.stderr)")

      // AM's answer that the account is locked removes the entry.
      try setup.writeConfig(["offline": offline])
      #expect(try setup.pamtester(stdin: Self.password + "\n").status == 0)
      let lockedOut = try setup.pamtester(stdin: "lock-me\n")
      #expect(lockedOut.status != 0)
      #expect(!FileManager.default.fileExists(atPath: entryPath))
      #expect(tree.events.contains("failure: User Locked Out."), "\(tree.events)")
    }
  }

  @Test("a server that never answers does not hang the sign-in: it ends within timeoutSeconds, as unreachable")
  func hungServer() throws {
    var configuration = AuthenticateServer.Configuration()
    configuration.behaviour = .hang
    let hung = try AuthenticateServer(configuration)
    defer { hung.stop() }
    try withSignin(["start": Self.loginNode()]) { setup, _ in
      try setup.writeConfig(["server": .string(hung.url), "timeoutSeconds": 10])
      let started = Date()
      let result = try setup.pamtester(stdin: Self.password + "\n")
      let elapsed = Date().timeIntervalSince(started)
      #expect(result.status != 0 && Self.syslog(result).contains("cannot be reached"), "\(result.stderr)")
      #expect(elapsed < 30, "the sign-in took \(elapsed) s")
    }
  }

  @Test("try_first_pass: an earlier module's wrong password is tried, then the person asked; use_first_pass never asks")
  func tryAndUseFirstPass() throws {
    // pam_wrapper's pam_set_items.so sets PAM_AUTHTOK from the variable of that name, as a module
    // that asked for a password before this one would have.
    let setItems = "/usr/lib/x86_64-linux-gnu/pam_wrapper/pam_set_items.so"
    try withSignin(["start": Self.loginNode()], stack: "auth required \(setItems)\nauth required MODULE try_first_pass") { setup, tree in
      let retried = try setup.pamtester(stdin: Self.password + "\n", environment: ["PAM_AUTHTOK=an-earlier-password"])
      #expect(retried.status == 0, "\(retried.stderr)")
      #expect(retried.stderr.components(separatedBy: "Password:").count == 2, "asked once, after the refusal: \(retried.stderr)")
      #expect(tree.events == ["node start", "failure: Login failure", "node start", "success"], "\(tree.events)")
    }
    try withSignin(["start": Self.loginNode()], stack: "auth required \(setItems)\nauth required MODULE use_first_pass") { setup, tree in
      let refused = try setup.pamtester(stdin: Self.password + "\n", environment: ["PAM_AUTHTOK=an-earlier-password"])
      #expect(refused.status != 0 && !refused.stderr.contains("Password:"), "\(refused.stderr)")
      let used = try setup.pamtester(stdin: "", environment: ["PAM_AUTHTOK=" + Self.password])
      #expect(used.status == 0, "\(used.stderr)")
      #expect(tree.events == ["node start", "failure: Login failure", "node start", "success"], "\(tree.events)")
    }
  }

  @Test("with a TPM (swtpm at the configuration's tcti), the key enrolment binds lives in the TPM and the sign-in signs with it")
  func enrolAndSignInTheTPM() throws {
    try withSWTPM { tpm in
      let binding = BindingServer()
      try withSignin(custom: binding, users: ["demo"]) { setup in
        try setup.writeConfig(["tree": "Sign", "tcti": .string(tpm.tcti)])
        let screen = try enroll(
          setup, user: "demo", tree: "Bind",
          steps: [["expect": "Password"], ["echo": false], ["send": .string(Self.password + "\n")], ["expect": "bound:"]])
        #expect(screen["status"] == 0, "\(screen)")
        let keys = try run(["keys", "list", "--json", "--state-dir", setup.directory + "/state"])
        let records = try JSONParser.parse(Array(keys.stdout.utf8)).arrayValue ?? []
        #expect(records.count == 1 && records.first?["store"] == "tpm", "\(keys.stdout) \(keys.stderr)")
        let signed = try setup.pamtester(user: "demo", stdin: Self.password + "\n")
        #expect(signed.status == 0, "\(signed.stderr)")
        #expect(binding.outcomes == ["binding: success", "signing: success"], "\(binding.outcomes)")
      }
    }
  }

  @Test("with a clientId, the session becomes OAuth 2.0 tokens written at session start into the user's own store, as the user")
  func tokensAtSessionStart() throws {
    try withOAuthAM { am in
      let stack = "auth required MODULE\naccount required MODULE\nsession required MODULE"
      try withSignin(serverURL: am.url, users: [OAuthAM.user], homes: true, stack: stack) { setup in
        try setup.writeConfig(["clientId": .string(OAuthAM.clientId)])
        // Authentication alone (no session): nothing is written.
        let authOnly = try setup.pamtester(user: OAuthAM.user, stdin: OAuthAM.password + "\n")
        #expect(authOnly.status == 0, "\(authOnly.stderr)")
        let store = setup.directory + "/home-\(OAuthAM.user)/.local/state/fr-profile/tokens"
        #expect(!FileManager.default.fileExists(atPath: store))
        let result = try setup.pamtester(
          user: OAuthAM.user, stdin: OAuthAM.password + "\n", operations: ["authenticate", "open_session", "close_session"])
        #expect(result.status == 0, "\(result.stderr)")
        let files = ((try? FileManager.default.contentsOfDirectory(atPath: store)) ?? []).filter { $0.hasSuffix(".json") }
        try #require(files.count == 1, "\(result.stderr)")
        let attributes = try FileManager.default.attributesOfItem(atPath: store + "/" + files[0])
        #expect((attributes[.ownerAccountID] as? NSNumber)?.intValue == 4711)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        // The user's own `fr-profile token` finds them (run as the user, their home as HOME).
        let token = try run(
          [
            "--reuid=4711", "--regid=4711", "--clear-groups", "env", "-i", "HOME=" + setup.directory + "/home-\(OAuthAM.user)",
            frProfilePath, "token", "--server", am.url, "--realm", "alpha", "--client-id", OAuthAM.clientId,
          ], executable: "/usr/bin/setpriv")
        #expect(token.status == 0 && !token.stdout.isEmpty, "\(token.stderr)")
        #expect(try am.whoami(token.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) == 200)
      }
    }
  }

  @Test("the DeviceProfileCallback carries this machine's profile, its identifier the one 'identifier --state-dir' prints")
  func deviceProfileOfTheSignInState() throws {
    let profile = C.callback(
      "DeviceProfileCallback", [("metadata", true), ("location", false), ("message", "Collecting your device")],
      inputs: [("IDToken1", "")])
    let nodes: [String: NodeTree.Node] = [
      "start": Self.loginNode(then: .node("profile")),
      "profile": NodeTree.Node(callbacks: [profile]) { _, _ in .success },
    ]
    try withSignin(nodes) { setup, tree in
      let result = try setup.pamtester(stdin: Self.password + "\n")
      #expect(result.status == 0, "\(result.stderr)")
      #expect((result.stdout + result.stderr).contains("Collecting your device"), "the message is shown: \(result.stdout)")
      let posted = NodeTree.Answers(callbacks: tree.answered.last?["callbacks"]?.arrayValue ?? [])
      let sent = try JSONParser.parse(Array((posted.text("DeviceProfileCallback") ?? "").utf8))
      let identifier = try run(["identifier", "--json", "--state-dir", setup.directory + "/state"])
      let expected = try JSONParser.parse(Array(identifier.stdout.utf8))["identifier"]
      #expect(expected != nil && sent["identifier"] == expected, "\(sent) vs \(identifier.stdout)")
      #expect(sent["metadata"]?["platform"]?["platform"] == "Linux")
      #expect(sent["location"] == nil)
    }
  }

  @Test("a server error (5xx) fails closed, even with a usable offline entry: no offline prompt")
  func serverErrorFailsClosed() throws {
    var configuration = AuthenticateServer.Configuration()
    configuration.behaviour = .scripted { _, _ in (503, Array(#"{"code":503,"reason":"Service Unavailable"}"#.utf8)) }
    let failing = try AuthenticateServer(configuration)
    defer { failing.stop() }
    try withSignin(["start": Self.loginNode()]) { setup, _ in
      let offline: JSON = ["maxAgeSeconds": 60]
      try setup.writeConfig(["offline": offline])
      #expect(try setup.pamtester(stdin: Self.password + "\n").status == 0)
      try setup.writeConfig(["offline": offline, "server": .string(failing.url)])
      let result = try setup.pamtester(stdin: Self.password + "\n")
      #expect(result.status != 0 && !result.stderr.contains("Password: "), "\(result.stderr)")
      #expect(Self.syslog(result).contains("failed") && !Self.syslog(result).contains("cannot be reached"), "\(result.stderr)")
    }
  }

  @Test(
    "Push at a local terminal (PAM_TTY /dev/tty1, no PAM_RHOST): the message is PAM_TEXT_INFO, AM is polled after each wait, Enter is never asked"
  )
  func pushAtALocalTerminal() throws {
    let times = RequestTimes()
    let polling = C.callback("PollingWaitCallback", [("waitTime", "400"), ("message", "Approve the sign-in on your phone")])
    let nodes: [String: NodeTree.Node] = [
      "start": NodeTree.Node(callbacks: Self.login) { answers, _ in
        _ = times.record()
        return answers.text("NameCallback") == Self.user && answers.text("PasswordCallback") == Self.password
          ? .node("push") : .failure("Login failure")
      },
      // Request 0 is the login page; requests 1 and 2 are polls AM answers with the same page,
      // request 3 the poll it approves.
      "push": NodeTree.Node(callbacks: [polling]) { _, _ in times.record() < 3 ? .node("push") : .success },
    ]
    try withSignin(nodes) { setup, tree in
      // Only the password on stdin: a prompt to press Enter would find its end and fail the sign-in.
      let result = try setup.pamtester(stdin: Self.password + "\n", items: ["tty=/dev/tty1"])
      #expect(result.status == 0, "\(result.stderr)")
      #expect(!result.stderr.contains("Press Enter"), "\(result.stderr)")
      // pamtester's conversation (misc_conv) prints PAM_TEXT_INFO on stdout, PAM_ERROR_MSG and
      // prompts on stderr: the message is information, shown once though AM repeats the page.
      #expect(result.stdout.components(separatedBy: "Approve the sign-in on your phone").count == 2, "\(result.stdout)")
      #expect(!result.stderr.contains("Approve the sign-in"), "\(result.stderr)")
      #expect(tree.events == ["node start", "node push", "node push", "node push", "success"], "\(tree.events)")
      let seen = times.all
      try #require(seen.count == 4, "AM saw the login and three polls: \(seen)")
      for index in 1..<seen.count {
        #expect(
          seen[index] - seen[index - 1] >= 0.39,
          "poll \(index) came \(seen[index] - seen[index - 1]) s after the page, not after its 400 ms")
      }
    }
  }

  @Test(
    "ChoiceCallback and ConfirmationCallback: an echo-on prompt listing numbered choices, the typed number is AM's answer, a wrong one asked again"
  )
  func choicesOverPAM() throws {
    let choice = C.callback(
      "ChoiceCallback", [("prompt", "Second factor"), ("choices", ["SMS", "Email", "Push"]), ("defaultChoice", 0)],
      inputs: [("IDToken1", 0)])
    let confirmation = C.callback(
      "ConfirmationCallback",
      [("prompt", "Trust this device?"), ("messageType", 0), ("options", ["Yes", "No"]), ("optionType", -1), ("defaultOption", 1)],
      inputs: [("IDToken1", 1)])
    let nodes: [String: NodeTree.Node] = [
      "start": Self.loginNode(then: .node("choice")),
      "choice": NodeTree.Node(callbacks: [choice]) { answers, _ in
        answers.value("ChoiceCallback") == 2 ? .node("confirm") : .failure("Wrong factor")
      },
      "confirm": NodeTree.Node(callbacks: [confirmation]) { answers, _ in
        answers.value("ConfirmationCallback") == 0 ? .success : .failure("Not trusted")
      },
    ]
    try withSignin(nodes) { setup, tree in
      let screen = try pamtesterAtTerminal(
        setup,
        steps: [
          ["expect": "Password: "], ["echo": false], ["send": .string(Self.password + "\n")],
          ["expect": "Choice [0]: "], ["echo": true], ["send": "7\n"],
          ["expect": "Pick one of"], ["expect": "Choice [0]: "], ["send": "2\n"],
          ["expect": "Choice [1]: "], ["echo": true], ["send": "0\n"],
        ])
      #expect(screen["status"] == 0 && screen["failed"] == .null, "\(screen)")
      #expect(screen["echo"] == [false, true, true], "the password is typed unseen, the choices seen: \(screen)")
      let text = (screen["screen"]?.stringValue ?? "").replacingOccurrences(of: "\r", with: "")
      // Each prompt is one message: the list, then the question with its default.
      #expect(text.contains("Second factor\n  0) SMS\n  1) Email\n  2) Push\nChoice [0]: 7\n"), "\(text)")
      #expect(text.contains("Pick one of 0=SMS, 1=Email, 2=Push.\nChoice [0]: 2\n"), "\(text)")
      #expect(text.contains("Trust this device?\n  0) Yes\n  1) No\nChoice [1]: 0\n"), "\(text)")
      #expect(tree.events == ["node start", "node choice", "node confirm", "success"], "\(tree.events)")
      let posted = tree.answered.map { NodeTree.Answers(callbacks: $0["callbacks"]?.arrayValue ?? []) }
      #expect(posted.compactMap { $0.value("ChoiceCallback") } == [2], "the wrong entry never reached AM")
      #expect(posted.compactMap { $0.value("ConfirmationCallback") } == [0])
    }
  }

  @Test("setcred is PAM_SUCCESS for every user (sshd needs it), with or without a sign-in; nothing reaches AM")
  func setcredSucceeds() throws {
    // A lone `required` module: libpam fails a stack in which every module is PAM_IGNORE, so a
    // pass is the module's PAM_SUCCESS.
    try withSignin(["start": Self.loginNode()], stack: "auth required MODULE") { setup, tree in
      for user in [Self.user, "root", "no-such-user-frp"] {
        let result = try setup.pamtester(user: user, stdin: "", operations: ["setcred"])
        #expect(result.status == 0 && result.stdout.contains("credential info has successfully been set"), "\(user): \(result.stderr)")
      }
      #expect(tree.events.isEmpty, "\(tree.events)")
      let signedIn = try setup.pamtester(stdin: Self.password + "\n", operations: ["authenticate", "setcred"])
      #expect(signedIn.status == 0 && signedIn.stdout.contains("credential info has successfully been set"), "\(signedIn.stderr)")
    }
  }

  @Test("chauthtok is PAM_IGNORE for every user: the stack's next module changes the password")
  func chauthtokIsIgnored() throws {
    // `success=bad`: a PAM_SUCCESS would fail the stack (libpam's PAM_PERM_DENIED); only
    // PAM_IGNORE lets pam_permit decide.
    let stack = "password [success=bad ignore=ignore default=bad] MODULE\npassword required pam_permit.so"
    try withSignin(["start": Self.loginNode()], stack: stack) { setup, tree in
      try setup.writeConfig(["users": .array([.string(Self.user)])])
      for user in [Self.user, "root", "no-such-user-frp"] {
        let result = try setup.pamtester(user: user, stdin: "", operations: ["chauthtok"])
        #expect(result.status == 0 && result.stdout.contains("authentication token altered successfully"), "\(user): \(result.stderr)")
      }
      #expect(tree.events.isEmpty, "\(tree.events)")
      // The stack tells the two apart: a module that succeeds (pam_permit) in the module's place fails it.
      try setup.writeStack(stack.replacingOccurrences(of: "MODULE", with: "pam_permit.so"))
      let succeeding = try setup.pamtester(stdin: "", operations: ["chauthtok"])
      #expect(succeeding.status != 0, "\(succeeding.stdout)\n\(succeeding.stderr)")
    }
  }

  @Test("acct_mgmt is PAM_SUCCESS for the user the module signed in, PAM_IGNORE without its sign-in or for another PAM_USER")
  func accountOfTheSignedInUserOnly() throws {
    // `success=bad` then pam_permit: a pass is the module's PAM_IGNORE; a failure with libpam's
    // PAM_PERM_DENIED ("Permission denied") its PAM_SUCCESS.
    let ignoring = "auth required MODULE\naccount [success=bad ignore=ignore default=bad] MODULE\naccount required pam_permit.so"
    try withSignin(["start": Self.loginNode()], stack: ignoring) { setup, tree in
      let alone = try setup.pamtester(stdin: "", operations: ["acct_mgmt"])
      #expect(alone.status == 0, "without its sign-in (an SSH key): \(alone.stderr)")
      #expect(tree.events.isEmpty, "\(tree.events)")
      let signedIn = try setup.pamtester(stdin: Self.password + "\n", operations: ["authenticate", "acct_mgmt"])
      #expect(signedIn.status != 0 && signedIn.stderr.contains("Permission denied"), "\(signedIn.stdout)\n\(signedIn.stderr)")
      // Signed in as the test user, then PAM_USER changed (pam_wrapper's pam_set_items.so sets
      // it from the variable of that name) before the account stack: not the module's to judge.
      let setItems = "/usr/lib/x86_64-linux-gnu/pam_wrapper/pam_set_items.so"
      try setup.writeStack(ignoring.replacingOccurrences(of: "\naccount [", with: "\naccount required \(setItems)\naccount ["))
      let other = try setup.pamtester(
        stdin: Self.password + "\n", operations: ["authenticate", "acct_mgmt"], environment: ["PAM_USER=root"])
      #expect(other.status == 0, "\(other.stderr)")
      #expect(tree.events == ["node start", "success", "node start", "success"], "\(tree.events)")
      // A lone `required` module: a pass is PAM_SUCCESS (PAM_IGNORE alone fails the stack).
      try setup.writeStack("auth required MODULE\naccount required MODULE")
      let success = try setup.pamtester(stdin: Self.password + "\n", operations: ["authenticate", "acct_mgmt"])
      #expect(success.status == 0 && success.stdout.contains("account management done"), "\(success.stderr)")
      let ignored = try setup.pamtester(stdin: "", operations: ["acct_mgmt"])
      #expect(ignored.status != 0, "PAM_IGNORE alone: \(ignored.stderr)")
    }
  }

  @Test(
    "a session opened without the module's sign-in (su from root, another module's, a user it does not handle) is PAM_SUCCESS and does nothing"
  )
  func sessionWithoutSignin() throws {
    // The log lines but libpam's own (the test's service directory has no "other" service).
    func moduleLines(_ result: RunResult) -> [Substring] {
      Self.syslog(result).split(separator: "\n").filter { !$0.contains("_pam_init_handlers") }
    }
    // A lone `required` module: a pass is the module's PAM_SUCCESS.
    try withSignin(["start": Self.loginNode()], stack: "auth required MODULE\nsession required MODULE") { setup, tree in
      try setup.writeConfig(["users": .array([.string(Self.user)])])
      for user in [Self.user, "root", "nobody", "no-such-user-frp"] {
        let result = try setup.pamtester(user: user, stdin: "", operations: ["open_session", "close_session"])
        #expect(result.status == 0, "\(user): \(result.stderr)")
        #expect(moduleLines(result).isEmpty, "no helper, no log line: \(Self.syslog(result))")
      }
      #expect(tree.events.isEmpty, "\(tree.events)")
      // Signed in, without a clientId: no tokens are held, and the session says nothing of them.
      let signedIn = try setup.pamtester(stdin: Self.password + "\n", operations: ["authenticate", "open_session", "close_session"])
      #expect(signedIn.status == 0, "\(signedIn.stderr)")
      // The sign-in's own line only: the filter above keeps the module's lines.
      #expect(
        moduleLines(signedIn).count == 1 && moduleLines(signedIn)[0].contains("\(Self.user) signed in through the journey"),
        "\(Self.syslog(signedIn))")
    }
  }

  @Test(
    "the session opens when the user's home does not exist yet (pam_mkhomedir after the module): the tokens are not written, a log line says so"
  )
  func sessionBeforeTheHomeExists() throws {
    try withOAuthAM { am in
      let stack = "auth required MODULE\nsession required MODULE"
      try withSignin(serverURL: am.url, users: [OAuthAM.user], homes: true, stack: stack) { setup in
        try setup.writeConfig(["clientId": .string(OAuthAM.clientId)])
        let home = setup.directory + "/home-\(OAuthAM.user)"
        try FileManager.default.removeItem(atPath: home)
        let result = try setup.pamtester(
          user: OAuthAM.user, stdin: OAuthAM.password + "\n", operations: ["authenticate", "open_session", "close_session"])
        #expect(result.status == 0 && result.stdout.contains("successfully opened a session"), "\(result.stderr)")
        #expect(
          Self.syslog(result).contains("the OAuth 2.0 tokens of \(OAuthAM.user) were not written to \(home)/.local/state/fr-profile"),
          "\(result.stderr)")
        #expect(Self.syslog(result).contains("were not written to their token store"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: home), "nothing made in the home's place")
      }
    }
  }
}

/// When AM saw each request of a journey (seconds of a monotonic clock), for tests that time a client.
final class RequestTimes: Sendable {
  private let times = Mutex<[Double]>([])
  /// Records now; how many were recorded before.
  func record() -> Int {
    times.withLock {
      $0.append(ProcessInfo.processInfo.systemUptime)
      return $0.count - 1
    }
  }
  var all: [Double] { times.withLock { $0 } }
}
