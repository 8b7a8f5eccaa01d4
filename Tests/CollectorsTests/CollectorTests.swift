import Collectors
import Foundation
import ProfileJSON
import TestSupport
import Testing

@Suite(.timeLimit(.minutes(10))) struct PlatformCollectorTests {
  @Test func laptopPlatformFromDMIAndEtc() {
    let platform = PlatformCollector().collect(FixtureMachine.laptop.context())
    #expect(
      platform == [
        "platform": "Linux", "version": "12", "device": "laptop", "deviceName": "Office ThinkPad",
        "model": "ThinkPad X1 Carbon Gen 10", "brand": "LENOVO", "locale": "en_US", "timeZone": "Europe/Berlin",
        "jailBreakScore": 0,
      ])
  }

  @Test func omitsModelAndDeviceWhenDMIIsMissing() {
    let platform = PlatformCollector().collect(FixtureMachine.container.context())
    #expect(platform?["model"] == nil)
    #expect(platform?["brand"] == nil)
    #expect(platform?["device"] == "container")
  }

  @Test func boardModelComesFromTheDeviceTree() {
    let platform = PlatformCollector().collect(FixtureMachine.raspberryPi.context())
    #expect(platform?["model"] == "Raspberry Pi 4 Model B Rev 1.4")
    #expect(platform?["brand"] == "Raspberry Pi")
  }

  @Test func environmentLocaleBeatsFilesInPOSIXOrder() {
    let context = FixtureMachine.laptop.context(environment: ["LANG": "de_DE.UTF-8", "LC_MESSAGES": "fr_FR.UTF-8"])
    #expect(PlatformCollector().collect(context)?["locale"] == "fr_FR")
    let all = FixtureMachine.laptop.context(environment: ["LANG": "de_DE.UTF-8", "LC_ALL": "it_IT.UTF-8"])
    #expect(PlatformCollector().collect(all)?["locale"] == "it_IT")
  }

  @Test func cLocaleInTheEnvironmentFallsThroughToTheSystemSetting() {
    let context = FixtureMachine.laptop.context(environment: ["LANG": "C.UTF-8", "LC_ALL": "POSIX"])
    #expect(PlatformCollector().collect(context)?["locale"] == "en_US")
  }

  @Test func tzEnvironmentBeatsLocaltime() {
    let context = FixtureMachine.laptop.context(environment: ["TZ": ":America/New_York"])
    #expect(PlatformCollector().collect(context)?["timeZone"] == "America/New_York")
  }

  @Test func oemFillerIsDroppedNotReported() throws {
    let tree = try TemporaryTree()
    defer { tree.remove() }
    try tree.write("/sys/class/dmi/id/sys_vendor", "To be filled by O.E.M.\n")
    try tree.write("/sys/class/dmi/id/board_vendor", "ASUSTeK COMPUTER INC.\n")
    try tree.write("/sys/class/dmi/id/product_name", "System Product Name\n")
    try tree.write("/sys/class/dmi/id/board_name", "PRIME B550-PLUS\n")
    try tree.write("/sys/class/dmi/id/chassis_type", "3\n")
    let platform = PlatformCollector(detectors: []).collect(tree.context())
    #expect(platform?["brand"] == "ASUSTeK COMPUTER INC.")
    #expect(platform?["model"] == "PRIME B550-PLUS")
    #expect(platform?["device"] == "desktop")
  }

  @Test func machineInfoChassisOverridesDetection() throws {
    let tree = try TemporaryTree()
    defer { tree.remove() }
    try tree.write("/etc/machine-info", "CHASSIS=tablet\n")
    try tree.write("/.dockerenv", "")
    #expect(PlatformCollector(detectors: []).collect(tree.context())?["device"] == "tablet")
  }
}

@Suite(.timeLimit(.minutes(10))) struct HardwareCollectorTests {
  @Test func laptopHardware() {
    let hardware = HardwareCollector().collect(FixtureMachine.laptop.context())
    #expect(hardware?["hardware"] == "12th Gen Intel(R) Core(TM) i7-1265U")
    #expect(hardware?["manufacturer"] == "LENOVO")
    #expect(hardware?["memory"] == 31872)
    #expect(hardware?["cpu"] == 12)
    #expect(hardware?["storage"]?.numberValue.map { $0 > 0 } == true)
    #expect(hardware?.objectValue?.keys == ["hardware", "manufacturer", "storage", "memory", "cpu"])
  }

  @Test func armBoardUsesCoreName() {
    let hardware = HardwareCollector().collect(FixtureMachine.raspberryPi.context())
    #expect(hardware?["hardware"] == "ARM Cortex-A72")
    #expect(hardware?["cpu"] == 4)
    #expect(hardware?["memory"] == 3840)
  }

  @Test func oddMeminfoDropsMemoryWithAWarningAndKeepsTheRest() throws {
    let tree = try TemporaryTree()
    defer { tree.remove() }
    try tree.write("/proc/meminfo", "garbage\u{0}\u{1}\n")
    try tree.write("/sys/devices/system/cpu/present", "0-1\n")
    let context = tree.context()
    let hardware = HardwareCollector().collect(context)
    #expect(hardware?["memory"] == nil)
    #expect(hardware?["cpu"] == 2)
    #expect(context.diagnostics.notes.contains { $0.level == .warning && $0.key == "hardware.memory" })
  }

  @Test func nestedCollectorsFollowCPUInOrder() {
    struct Fixed: DeviceCollector {
      let name: String
      func collect(_ context: CollectionContext) -> JSON? { name == "none" ? nil : ["n": 1] }
    }
    let hardware = HardwareCollector(nested: [Fixed(name: "display"), Fixed(name: "none"), Fixed(name: "camera")])
      .collect(FixtureMachine.laptop.context())
    #expect(hardware?.objectValue?.keys == ["hardware", "manufacturer", "storage", "memory", "cpu", "display", "camera"])
  }

  @Test func emptyTreeGivesNoHardwareButStorage() throws {
    let tree = try TemporaryTree()
    defer { tree.remove() }
    let hardware = HardwareCollector().collect(tree.context())
    #expect(hardware?.objectValue?.keys == ["storage"])
  }
}

