import Foundation
import ProfileJSON
import Testing

/// Attacks on a bound PIN key from this machine: an attempt killed during the key
/// derivation, a debugger attached while the PIN is typed, `--root` pointed at a clean machine.
extension BindingCommandTests {
  /// A `journey` on tree `Sign` running in the background, its PIN read from the FIFO `pinPath`.
  struct BackgroundSigning {
    let process: Process
    let errors: Pipe

    /// Waits for the exit; (status, stderr). A killed process reports its signal as the status.
    func finish() -> (Int32, String) {
      let text = String(decoding: readToEnd(errors.fileHandleForReading.fileDescriptor), as: UTF8.self)
      process.waitUntilExit()
      return (process.terminationStatus, text)
    }
  }

  /// A state home of nobody's own beside the device (`<directory>/nobody`, 0700, nobody's),
  /// with the device directory opened up so that nobody reaches it.
  func nobodyHome(_ device: Device) -> String {
    chmod(device.directory, 0o755)
    let home = device.directory + "/nobody"
    #expect(mkdir(home, 0o700) == 0 && chown(home, 65534, 65534) == 0)
    return home
  }

  /// `journey` on tree `Bind` as nobody, with nobody's state in `home`.
  func bindAsNobody(_ server: AuthenticateServer, _ device: Device, home: String, _ extra: [String]) throws -> RunResult {
    try run(
      ["journey", "--server", server.url, "--realm", "alpha", "--tree", "Bind", "--user", "demo", "--password-stdin"]
        + ["--state-dir", home + "/state", "--root", device.root] + extra,
      environment: device.environment, stdin: password + "\n", prefix: asNobody)
  }

  func startSigning(
    _ server: AuthenticateServer, _ device: Device, pinPath: String, state: String? = nil, prefix: [String] = []
  ) throws -> BackgroundSigning {
    let process = Process()
    let argv =
      prefix + [frProfile(for: device.environment), "journey", "--server", server.url, "--realm", "alpha", "--tree", "Sign"]
      + ["--user", "demo"]
      + ["--password-stdin", "--state-dir", state ?? device.state, "--root", device.root, "--pin-file", pinPath]
      + ["--max-time", "90"]  // bounded like every child of the tests: fr-profile's own watchdog ends it
    process.executableURL = URL(fileURLWithPath: argv[0])
    process.arguments = Array(argv.dropFirst())
    process.environment = device.environment.merging(["PATH": "/usr/bin:/bin"]) { $1 }
    let input = Pipe()
    let errors = Pipe()
    process.standardInput = input
    process.standardOutput = FileHandle.nullDevice
    process.standardError = errors
    try process.run()
    input.fileHandleForWriting.write(Data((password + "\n").utf8))
    try input.fileHandleForWriting.close()
    return BackgroundSigning(process: process, errors: errors)
  }

  /// Waits up to `seconds` for `condition` about a file in `directory`, checked again whenever a
  /// file there is created, written or renamed into it (inotify, watched before the first check,
  /// so no change is missed): the wait ends at the write, with no sleep.
  func waitForFile(in directory: String, _ seconds: Double, _ condition: () -> Bool) -> Bool {
    let watch = inotify_init1(Int32(O_CLOEXEC))
    guard watch >= 0 else { return false }
    defer { close(watch) }
    // IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE
    guard inotify_add_watch(watch, directory, 0x2 | 0x8 | 0x80 | 0x100) >= 0 else { return false }
    let end = Date().addingTimeInterval(seconds)
    var events = [UInt8](repeating: 0, count: 4096)
    while !condition() {
      let left = end.timeIntervalSinceNow
      guard left > 0 else { return condition() }
      var ready = pollfd(fd: watch, events: Int16(POLLIN), revents: 0)
      if poll(&ready, 1, Int32(min(left * 1000, 10_000)) + 1) > 0 { _ = read(watch, &events, events.count) }
    }
    return true
  }

  /// Polls `condition` every 5 ms for up to `seconds`; whether it came true. Only for what
  /// nothing notifies of: a state /proc shows (a process blocked opening a FIFO, a tracer
  /// attached) has no event to wait on.
  func waitFor(_ seconds: Double, _ condition: () -> Bool) -> Bool {
    let end = Date().addingTimeInterval(seconds)
    while Date() < end {
      if condition() { return true }
      usleep(5000)
    }
    return condition()
  }

