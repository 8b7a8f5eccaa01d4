import Foundation
import Testing

/// The key store and `--output` against a local attacker (`nobody`),
/// symlink swaps, FIFOs, interrupted resets and leftovers — through the built binary.
@Suite(.timeLimit(.minutes(10))) struct IdentityHardeningTests {
  let laptop = ["--root", machineRoot("laptop")]

  func identifier(_ state: String, _ extra: [String] = [], prefix: [String] = []) throws -> RunResult {
    try run(["identifier", "--state-dir", state] + laptop + extra, prefix: prefix)
  }

  func collectIdentifier(_ state: String, prefix: [String] = []) throws -> RunResult {
    try run(["collect", "--no-metadata", "--compact", "--state-dir", state] + laptop, prefix: prefix)
  }

  /// A root-owned 0755 directory under a fresh temporary directory (without "//").
  func makeParent() throws -> String {
    let top = try makeTemporaryDirectory("fr-profile-hardening")
    chmod(top, 0o755)
    return normalized(top)
  }

  @Test(.enabled(if: canDropPrivileges, "needs root to give a directory to nobody"))
  func item1StateDirectoryUnderAParentNobodyOwnsIsRefused() throws {
    let top = try makeParent()
    defer { removeTemporaryDirectory(top) }
    mkdir(top + "/parent", 0o755)
    chown(top + "/parent", 65534, 65534)
    let state = top + "/parent/state"
    let result = try collectIdentifier(state)
    #expect(result.status == 77)
    #expect(result.stdout.isEmpty)
    #expect(result.stderr.contains(top + "/parent") && result.stderr.contains("uid 65534"))
    #expect(!FileManager.default.fileExists(atPath: state))
  }

  @Test(.enabled(if: canDropPrivileges, "needs root to run the attacker as nobody"))
  func item1ParentSwapRaceNeverYieldsTheAttackersIdentifier() throws {
    // The attack of the issue: `nobody` owns the state directory's parent and swaps the state
    // directory for its own (symlink + rename) in a loop while root collects.
    let top = try makeParent()
    defer { removeTemporaryDirectory(top) }
    mkdir(top + "/parent", 0o755)
    chown(top + "/parent", 65534, 65534)
    let state = top + "/parent/state"
    let attackerState = top + "/parent/evil"
    mkdir(attackerState, 0o700)
    _ = try identifier(top + "/root-state")  // a key of root's own, for the attacker to copy from
    let evilKey = try String(contentsOfFile: top + "/root-state/device-key.pem", encoding: .utf8)
    try evilKey.write(toFile: attackerState + "/device-key.pem", atomically: false, encoding: .utf8)
    chmod(attackerState + "/device-key.pem", 0o600)
    let evil = try identifier(top + "/root-state").stdout
    let script = "cd \(top)/parent && while :; do ln -sfn evil tmp; mv -T tmp state; done"
    let attacker = Process()
    attacker.executableURL = URL(fileURLWithPath: asNobody[0])
    attacker.arguments = Array(asNobody.dropFirst()) + ["/usr/bin/timeout", "20", "/bin/sh", "-c", script]
    try attacker.run()
    defer {
      // Wait for the loop to end (timeout passes SIGTERM to the shell) before the directory is
      // removed, or the loop recreates entries under it and the removal leaves it behind.
      attacker.terminate()
      attacker.waitUntilExit()
    }
    for _ in 0..<30 {
      let result = try collectIdentifier(state)
      #expect(result.status == 77)
      #expect(!result.stdout.contains(evil.trimmingCharacters(in: .whitespacesAndNewlines)))
    }
  }

  @Test func item1WorldWritableParentIsRefused() throws {
    let top = try makeParent()
    defer { removeTemporaryDirectory(top) }
    mkdir(top + "/shared", 0o777)
    chmod(top + "/shared", 0o777)
    let result = try collectIdentifier(top + "/shared/state")
    #expect(result.status == 77)
    #expect(result.stderr.contains("chmod go-w \(top)/shared"))
  }

  @Test func item2PublicKeyFIFONeitherHangsNorIsTrusted() throws {
    let state = try makeTemporaryDirectory()
    defer { removeTemporaryDirectory(state) }
    #expect(try identifier(state).status == 0)
    unlink(state + "/device-key.pub")
    mkfifo(state + "/device-key.pub", 0o644)
    for result in [try collectIdentifier(state), try identifier(state)] {
      #expect(result.status == 77)
      #expect(result.stderr.contains("device-key.pub") && result.stderr.contains("not a regular file"))
    }
  }

  @Test(.enabled(if: canDropPrivileges, "needs root to give the cache away"))
  func item2PublicKeyCacheOwnedByNobodyOrWorldWritableIsRefused() throws {
    let state = try makeTemporaryDirectory()
    defer { removeTemporaryDirectory(state) }
    #expect(try identifier(state).status == 0)
    chmod(state + "/device-key.pub", 0o666)
    #expect(try collectIdentifier(state).status == 77)
    chmod(state + "/device-key.pub", 0o644)
    chown(state + "/device-key.pub", 65534, 65534)
    let result = try collectIdentifier(state)
    #expect(result.status == 77)
    #expect(result.stderr.contains("belongs to uid 65534"))
  }

  @Test func item2PublicKeyOfAnotherKeyIsRebuiltNeverPrinted() throws {
    let state = try makeTemporaryDirectory()
    defer { removeTemporaryDirectory(state) }
    let mine = try identifier(state).stdout
    let other = state + "/other"
    let theirs = try identifier(other).stdout
    try FileManager.default.removeItem(atPath: state + "/device-key.pub")
    try FileManager.default.copyItem(atPath: other + "/device-key.pub", toPath: state + "/device-key.pub")
    let collected = try collectIdentifier(state)
    #expect(collected.status == 0)
    #expect(collected.stdout.contains(mine.trimmingCharacters(in: .newlines)))
    #expect(!collected.stdout.contains(theirs.trimmingCharacters(in: .newlines)))
    #expect(
      try FileManager.default.contentsOfFile(state + "/device-key.pub") != FileManager.default.contentsOfFile(other + "/device-key.pub"))
  }

  @Test func item3ParallelResetsLeaveAMatchingKeyAndCache() throws {
    let state = try makeTemporaryDirectory()
    defer { removeTemporaryDirectory(state) }
    #expect(try identifier(state).status == 0)
    let statuses = UnsafeMutableBufferPointer<Int32>.allocate(capacity: 20)
    defer { statuses.deallocate() }
    statuses.initialize(repeating: -1)
    nonisolated(unsafe) let slots = statuses
    DispatchQueue.concurrentPerform(iterations: 20) { index in
      slots[index] = (try? run(["identifier", "--reset", "--state-dir", state]))?.status ?? -2
    }
    #expect(statuses.allSatisfy { $0 == 0 })
    let check = try identifier(state)
    #expect(check.status == 0)
    #expect(!check.stderr.contains("rebuilt"), "the cache did not match the key: \(check.stderr)")
    let collected = try collectIdentifier(state)
    #expect(collected.stdout.contains(check.stdout.trimmingCharacters(in: .newlines)))
    let names = try FileManager.default.contentsOfDirectory(atPath: state)
    #expect(names.filter { $0.hasSuffix(".bak") }.count == 20)
    #expect(!names.contains { $0.hasSuffix(".next") || $0.contains("tmp") })
  }

  @Test func item3KeyMissingWithOnlyABackupIsNotReplacedByANewIdentity() throws {
    // What the old reset left when killed between unlink and link.
    let state = try makeTemporaryDirectory()
    defer { removeTemporaryDirectory(state) }
    #expect(try identifier(state).status == 0)
    rename(state + "/device-key.pem", state + "/device-key.pem.20261122T120000Z.bak")
    unlink(state + "/device-key.pub")
    let result = try collectIdentifier(state)
    #expect(result.status == 66)
    #expect(result.stdout.isEmpty)
    #expect(result.stderr.contains("device-key.pem.20261122T120000Z.bak"))
    #expect(!FileManager.default.fileExists(atPath: state + "/device-key.pem"))
  }

  @Test func item3ResetKilledBeforeItsRenameIsRolledBack() throws {
    let state = try makeTemporaryDirectory()
    defer { removeTemporaryDirectory(state) }
    let before = try identifier(state).stdout
    _ = try identifier(state + "/spare")
    try FileManager.default.copyItem(atPath: state + "/spare/device-key.pem", toPath: state + "/device-key.pem.next")
    try FileManager.default.copyItem(atPath: state + "/spare/device-key.pub", toPath: state + "/device-key.pub.next")
    unlink(state + "/device-key.id")
    let after = try collectIdentifier(state)
    #expect(after.status == 0)
    #expect(after.stdout.contains(before.trimmingCharacters(in: .newlines)))
    #expect(!FileManager.default.fileExists(atPath: state + "/device-key.pem.next"))
  }

  @Test func item4StaleTemporariesOfKilledRunsAreRemoved() throws {
    let state = try makeTemporaryDirectory()
    defer { removeTemporaryDirectory(state) }
    #expect(try identifier(state).status == 0)
    let stale = ["device-key.pem.tmp.4242.beef", ".tmp-0123456789abcdef"]
    for name in stale {
      FileManager.default.createFile(atPath: state + "/" + name, contents: Data("-----BEGIN PRIVATE KEY-----\n".utf8))
      var times = [timespec(tv_sec: time(nil) - 600, tv_nsec: 0), timespec(tv_sec: time(nil) - 600, tv_nsec: 0)]
      utimensat(AT_FDCWD, state + "/" + name, &times, 0)
    }
    FileManager.default.createFile(atPath: state + "/.tmp-young", contents: Data())  // a concurrent run's
    let reset = try run(["identifier", "--reset", "--state-dir", state])
    #expect(reset.status == 0)
    let names = try FileManager.default.contentsOfDirectory(atPath: state)
    #expect(!stale.contains(where: names.contains))
    #expect(names.contains(".tmp-young"))
  }

  @Test func item5RelativeStateDirectoryIsResolvedAgainstTheCurrentDirectory() throws {
    let work = normalized(try makeTemporaryDirectory())
    defer { removeTemporaryDirectory(work) }
    // The old code made these at the file-system root; a regression must not leave them there.
    let strays = ["/rel", "/home-rel"].filter { !FileManager.default.fileExists(atPath: $0) }
    defer { for stray in strays { rmdir(stray) } }
    let viaFlag = try run(["collect", "--no-metadata", "-v", "--state-dir", "rel"] + laptop, prefix: ["/usr/bin/env", "-C", work])
    #expect(viaFlag.status == 0, "\(viaFlag.stderr)")
    #expect(FileManager.default.fileExists(atPath: work + "/rel/device-key.pem"))
    #expect(viaFlag.stderr.contains("state directory \(work)/rel"))
    let viaEnvironment = try run(
      ["collect", "--no-metadata", "-v"] + laptop, environment: ["FR_PROFILE_HOME": "home-rel"], prefix: ["/usr/bin/env", "-C", work])
    #expect(viaEnvironment.status == 0)
    #expect(FileManager.default.fileExists(atPath: work + "/home-rel/device-key.pem"))
    #expect(!FileManager.default.fileExists(atPath: "/rel") && !FileManager.default.fileExists(atPath: "/home-rel"))
  }

  @Test func item6PEMMissingOneLineFailsCollectInsteadOfPrintingAnIdentifier() throws {
    let state = try makeTemporaryDirectory()
    defer { removeTemporaryDirectory(state) }
    #expect(try collectIdentifier(state).status == 0)
    let lines = try String(contentsOfFile: state + "/device-key.pem", encoding: .utf8).split(separator: "\n")
    try (([lines[0]] + lines[2...]).joined(separator: "\n") + "\n").write(
      toFile: state + "/device-key.pem", atomically: false, encoding: .utf8)
    let result = try collectIdentifier(state)
    #expect(result.status == 65)
    #expect(result.stdout.isEmpty)
    #expect(result.stderr.contains("corrupt"))
  }
}

