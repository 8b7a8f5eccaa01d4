import Collectors
import ProfileJSON
import SystemCalls
import Testing

private let laptop = SystemSource(root: fixturePath("udev-laptop"), environment: [:])

@Suite(.timeLimit(.minutes(10))) struct SysfsEnumeratorTests {
  @Test func listsClassDevicesSortedBySyspathWithAttributes() {
    let drm = SysfsEnumerator(system: laptop).devices(subsystem: "drm", attributes: ["status"])
    #expect(drm.map(\.sysname) == ["card0", "card0-DP-1", "card0-HDMI-A-1", "card0-eDP-1", "renderD128"])
    let edp = drm.first { $0.sysname == "card0-eDP-1" }
    #expect(edp?.syspath == "/sys/devices/pci0000:00/0000:00:02.0/drm/card0/card0-eDP-1")
    #expect(edp?.devtype == "drm_connector")
    #expect(edp?.subsystem == "drm")
    #expect(edp?.attributes == ["status": "connected"])
  }

  @Test func readsTheUdevDatabaseBelowTheRoot() {
    let video = SysfsEnumerator(system: laptop).devices(subsystem: "video4linux", attributes: ["name"])
    #expect(video.map(\.sysname) == ["video0", "video1"])
    #expect(video.map { $0.properties["ID_V4L_CAPABILITIES"] } == [":capture:", ":"])
    #expect(video.first?.properties["DEVNAME"] == "video0")
    #expect(video.first?.attributes["name"] == "Integrated Camera: Integrated C")
  }

  @Test func missingSubsystemIsEmpty() {
    #expect(SysfsEnumerator(system: laptop).devices(subsystem: "sound", attributes: []).isEmpty)
  }

  @Test func collectsTheFixtureLaptop() {
    let context = CollectionContext(system: laptop)
    #expect(context.devices is SysfsEnumerator)
    #expect(DisplayCollector().collect(context) == ["width": 2560, "height": 1440, "orientation": 1])
    #expect(CameraCollector().collect(context) == ["numberOfCameras": 1])
    #expect(BluetoothCollector().collect(context) == ["supported": true])
  }

  @Test func liveMachineUsesLibudev() {
    #expect(CollectionContext(system: .live()).devices is LibudevEnumerator)
  }

  @Test(
    "udev database file names",
    arguments: [
      ("video0", "video4linux", ["MAJOR": "81", "MINOR": "0"], "c81:0"),
      ("sda", "block", ["MAJOR": "8", "MINOR": "0"], "b8:0"),
      ("enp0s31f6", "net", ["IFINDEX": "2"], "n2"),
      ("card0-eDP-1", "drm", [:], "+drm:card0-eDP-1"),
    ])
  func databaseID(sysname: String, subsystem: String, uevent: [String: String], id: String) {
    #expect(udevDatabaseID(sysname: sysname, subsystem: subsystem, uevent: uevent) == id)
  }

  @Test func resolvesRelativeLinks() {
    #expect(resolvePath("../../devices/pci0000:00/card0", relativeTo: "/sys/class/drm") == "/sys/devices/pci0000:00/card0")
    #expect(resolvePath("/sys/devices/x", relativeTo: "/sys/class/drm") == "/sys/devices/x")
  }
}
