import Foundation
import ProfileJSON
import TPMKeys
import TPMProtocol
import TestSupport
import Testing

/// The device identity in a TPM (swtpm on loopback, one per test): `identifier --move-to-tpm`,
/// collect and identifier agreeing across processes, a copied state directory.
@Suite(.timeLimit(.minutes(10))) struct TPMIdentityCommandTests {
  func identifierOf(collect result: RunResult) throws -> String? {
    try JSONParser.parse(Array(result.stdout.utf8))["identifier"]?.stringValue
  }

  @Test func moveToTPMChangesTheIdentifierKeepsABackupAndAllProcessesAgree() throws {
    try withSWTPM { tpm in
      let directory = try makeTemporaryDirectory("fr-profile-tpm-identity")
      defer { removeTemporaryDirectory(directory) }
      let state = directory + "/state"
      let before = try run(["identifier", "--state-dir", state])
      #expect(before.status == 0)
      let moved = try run(["identifier", "--move-to-tpm", "--state-dir", state, "--tcti", tpm.tcti])
      #expect(moved.status == 0, "\(moved.stderr)")
      #expect(moved.stdout != before.stdout && moved.stderr.contains("identifier changed"))
      let names = try FileManager.default.contentsOfDirectory(atPath: state)
      #expect(names.contains("device-key.tpm") && !names.contains("device-key.pem"))
      #expect(names.contains { $0.hasPrefix("device-key.pem.") && $0.hasSuffix(".bak") })
      // Each process computes the same identifier: collect (no TPM), identifier (TPM check).
      for _ in 0..<2 {
        let checked = try run(["identifier", "--state-dir", state, "--tcti", tpm.tcti])
        #expect(checked.status == 0 && checked.stdout == moved.stdout, "\(checked.stderr)")
        let collected = try run(["collect", "--state-dir", state, "--no-metadata"])
        #expect(try identifierOf(collect: collected).map { $0 + "\n" } == moved.stdout)
      }
      // A second move changes nothing.
      let again = try run(["identifier", "--move-to-tpm", "--state-dir", state, "--tcti", tpm.tcti])
      #expect(again.status == 0 && again.stdout == moved.stdout && again.stderr.contains("already in the TPM"))
    }
  }

  func contents(_ path: String) -> Data? { FileManager.default.contents(atPath: path) }

  @Test func resetOfATPMIdentityMakesANewTPMKeyKeepsTheOldBlobAndAllProcessesAgree() throws {
    try withSWTPM { tpm in
      let directory = try makeTemporaryDirectory("fr-profile-tpm-identity")
      defer { removeTemporaryDirectory(directory) }
      let state = directory + "/state"
      let moved = try run(["identifier", "--move-to-tpm", "--state-dir", state, "--tcti", tpm.tcti])
      #expect(moved.status == 0, "\(moved.stderr)")
      let oldBlob = try #require(contents(state + "/device-key.tpm"))
      let reset = try run(["identifier", "--reset", "--state-dir", state, "--tcti", tpm.tcti])
      #expect(reset.status == 0, "\(reset.stderr)")
      #expect(reset.stdout != moved.stdout && reset.stderr.contains("AM will see this device as new"), "\(reset.stderr)")
      // The new key is in the TPM (no file key was made); the old blob is kept as a backup.
      let names = try FileManager.default.contentsOfDirectory(atPath: state)
      #expect(!names.contains("device-key.pem"), "\(names)")
      #expect(contents(state + "/device-key.tpm") != oldBlob)
      let backups = names.filter { $0.hasPrefix("device-key.tpm.") && $0.hasSuffix(".bak") }
      #expect(backups.count == 1 && backups.first.flatMap { contents(state + "/" + $0) } == oldBlob, "\(names)")
      #expect(reset.stderr.contains(backups.first ?? "no backup"))
      // identifier (which loads the key in the TPM) and collect (which does not) agree on it.
      let checked = try run(["identifier", "--verbose", "--state-dir", state, "--tcti", tpm.tcti])
      #expect(checked.status == 0 && checked.stdout == reset.stdout, "\(checked.stderr)")
      #expect(checked.stderr.contains("key store: tpm"))
      let collected = try run(["collect", "--state-dir", state, "--no-metadata"])
      #expect(try identifierOf(collect: collected).map { $0 + "\n" } == reset.stdout)
    }
  }

  @Test func resetOfATPMIdentityWithTheTPMGoneIsExit80AndChangesNothing() throws {
    try withSWTPM { tpm in
      let directory = try makeTemporaryDirectory("fr-profile-tpm-identity")
      defer { removeTemporaryDirectory(directory) }
      let state = directory + "/state"
      let moved = try run(["identifier", "--move-to-tpm", "--state-dir", state, "--tcti", tpm.tcti])
      #expect(moved.status == 0, "\(moved.stderr)")
      let names = try FileManager.default.contentsOfDirectory(atPath: state).sorted()
      let blob = contents(state + "/device-key.tpm")
      tpm.kill9()
      let reset = try run(["identifier", "--reset", "--state-dir", state, "--tcti", tpm.tcti])
      #expect(reset.status == 80, "\(reset.stderr)")
      #expect(reset.stdout.isEmpty && reset.stderr.contains("no usable TPM"), "\(reset.stderr)")
      #expect(try FileManager.default.contentsOfDirectory(atPath: state).sorted() == names)
      #expect(contents(state + "/device-key.tpm") == blob)
      let collected = try run(["collect", "--state-dir", state, "--no-metadata"])
      #expect(try identifierOf(collect: collected).map { $0 + "\n" } == moved.stdout)
    }
  }

  @Test func moveToTPMTakesJSONAndOutputFileLikeIdentifier() throws {
    try withSWTPM { tpm in
      let directory = try makeTemporaryDirectory("fr-profile-tpm-identity")
      defer { removeTemporaryDirectory(directory) }
      let state = directory + "/state"
      // --json: {"identifier": …} on stdout, compact when piped.
      let json = try run(["identifier", "--move-to-tpm", "--json", "--state-dir", state, "--tcti", tpm.tcti])
      #expect(json.status == 0, "\(json.stderr)")
      let moved = try JSONParser.parse(Array(json.stdout.utf8))["identifier"]?.stringValue
      let checked = try run(["identifier", "--state-dir", state, "--tcti", tpm.tcti])
      #expect(moved != nil && checked.status == 0 && checked.stdout == (moved ?? "") + "\n", "\(json.stdout) \(checked.stderr)")
      #expect(json.stdout == "{\"identifier\":\"\(moved ?? "")\"}\n")
      // -o FILE: nothing on stdout, the identifier in the file.
      let other = directory + "/other"
      let file = directory + "/identifier.txt"
      let written = try run(["identifier", "--move-to-tpm", "-o", file, "--state-dir", other, "--tcti", tpm.tcti])
      #expect(written.status == 0 && written.stdout.isEmpty, "\(written.stderr)")
      let otherChecked = try run(["identifier", "--state-dir", other, "--tcti", tpm.tcti])
      #expect(otherChecked.status == 0 && contents(file).map { String(decoding: $0, as: UTF8.self) } == otherChecked.stdout)
      // The same usage rules as identifier: --pretty needs --json.
      let pretty = try run(["identifier", "--move-to-tpm", "--pretty", "--state-dir", state, "--tcti", tpm.tcti])
      #expect(pretty.status == 64 && pretty.stderr.contains("--json"))
    }
  }

  @Test func resetOfATPMIdentityTakesJSONAndOutputFileLikeIdentifier() throws {
    try withSWTPM { tpm in
      let directory = try makeTemporaryDirectory("fr-profile-tpm-identity")
      defer { removeTemporaryDirectory(directory) }
      let state = directory + "/state"
      let moved = try run(["identifier", "--move-to-tpm", "--state-dir", state, "--tcti", tpm.tcti])
      #expect(moved.status == 0, "\(moved.stderr)")
      let jsonFile = directory + "/identifier.json"
      let reset = try run(["identifier", "--reset", "--json", "--pretty", "-o", jsonFile, "--state-dir", state, "--tcti", tpm.tcti])
      #expect(reset.status == 0 && reset.stdout.isEmpty, "\(reset.stderr)")
      let after = try run(["identifier", "--state-dir", state, "--tcti", tpm.tcti])
      let resetJSON = try #require(contents(jsonFile))
      #expect(String(decoding: resetJSON, as: UTF8.self).contains("\n  \"identifier\""))
      #expect(try JSONParser.parse(Array(resetJSON))["identifier"]?.stringValue.map { $0 + "\n" } == after.stdout)
      #expect(after.status == 0 && after.stdout != moved.stdout, "\(after.stderr)")
    }
  }

  @Test func twentyConcurrentMovesAgreeOnOneTPMKey() throws {
    try withSWTPM { tpm in
      let directory = try makeTemporaryDirectory("fr-profile-tpm-identity")
      defer { removeTemporaryDirectory(directory) }
      let state = directory + "/state"
      let results = UnsafeMutableBufferPointer<RunResult?>.allocate(capacity: 20)
      defer { results.deallocate() }
      results.initialize(repeating: nil)
      nonisolated(unsafe) let slots = results
      let tcti = tpm.tcti
      DispatchQueue.concurrentPerform(iterations: 20) { index in
        slots[index] = try? run(["identifier", "--move-to-tpm", "--state-dir", state, "--tcti", tcti])
      }
      #expect(results.allSatisfy { $0?.status == 0 }, "\(results.compactMap { $0?.stderr })")
      #expect(Set(results.map { $0?.stdout ?? "failed" }).count == 1)
      let names = try FileManager.default.contentsOfDirectory(atPath: state)
      #expect(names.filter { $0.hasPrefix("device-key.tpm") }.count == 1)
      let collected = try run(["collect", "--state-dir", state, "--no-metadata"])
      #expect(try identifierOf(collect: collected).map { $0 + "\n" } == results[0]?.stdout)
    }
  }

  @Test func stateDirectoryCopiedToAnotherTPMFailsWithExit81AndNoNewIdentity() throws {
    try withSWTPM { tpm in
      try withSWTPM { other in
        let directory = try makeTemporaryDirectory("fr-profile-tpm-identity")
        defer { removeTemporaryDirectory(directory) }
        let state = directory + "/state"
        let moved = try run(["identifier", "--move-to-tpm", "--state-dir", state, "--tcti", tpm.tcti])
        #expect(moved.status == 0, "\(moved.stderr)")
        let names = try FileManager.default.contentsOfDirectory(atPath: state).sorted()
        let copied = try run(["identifier", "--state-dir", state, "--tcti", other.tcti])
        #expect(copied.status == 81, "\(copied.stderr)")
        #expect(copied.stdout.isEmpty && copied.stderr.contains("another TPM"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: state).sorted() == names)
      }
    }
  }

  @Test func identityInTheTPMWithTheTPMGoneIsExit80() throws {
    try withSWTPM { tpm in
      let directory = try makeTemporaryDirectory("fr-profile-tpm-identity")
      defer { removeTemporaryDirectory(directory) }
      let state = directory + "/state"
      #expect(try run(["identifier", "--move-to-tpm", "--state-dir", state, "--tcti", tpm.tcti]).status == 0)
      tpm.kill9()
      let gone = try run(["identifier", "--state-dir", state, "--tcti", tpm.tcti])
      #expect(gone.status == 80, "\(gone.stderr)")
      #expect(gone.stderr.contains("no usable TPM"))
      let noTPM = try run(["identifier", "--move-to-tpm", "--state-dir", directory + "/fresh", "--tcti", "device:/nonexistent/tpmrm0"])
      #expect(noTPM.status == 80)
    }
  }

  @Test func verboseSaysWhichStoreHoldsTheIdentityAndAnUnsafeTPMKeyFileIsExit77() throws {
    try withSWTPM { tpm in
      let directory = try makeTemporaryDirectory("fr-profile-tpm-identity")
      defer { removeTemporaryDirectory(directory) }
      let state = directory + "/state"
      let file = try run(["identifier", "--verbose", "--state-dir", state])
      #expect(file.status == 0 && file.stderr.contains("key store: file"))
      #expect(try run(["identifier", "--move-to-tpm", "--state-dir", state, "--tcti", tpm.tcti]).status == 0)
      let inTPM = try run(["identifier", "--verbose", "--state-dir", state, "--tcti", tpm.tcti])
      #expect(inTPM.status == 0 && inTPM.stderr.contains("key store: tpm (\(tpm.tcti))"), "\(inTPM.stderr)")
      // The blob gets the same safety checks as the PEM key: group-readable is refused, collect too.
      chmod(state + "/device-key.tpm", 0o640)
      let unsafe = try run(["collect", "--state-dir", state, "--no-metadata"])
      #expect(unsafe.status == 77, "\(unsafe.stderr)")
      #expect(unsafe.stderr.contains("device-key.tpm"))
      // The advice must fix it: go-w would leave the blob group-readable.
      #expect(unsafe.stderr.contains("chmod 600"), "\(unsafe.stderr)")
    }
  }
}

