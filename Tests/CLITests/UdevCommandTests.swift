import Foundation
import Testing

/// Where umockdev-run lives, if installed.
let umockdevRun: String? = ["/usr/bin/umockdev-run", "/usr/local/bin/umockdev-run"].first {
  FileManager.default.isExecutableFile(atPath: $0)
}

/// CI must run these tests: there a missing umockdev-run fails them instead of skipping them.
let umockdevRequired = ProcessInfo.processInfo.environment["CI"].map { !$0.isEmpty && $0 != "0" && $0 != "false" } ?? false

/// The result of `fr-profile collect` run under umockdev-run with the given device files
/// (Tests/CLITests/Fixtures/umockdev/<name>.umockdev); none gives an empty fake /sys.
///
/// The child gets only PATH, TMPDIR and FR_PROFILE_HOME: no UMOCKDEV_DIR or LD_PRELOAD of an
/// outer testbed, and TMPDIR=/dev/shm, where umockdev builds its testbed 10× faster than on disk.
/// `childPrefix` runs before fr-profile inside the testbed (e.g. `env VAR=value`).
func collectUnderUmockdev(
  _ devices: [String], stateDirectory: String? = nil, childPrefix: [String] = [],
  sourceLocation: SourceLocation = #_sourceLocation
) throws -> RunResult? {
  guard let umockdevRun else {
    if umockdevRequired {
      Issue.record("umockdev-run is missing and CI is set: install the Debian package umockdev", sourceLocation: sourceLocation)
    }
    return nil
  }
  let home = try makeTemporaryDirectory()
  defer { removeTemporaryDirectory(home) }
  var prefix = [umockdevRun]
  for device in devices { prefix += ["--device", cliFixture("umockdev/\(device).umockdev")] }
  prefix.append("--")
  prefix += childPrefix
  let tmp = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : NSTemporaryDirectory()
  let environment = ["TMPDIR": tmp, "FR_PROFILE_HOME": stateDirectory ?? home + "/state"]
  let result = try run(["collect"], environment: environment, prefix: prefix)
  #expect(result.status == 0, "stderr: \(result.stderr)", sourceLocation: sourceLocation)
  return result
}

/// The udev-backed parts of a profile.
struct UdevFacts: Equatable, CustomStringConvertible {
  var display: [String: Int]?
  var numberOfCameras: Int?
  var bluetoothSupported: Bool?

  init(display: [String: Int]?, numberOfCameras: Int?, bluetoothSupported: Bool?) {
    self.display = display
    self.numberOfCameras = numberOfCameras
    self.bluetoothSupported = bluetoothSupported
  }

  init(profile stdout: String) throws {
    let profile = try #require(try JSONSerialization.jsonObject(with: Data(stdout.utf8)) as? [String: Any])
    let metadata = try #require(profile["metadata"] as? [String: Any])
    let hardware = try #require(metadata["hardware"] as? [String: Any])
    display = hardware["display"] as? [String: Int]
    numberOfCameras = (hardware["camera"] as? [String: Any])?["numberOfCameras"] as? Int
    bluetoothSupported = (metadata["bluetooth"] as? [String: Any])?["supported"] as? Bool
    if hardware["display"] != nil { #expect(display != nil, "display members must be integers: \(stdout)") }
  }

  var description: String { "display \(display ?? [:]), cameras \(numberOfCameras as Any), bluetooth \(bluetoothSupported as Any)" }
}

/// End to end through the real libudev code path: the built binary under umockdev-run.
@Suite(.enabled(if: umockdevRun != nil || umockdevRequired, "umockdev-run is not installed"), .timeLimit(.minutes(10)))
struct UdevCommandTests {
  static let fullHD = ["width": 1920, "height": 1080, "orientation": 1]

  @Test func sharedFixturesTogether() throws {
    let result = try #require(try collectUnderUmockdev(["webcam", "drm", "bluetooth", "net-wired", "dmi"]))
    #expect(try UdevFacts(profile: result.stdout) == UdevFacts(display: Self.fullHD, numberOfCameras: 1, bluetoothSupported: true))
  }

