import Foundation
import ProfileJSON
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// `pam_frprofile.so` behind OpenSSH's sshd, as a sign-in over SSH runs it: Debian's sshd on a
/// free 127.0.0.1 port with a configuration and host key of the test's own (`UsePAM yes`,
/// keyboard-interactive only), the PAM service `sshd` holding the module against a loopback AM
/// tree, and a keyboard-interactive client (Support/ssh-kbdint.py, python3-paramiko) answering
/// the journey's prompts.
///
/// OpenSSH 9.2 has no `PAMServiceName`, so sshd runs in a private mount namespace (unshare
/// --mount, propagation private) where the test's own directory is bind-mounted over /etc/pam.d,
/// copies of /etc/passwd and /etc/group holding the test's user over the real ones, and a tmpfs
/// over /run holds sshd's privilege-separation directory /run/sshd. The user the test creates
/// lives only in those copies and goes with them: the real /etc/passwd, /etc/group and /etc/pam.d
/// are never written, the system's sshd is neither started nor reconfigured. The user's home is
/// a temporary directory of its own, its shell /bin/sh; no /etc/shadow entry is needed (with
/// UsePAM, the account check is PAM's: the module's acct_mgmt passes the user it signed in).
@Suite(.serialized, .timeLimit(.minutes(10)))
struct SigninSSHTests {
  static let sshd = "/usr/sbin/sshd"
  static let keygen = "/usr/bin/ssh-keygen"
  static let python = "/usr/bin/python3"
  static let client = cliFixture("../Support/ssh-kbdint.py")
  static let user = SigninPAMTests.user
  static let uid = 4711
  static let code = "884422"
  static let command = "echo signed-in-$USER uid=$(id -u)"

  /// The login page, then a one-time password page: the tree of SigninPAMTests.passwordThenOTP.
  static var nodes: [String: NodeTree.Node] {
    [
      "start": SigninPAMTests.loginNode(then: .node("mfa")),
      "mfa": NodeTree.Node(callbacks: [EnterpriseJourneyTests.passwordCallback("One Time Password")]) { answers, _ in
        answers.text("PasswordCallback") == code ? .success : .failure("Wrong code")
      },
    ]
  }

  /// What the client (Support/ssh-kbdint.py) reported of one sign-in.
  struct Login {
    let report: JSON
    var prompts: [String] { report["prompts"]?.arrayValue?.compactMap { $0["prompt"]?.stringValue } ?? [] }
    var echoed: [Bool] { report["prompts"]?.arrayValue?.compactMap { $0["echo"]?.boolValue } ?? [] }
    var authenticated: Bool { report["authenticated"]?.boolValue == true }
    var error: String? { report["error"]?.stringValue }
    var stdout: String { report["stdout"]?.stringValue ?? "" }
    var status: Int? { report["status"]?.numberValue.map { Int($0) } }
  }

