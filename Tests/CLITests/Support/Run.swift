import Foundation
import Glibc
import Synchronization

/// The result of one run of the built `fr-profile` binary.
struct RunResult {
  var status: Int32
  var stdout: String
  var stderr: String
  /// The child ran past its time limit and was killed.
  var timedOut = false
}

/// Where `swift build` put the products: the directory of the test bundle itself.
let productsDirectory: String = {
  if let override = ProcessInfo.processInfo.environment["FR_PROFILE_BIN_DIR"] { return override }
  let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
  return (exe as NSString).deletingLastPathComponent
}()

/// Path of the built `fr-profile` executable.
let frProfilePath = productsDirectory + "/fr-profile"

/// Runs `executable` (default: the built fr-profile) with `arguments`, the given environment
/// (nothing inherited unless passed) and optional standard input; waits for it to exit, or
/// kills it once it has run `timeout` seconds.
func run(
  _ arguments: [String], environment: [String: String] = [:], stdin: String? = nil,
  executable: String = frProfilePath, prefix: [String] = [], directory: String? = nil, timeout: Double? = nil
) throws -> RunResult {
  let process = Process()
  if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
  let argv = prefix + [executable] + arguments
  process.executableURL = URL(fileURLWithPath: argv[0])
  process.arguments = Array(argv.dropFirst())
  var env = environment
  if env["PATH"] == nil { env["PATH"] = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" }
  process.environment = env
  let outPipe = Pipe()
  let errPipe = Pipe()
  let inPipe = Pipe()
  process.standardOutput = outPipe
  process.standardError = errPipe
  process.standardInput = inPipe
  try process.run()
  // A runaway child is killed so its test fails instead of hanging the run. By pid, and only
  // while this function has not seen it exit (a reaped pid could be reused).
  let watchdog = Watchdog()
  if let timeout {
    let pid = process.processIdentifier
    DispatchQueue.global().asyncAfter(deadline: .now() + timeout) { watchdog.kill(pid) }
  }
  // Read both pipes concurrently so a chatty child cannot block on a full pipe.
  nonisolated(unsafe) var errData = Data()
  let group = DispatchGroup()
  group.enter()
  DispatchQueue.global().async {
    errData = readToEnd(errPipe.fileHandleForReading.fileDescriptor)
    group.leave()
  }
  if let stdin { inPipe.fileHandleForWriting.write(Data(stdin.utf8)) }
  try? inPipe.fileHandleForWriting.close()
  let outData = readToEnd(outPipe.fileHandleForReading.fileDescriptor)
  group.wait()
  process.waitUntilExit()
  return RunResult(
    status: process.terminationStatus,
    stdout: String(decoding: outData, as: UTF8.self),
    stderr: String(decoding: errData, as: UTF8.self), timedOut: watchdog.finish())
}

/// Whether a child was killed for running too long; `finish` disarms it once the child exited.
private final class Watchdog: Sendable {
  private let state = Mutex((exited: false, killed: false))

  func kill(_ pid: pid_t) {
    state.withLock { state in
      if !state.exited { state.killed = Glibc.kill(pid, SIGKILL) == 0 }
    }
  }

  func finish() -> Bool {
    state.withLock { state in
      state.exited = true
      return state.killed
    }
  }
}

/// All bytes from `fd` until end of file. FileHandle.readDataToEndOfFile traps on EINTR, which
/// the SIGCHLD of a concurrent test's child can cause.
func readToEnd(_ fd: Int32) -> Data {
  var data = Data()
  var buffer = [UInt8](repeating: 0, count: 65536)
  while true {
    let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
    if count < 0 && errno == EINTR { continue }
    if count <= 0 { return data }
    data.append(contentsOf: buffer[0..<count])
  }
}

/// A fresh temporary directory, removed by the caller with `removeTemporaryDirectory`.
func makeTemporaryDirectory(_ label: String = "fr-profile-test") throws -> String {
  var template = Array((NSTemporaryDirectory() + "/\(label).XXXXXX").utf8CString)
  guard let made = mkdtemp(&template) else { throw CocoaError(.fileWriteUnknown) }
  return String(cString: made)
}

func removeTemporaryDirectory(_ path: String) {
  try? FileManager.default.removeItem(atPath: path)
}