  /// The wrong-PIN bookkeeping of the one bound key.
  func attempts(_ device: Device) -> JSON? {
    let directory = device.state + "/bound-keys"
    guard let name = (try? FileManager.default.contentsOfDirectory(atPath: directory))?.first(where: { $0.hasSuffix(".json") }),
      let bytes = FileManager.default.contents(atPath: directory + "/" + name)
    else { return nil }
    return (try? JSONParser.parse(Array(bytes)))?["attempts"]
  }

  /// Whether `pid` is blocked opening a FIFO, waiting for its writer (the kernel's fifo_open
  /// sleeps in `wait_for_partner`).
  func waitsOnFIFO(_ pid: Int32) -> Bool {
    ((try? String(contentsOfFile: "/proc/\(pid)/wchan", encoding: .utf8)) ?? "") == "wait_for_partner"
  }

  @Test("an attempt killed during the derivation stays counted: under lock:1 the right PIN is refused next")
  func aKilledAttemptCounts() throws {
    try withDevice { device in
      try withServer({ $0.authenticationType = "APPLICATION_PIN" }) { server, _ in
        try bindPIN(server, device, lock: "lock:1")
        let fifo = device.directory + "/pin.fifo"
        #expect(mkfifo(fifo, 0o600) == 0)
        let signing = try startSigning(server, device, pinPath: fifo)
        let writer = open(fifo, O_WRONLY)  // blocks until fr-profile opens it for reading
        #expect(writer >= 0)
        _ = "000000\n".withCString { write(writer, $0, 7) }
        close(writer)
        // The attempt's slot is written before the derivation (2^17 scrypt, ~0.5 s) starts.
        #expect(waitForFile(in: device.state + "/bound-keys", 10) { attempts(device)?["failures"] == 1 })
        kill(signing.process.processIdentifier, SIGKILL)
        let (status, _) = signing.finish()
        #expect(signing.process.terminationReason == .uncaughtSignal && status == SIGKILL, "the attempt ended before the kill")
        let next = try sign(server, device, pin: "271828")
        #expect(next.status == 1 && next.stderr.contains("locked after 1 wrong PIN"), "\(next.stderr)")
        #expect(attempts(device)?["lockedOut"] == true)
      }
    }
  }