@Suite(.timeLimit(.minutes(10))) struct NetworkAndBrowserTests {
  @Test func connectedByDefaultRouteOrGlobalAddress() throws {
    #expect(NetworkCollector().collect(FixtureMachine.laptop.context()) == ["connected": true])
    #expect(NetworkCollector().collect(FixtureMachine.raspberryPi.context()) == ["connected": true])
    let tree = try TemporaryTree()
    defer { tree.remove() }
    try tree.write("/proc/net/route", "Iface\tDestination\tGateway\tFlags\tRefCnt\tUse\tMetric\tMask\n")
    try tree.write("/sys/class/net/eth0/operstate", "down\n")
    #expect(NetworkCollector().collect(tree.context()) == ["connected": false])
  }

  @Test func userAgentNamesVersionOSAndArchitecture() {
    let browser = BrowserCollector().collect(FixtureMachine.cloudVM.context())
    #expect(browser == ["userAgent": .string("fr-profile/\(frProfileVersion) (Ubuntu 24.04.1 LTS; x86_64)")])
    #expect(BrowserCollector(userAgent: "MyKiosk/2.0").collect(FixtureMachine.cloudVM.context()) == ["userAgent": "MyKiosk/2.0"])
  }
}

@Suite(.timeLimit(.minutes(10))) struct ProfileTests {
  @Test func profileKeepsAndroidTopLevelOrder() throws {
    let location = try Location(latitude: 52.52, longitude: 13.405, source: "test")
    let profile = DeviceProfile.profile(identifier: "id", metadata: ["platform": [:]], location: location)
    #expect(
      JSONWriter.compact(profile)
        == #"{"identifier":"id","version":"1.0","metadata":{"platform":{}},"location":{"latitude":52.52,"longitude":13.405}}"#)
    #expect(
      JSONWriter.compact(DeviceProfile.profile(identifier: "id", metadata: nil, location: nil)) == #"{"identifier":"id","version":"1.0"}"#)
  }

  @Test(arguments: FixtureMachine.allCases)
  func fixtureProfilesAreSmallAndPrivate(machine: FixtureMachine) {
    let metadata = DeviceProfile.metadata(DeviceProfile.defaultCollectors(), machine.context())
    let text = JSONWriter.compact(DeviceProfile.profile(identifier: String(repeating: "a", count: 57), metadata: metadata, location: nil))
    #expect(text.utf8.count <= 1536)
    // Serial numbers, MAC addresses, IPs and the raw machine-id in the fixtures never appear.
    for secret in [
      "PF3XAMPL", "L1HF2AB00XY", "8c1b2a3f", "a0:b3:c4", "10000000a1b2c3d4", "ec2a7b9c", "4f7c2a9e", "0a1b2c3d4e5f", "172.31", "0102A8C0",
    ] {
      #expect(!text.contains(secret), "\(secret) leaked")
    }
  }

  @Test(arguments: FixtureMachine.allCases)
  func collectingTwiceGivesIdenticalBytes(machine: FixtureMachine) {
    let first = JSONWriter.compact(DeviceProfile.metadata(DeviceProfile.defaultCollectors(), machine.context()))
    let second = JSONWriter.compact(DeviceProfile.metadata(DeviceProfile.defaultCollectors(), machine.context()))
    #expect(first == second)
  }
}

@Suite(.timeLimit(.minutes(10))) struct LocationTests {
  @Test func locationFileTakesTheFirstLineThatIsNotAComment() throws {
    #expect(
      try Location.parseFile("# office\n\n  48.85, 2.35 \n1,2\n", source: "f") == Location(latitude: 48.85, longitude: 2.35, source: ""))
  }

  @Test("invalid positions are errors naming the source", arguments: ["91,0", "0,181", "nan,1", "1", "a,b", "1,2,3", "inf,0", "0x10,1"])
  func rejectsInvalid(text: String) {
    #expect(throws: LocationError.self) { try Location.parse(text, source: "FR_PROFILE_LOCATION") }
  }

  @Test func locationFileWithoutAPositionIsAnErrorNamingTheFile() {
    #expect(throws: LocationError.invalid(source: "/etc/loc", reason: "no \"LATITUDE,LONGITUDE\" line")) {
      try Location.parseFile("# nothing here\n\n", source: "/etc/loc")
    }
  }
}