/// Through the commands: on a TPM whose persistent SRK lacks noDA, another
/// user's wrong PINs that lock the TPM out never stop the identity or attestation.
extension TPMIdentityCommandTests {
  @Test("a persistent SRK without noDA: identifier and attest request still work while the TPM is locked out")
  func lockoutThroughAPersistentSRKWithoutNoDA() throws {
    try withSWTPM { tpm in
      for (tool, arguments) in [
        ("tpm2_createprimary", ["-C", "o", "-G", "ecc", "-c", "srk.ctx"]),
        ("tpm2_evictcontrol", ["-C", "o", "-c", "srk.ctx", "0x81000001"]),
        ("tpm2_flushcontext", ["-t"]),
      ] {
        let result = try tpm.tool(tool, arguments, directory: tpm.stateDirectory)
        try #require(result.status == 0, "\(tool): \(result.stderr)")
      }
      let directory = try makeTemporaryDirectory("fr-profile-tpm-srk")
      defer { removeTemporaryDirectory(directory) }
      let state = ["--state-dir", directory + "/state", "--tcti", tpm.tcti]
      let moved = try run(["identifier", "--move-to-tpm"] + state)
      #expect(moved.status == 0, "\(moved.stderr)")
      // Another user's PIN key, wrong PINs until the lockout.
      let context = try TPMContext.open(tcti: tpm.tcti)
      try context.setDictionaryAttackParameters(maxTries: 1, recoverySeconds: 600, lockoutRecoverySeconds: 600)
      let theirs = try context.createSigningKey(authValue: Array("1234".utf8))
      #expect(throws: TPMError.authFailed) { try context.sign([1], with: theirs, authValue: Array("0000".utf8)) }
      #expect(throws: TPMError.lockout) { try context.sign([1], with: theirs, authValue: Array("1234".utf8)) }
      let checked = try run(["identifier"] + state)
      #expect(checked.status == 0 && checked.stdout == moved.stdout, "\(checked.stderr)")
      let request = try run(["attest", "request"] + state)
      #expect(request.status == 0, "\(request.stderr)")
    }
  }
}