  @Test("a debugger attached while the PIN is read is caught before the key is unlocked; the key locks")
  func aTracerAttachedAtThePromptLocksTheKey() throws {
    try withDevice { device in
      try withServer({ $0.authenticationType = "APPLICATION_PIN" }) { server, _ in
        let bound = try journey(
          server, device, tree: "Bind",
          ["--pin-file", try device.pinFile("271828"), "--policies", #"{"deviceTampering":{"score":0.8}}"#])
        #expect(bound.status == 0, "\(bound.stderr)")
        let fifo = device.directory + "/pin.fifo"
        #expect(mkfifo(fifo, 0o600) == 0)
        let signing = try startSigning(server, device, pinPath: fifo)
        let pid = signing.process.processIdentifier
        // Past the policy check, at the PIN: blocked opening the FIFO.
        #expect(waitFor(10) { waitsOnFIFO(pid) })
        let tracer = Process()
        tracer.executableURL = URL(fileURLWithPath: "/usr/bin/strace")
        tracer.arguments = ["-q", "-o", "/dev/null", "-p", String(pid)]
        tracer.standardError = FileHandle.nullDevice
        try tracer.run()
        defer {
          tracer.terminate()
          tracer.waitUntilExit()
        }
        #expect(
          waitFor(10) {
            ((try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? "").contains(
              "TracerPid:\t\(tracer.processIdentifier)")
          })
        let writer = open(fifo, O_WRONLY)
        _ = "271828\n".withCString { write(writer, $0, 7) }
        close(writer)
        let (status, stderr) = signing.finish()
        #expect(status == 1 && stderr.contains("is tracing fr-profile"), "\(stderr)")
        let record = try #require(try keyList(device).first)
        #expect(record["locked"] == true && record["lockingPolicy"] == "deviceTampering")
        #expect(attempts(device)?["failures"] == 0)  // no PIN was tried
      }
    }
  }

  @Test(
    "from the first PIN prompt on the process cannot dump core or be read by its user's debugger",
    .enabled(if: canDropPrivileges, "needs root to run the signer as nobody"))
  func noCoreDumpWhileAKeyMayBeOpen() throws {
    try withDevice { device in
      try withServer({ $0.authenticationType = "APPLICATION_PIN" }) { server, _ in
        // nobody's own state directory, PIN file and FIFO: /proc/PID belongs to nobody while the
        // process is dumpable, and to root once it is not.
        let home = nobodyHome(device)
        let pin = try device.pinFile("271828")
        #expect(chown(pin, 65534, 65534) == 0)
        let bound = try bindAsNobody(server, device, home: home, ["--pin-file", pin])
        #expect(bound.status == 0, "\(bound.stderr)")
        let fifo = home + "/pin.fifo"
        #expect(mkfifo(fifo, 0o600) == 0 && chown(fifo, 65534, 65534) == 0)
        let signing = try startSigning(server, device, pinPath: fifo, state: home + "/state", prefix: asNobody)
        let pid = signing.process.processIdentifier
        #expect(waitFor(10) { waitsOnFIFO(pid) })
        var info = stat()
        #expect(stat("/proc/\(pid)/environ", &info) == 0 && info.st_uid == 0, "/proc/\(pid) belongs to uid \(info.st_uid)")
        let limits = (try? String(contentsOfFile: "/proc/\(pid)/limits", encoding: .utf8)) ?? ""
        let core = limits.split(separator: "\n").first { $0.hasPrefix("Max core file size") }.map { $0.split(separator: " ") }
        #expect(core?.dropFirst(4).prefix(2) == ["0", "0"], "\(limits)")
        let writer = open(fifo, O_WRONLY)
        _ = "271828\n".withCString { write(writer, $0, 7) }
        close(writer)
        let (status, stderr) = signing.finish()
        #expect(status == 0, "\(stderr)")
      }
    }
  }

  @Test("--root pointed at a clean machine steers neither signing nor 'keys unlock' past a breached deviceTampering")
  func rootDoesNotSteerPolicies() throws {
    try withDevice { device in
      try withServer { server, _ in
        let bound = try journey(server, device, tree: "Bind", ["--policies", #"{"deviceTampering":{"score":0.3}}"#])
        #expect(bound.status == 0, "\(bound.stderr)")
        try device.become("cloud-vm")  // this machine (fr-profile-seams' policy seam) now scores 0.5
        let steered = try journey(server, device, tree: "Sign", ["--root", machineRoot("laptop")])
        #expect(steered.status == 1 && steered.stderr.contains("policy deviceTampering is breached"), "\(steered.stderr)")
        let kid = try #require(try keyList(device).first?["kid"]?.stringValue)
        let unlock = try run(
          ["keys", "unlock", kid, "--state-dir", device.state, "--root", machineRoot("laptop")], environment: device.environment)
        #expect(unlock.status == 64 && unlock.stderr.contains("--root does not apply to 'keys unlock'"), "\(unlock.stderr)")
        #expect(try keyList(device).first?["locked"] == true)
      }
    }
  }
}

/// A preload library that hides itself from the environment is still seen in the maps.
@Suite(.timeLimit(.minutes(10))) struct HiddenPreloadTests {
  @Test("a preload that unsets LD_PRELOAD in its constructor is named by the tamper report")
  func aSelfHidingPreloadIsDetected() throws {
    let directory = try makeTemporaryDirectory("fr-profile-preload")
    defer { removeTemporaryDirectory(directory) }
    let source = directory + "/hide.c"
    try """
    #include <stdlib.h>
    __attribute__((constructor)) static void hide(void) { unsetenv("LD_PRELOAD"); }
    """.write(toFile: source, atomically: true, encoding: .utf8)
    let library = directory + "/libhide.so"
    let built = try run(["-shared", "-fPIC", "-o", library, source], executable: "/usr/bin/gcc")
    #expect(built.status == 0, "\(built.stderr)")
    let report = try run(["tamper", "--json"], environment: ["LD_PRELOAD": library])
    #expect(report.status == 0, "\(report.stderr)")
    let detectors = try JSONParser.parse(Array(report.stdout.utf8))["detectors"]?.arrayValue ?? []
    let evidence = detectors.first { $0["name"]?.stringValue == "injectedLibraries" }?["evidence"]?.arrayValue ?? []
    let lines = evidence.compactMap(\.stringValue)
    #expect(
      lines == ["library mapped from outside the system library directories: /tmp/\(directory.split(separator: "/").last!)/libhide.so"],
      "\(lines)")
    #expect(!lines.contains { $0.hasPrefix("LD_PRELOAD is set") }, "the constructor did not hide the preload: \(lines)")
  }
}
