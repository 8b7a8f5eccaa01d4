import Glibc

/// One child process of a test, always bounded in time: the way every test target starts a
/// program (fr-profile, swtpm's tools, openssl, java). The child runs in a process group of its
/// own with an empty signal mask; past `timeout` the whole group gets SIGKILL, so a hung child —
/// or a grandchild holding its pipes — fails its test instead of holding CI.
public struct TestProcess {
  /// What a finished (or killed) child left.
  public struct Result: Sendable {
    public var status: Int32
    /// Standard output as bytes (`stdout` is it as UTF-8 text).
    public var output: [UInt8]
    public var stdout: String
    public var stderr: String
    /// True when the child was killed at its time limit (`status` is then 128 + SIGKILL).
    public var timedOut: Bool
  }

  /// The time limit of a child that names none: long enough for the slowest child the suites
  /// start (a Rhino run, a debootstrap is not started by tests), short beside CI's limit.
  public static let defaultTimeout: Double = 120

  /// Runs `argv` (argv[0] a path, or a name looked up in PATH) with exactly `environment`,
  /// `stdin` written to its standard input, in `directory` when given; waits for it, at most
  /// `timeout` seconds.
  public static func run(
    _ argv: [String], environment: [String: String], stdin: [UInt8] = [], directory: String? = nil,
    timeout: Double = defaultTimeout
  ) throws -> Result {
    var pipes = [[Int32]](repeating: [-1, -1], count: 3)
    for index in 0..<3 {
      // Close-on-exec atomically: with pipe() and then fcntl, a child another thread spawns in
      // between inherits the write end, and this child's output never ends.
      guard pipe2(&pipes[index], O_CLOEXEC) == 0 else { throw SWTPMError("pipe2: \(String(cString: strerror(errno)))") }
    }
    defer { for pair in pipes { for fd in pair where fd >= 0 { close(fd) } } }
    let pid = try spawn(argv, environment: environment, directory: directory, stdio: (pipes[0][0], pipes[1][1], pipes[2][1]))
    for (index, end) in [(0, 0), (1, 1), (2, 1)] {
      close(pipes[index][end])
      pipes[index][end] = -1
    }
    let deadline = monotonicSeconds() + timeout
    var input = stdin[...]
    var output: [[UInt8]] = [[], []]
    var open: [Int32] = [pipes[1][0], pipes[2][0]]
    var writer = pipes[0][1]
    if input.isEmpty {
      close(writer)
      pipes[0][1] = -1
      writer = -1
    }
    var timedOut = false
    var buffer = [UInt8](repeating: 0, count: 65536)
    while !open.allSatisfy({ $0 < 0 }) || writer >= 0 {
      let left = deadline - monotonicSeconds()
      if left <= 0 {
        timedOut = true
        kill(-pid, SIGKILL)
        break
      }
      var polled = open.filter { $0 >= 0 }.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
      if writer >= 0 { polled.append(pollfd(fd: writer, events: Int16(POLLOUT), revents: 0)) }
      let ready = poll(&polled, nfds_t(polled.count), Int32(min(left, 1) * 1000) + 1)
      if ready < 0 && errno != EINTR { break }
      for entry in polled where entry.revents != 0 {
        if entry.fd == writer {
          let count = input.withUnsafeBytes { write(writer, $0.baseAddress, $0.count) }
          if count > 0 { input = input.dropFirst(count) }
          if count < 0 && errno != EINTR && errno != EAGAIN || input.isEmpty {
            close(writer)
            pipes[0][1] = -1
            writer = -1
          }
          continue
        }
        let which = entry.fd == open[0] ? 0 : 1
        let count = read(entry.fd, &buffer, buffer.count)
        if count > 0 {
          output[which] += buffer[0..<count]
        } else if count == 0 || errno != EINTR && errno != EAGAIN {
          close(entry.fd)
          if which == 0 { pipes[1][0] = -1 } else { pipes[2][0] = -1 }
          open[which] = -1
        }
      }
    }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    // The group may outlive its leader (a daemonised grandchild): it is ours to end.
    kill(-pid, SIGKILL)
    let code = status & 0x7F == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
    return Result(
      status: code, output: output[0], stdout: String(decoding: output[0], as: UTF8.self),
      stderr: String(decoding: output[1], as: UTF8.self),
      timedOut: timedOut)
  }