  /// sshd in its mount namespace (see the suite's comment), listening on 127.0.0.1:`port`.
  final class SSHD {
    let directory: String
    let port: Int
    private let pid: pid_t
    private var running = true
    var logPath: String { directory + "/sshd.log" }
    var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// Starts sshd with `directory`'s sshd_config, pam.d, passwd and group; waits (at most 30 s)
    /// for its "Server listening" line. A port taken between choosing and binding it is retried.
    init(directory: String) throws {
      self.directory = directory
      let script = """
        mount --bind "$1/passwd" /etc/passwd && mount --bind "$1/group" /etc/group && mount --bind "$1/pam.d" /etc/pam.d \
          && mount -t tmpfs -o mode=0755,size=1m tmpfs /run && mkdir -m 0755 /run/sshd || exit 99
        shift
        exec "$@"
        """
      var attempt = 0
      while true {
        attempt += 1
        let port = try Self.freeLoopbackPort()
        let pid = try Self.spawn(
          [
            "/usr/bin/unshare", "--mount", "--propagation", "private", "/bin/sh", "-c", script, "sh", directory, SigninSSHTests.sshd,
            "-D", "-e", "-f", directory + "/sshd_config", "-p", String(port),
          ], log: directory + "/sshd.log")
        let deadline = Date().addingTimeInterval(30)
        var status: Int32 = 0
        while Date() < deadline {
          let text = (try? String(contentsOfFile: directory + "/sshd.log", encoding: .utf8)) ?? ""
          if text.contains("Server listening on 127.0.0.1 port \(port).") {
            self.port = port
            self.pid = pid
            return
          }
          if waitpid(pid, &status, WNOHANG) == pid {
            let text = (try? String(contentsOfFile: directory + "/sshd.log", encoding: .utf8)) ?? ""
            if text.contains("Address already in use") && attempt < 3 { break }
            throw SSHDError("sshd ended (status \(status)) before it listened:\n\(text)")
          }
          usleep(50_000)
        }
        if Date() >= deadline {
          kill(-pid, SIGKILL)
          waitpid(pid, nil, 0)
          throw SSHDError(
            "sshd did not listen within 30 s:\n\((try? String(contentsOfFile: directory + "/sshd.log", encoding: .utf8)) ?? "")")
        }
      }
    }

    /// Ends sshd and every process of its group (SIGTERM, then SIGKILL after 10 s).
    func stop() {
      if !running { return }
      running = false
      kill(-pid, SIGTERM)
      let deadline = Date().addingTimeInterval(10)
      while waitpid(pid, nil, WNOHANG) == 0 {
        if Date() >= deadline {
          kill(-pid, SIGKILL)
          waitpid(pid, nil, 0)
          break
        }
        usleep(20_000)
      }
      kill(-pid, SIGKILL)  // a connection's child that outlived the listener
    }

    deinit { stop() }

    /// The client's sign-in as `user`, `answers` given to the prompts in order, then `command`.
    func login(user: String = SigninSSHTests.user, answers: [String], command: String = SigninSSHTests.command) throws -> Login {
      let result = try run(
        [
          SigninSSHTests.client, String(port), user, JSONWriter.compact(.array(answers.map { .string($0) })), directory + "/host_key.pub",
          command,
        ],
        environment: ["PATH": "/usr/bin:/bin"], executable: SigninSSHTests.python)
      #expect(result.status == 0 && !result.timedOut, "ssh-kbdint.py: \(result.stdout)\n\(result.stderr)")
      return Login(report: (try? JSONParser.parse(Array(result.stdout.utf8))) ?? .object([:]))
    }

