import Foundation
import SystemCalls
import Testing

/// Times SIGUSR1 reached its handler (a no-op but for this count).
nonisolated(unsafe) private var interruptions = 0

@Suite(.serialized, .timeLimit(.minutes(10))) struct SystemCallTests {
  @Test("a failing call throws its name and errno")
  func failuresNameTheCall() {
    #expect(throws: SystemCallError("openat", errno: ENOENT)) {
      _ = try systemCall("openat") { openat(AT_FDCWD, "/nonexistent/fr-profile", O_RDONLY) }
    }
    #expect(SystemCallError("openat", errno: EACCES).description == "openat: Permission denied")
  }

  @Test("a read interrupted by a signal (no SA_RESTART) is retried, not failed")
  func interruptedReadsAreRetried() throws {
    var ends: [Int32] = [0, 0]
    #expect(pipe(&ends) == 0)
    defer {
      close(ends[0])
      close(ends[1])
    }
    let previous = signal(SIGUSR1) { _ in interruptions += 1 }
    defer { signal(SIGUSR1, previous) }
    siginterrupt(SIGUSR1, 1)  // the read returns EINTR instead of restarting
    interruptions = 0
    var usr1 = sigset_t()
    var saved = sigset_t()
    sigemptyset(&usr1)
    sigaddset(&usr1, SIGUSR1)
    pthread_sigmask(SIG_UNBLOCK, &usr1, &saved)  // a test runner's threads may block it
    defer { pthread_sigmask(SIG_SETMASK, &saved, nil) }
    let reader = pthread_self()
    let task = Self.taskDirectory()
    let writer = ends[1]
    // Each step waits for the event itself — the reader blocked in read(2), the handler run and
    // the reader blocked in read(2) again — never for a guessed time.
    let thread = Thread {
      Self.waitUntil { Self.isBlockedInRead(task) }
      pthread_kill(reader, SIGUSR1)
      Self.waitUntil { interruptions == 1 && Self.isBlockedInRead(task) }
      _ = write(writer, "x", 1)
    }
    thread.start()
    var byte: UInt8 = 0
    let count = try withUnsafeMutableBytes(of: &byte) { try readSome(ends[0], into: $0) }
    #expect(interruptions == 1, "the signal never interrupted the read")
    #expect(count == 1 && byte == UInt8(ascii: "x"))
  }

  /// /proc/self/task/<tid> of the calling thread.
  static func taskDirectory() -> String {
    var buffer = [CChar](repeating: 0, count: 256)
    let count = readlink("/proc/thread-self", &buffer, buffer.count - 1)
    return "/proc/" + String(decoding: buffer[0..<max(0, count)].map { UInt8(bitPattern: $0) }, as: UTF8.self)
  }

  /// Whether the thread is asleep in read(2): its state S and its current system call read's
  /// number (/proc/…/syscall starts with it).
  static func isBlockedInRead(_ task: String) -> Bool {
    #if arch(x86_64)
      let read = "0 "
    #else
      let read = "63 "
    #endif
    let stat = (try? String(contentsOfFile: task + "/stat", encoding: .utf8)) ?? ""
    let state = stat.split(separator: ")").last?.split(separator: " ").first
    return state == "S" && ((try? String(contentsOfFile: task + "/syscall", encoding: .utf8)) ?? "").hasPrefix(read)
  }

  /// Yields until `condition` holds, at most 10 s.
  static func waitUntil(_ condition: () -> Bool) {
    let end = Date().addingTimeInterval(10)
    while !condition() && Date() < end { sched_yield() }
  }

  @Test("readAll reads to the end across chunks, and stops at the limit")
  func readAllReadsWholeFiles() throws {
    let path = NSTemporaryDirectory() + "/fr-profile-readall-\(getpid())"
    defer { unlink(path) }
    let bytes = (0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
    FileManager.default.createFile(atPath: path, contents: Data(bytes))
    let fd = open(path, O_RDONLY)
    defer { close(fd) }
    #expect(try readAll(fd, limit: 1 << 20) == bytes)
    #expect(lseek(fd, 0, SEEK_SET) == 0)
    #expect(try readAll(fd, limit: 5000) == Array(bytes.prefix(5000)))
    #expect(throws: SystemCallError("read", errno: EBADF)) { try readAll(-1, limit: 10) }
  }
}

@Suite(.timeLimit(.minutes(10))) struct AtomicWriterTests {
  func withDirectory(_ body: (Int32, String) throws -> Void) throws {
    var template = Array((NSTemporaryDirectory() + "/fr-profile-atomic.XXXXXX").utf8CString)
    let path = String(cString: try #require(mkdtemp(&template)))
    defer { try? FileManager.default.removeItem(atPath: path) }
    let directory = open(path, O_RDONLY | O_DIRECTORY)
    defer { close(directory) }
    try body(directory, path)
  }

  @Test("create-only: an existing file wins (EEXIST from linkat) and is left untouched", arguments: [true, false])
  func createOnlyKeepsTheExistingFile(unnamed: Bool) throws {
    try withDirectory { directory, path in
      try writeAtomically(
        Array("first".utf8), as: "key", in: directory, mode: 0o600, replace: false, temporaryPrefix: ".t-", unnamed: unnamed)
      #expect(throws: SystemCallError("linkat", errno: EEXIST)) {
        try writeAtomically(
          Array("second".utf8), as: "key", in: directory, mode: 0o600, replace: false, temporaryPrefix: ".t-", unnamed: unnamed)
      }
      #expect(try String(contentsOfFile: path + "/key", encoding: .utf8) == "first")
      #expect(try FileManager.default.contentsOfDirectory(atPath: path) == ["key"], "a temporary was left")
    }
  }

  @Test("replace: the new contents with the exact mode whatever the umask, no temporary left", arguments: [true, false])
  func replaceWritesTheNewFile(unnamed: Bool) throws {
    try withDirectory { directory, path in
      let saved = umask(0o077)
      defer { umask(saved) }
      try writeAtomically(Array("old".utf8), as: "out", in: directory, mode: 0o600, replace: true, temporaryPrefix: ".t-", unnamed: unnamed)
      let info = try writeAtomically(
        Array("new".utf8), as: "out", in: directory, mode: 0o644, replace: true, temporaryPrefix: ".t-", unnamed: unnamed)
      #expect(try String(contentsOfFile: path + "/out", encoding: .utf8) == "new")
      var now = stat()
      #expect(stat(path + "/out", &now) == 0 && now.st_mode & 0o777 == 0o644 && now.st_ino == info.st_ino)
      #expect(try FileManager.default.contentsOfDirectory(atPath: path) == ["out"])
    }
  }
}
