import Foundation
import Testing

/// The identity through the binary: persistence, concurrency, permissions and rotation.
@Suite(.timeLimit(.minutes(10))) struct IdentityCommandTests {
  @Test func identifierPersistsAcrossProcessesAndMatchesCollect() throws {
    let state = try makeTemporaryDirectory()
    defer { removeTemporaryDirectory(state) }
    let env = ["FR_PROFILE_HOME": state + "/s"]
    let first = try run(["identifier"], environment: env)
    let second = try run(["identifier"], environment: env)
    #expect(first.status == 0)
    #expect(first.stdout == second.stdout)
    let collected = try run(["collect", "--no-metadata"], environment: env)
    #expect(collected.stdout.contains(first.stdout.trimmingCharacters(in: .newlines)))
    #expect(fileMode(state + "/s/device-key.pem") == 0o600)
    #expect(fileMode(state + "/s") == 0o700)
  }

  @Test func twentyConcurrentFirstRunsAgree() throws {
    let state = try makeTemporaryDirectory()
    defer { removeTemporaryDirectory(state) }
    let results = UnsafeMutableBufferPointer<RunResult?>.allocate(capacity: 20)
    defer { results.deallocate() }
    results.initialize(repeating: nil)
    nonisolated(unsafe) let slots = results
    DispatchQueue.concurrentPerform(iterations: 20) { index in
      slots[index] = try? run(["identifier", "--state-dir", state + "/s"])
    }
    let outputs = Set(results.map { $0?.stdout ?? "failed" })
    #expect(outputs.count == 1)
    #expect(results.allSatisfy { $0?.status == 0 })
    #expect(
      try FileManager.default.contentsOfDirectory(atPath: state + "/s").sorted() == [
        ".lock", "device-key.id", "device-key.pem", "device-key.pub",
      ])
  }

  @Test func publicKeyIsPEMAndPrivateKeyIsNeverPrinted() throws {
    let state = try makeTemporaryDirectory()
    defer { removeTemporaryDirectory(state) }
    let result = try run(["identifier", "--public-key", "--state-dir", state])
    #expect(result.status == 0)
    #expect(result.stdout.hasPrefix("-----BEGIN PUBLIC KEY-----\n"))
    let privateKey = try String(contentsOfFile: state + "/device-key.pem", encoding: .utf8)
    let body = privateKey.split(separator: "\n")[1]
    for args in [["identifier"], ["collect"], ["identifier", "--public-key"], ["tamper"], ["collect", "-v"]] {
      let output = try run(args + (args[0] == "tamper" ? [] : ["--state-dir", state]))
      #expect(!output.stdout.contains(body) && !output.stderr.contains(body))
    }
  }

  @Test func resetRotatesAndKeepsABackup() throws {
    let state = try makeTemporaryDirectory()
    defer { removeTemporaryDirectory(state) }
    let before = try run(["identifier", "--state-dir", state])
    let reset = try run(["identifier", "--reset", "--state-dir", state])
    #expect(reset.status == 0)
    #expect(reset.stdout != before.stdout)
    #expect(reset.stderr.contains(".bak"))
    let after = try run(["identifier", "--state-dir", state])
    #expect(after.stdout == reset.stdout)
    #expect(try FileManager.default.contentsOfDirectory(atPath: state).contains { $0.hasSuffix(".bak") })
  }

  @Test func groupReadableKeyIsRefusedAndLeftAlone() throws {
    let state = try makeTemporaryDirectory()
    defer { removeTemporaryDirectory(state) }
    _ = try run(["identifier", "--state-dir", state])
    chmod(state + "/device-key.pem", 0o644)
    let key = FileManager.default.contents(atPath: state + "/device-key.pem")
    let result = try run(["collect", "--state-dir", state])
    #expect(result.status == 77)
    #expect(result.stderr.contains("chmod 600"))
    #expect(result.stderr.split(separator: "\n").count == 1)
    #expect(result.stdout.isEmpty)
    #expect(FileManager.default.contents(atPath: state + "/device-key.pem") == key)
  }

  @Test func corruptKeyIsRefusedAndLeftAlone() throws {
    let state = try makeTemporaryDirectory()
    defer { removeTemporaryDirectory(state) }
    _ = try run(["identifier", "--state-dir", state])
    try "garbage".write(toFile: state + "/device-key.pem", atomically: false, encoding: .utf8)
    let result = try run(["collect", "--state-dir", state])
    #expect(result.status == 65)
    #expect(result.stderr.contains("corrupt"))
    #expect(try String(contentsOfFile: state + "/device-key.pem", encoding: .utf8) == "garbage")
  }

  @Test(.enabled(if: canDropPrivileges, "needs root to give the key away"))
  func foreignOwnedKeyIsRefused() throws {
    let state = try makeTemporaryDirectory()
    defer { removeTemporaryDirectory(state) }
    _ = try run(["identifier", "--state-dir", state])
    chown(state + "/device-key.pem", 65534, 65534)
    let result = try run(["collect", "--state-dir", state])
    #expect(result.status == 77)
    #expect(result.stderr.contains("belongs to uid 65534"))
  }

  @Test(.enabled(if: canDropPrivileges, "needs root to run as nobody"))
  func unwritableStateDirectoryIsAnErrorForCreationOnly() throws {
    let parent = try makeTemporaryDirectory()
    defer { removeTemporaryDirectory(parent) }
    chmod(parent, 0o755)
    let state = parent + "/state"
    mkdir(state, 0o500)
    chown(state, 65534, 65534)
    let create = try run(["identifier", "--state-dir", state], prefix: asNobody)
    #expect(create.status == 73)
    #expect(create.stderr.contains("cannot create the device key"))
    #expect(try FileManager.default.contentsOfDirectory(atPath: state).isEmpty)

    // With a key made while writable, a read-only state directory still works, and a reset
    // fails without touching the key.
    chmod(state, 0o700)
    let made = try run(["identifier", "--state-dir", state], prefix: asNobody)
    #expect(made.status == 0)
    chmod(state, 0o500)
    let key = FileManager.default.contents(atPath: state + "/device-key.pem")
    let again = try run(["collect", "--no-metadata", "--state-dir", state], prefix: asNobody)
    #expect(again.status == 0)
    #expect(again.stdout.contains(made.stdout.trimmingCharacters(in: .newlines)))
    let reset = try run(["identifier", "--reset", "--state-dir", state], prefix: asNobody)
    #expect(reset.status == 73)
    #expect(FileManager.default.contents(atPath: state + "/device-key.pem") == key)
  }

  @Test(.enabled(if: canDropPrivileges, "needs root to run as nobody"))
  func noHomeAndNoStateDirectoryIsAConfigurationError() throws {
    let result = try run(["collect"], environment: [:], prefix: asNobody)
    #expect(result.status == 78)
    #expect(result.stderr.contains("FR_PROFILE_HOME"))
  }
}

@Suite(.timeLimit(.minutes(10))) struct TamperCommandTests {
  @Test func explainsEachDetector() throws {
    let result = try run(["tamper", "--root", machineRoot("cloud-vm")])
    #expect(result.status == 0)
    #expect(result.stdout.hasPrefix("jailBreakScore 0.5\n"))
    #expect(result.stdout.contains("virtualization"))
    #expect(result.stdout.contains("Amazon EC2"))
    #expect(result.stdout.split(separator: "\n").count == 8)
  }

  @Test func jsonListsDetectorsWithEvidence() throws {
    let result = try run(["tamper", "--json", "--root", machineRoot("laptop")], environment: ["LD_PRELOAD": ""])
    expectValid(result.stdout, schema: "tamper")
    #expect(result.status == 0)
    let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
    #expect(object["score"] as? Double == 0)
    let detectors = try #require(object["detectors"] as? [[String: Any]])
    #expect(detectors.count == 7)
    #expect(detectors.allSatisfy { ($0["evidence"] as? [String])?.isEmpty == true })
  }
}