    /// A port of 127.0.0.1 nothing listens on now.
    static func freeLoopbackPort() throws -> Int {
      let probe = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
      guard probe >= 0 else { throw SSHDError("socket: \(errno)") }
      defer { close(probe) }
      var address = sockaddr_in()
      address.sin_family = sa_family_t(AF_INET)
      address.sin_addr.s_addr = inet_addr("127.0.0.1")
      address.sin_port = 0
      var length = socklen_t(MemoryLayout<sockaddr_in>.size)
      let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(probe, $0, length) } }
      guard bound == 0 else { throw SSHDError("bind: \(errno)") }
      _ = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(probe, $0, &length) }
      }
      return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Starts `argv` in a process group of its own (so stop() reaches sshd's children), with
    /// only PATH in its environment, stdin /dev/null and stdout and stderr to `log`.
    static func spawn(_ argv: [String], log: String) throws -> pid_t {
      var actions = posix_spawn_file_actions_t()
      posix_spawn_file_actions_init(&actions)
      defer { posix_spawn_file_actions_destroy(&actions) }
      posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
      posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
      posix_spawn_file_actions_adddup2(&actions, 1, 2)
      TestProcess.closeInherited(&actions, from: 3)
      var attributes = posix_spawnattr_t()
      posix_spawnattr_init(&attributes)
      defer { posix_spawnattr_destroy(&attributes) }
      TestProcess.childAttributes(&attributes)
      let argvC = argv.map { strdup($0) } + [nil]
      let envC: [UnsafeMutablePointer<CChar>?] = [strdup("PATH=/usr/sbin:/usr/bin:/sbin:/bin"), nil]
      defer { for pointer in argvC + envC { free(pointer) } }
      var child: pid_t = 0
      let spawned = posix_spawn(&child, argv[0], &actions, &attributes, argvC, envC)
      guard spawned == 0 else { throw SSHDError("cannot run \(argv[0]): \(String(cString: strerror(spawned)))") }
      return child
    }
  }

  struct SSHDError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
  }

  /// What the test needs: a missing one fails the test with what to install (make test installs
  /// them), it does not skip.
  static func requireTools() throws {
    for (path, package) in [(sshd, "openssh-server"), (keygen, "openssh-client"), (python, "python3"), ("/usr/bin/unshare", "util-linux")] {
      try #require(FileManager.default.isExecutableFile(atPath: path), "\(path) is missing: install \(package) (make test does)")
    }
    let paramiko = try run(["-c", "import paramiko"], environment: ["PATH": "/usr/bin:/bin"], executable: python)
    try #require(paramiko.status == 0, "python3-paramiko is missing (make test installs it): \(paramiko.stderr)")
    try #require(geteuid() == 0, "sshd with PAM and a private mount namespace need root")
    try #require(
      FileManager.default.fileExists(atPath: SigninPAMTests.module), "\(SigninPAMTests.module) is missing: make pam-module builds it")
  }

  /// sshd with the module as its PAM service's auth and account, against a loopback AM serving
  /// `nodes`; everything under temporary directories, removed (and sshd stopped) at the end.
  func withSSHD(_ nodes: [String: NodeTree.Node], _ body: (SSHD, NodeTree) throws -> Void) throws {
    try Self.requireTools()
    let tree = NodeTree(nodes: nodes)
    var configuration = AuthenticateServer.Configuration()
    configuration.behaviour = .custom(tree)
    let server = try AuthenticateServer(configuration)
    defer { server.stop() }
    let directory = try makeTemporaryDirectory("fr-profile-signin-ssh")
    defer { removeTemporaryDirectory(directory) }
    chmod(directory, 0o700)
    let home = try makeTemporaryDirectory("fr-profile-signin-ssh-home")
    defer { removeTemporaryDirectory(home) }
    chown(home, uid_t(Self.uid), gid_t(Self.uid))
    chmod(home, 0o700)

    let setup = SigninPAMTests.Setup(directory: directory, server: server)
    try setup.writeConfig()
    try FileManager.default.createDirectory(atPath: directory + "/pam.d", withIntermediateDirectories: false)
    let stack = """
      auth required \(SigninPAMTests.module) config=\(setup.config) helper=\(frProfilePath)
      account required \(SigninPAMTests.module)
      session optional pam_permit.so
      password required pam_deny.so

      """
    try stack.write(toFile: directory + "/pam.d/sshd", atomically: false, encoding: .utf8)
    let passwd = try String(contentsOfFile: "/etc/passwd", encoding: .utf8)
    try #require(!passwd.contains("\n\(Self.user):"), "a user \(Self.user) already exists on this machine")
    try (passwd + "\(Self.user):x:\(Self.uid):\(Self.uid):fr-profile SSH sign-in test:\(home):/bin/sh\n")
      .write(toFile: directory + "/passwd", atomically: false, encoding: .utf8)
    let group = try String(contentsOfFile: "/etc/group", encoding: .utf8)
    try (group + "\(Self.user):x:\(Self.uid):\n").write(toFile: directory + "/group", atomically: false, encoding: .utf8)

    let keygen = try run(
      ["-q", "-t", "ed25519", "-N", "", "-C", "fr-profile-test", "-f", directory + "/host_key"], executable: Self.keygen)
    try #require(keygen.status == 0, "ssh-keygen: \(keygen.stderr)")
    let config = """
      ListenAddress 127.0.0.1
      HostKey \(directory)/host_key
      PidFile none
      UsePAM yes
      KbdInteractiveAuthentication yes
      PasswordAuthentication no
      PubkeyAuthentication no
      HostbasedAuthentication no
      AuthenticationMethods keyboard-interactive
      PermitRootLogin no
      AuthorizedKeysFile none
      UseDNS no
      PrintMotd no
      PrintLastLog no
      X11Forwarding no
      AllowTcpForwarding no
      LogLevel VERBOSE

      """
    try config.write(toFile: directory + "/sshd_config", atomically: false, encoding: .utf8)

    let sshd = try SSHD(directory: directory)
    defer { sshd.stop() }
    try body(sshd, tree)
    #expect(try String(contentsOfFile: "/etc/passwd", encoding: .utf8) == passwd, "the real /etc/passwd changed")
  }

  @Test("right answers over SSH: the journey's Password and One Time Password prompts reach the client, it signs in and runs a command")
  func rightAnswersSignIn() throws {
    try withSSHD(Self.nodes) { sshd, tree in
      let login = try sshd.login(answers: [SigninPAMTests.password, Self.code])
      #expect(login.error == nil, "\(login.report)\n\(sshd.log)")
      #expect(login.authenticated)
      #expect(login.stdout == "signed-in-\(Self.user) uid=\(Self.uid)\n", "\(login.report)\n\(sshd.log)")
      #expect(login.status == 0)
      #expect(login.prompts.count == 2, "\(login.prompts)")
      #expect(login.prompts.first?.hasPrefix("Password") == true, "\(login.prompts)")
      #expect(login.prompts.last?.hasPrefix("One Time Password") == true, "\(login.prompts)")
      #expect(login.echoed == [false, false], "secrets are asked without echo: \(login.report)")
      let first = NodeTree.Answers(callbacks: tree.answered.first?["callbacks"]?.arrayValue ?? [])
      #expect(first.text("NameCallback") == Self.user, "the SSH user answers the name")
      #expect(tree.events == ["node start", "node mfa", "success"], "\(tree.events)")
      #expect(sshd.log.contains("Accepted keyboard-interactive/pam for \(Self.user) from 127.0.0.1"), "\(sshd.log)")
    }
  }

  @Test("wrong answers over SSH are refused: a wrong password, a wrong one-time password; no command runs")
  func wrongAnswersAreRefused() throws {
    try withSSHD(Self.nodes) { sshd, tree in
      let wrongPassword = try sshd.login(answers: ["not-it", Self.code])
      #expect(!wrongPassword.authenticated && wrongPassword.error?.hasPrefix("AuthenticationException") == true, "\(wrongPassword.report)")
      #expect(wrongPassword.stdout.isEmpty && wrongPassword.status == nil)
      #expect(wrongPassword.prompts.count == 1 && wrongPassword.prompts.first?.hasPrefix("Password") == true, "\(wrongPassword.prompts)")
      #expect(tree.events == ["node start", "failure: Login failure"], "\(tree.events)")

      let wrongCode = try sshd.login(answers: [SigninPAMTests.password, "000000"])
      #expect(!wrongCode.authenticated && wrongCode.error?.hasPrefix("AuthenticationException") == true, "\(wrongCode.report)")
      #expect(wrongCode.stdout.isEmpty && wrongCode.status == nil)
      #expect(wrongCode.prompts.last?.hasPrefix("One Time Password") == true, "\(wrongCode.prompts)")
      #expect(tree.events.suffix(3) == ["node start", "node mfa", "failure: Wrong code"], "\(tree.events)")
      #expect(sshd.log.components(separatedBy: "Failed keyboard-interactive/pam for \(Self.user)").count == 3, "\(sshd.log)")
      #expect(!sshd.log.contains("Accepted"), "\(sshd.log)")
    }
  }
}
