import Glibc
import Synchronization

/// A software TPM (swtpm, the TPM 2.0 reference code in libtpms) for one test: its
/// state in a fresh temporary directory, its server and control channels on loopback ports.
/// Started with `startup-clear`, so it is ready for commands; stopped (SIGTERM, then reaped)
/// by `stop()` or deinit.
public final class SWTPM {
  public let stateDirectory: String
  public let port: UInt16
  public private(set) var pid: pid_t = 0

  /// The tpm2-tss loader string for this instance.
  public var tcti: String { "swtpm:host=127.0.0.1,port=\(port)" }

  /// Starts an instance with a new state directory (a TPM of its own: new seeds), or on
  /// `stateDirectory` when given (the same TPM again).
  public init(stateDirectory existing: String? = nil) throws {
    if let existing {
      stateDirectory = existing
    } else {
      var template = Array("/tmp/fr-profile-swtpm.XXXXXX".utf8CString)
      guard let made = mkdtemp(&template) else { throw SWTPMError("mkdtemp failed") }
      stateDirectory = String(cString: made)
    }
    var lastError = "no attempt"
    for _ in 0..<20 {
      let port = UInt16.random(in: 20000...60000) & ~1
      do {
        pid = try Self.launch(port: port, stateDirectory: stateDirectory)
        self.port = port
        return
      } catch {
        lastError = "\(error)"
      }
    }
    throw SWTPMError("swtpm did not start: \(lastError)")
  }

  private static func launch(port: UInt16, stateDirectory: String) throws -> pid_t {
    let arguments = [
      "swtpm", "socket", "--tpm2", "--tpmstate", "dir=\(stateDirectory)",
      "--server", "type=tcp,port=\(port),bindaddr=127.0.0.1",
      "--ctrl", "type=tcp,port=\(port + 1),bindaddr=127.0.0.1",
      "--flags", "not-need-init,startup-clear",
    ]
    var child: pid_t = 0
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
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
    // Ready when the server port accepts a connection; gone when the child exited (port taken).
    for _ in 0..<200 {
      var exitStatus: Int32 = 0
      if waitpid(child, &exitStatus, WNOHANG) == child { throw SWTPMError("swtpm exited (port \(port) in use?)") }
      if accepts(port: port) { return child }
      usleep(25_000)
    }
    kill(child, SIGKILL)
    var exitStatus: Int32 = 0
    waitpid(child, &exitStatus, 0)
    throw SWTPMError("swtpm did not listen on port \(port) within 5 s")
  }

  private static func accepts(port: UInt16) -> Bool {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = port.bigEndian
    address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
    return withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
    }
  }

  /// Runs a tpm2-tools command (Debian tpm2-tools) against this instance: an implementation
  /// the project did not write, to provision or judge what fr-profile does.
  public func tool(_ name: String, _ arguments: [String], directory: String? = nil) throws -> TestProcess.Result {
    try TestProcess.run(["/usr/bin/" + name] + arguments, environment: ["TPM2TOOLS_TCTI": tcti], directory: directory, timeout: 60)
  }

  /// Stops the instance (SIGTERM, waits); the state directory stays until `removeState()`.
  public func stop() {
    guard pid > 0 else { return }
    kill(pid, SIGTERM)
    var status: Int32 = 0
    for _ in 0..<200 {
      if waitpid(pid, &status, WNOHANG) == pid {
        pid = 0
        return
      }
      usleep(10_000)
    }
    kill9()
  }

  /// Kills the instance abruptly (the TPM "disappears").
  public func kill9() {
    guard pid > 0 else { return }
    kill(pid, SIGKILL)
    var status: Int32 = 0
    waitpid(pid, &status, 0)
    pid = 0
  }

  public func removeState() {
    for name in ["tpm2-00.permall", "tpm2-00.volatile", ".lock"] { unlink(stateDirectory + "/" + name) }
    rmdir(stateDirectory)
  }

  deinit {
    stop()
  }
}

public struct SWTPMError: Error, CustomStringConvertible {
  public var description: String
  public init(_ description: String) { self.description = description }
}
