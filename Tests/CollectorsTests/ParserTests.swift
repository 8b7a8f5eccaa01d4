import Collectors
import DeviceFacts
import SystemCalls
import Testing

@Suite(.timeLimit(.minutes(10))) struct KeyValueFileTests {
  @Test func parsesOSReleaseQuotingAndComments() {
    let text = """
      # a comment
      PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"
      VERSION_ID="12"
      ID=debian
      NAME='Single quoted'
      ESCAPED="say \\"hi\\" \\$HOME"
      not a setting
      """
    let values = parseKeyValueFile(text)
    #expect(values["PRETTY_NAME"] == "Debian GNU/Linux 12 (bookworm)")
    #expect(values["VERSION_ID"] == "12")
    #expect(values["ID"] == "debian")
    #expect(values["NAME"] == "Single quoted")
    #expect(values["ESCAPED"] == "say \"hi\" $HOME")
    #expect(values.count == 5)
  }

  @Test func laterKeysWinAndExportIsIgnored() {
    #expect(parseKeyValueFile("export LANG=de_DE.UTF-8\nLANG=en_US.UTF-8\n")["LANG"] == "en_US.UTF-8")
  }
}

@Suite(.timeLimit(.minutes(10))) struct ProcParserTests {
  @Test(
    "MemTotal in KiB",
    arguments: [
      ("MemTotal:       16303580 kB\nMemFree: 1 kB\n", UInt64(16_303_580) as UInt64?),
      ("MemFree:         8123456 kB\n", nil),
      ("MemTotal: lots kB\n", nil),
      ("MemTotal: 1024 MB\n", nil),
      ("MemTotal: 18446744073709551615 kB\n", nil),
      ("", nil),
    ])
  func parsesMemTotal(text: String, expected: UInt64?) {
    #expect(parseMemTotalKiB(text) == expected)
  }

  @Test(
    "memory rounds up to 128 MiB",
    arguments: [
      (UInt64(32_507_324), UInt64(31872)), (3_884_396, 3840), (16_303_580, 16000), (1, 128), (131072, 128), (131073, 256),
    ])
  func roundsMemory(kib: UInt64, mib: UInt64) {
    #expect(roundMemoryMiB(kib: kib) == mib)
  }

  @Test func memoryIsStableAcrossSmallKernelDrift() {
    // MemTotal of one 16 GiB laptop under three kernels (6.1, 6.5, 6.8): a few MiB apart.
    let kernels: [UInt64] = [16_303_580, 16_299_412, 16_306_112]
    #expect(Set(kernels.map { roundMemoryMiB(kib: $0) }).count == 1)
  }

  @Test func parsesX86CPUInfo() {
    let text = """
      processor\t: 0
      model name\t: Intel(R) Core(TM)  i7-1185G7 @ 3.00GHz
      flags\t\t: fpu vme hypervisor

      processor\t: 1
      model name\t: Intel(R) Core(TM)  i7-1185G7 @ 3.00GHz
      """
    let info = parseCPUInfo(text)
    #expect(info.processors == 2)
    #expect(info.modelName == "Intel(R) Core(TM) i7-1185G7 @ 3.00GHz")
    #expect(info.hypervisorFlag)
  }

  @Test func parsesARMCPUInfo() {
    let info = parseCPUInfo("processor\t: 0\nCPU implementer\t: 0x41\nCPU part\t: 0xD08\n\nprocessor\t: 1\n")
    #expect(info.modelName == nil)
    #expect(info.implementer == "0x41")
    #expect(info.part == "0xd08")
    #expect(!info.hypervisorFlag)
    #expect(armCoreName(implementer: "0x41", part: "0xd08") == "ARM Cortex-A72")
    #expect(armCoreName(implementer: "0x51", part: "0xd08") == nil)
  }

  @Test(
    "CPU lists",
    arguments: [
      ("0-3", 4 as Int?), ("0", 1), ("0-3,8-11", 8), ("0,2,4", 3), ("", nil), ("3-1", nil), ("a-b", nil), ("0-9223372036854775807", nil),
      ("-1", nil), ("0-3,0-65535", nil),
    ])
  func countsCPUList(text: String, expected: Int?) {
    #expect(parseCPUListCount(text) == expected)
  }

  @Test func splitsDeviceTreeStrings() {
    #expect(parseDeviceTreeStrings(Array("raspberrypi,4-model-b\0brcm,bcm2711\0".utf8)) == ["raspberrypi,4-model-b", "brcm,bcm2711"])
    #expect(deviceTreeVendor("raspberrypi,4-model-b") == "Raspberry Pi")
    #expect(deviceTreeVendor("acme,board") == "acme")
    #expect(deviceTreeVendor("nocomma") == nil)
  }

  @Test func readsTracerPid() {
    #expect(parseTracerPid("Name:\tx\nTracerPid:\t4242\n") == 4242)
    #expect(parseTracerPid("Name:\tx\nTracerPid:\t0\n") == 0)
    #expect(parseTracerPid("Name:\tx\n") == nil)
  }

  @Test func findsInstrumentationAndForeignLibrariesInMaps() {
    let maps = """
      00400000-00500000 r-xp 00000000 08:01 77  /usr/bin/fr-profile
      7f3a1c000000-7f3a1c200000 r-xp 00000000 08:01 1234  /tmp/frida-agent-64.so
      7f3a1c200000-7f3a1c300000 r-xp 00000000 08:01 1234  /tmp/frida-agent-64.so
      7f3a1d000000-7f3a1d200000 r-xp 00000000 08:01 99  /usr/lib/x86_64-linux-gnu/libc.so.6
      7f3a1e000000-7f3a1e200000 r-xp 00000000 08:01 98  /lib/x86_64-linux-gnu/libudev.so.1.7.5
      7f3a1f000000-7f3a1f001000 r-xp 00000000 08:01 97  /home/mallory/.cache/libhook.so (deleted)
      7f3a20000000-7f3a20001000 r-xp 00000000 00:01 96  /memfd:payload.so (deleted)
      7ffd1000-7ffd2000 rw-p 00000000 00:00 0  [stack]
      7ffd3000-7ffd4000 r-xp 00000000 00:00 0  [vdso]
      """
    let found = suspiciousLibraries(inMaps: maps)
    #expect(found.instrumentation == ["/tmp/frida-agent-64.so"])
    #expect(
      found.foreign == ["/tmp/frida-agent-64.so", "/home/mallory/.cache/libhook.so (deleted)", "/memfd:payload.so (deleted)"])
  }
}