  /// The spawn attributes of every child a test starts: no signal blocked, the default action
  /// for those a test runner may have changed, and a process group of its own (so a test can
  /// end it and its children at once).
  public static func childAttributes(_ attributes: inout posix_spawnattr_t) {
    var empty = sigset_t()
    sigemptyset(&empty)
    posix_spawnattr_setsigmask(&attributes, &empty)
    var defaults = sigset_t()
    sigemptyset(&defaults)
    for signal in [SIGTERM, SIGINT, SIGPIPE, SIGHUP, SIGCHLD] { sigaddset(&defaults, signal) }
    posix_spawnattr_setsigdefault(&attributes, &defaults)
    posix_spawnattr_setpgroup(&attributes, 0)
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP))
  }

  /// Makes the child close every descriptor from `lowest` up, before it runs its program:
  /// a descriptor without close-on-exec that another thread opened meanwhile (libtss2's TPM
  /// socket is one) must not live on in the child. An inherited TPM connection kept swtpm,
  /// which serves one connection at a time, from ever answering the test's next one: the suite
  /// hung on a fresh Debian 12 root (2026-11-27). glibc's
  /// posix_spawn_file_actions_addclosefrom_np (2.34) is a GNU extension Swift's Glibc does not
  /// import, so it is looked up.
  package static func closeInherited(_ actions: inout posix_spawn_file_actions_t, from lowest: Int32) {
    typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") else {
      preconditionFailure("glibc 2.34 or later is needed: posix_spawn_file_actions_addclosefrom_np")
    }
    _ = unsafeBitCast(symbol, to: AddCloseFrom.self)(&actions, lowest)
  }

  /// Starts `argv` in a process group of its own, with an empty signal mask and default
  /// dispositions, `stdio` as its descriptors 0, 1 and 2 and no other descriptor; returns its pid.
  static func spawn(
    _ argv: [String], environment: [String: String], directory: String?, stdio: (Int32, Int32, Int32)
  ) throws -> pid_t {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_adddup2(&actions, stdio.0, 0)
    posix_spawn_file_actions_adddup2(&actions, stdio.1, 1)
    posix_spawn_file_actions_adddup2(&actions, stdio.2, 2)
    closeInherited(&actions, from: 3)
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    childAttributes(&attributes)
    var env = environment
    if env["PATH"] == nil { env["PATH"] = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" }
    // posix_spawn_file_actions_addchdir_np is a GNU extension Swift's Glibc does not import:
    // coreutils' env changes the directory instead.
    let argv = directory.map { ["/usr/bin/env", "-C", $0] + argv } ?? argv
    let argvC = argv.map { strdup($0) } + [nil]
    let envC = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer {
      for pointer in argvC { free(pointer) }
      for pointer in envC { free(pointer) }
    }
    var pid: pid_t = 0
    let spawned =
      argv[0].contains("/")
      ? posix_spawn(&pid, argv[0], &actions, &attributes, argvC, envC)
      : posix_spawnp(&pid, argv[0], &actions, &attributes, argvC, envC)
    guard spawned == 0 else { throw SWTPMError("cannot run \(argv[0]): \(String(cString: strerror(spawned)))") }
    return pid
  }

  static func monotonicSeconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
  }
}

/// glibc's pipe2 (a GNU extension the Glibc module does not import).
@_silgen_name("pipe2") func pipe2(_ fds: UnsafeMutablePointer<Int32>, _ flags: Int32) -> Int32
