import Foundation
import ProfileJSON

/// Runs a Scripted Decision node script the way AM's legacy engine does — Rhino with Java
/// classes — through Tests/AMScript/harness.js, with AM's Action and HiddenValueCallback
/// compiled from the stubs in Tests/AMScript/stubs (once per test process, into the package's
/// .build directory, whatever binary the tests run). Debian packages: rhino, openjdk-17-jdk-headless.
enum AMScript {
  static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent().path
  static let attestationScript = packageRoot + "/am/fr-tpm-attestation.js"
  static let postureScript = packageRoot + "/am/fr-posture.js"
  static let rhinoJar = "/usr/share/java/rhino.jar"

  /// The compiled stubs (javac into <package>/.build/am-script-stubs).
  static let stubs: Result<String, ScriptError> = {
    let directory = packageRoot + "/.build/am-script-stubs"
    let sources = (FileManager.default.enumerator(atPath: packageRoot + "/Tests/AMScript/stubs")?.allObjects as? [String] ?? [])
      .filter { $0.hasSuffix(".java") }.map { packageRoot + "/Tests/AMScript/stubs/" + $0 }
    guard let compiled = try? CLITests.run(["-d", directory] + sources, executable: "/usr/bin/javac"), compiled.status == 0 else {
      return .failure(ScriptError("javac failed on Tests/AMScript/stubs (is openjdk-17-jdk-headless installed?)"))
    }
    return .success(directory)
  }()

  struct ScriptError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
  }

  /// Runs `script` once with `context` ({"sharedState", "transientState", "callbacks", "config"})
  /// and returns the node's result ({"outcome", "callbacks", "sharedState", "log"}). A run past
  /// `timeout` seconds is killed and throws: a script must never hang its journey (or the tests).
  static func run(_ script: String = attestationScript, context: JSON, timeout: Double = 60) throws -> JSON {
    let classes = try stubs.get()
    let file = NSTemporaryDirectory() + "fr-profile-am-context-\(UUID().uuidString).json"
    try JSONWriter.compact(context).write(toFile: file, atomically: true, encoding: .utf8)
    defer { try? FileManager.default.removeItem(atPath: file) }
    let result = try CLITests.run(
      [
        // UTF-8 for the result on stdout, whatever the (empty) environment's locale says.
        // The client compiler only and one GC thread: a script runs for a second, where C2's
        // compiler threads cost more than they save (0.66 instead of 1.16 CPU-seconds a run here,
        // and the suite starts a JVM for every scripted round).
        "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Dfile.encoding=UTF-8", "-cp", rhinoJar + ":" + classes,
        "org.mozilla.javascript.tools.shell.Main",
        packageRoot + "/Tests/AMScript/harness.js", script,
        file,
      ], executable: "/usr/bin/java", timeout: timeout)
    if result.timedOut { throw ScriptError("the script ran longer than \(Int(timeout)) s and was killed") }
    guard result.status == 0, let parsed = try? JSONParser.parse(Array(result.stdout.utf8)) else {
      throw ScriptError("the script did not run (status \(result.status)): \(result.stderr.prefix(2000))")
    }
    return parsed
  }
}
