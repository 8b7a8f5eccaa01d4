import Collectors
import DeviceFacts
import Foundation
import SystemCalls
import TestSupport
import Testing

/// Each detector fires on a tree that should trigger it and stays silent on the clean laptop.
@Suite(.timeLimit(.minutes(10))) struct TamperDetectorTests {
  let clean = FixtureMachine.laptop.context()

  @Test func cleanLaptopScoresZeroOnEveryDetector() {
    let report = TamperScore.evaluate(TamperScore.defaultDetectors, clean)
    #expect(report.score == 0)
    #expect(report.results.count >= 6)
    for result in report.results { #expect(result.finding == .clean, "\(result.name)") }
  }

  @Test func debuggerFiresOnTracerPid() throws {
    let tree = try TemporaryTree()
    defer { tree.remove() }
    try tree.write("/proc/self/status", "Name:\tfr-profile\nTracerPid:\t31337\n")
    let finding = DebuggerDetector().analyze(tree.context())
    #expect(finding.score == 1)
    #expect(finding.evidence == ["TracerPid is 31337 in /proc/self/status"])
  }

  @Test func injectedLibrariesFireOnLDPreload() {
    let finding = InjectedLibraryDetector().analyze(FixtureMachine.laptop.context(environment: ["LD_PRELOAD": "/tmp/hook.so"]))
    #expect(finding.score == 0.7)
    #expect(finding.evidence.first?.contains("/tmp/hook.so") == true)
  }

  @Test func injectedLibrariesFireOnLdSoPreloadAndFrida() throws {
    let tree = try TemporaryTree()
    defer { tree.remove() }
    try tree.write("/etc/ld.so.preload", "# hooks\n/usr/lib/libhook.so\n")
    #expect(InjectedLibraryDetector().analyze(tree.context()).score == 0.7)
    try tree.write("/proc/self/maps", "7f00-7f10 r-xp 00000000 08:01 1 /data/local/tmp/frida-gadget.so\n")
    let finding = InjectedLibraryDetector().analyze(tree.context())
    #expect(finding.score == 1)
    #expect(finding.evidence.count == 2)
  }

  @Test func emptyPreloadIsClean() throws {
    let tree = try TemporaryTree()
    defer { tree.remove() }
    try tree.write("/etc/ld.so.preload", "# nothing\n\n")
    #expect(InjectedLibraryDetector().analyze(tree.context(environment: ["LD_PRELOAD": " "])) == .clean)
  }

  @Test func writableSystemDirectoryFires() throws {
    let tree = try TemporaryTree()
    defer { tree.remove() }
    try tree.makeDirectory("/usr/bin", mode: 0o755)
    try tree.makeDirectory("/etc", mode: 0o755)
    #expect(WritableSystemDirectoryDetector().analyze(tree.context()) == .clean)
    try tree.makeDirectory("/usr/bin", mode: 0o777)
    let finding = WritableSystemDirectoryDetector().analyze(tree.context())
    #expect(finding.score == 0.9)
    #expect(finding.evidence == ["/usr/bin is world-writable (mode 0777)"])
  }

  @Test func writableRulesByOwnerGroupAndOthers() {
    func status(_ mode: UInt32, uid: UInt32 = 0, gid: UInt32 = 0) -> SystemSource.FileStatus {
      SystemSource.FileStatus(mode: 0o040000 | mode, uid: uid, gid: gid, size: 0)
    }
    #expect(writableByOthers(status(0o755), systemOwner: 0) == nil)
    #expect(writableByOthers(status(0o775), systemOwner: 0) == nil)  // root group
    #expect(writableByOthers(status(0o775, gid: 50), systemOwner: 0) != nil)
    #expect(writableByOthers(status(0o755, uid: 1000), systemOwner: 0) != nil)
    #expect(writableByOthers(status(0o555, uid: 1000), systemOwner: 0) == nil)
    #expect(writableByOthers(status(0o1777), systemOwner: 0)?.contains("sticky") == true)
  }

  @Test func setuidInterpreterFires() throws {
    let tree = try TemporaryTree()
    defer { tree.remove() }
    try tree.write("/usr/bin/bash", "#!fake", mode: 0o755)
    try tree.write("/usr/bin/passwd", "#!fake", mode: 0o4755)  // legitimately setuid: not checked
    #expect(SetuidInterpreterDetector().analyze(tree.context()) == .clean)
    try tree.write("/usr/bin/python3", "#!fake", mode: 0o4755)
    let finding = SetuidInterpreterDetector().analyze(tree.context())
    #expect(finding.score == 1)
    #expect(finding.evidence.count == 1)
    #expect(finding.evidence[0].hasPrefix("/usr/bin/python3 is setuid"))
  }

  @Test(
    "tainted kernel scores by flag",
    arguments: [
      ("0", 0.0), ("1", 0.0), ("2", 0.7), ("8", 0.7), ("4096", 0.3), ("8192", 0.5), ("12289", 0.5), ("512", 0.0),
    ])
  func taintedKernelScores(value: String, score: Double) throws {
    let tree = try TemporaryTree()
    defer { tree.remove() }
    try tree.write("/proc/sys/kernel/tainted", value + "\n")
    let finding = TaintedKernelDetector().analyze(tree.context())
    #expect(finding.score == score)
    #expect(finding.evidence.isEmpty == (value == "0"))
  }

  @Test func secureBootOffFiresAndOnIsClean() throws {
    let tree = try TemporaryTree()
    defer { tree.remove() }
    try tree.write(SecureBootDetector.variable, bytes: [6, 0, 0, 0, 0])
    #expect(SecureBootDetector().analyze(tree.context()).score == 0.3)
    try tree.write(SecureBootDetector.variable, bytes: [6, 0, 0, 0, 1])
    #expect(SecureBootDetector().analyze(tree.context()) == .clean)
  }

  @Test func noEFISaysNothing() {
    #expect(SecureBootDetector().analyze(FixtureMachine.raspberryPi.context()) == .clean)
  }

  @Test func virtualizationFiresOnVMAndContainer() {
    let vm = VirtualizationDetector().analyze(FixtureMachine.cloudVM.context())
    #expect(vm.score == 0.5)
    #expect(vm.evidence.first?.contains("Amazon EC2") == true)
    let container = VirtualizationDetector().analyze(FixtureMachine.container.context())
    #expect(container.score == 0.5)
    #expect(container.evidence.first?.contains("/.dockerenv") == true)
    #expect(VirtualizationDetector().analyze(FixtureMachine.raspberryPi.context()) == .clean)
  }

  @Test func scoreIsTheMaximumAndEmbeddersCanAddDetectors() {
    struct Always: TamperDetector {
      let name = "custom"
      let value: Double
      func analyze(_ context: TamperContext) -> TamperFinding { TamperFinding(score: value, evidence: ["custom"]) }
    }
    let report = TamperScore.evaluate([Always(value: 0.2), Always(value: 0.8), Always(value: 3)], clean)
    #expect(report.score == 1)  // clamped to 0…1
    let platform = PlatformCollector(detectors: [Always(value: 0.25)]).collect(clean)
    #expect(platform?["jailBreakScore"] == .number(0.25))
  }
}
