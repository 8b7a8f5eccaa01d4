import Foundation
import Glibc
import Synchronization

/// A software TPM (swtpm, the TPM 2.0 reference code in libtpms) for one test: its state in a
/// fresh temporary directory (or `stateDirectory`), its channels on loopback. tpm2-tss's swtpm
/// TCTI finds the control channel at the server's port + 1, so this process binds both ports
/// first (the kernel choosing them), hands the control socket to swtpm (`--ctrl …,fd=`, a
/// listening socket) and lets go of the server port just before swtpm binds it (`--server`'s
/// `fd=` is a connected client's, not a listening socket). Readiness is swtpm's own answer on
/// the control socket (CMD_GET_CAPABILITY): by then its server socket listens. If swtpm could
/// not start (the server port was taken in between), the control socket is gone with it and
/// another pair is tried. Started with `startup-clear`. Use it through `withSWTPM`, which stops
/// it and removes a fresh state whatever happens.
public final class SWTPM {
  public let stateDirectory: String
  public let port: UInt16
  public private(set) var pid: pid_t = 0
  /// Whether the state directory was made for this instance (and is removed with it).
  let ownsState: Bool

  /// The tpm2-tss loader string for this instance.
  public var tcti: String { "swtpm:host=127.0.0.1,port=\(port)" }

  /// Starts an instance with a new state directory (a TPM of its own: new seeds), or on
  /// `stateDirectory` when given (the same TPM again).
  public init(stateDirectory existing: String? = nil) throws {
    if let existing {
      stateDirectory = existing
      ownsState = false
    } else {
      var template = Array("/tmp/fr-profile-swtpm.XXXXXX".utf8CString)
      guard let made = mkdtemp(&template) else { throw SWTPMError("mkdtemp failed") }
      stateDirectory = String(cString: made)
      ownsState = true
    }
    var lastError = "no attempt"
    for _ in 0..<8 {
      let (server, control) = try Self.socketPair()
      close(server.fd)
      let child: pid_t
      do { child = try Self.launch(port: server.port, control: control.fd, stateDirectory: stateDirectory) } catch {
        close(control.fd)
        throw error
      }
      close(control.fd)
      if Self.answers(controlPort: control.port) {
        port = server.port
        pid = child
        return
      }
      kill(child, SIGKILL)
      var status: Int32 = 0
      waitpid(child, &status, 0)
      lastError = "swtpm did not answer on its control channel (port \(control.port))"
    }
    throw SWTPMError(lastError)
  }

  /// Whether swtpm answers CMD_GET_CAPABILITY (0x00000001) on its control channel with
  /// TPM_SUCCESS: it is up, its server socket bound. At most 10 s.
  private static func answers(controlPort: UInt16) -> Bool {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    var timeout = timeval(tv_sec: 10, tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = controlPort.bigEndian
    address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
    let connected = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
    }
    guard connected, write(fd, [0, 0, 0, 1] as [UInt8], 4) == 4 else { return false }
    var reply = [UInt8](repeating: 0xFF, count: 8)
    var got = 0
    while got < 8 {
      let count = reply.withUnsafeMutableBytes { read(fd, $0.baseAddress! + got, 8 - got) }
      if count < 0 && errno == EINTR { continue }
      if count <= 0 { return false }
      got += count
    }
    return reply[0..<4] == [0, 0, 0, 0]
  }

  /// The server socket on a port the kernel chooses and the control socket on the next one —
  /// tpm2-tss's swtpm TCTI finds the control channel at port + 1 — both bound and listening
  /// before swtpm starts. A pair whose second port is taken is let go and another tried.
  private static func socketPair() throws -> (server: (fd: Int32, port: UInt16), control: (fd: Int32, port: UInt16)) {
    for _ in 0..<64 {
      let server = try listeningSocket(port: 0)
      if server.port < UInt16.max, let control = try? listeningSocket(port: server.port + 1) { return (server, control) }
      close(server.fd)
    }
    throw SWTPMError("no two consecutive free ports on 127.0.0.1 in 64 tries")
  }

