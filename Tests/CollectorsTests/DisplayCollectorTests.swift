import Collectors
import ProfileJSON
import Testing

private let gpu = "/sys/devices/pci0000:00/0000:00:02.0/drm/card0"

private func connector(
  _ name: String, _ status: String, modes: String = "", card: String = "card0", devtype: String? = "drm_connector"
) -> UdevDevice {
  UdevDevice(
    subsystem: "drm", sysname: "\(card)-\(name)", syspath: "\(gpu)/\(card)-\(name)", devtype: devtype,
    attributes: ["status": status, "modes": modes])
}

private let card0 = UdevDevice(subsystem: "drm", sysname: "card0", syspath: gpu, devtype: "drm_minor")

private func collect(_ devices: [UdevDevice], files: [String: [UInt8]] = [:]) throws -> JSON? {
  let root = try TemporaryRoot(files: files)
  return DisplayCollector().collect(CollectionContext(system: root.system, devices: StubDevices(devices)))
}

@Suite(.timeLimit(.minutes(10))) struct DisplayCollectorTests {
  @Test func internalPanelWinsOverAnEarlierExternalMonitor() throws {
    let devices = [
      card0, connector("DP-1", "disconnected"), connector("HDMI-A-1", "connected", modes: "1920x1080\n"),
      connector("eDP-1", "connected", modes: "2560x1440\n"),
    ]
    let display = try collect(
      devices,
      files: [
        "\(gpu)/card0-HDMI-A-1/edid": RealEDID.umockHDMI1920x1080, "\(gpu)/card0-eDP-1/edid": RealEDID.auo2560x1440,
      ])
    #expect(display == ["width": 2560, "height": 1440, "orientation": 1])
  }

  @Test func edidPreferredTimingWinsOverModes() throws {
    let devices = [connector("LVDS-1", "connected", modes: "1024x768\n")]
    let display = try collect(devices, files: ["\(gpu)/card0-LVDS-1/edid": RealEDID.auo1280x800])
    #expect(display == ["width": 1280, "height": 800, "orientation": 1])
  }

  @Test("a DisplayID-only panel (no detailed timing in block 0) takes the first of its modes")
  func displayIDOnlyPanelUsesModes() throws {
    let devices = [connector("eDP-1", "connected", modes: "2560x1600\n1920x1200\n")]
    let display = try collect(devices, files: ["\(gpu)/card0-eDP-1/edid": RealEDID.displayIDOnly])
    #expect(display == ["width": 2560, "height": 1600, "orientation": 1])
  }

  @Test func interlacedMonitorReportsItsFrameHeight() throws {
    let devices = [connector("HDMI-A-1", "connected", modes: "1920x1080i\n1280x720\n")]
    let display = try collect(devices, files: ["\(gpu)/card0-HDMI-A-1/edid": RealEDID.interlaced1920x1080i])
    #expect(display == ["width": 1920, "height": 1080, "orientation": 1])
  }

  @Test func firstModeWhenThereIsNoEDID() throws {
    let display = try collect([connector("Virtual-1", "connected", modes: "1280x800\n1024x768\n")])
    #expect(display == ["width": 1280, "height": 800, "orientation": 1])
  }

  @Test func firstModeWhenTheEDIDChecksumIsBad() throws {
    var edid = RealEDID.auo1920x1200
    edid[100] &+= 1
    let display = try collect(
      [connector("eDP-1", "connected", modes: "1920x1200\n")], files: ["\(gpu)/card0-eDP-1/edid": edid])
    #expect(display?["width"] == 1920)
  }

  @Test func firstConnectedExternalInNaturalOrderWithoutAPanel() throws {
    let devices = [
      connector("HDMI-A-1", "connected", modes: "3840x2160\n"), connector("DP-10", "connected", modes: "1280x1024\n"),
      connector("DP-2", "connected", modes: "2560x1440\n"), connector("DP-1", "disconnected", modes: "800x600\n"),
    ]
    #expect(try collect(devices)?["width"] == 2560)
    #expect(try collect(devices.reversed())?["width"] == 2560)
  }

  @Test func cardZeroBeforeCardOne() throws {
    let devices = [
      connector("DP-1", "connected", modes: "1280x1024\n", card: "card1"),
      connector("HDMI-A-2", "connected", modes: "1920x1080\n", card: "card0"),
    ]
    #expect(try collect(devices)?["width"] == 1920)
  }

  @Test func statusUnknownIsNotConnected() throws {
    #expect(try collect([connector("VGA-1", "unknown", modes: "1024x768\n")]) == nil)
  }

  @Test func omitsDisplayWithoutConnectedConnector() throws {
    #expect(try collect([card0, connector("DP-1", "disconnected"), connector("HDMI-A-1", "disconnected")]) == nil)
    #expect(try collect([]) == nil)
  }

  @Test func skipsAConnectedConnectorWithoutAnyMode() throws {
    let devices = [connector("eDP-1", "connected", modes: ""), connector("HDMI-A-1", "connected", modes: "1920x1080\n")]
    #expect(try collect(devices)?["width"] == 1920)
  }

  @Test func connectorsKnownByNameWhenDevtypeIsMissing() throws {
    let devices = [
      UdevDevice(subsystem: "drm", sysname: "card0", syspath: gpu, attributes: ["status": "connected", "modes": "640x480"]),
      connector("HDMI-A-1", "connected", modes: "1920x1080\n", devtype: nil),
    ]
    #expect(try collect(devices)?["width"] == 1920)
  }

  @Test func sidewaysPanelOnTheKernelCommandLineSwapsWidthAndHeight() throws {
    let display = try collect(
      [connector("DSI-1", "connected", modes: "800x1280\n")],
      files: ["/proc/cmdline": Array("quiet video=DSI-1:panel_orientation=right_side_up\n".utf8)])
    #expect(display == ["width": 1280, "height": 800, "orientation": 1])
  }

  @Test(
    "panel orientation on the kernel command line",
    arguments: [
      ("video=eDP-1:panel_orientation=left_side_up", "eDP-1", true),
      ("quiet video=eDP-1:1920x1200@60,panel_orientation=right_side_up splash", "eDP-1", true),
      ("video=eDP-1:panel_orientation=upside_down", "eDP-1", false),
      ("video=HDMI-A-1:panel_orientation=left_side_up", "eDP-1", false),
      ("video=eDP-10:panel_orientation=left_side_up", "eDP-1", false),
      ("BOOT_IMAGE=/vmlinuz ro quiet", "eDP-1", false),
    ])
  func panelOrientation(cmdline: String, connector: String, sideways: Bool) {
    #expect(panelIsSideways(kernelCommandLine: cmdline, connector: connector) == sideways)
  }

  @Test func naturalOrderComparesNumbersByValue() {
    let names = ["card0-DP-10", "card1-DP-1", "card0-DP-2", "card0-HDMI-A-1", "card0-DP-1"]
    #expect(names.sorted(by: naturalLess) == ["card0-DP-1", "card0-DP-2", "card0-DP-10", "card0-HDMI-A-1", "card1-DP-1"])
  }

  @Test func sameDevicesGiveTheSameDisplayEveryTime() throws {
    let devices = [connector("HDMI-A-1", "connected", modes: "1920x1080\n"), connector("DP-1", "connected", modes: "2560x1440\n")]
    let first = try collect(devices)
    for order in [devices, devices.reversed()] { #expect(try collect(order) == first) }
  }
}