/// `collect --output FILE`.
@Suite(.timeLimit(.minutes(10))) struct OutputFileTests {
  let arguments = ["collect", "--no-metadata", "--root", machineRoot("laptop")]

  @Test(.enabled(if: canDropPrivileges, "needs root to plant links as nobody"))
  func linksPlantedAtPredictableNamesAreNeverFollowed() throws {
    let top = try makeTemporaryDirectory()
    defer { removeTemporaryDirectory(top) }
    chmod(top, 0o755)
    let shared = top + "/shared"
    mkdir(shared, 0o1777)
    chmod(shared, 0o1777)
    let victim = top + "/victim"
    try "root's file\n".write(toFile: victim, atomically: false, encoding: .utf8)
    // nobody's links for the next pids (made here with symlink + lchown: forking `ln` per link
    // would use up the very pids being planted). This machine has fs.protected_symlinks=0.
    let pidText = (try? String(contentsOfFile: "/proc/sys/kernel/ns_last_pid", encoding: .utf8)) ?? ""
    let last = Int(pidText.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
    for pid in last..<(last + 4000) {
      let link = shared + "/.fr-profile.tmp.\(pid)"
      symlink(victim, link)
      lchown(link, 65534, 65534)
    }
    for _ in 0..<3 {
      let result = try run(arguments + ["--state-dir", top + "/state", "--output", shared + "/profile.json"])
      #expect(result.status == 0, "\(result.stderr)")
    }
    #expect(try String(contentsOfFile: victim, encoding: .utf8) == "root's file\n")
    #expect(try String(contentsOfFile: shared + "/profile.json", encoding: .utf8).hasPrefix("{"))
  }

  @Test func aFIFOOrLinkTargetIsRefusedNotReplaced() throws {
    let top = try makeTemporaryDirectory()
    defer { removeTemporaryDirectory(top) }
    mkfifo(top + "/fifo", 0o644)
    let fifo = try run(arguments + ["--state-dir", top + "/state", "--output", top + "/fifo"])
    #expect(fifo.status == 73)
    #expect(fifo.stderr.contains("not a regular file"))
    var info = stat()
    lstat(top + "/fifo", &info)
    #expect(info.st_mode & S_IFMT == S_IFIFO)
    symlink(top + "/elsewhere", top + "/link")
    #expect(try run(arguments + ["--state-dir", top + "/state", "--output", top + "/link"]).status == 73)
    #expect(!FileManager.default.fileExists(atPath: top + "/elsewhere"))
  }

  @Test(.enabled(if: canDropPrivileges, "needs root to give the file away"))
  func anotherUsersFileIsNeverReplacedNorItsOwnerInherited() throws {
    // The writer once gave the new file the replaced file's owner and mode.
    let top = try makeTemporaryDirectory()
    defer { removeTemporaryDirectory(top) }
    let target = top + "/profile.json"
    try "old\n".write(toFile: target, atomically: false, encoding: .utf8)
    chmod(target, 0o640)
    chown(target, 65534, 65534)
    let result = try run(arguments + ["--state-dir", top + "/state", "--output", target])
    #expect(result.status == 77, "\(result.stderr)")
    #expect(result.stderr.contains("belongs to uid 65534"))
    #expect(try String(contentsOfFile: target, encoding: .utf8) == "old\n")
    chown(target, 0, 0)
    #expect(try run(arguments + ["--state-dir", top + "/state", "--output", target]).status == 0)
    #expect(fileMode(target) == 0o644 && fileOwner(target) == 0)
    #expect(try FileManager.default.contentsOfDirectory(atPath: top).sorted() == ["profile.json", "state"])
  }

  @Test func staleTemporariesOfKilledRunsAreRemoved() throws {
    let top = try makeTemporaryDirectory()
    defer { removeTemporaryDirectory(top) }
    for name in [".fr-profile.tmp.4242", ".fr-profile.tmp-00ff"] {
      FileManager.default.createFile(atPath: top + "/" + name, contents: Data("{}".utf8))
      var times = [timespec(tv_sec: time(nil) - 600, tv_nsec: 0), timespec(tv_sec: time(nil) - 600, tv_nsec: 0)]
      utimensat(AT_FDCWD, top + "/" + name, &times, 0)
    }
    #expect(try run(arguments + ["--state-dir", top + "/state", "--output", top + "/p.json"]).status == 0)
    #expect(try FileManager.default.contentsOfDirectory(atPath: top).sorted() == ["p.json", "state"])
  }
}

/// `path` without repeated slashes (fr-profile's messages name directories that way).
func normalized(_ path: String) -> String {
  var result = path
  while result.contains("//") { result = result.replacingOccurrences(of: "//", with: "/") }
  return result
}

extension FileManager {
  fileprivate func contentsOfFile(_ path: String) -> Data? { contents(atPath: path) }
}
