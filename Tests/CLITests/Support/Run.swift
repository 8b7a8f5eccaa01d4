import Foundation
import Glibc
import TestSupport

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

/// The test-only executable with the seams (Tests/Seams): fr-profile's commands, PAM services and
/// app policies as the environment's FR_PROFILE_TEST_* say. `fr-profile` itself has no seam.
let frProfileSeamsPath = productsDirectory + "/fr-profile-seams"

/// The fr-profile to run with `environment`: the seams executable when it names a seam.
func frProfile(for environment: [String: String]) -> String {
  environment.keys.contains { $0.hasPrefix("FR_PROFILE_TEST_") } ? frProfileSeamsPath : frProfilePath
}

/// Runs `executable` (default: the built fr-profile, or its seams executable for an environment
/// that names a seam) with `arguments`, the given environment
/// (nothing inherited unless passed) and optional standard input; waits for it to exit, or
/// kills its whole process group once it has run `timeout` seconds (`TestProcess`): every child
/// of a test is bounded, so a hang fails its test instead of CI.
func run(
  _ arguments: [String], environment: [String: String] = [:], stdin: String? = nil,
  executable: String? = nil, prefix: [String] = [], directory: String? = nil,
  timeout: Double = TestProcess.defaultTimeout
) throws -> RunResult {
  let result = try TestProcess.run(
    prefix + [executable ?? frProfile(for: environment)] + arguments, environment: environment, stdin: Array((stdin ?? "").utf8),
    directory: directory,
    timeout: timeout)
  return RunResult(status: result.status, stdout: result.stdout, stderr: result.stderr, timedOut: result.timedOut)
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