  /// A TCP socket bound to 127.0.0.1 on `port` (0: one the kernel chooses), listening.
  private static func listeningSocket(port: UInt16) throws -> (fd: Int32, port: UInt16) {
    // Close-on-exec from the start: a child another test spawns meanwhile must not keep a
    // listening copy (a port nobody answers on).
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { throw SWTPMError("socket: \(String(cString: strerror(errno)))") }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
    address.sin_port = port.bigEndian
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
    }
    guard bound, listen(fd, 16) == 0 else {
      close(fd)
      throw SWTPMError("bind/listen on 127.0.0.1: \(String(cString: strerror(errno)))")
    }
    return (fd, UInt16(bigEndian: address.sin_port))
  }

  private static func launch(port: UInt16, control: Int32, stateDirectory: String) throws -> pid_t {
    // The control socket becomes the child's descriptor 3 (dup2 clears close-on-exec).
    let arguments = [
      "swtpm", "socket", "--tpm2", "--tpmstate", "dir=\(stateDirectory)", "--server", "type=tcp,port=\(port),bindaddr=127.0.0.1",
      "--ctrl", "type=tcp,fd=3", "--flags", "not-need-init,startup-clear",
    ]
    var child: pid_t = 0
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
    posix_spawn_file_actions_adddup2(&actions, control, 3)
    TestProcess.closeInherited(&actions, from: 4)
    // The test runner's threads block signals; swtpm must not inherit that (it would ignore
    // SIGTERM), so the child starts with an empty mask and default dispositions.
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var empty = sigset_t()
    sigemptyset(&empty)
    posix_spawnattr_setsigmask(&attributes, &empty)
    var defaults = sigset_t()
    sigemptyset(&defaults)
    for signal in [SIGTERM, SIGINT, SIGPIPE, SIGHUP] { sigaddset(&defaults, signal) }
    posix_spawnattr_setsigdefault(&attributes, &defaults)
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
    let argv = arguments.map { strdup($0) } + [nil]
    defer { for pointer in argv { free(pointer) } }
    let status = posix_spawnp(&child, "swtpm", &actions, &attributes, argv, environ)
    guard status == 0 else { throw SWTPMError("cannot run swtpm (install Debian swtpm): \(String(cString: strerror(status)))") }
    return child
  }

  /// Stops the instance and reaps it: SIGCONT (a test may have stopped it) and SIGTERM, and
  /// SIGKILL from a timer should it not end within 5 s; the state directory stays until
  /// `removeState()`.
  public func stop() {
    guard pid > 0 else { return }
    let target = pid
    kill(target, SIGCONT)
    kill(target, SIGTERM)
    let reaped = Atomic<Bool>(false)
    let killer = Thread {
      var left = timespec(tv_sec: 5, tv_nsec: 0)
      var rest = timespec()
      while nanosleep(&left, &rest) != 0 && errno == EINTR { left = rest }
      if !reaped.load(ordering: .acquiring) { kill(target, SIGKILL) }
    }
    killer.start()
    var status: Int32 = 0
    while waitpid(target, &status, 0) < 0 && errno == EINTR {}
    reaped.store(true, ordering: .releasing)
    pid = 0
  }

  /// Kills the instance abruptly (the TPM "disappears").
  public func kill9() {
    guard pid > 0 else { return }
    kill(pid, SIGKILL)
    var status: Int32 = 0
    waitpid(pid, &status, 0)
    pid = 0
  }

  /// Removes the state directory with everything in it: swtpm's files and what tests put there
  /// (tpm2-tools' contexts and key files; removing only swtpm's names left one directory in
  /// /tmp per such test).
  public func removeState() {
    try? FileManager.default.removeItem(atPath: stateDirectory)
  }

  deinit {
    stop()
  }
}

/// Runs `body` with a software TPM — fresh, or on `stateDirectory` (the same TPM again) — and
/// stops it when `body` returns or throws, removing the state it made: the one swtpm set-up of
/// the suites.
public func withSWTPM<T>(stateDirectory: String? = nil, _ body: (SWTPM) throws -> T) throws -> T {
  let tpm = try SWTPM(stateDirectory: stateDirectory)
  defer {
    tpm.stop()
    if tpm.ownsState { tpm.removeState() }
  }
  return try body(tpm)
}

/// `withSWTPM` for asynchronous tests.
public func withSWTPM<T>(stateDirectory: String? = nil, _ body: (SWTPM) async throws -> T) async throws -> T {
  let tpm = try SWTPM(stateDirectory: stateDirectory)
  defer {
    tpm.stop()
    if tpm.ownsState { tpm.removeState() }
  }
  return try await body(tpm)
}

extension SWTPM {
  /// Runs a tpm2-tools command (Debian tpm2-tools) against this instance: an implementation
  /// the project did not write, to provision or judge what fr-profile does.
  public func tool(_ name: String, _ arguments: [String], directory: String? = nil) throws -> TestProcess.Result {
    try TestProcess.run(["/usr/bin/" + name] + arguments, environment: ["TPM2TOOLS_TCTI": tcti], directory: directory, timeout: 60)
  }
}

public struct SWTPMError: Error, CustomStringConvertible {
  public var description: String
  public init(_ description: String) { self.description = description }
}
