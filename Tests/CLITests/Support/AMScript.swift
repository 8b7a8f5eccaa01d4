import Foundation
import ProfileJSON
import TestSupport

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

  /// The compiled stubs and the script server (javac into <package>/.build/am-script-stubs).
  static let stubs: Result<String, ScriptError> = {
    let directory = packageRoot + "/.build/am-script-stubs"
    let sources = ["stubs", "server"].flatMap { folder in
      (FileManager.default.enumerator(atPath: packageRoot + "/Tests/AMScript/" + folder)?.allObjects as? [String] ?? [])
        .filter { $0.hasSuffix(".java") }.map { packageRoot + "/Tests/AMScript/\(folder)/" + $0 }
    }
    // -XX:-UsePerfData (here and for the server): no /tmp/hsperfdata_<user> left behind.
    guard
      let compiled = try? CLITests.run(["-J-XX:-UsePerfData", "-cp", rhinoJar, "-d", directory] + sources, executable: "/usr/bin/javac"),
      compiled.status == 0
    else {
      return .failure(ScriptError("javac failed on Tests/AMScript/stubs and server (is openjdk-17-jdk-headless installed?)"))
    }
    return .success(directory)
  }()

  /// One JVM for every run of this test process (Tests/AMScript/server/AMScriptServer.java):
  /// each run gets a new Rhino shell global, as a JVM of its own would, for a few hundredths of
  /// a CPU-second instead of one. The client compiler only and one GC thread: C2's compiler
  /// threads cost more than they save on runs this short.
  static let server: Result<LineServer, ScriptError> = stubs.map { classes in
    LineServer(
      [
        "/usr/bin/java", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-XX:-UsePerfData", "-Dfile.encoding=UTF-8",
        "-cp", rhinoJar + ":" + classes, "AMScriptServer", packageRoot + "/Tests/AMScript/harness.js",
      ], environment: [:], errorLog: classes + "/server.log")
  }

  struct ScriptError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
  }

  /// Runs `script` once with `context` ({"sharedState", "transientState", "callbacks", "config"})
  /// and returns the node's result ({"outcome", "callbacks", "sharedState", "log"}). A run past
  /// `timeout` seconds is killed and throws: a script must never hang its journey (or the tests).
  static func run(_ script: String = attestationScript, context: JSON, timeout: Double = 60) throws -> JSON {
    let server = try server.get()
    let file = NSTemporaryDirectory() + "fr-profile-am-context-\(UUID().uuidString).json"
    try JSONWriter.compact(context).write(toFile: file, atomically: true, encoding: .utf8)
    defer { try? FileManager.default.removeItem(atPath: file) }
    let answer: String
    do {
      answer = try server.request(script + "\t" + file, timeout: timeout)
    } catch let failure as LineServer.Failure {
      throw ScriptError("the script did not finish: \(failure.description.prefix(2000))")
    }
    guard answer.hasPrefix("ok "), let parsed = try? JSONParser.parse(Array(answer.utf8.dropFirst(3))) else {
      throw ScriptError("the script did not run: \(answer.prefix(2000))")
    }
    return parsed
  }
}