@Suite(.timeLimit(.minutes(10))) struct FillerAndNamingTests {
  @Test(
    "OEM filler counts as unknown",
    arguments: [
      "To be filled by O.E.M.", "To Be Filled By O.E.M.", "Default string", "System Product Name", "  ", "Not Specified",
      "0000000000", "x.x", "System manufacturer",
    ])
  func fillerIsUnknown(value: String) {
    #expect(meaningful(value) == nil)
  }

  @Test func realValuesSurviveTrimmed() {
    #expect(meaningful("  Dell Inc.  \n") == "Dell Inc.")
    #expect(meaningful(nil) == nil)
  }

  @Test(
    "locales normalise to language_TERRITORY",
    arguments: [
      ("en_US.UTF-8", "en_US" as String?), ("de_DE.UTF-8@euro", "de_DE"), ("fr_FR", "fr_FR"), ("C", nil), ("POSIX", nil),
      ("C.UTF-8", nil), ("sr_RS@latin", "sr_RS"),
    ])
  func normalisesLocale(value: String, expected: String?) {
    #expect(normalizeLocale(value) == expected)
  }

  @Test(
    "time zones from TZ and links",
    arguments: [
      (":Europe/Berlin", "Europe/Berlin" as String?), ("Europe/Berlin", "Europe/Berlin"), ("/usr/share/zoneinfo/Asia/Tokyo", "Asia/Tokyo"),
      ("CET-1CEST,M3.5.0,M10.5.0/3", nil), ("UTC", "UTC"), ("America/Argentina/Buenos_Aires", "America/Argentina/Buenos_Aires"),
      ("Etc/GMT+5", "Etc/GMT+5"),
    ])
  func readsTZ(value: String, expected: String?) {
    #expect(ianaZone(fromTZ: value) == expected)
  }

  @Test func readsZoneFromLocaltimeLinks() {
    #expect(ianaZone(fromPath: "../usr/share/zoneinfo/Europe/London") == "Europe/London")
    #expect(ianaZone(fromPath: "/usr/share/zoneinfo/posix/Europe/Paris") == "Europe/Paris")
    #expect(ianaZone(fromPath: "/etc/some/other/file") == nil)
  }

  @Test(
    "DMI chassis types map as hostnamectl does",
    arguments: [
      (3, "desktop" as String?), (9, "laptop"), (10, "laptop"), (11, "handset"), (17, "server"), (23, "server"), (30, "tablet"),
      (31, "convertible"), (34, "embedded"), (1, nil), (2, nil), (99, nil),
    ])
  func mapsChassis(type: Int, expected: String?) {
    #expect(chassisName(dmiType: type) == expected)
  }
}

@Suite(.timeLimit(.minutes(10))) struct NetworkParserTests {
  static let header = "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n"

  @Test func findsIPv4DefaultRoute() {
    #expect(hasDefaultRoute(ipv4Routes: Self.header + "eth0\t00000000\t0102A8C0\t0003\t0\t0\t100\t00000000\t0\t0\t0\n"))
  }

  @Test func ignoresSubnetRoutesAndLoopback() {
    #expect(!hasDefaultRoute(ipv4Routes: Self.header + "eth0\t0002A8C0\t00000000\t0001\t0\t0\t100\t00FFFFFF\t0\t0\t0\n"))
    #expect(!hasDefaultRoute(ipv4Routes: Self.header + "lo\t00000000\t00000000\t0001\t0\t0\t0\t00000000\t0\t0\t0\n"))
    #expect(!hasDefaultRoute(ipv4Routes: Self.header))
  }

  @Test func findsIPv6DefaultRouteButNotRejectRoutes() {
    let route =
      "00000000000000000000000000000000 00 00000000000000000000000000000000 00 fe800000000000000000000000000001 00000400 00000001 00000000 00450003 eth0\n"
    let reject =
      "00000000000000000000000000000000 00 00000000000000000000000000000000 00 00000000000000000000000000000000 ffffffff 00000001 00000000 00200200 wlan0\n"
    #expect(hasDefaultRoute(ipv6Routes: route))
    #expect(!hasDefaultRoute(ipv6Routes: reject))
  }

  @Test func globalIPv6OnlyCountsScopeZero() {
    let text =
      "20010db8000000000000000000000001 02 40 00 80     eth0\nfe80000000000000a2b3c4fffed5e6f7 03 40 20 80 wlan0\n00000000000000000000000000000001 01 80 10 80       lo\n"
    #expect(globalIPv6Interfaces(text) == ["eth0"])
  }
}
