import Collectors
import Testing

@Suite(.timeLimit(.minutes(10))) struct EDIDTests {
  @Test(
    "real panel EDIDs give their preferred detailed timing",
    arguments: [
      (RealEDID.auo2560x1440, DisplayMode(width: 2560, height: 1440)),
      (RealEDID.auo1280x800, DisplayMode(width: 1280, height: 800)),
      (RealEDID.auo1920x1200, DisplayMode(width: 1920, height: 1200)),
      (RealEDID.umockHDMI1920x1080, DisplayMode(width: 1920, height: 1080)),
    ])
  func parsesPreferredTiming(edid: [UInt8], mode: DisplayMode) {
    #expect(edid.count == 128)
    #expect(parseEDID(edid) == .success(mode))
  }

  @Test("an interlaced preferred timing reports the frame, not the field: 1920x1080i is 1920x1080")
  func interlacedTimingReportsTheFrameHeight() {
    #expect(RealEDID.interlaced1920x1080i.count == 128)
    #expect(parseEDID(RealEDID.interlaced1920x1080i) == .success(DisplayMode(width: 1920, height: 1080)))
  }

  @Test func displayIDOnlyPanelHasNoPreferredTimingInItsBaseBlock() {
    #expect(RealEDID.displayIDOnly.count == 256)
    #expect(parseEDID(RealEDID.displayIDOnly) == .failure(.noPreferredTiming))
  }

  @Test func ignoresExtensionBlocksAfterTheBaseBlock() {
    let withExtension = RealEDID.auo1920x1200 + [0x02, 0x03] + Array(repeating: 0, count: 126)
    #expect(parseEDID(withExtension) == .success(DisplayMode(width: 1920, height: 1200)))
  }

  @Test func rejectsBadChecksum() {
    var edid = RealEDID.auo2560x1440
    edid[56] &+= 1  // a different width, checksum no longer matches
    #expect(parseEDID(edid) == .failure(.badChecksum(sum: 1)))
  }

  @Test func rejectsShortEDID() {
    #expect(parseEDID(Array(RealEDID.auo2560x1440.prefix(100))) == .failure(.tooShort(count: 100)))
  }

  @Test func rejectsEmptyEDIDOfADisconnectedConnector() {
    #expect(parseEDID([]) == .failure(.tooShort(count: 0)))
    #expect(EDIDError.tooShort(count: 0).description == "empty EDID")
  }

  @Test func rejectsBadHeader() {
    var edid = RealEDID.auo1280x800
    edid[0] = 0xFF
    edid[127] &-= 0xFF  // keep the checksum right: only the header is wrong
    #expect(parseEDID(edid) == .failure(.badHeader))
  }

  @Test func rejectsFirstDescriptorThatIsNoTiming() {
    var edid = RealEDID.auo1280x800
    let clock = (edid[54], edid[55])
    edid[54] = 0
    edid[55] = 0
    edid[127] = edid[127] &+ clock.0 &+ clock.1
    #expect(parseEDID(edid) == .failure(.noPreferredTiming))
  }

  @Test(
    "first line of modes",
    arguments: [
      ("1920x1080\n1680x1050\n", DisplayMode(width: 1920, height: 1080) as DisplayMode?),
      ("1920x1080i\n1280x720\n", DisplayMode(width: 1920, height: 1080)),
      ("800x600", DisplayMode(width: 800, height: 600)),
      ("", nil),
      ("x1080\n", nil),
      ("garbage\n", nil),
    ])
  func parsesFirstMode(modes: String, mode: DisplayMode?) {
    #expect(parseFirstMode(modes) == mode)
  }
}