  @Test func displayAndCameraFollowCPUAndBluetoothSitsBetweenBrowserAndNetwork() throws {
    let result = try #require(try collectUnderUmockdev(["webcam", "drm", "bluetooth"]))
    let order = [#""cpu":"#, #""display":"#, #""camera":"#, #""browser":"#, #""bluetooth":"#, #""network":"#]
    let offsets = order.map { result.stdout.range(of: $0)?.lowerBound }
    #expect(!offsets.contains(nil), "\(result.stdout)")
    #expect(offsets.compactMap { $0 } == offsets.compactMap { $0 }.sorted(), "\(result.stdout)")
  }

  @Test func hdmiMonitorWithEDID() throws {
    let result = try #require(try collectUnderUmockdev(["drm"]))
    #expect(try UdevFacts(profile: result.stdout).display == Self.fullHD)
  }

  @Test func laptopReportsItsPanelNotTheExternalMonitor() throws {
    let result = try #require(try collectUnderUmockdev(["laptop-edp-hdmi"]))
    #expect(try UdevFacts(profile: result.stdout).display == ["width": 2560, "height": 1440, "orientation": 1])
  }

  @Test func virtualDisplayWithoutEDIDUsesTheFirstMode() throws {
    let result = try #require(try collectUnderUmockdev(["vm-virtio-gpu"]))
    #expect(try UdevFacts(profile: result.stdout).display == ["width": 1280, "height": 800, "orientation": 1])
  }

  @Test func webcamWithMetadataNodeIsOneCamera() throws {
    let result = try #require(try collectUnderUmockdev(["webcam"]))
    #expect(try UdevFacts(profile: result.stdout).numberOfCameras == 1)
  }

  @Test func twoWebcamsAreTwoCameras() throws {
    let result = try #require(try collectUnderUmockdev(["two-webcams"]))
    #expect(try UdevFacts(profile: result.stdout) == UdevFacts(display: nil, numberOfCameras: 2, bluetoothSupported: false))
  }

  @Test func cameraWithoutUdevPropertiesCountsOncePerDevice() throws {
    let result = try #require(try collectUnderUmockdev(["webcam-no-udev-db"]))
    #expect(try UdevFacts(profile: result.stdout).numberOfCameras == 1)
  }

  @Test func blockedBluetoothAdapterIsStillSupported() throws {
    let result = try #require(try collectUnderUmockdev(["bluetooth-blocked"]))
    #expect(try UdevFacts(profile: result.stdout).bluetoothSupported == true)
  }

  /// A libudev.so.1 that cannot be loaded (here an invalid file that LD_LIBRARY_PATH puts first,
  /// for fr-profile only: umockdev-run itself links libudev): the same devices come from the
  /// sysfs walk of the udev database, and stderr says why.
  @Test func unloadableLibudevFallsBackToTheSysfsWalkWithAWarning() throws {
    let libraries = try makeTemporaryDirectory()
    defer { removeTemporaryDirectory(libraries) }
    try Data("not a library".utf8).write(to: URL(fileURLWithPath: libraries + "/libudev.so.1"))
    let devices = ["laptop-edp-hdmi", "webcam", "bluetooth"]
    let viaUdev = try #require(try collectUnderUmockdev(devices))
    let viaSysfs = try #require(try collectUnderUmockdev(devices, childPrefix: ["/usr/bin/env", "LD_LIBRARY_PATH=" + libraries]))
    #expect(!viaUdev.stderr.contains("libudev"), "\(viaUdev.stderr)")
    #expect(viaSysfs.stderr.contains("libudev.so.1 could not be used"), "\(viaSysfs.stderr)")
    #expect(try UdevFacts(profile: viaSysfs.stdout) == UdevFacts(profile: viaUdev.stdout))
    let laptop = UdevFacts(display: ["width": 2560, "height": 1440, "orientation": 1], numberOfCameras: 1, bluetoothSupported: true)
    #expect(try UdevFacts(profile: viaSysfs.stdout) == laptop)
  }

  @Test func machineWithoutAnyOfTheseDevices() throws {
    let result = try #require(try collectUnderUmockdev([]))
    #expect(try UdevFacts(profile: result.stdout) == UdevFacts(display: nil, numberOfCameras: 0, bluetoothSupported: false))
    #expect(!result.stdout.contains(#""display""#))
  }

  @Test func headlessServerWithDisconnectedVGAAndWlanRfkill() throws {
    let result = try #require(try collectUnderUmockdev(["headless-server"]))
    #expect(try UdevFacts(profile: result.stdout) == UdevFacts(display: nil, numberOfCameras: 0, bluetoothSupported: false))
  }

  @Test func twoRunsOfTheSameDevicesPrintIdenticalBytes() throws {
    let home = try makeTemporaryDirectory()
    defer { removeTemporaryDirectory(home) }
    let devices = ["laptop-edp-hdmi", "webcam", "bluetooth"]
    let first = try #require(try collectUnderUmockdev(devices, stateDirectory: home + "/state"))
    let second = try #require(try collectUnderUmockdev(devices, stateDirectory: home + "/state"))
    #expect(first.stdout == second.stdout)
    #expect(try UdevFacts(profile: first.stdout).display?["width"] == 2560)
  }
}

/// `--root`: libudev cannot read a fixture tree, so the collectors walk its /sys and udev database.
@Suite(.timeLimit(.minutes(10))) struct UdevRootTests {
  @Test func fixtureTreeIsCollectedBySysfsWalk() throws {
    let home = try makeTemporaryDirectory()
    defer { removeTemporaryDirectory(home) }
    let root = URL(fileURLWithPath: cliFixture("")).deletingLastPathComponent().deletingLastPathComponent()
      .appendingPathComponent("CollectorsTests/Fixtures/udev-laptop").path
    let result = try run(["collect", "--root", root, "--state-dir", home + "/state"])
    #expect(result.status == 0, "stderr: \(result.stderr)")
    #expect(
      try UdevFacts(profile: result.stdout)
        == UdevFacts(display: ["width": 2560, "height": 1440, "orientation": 1], numberOfCameras: 1, bluetoothSupported: true))
  }
}
