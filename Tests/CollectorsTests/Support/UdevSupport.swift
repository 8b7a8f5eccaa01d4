import Collectors
import Foundation
import SystemCalls

/// A fixed device list in place of libudev.
struct StubDevices: DeviceEnumerating {
  var all: [UdevDevice]
  init(_ all: [UdevDevice]) { self.all = all }
  func devices(subsystem: String, attributes: [String]) -> [UdevDevice] {
    all.filter { $0.subsystem == subsystem }
  }
}

/// `Tests/CollectorsTests/Fixtures/<name>`.
func fixturePath(_ name: String) -> String {
  URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Fixtures").appendingPathComponent(name).path
}

/// A throw-away root directory holding `files` (absolute path inside the root → bytes).
final class TemporaryRoot {
  let path: String
  init(files: [String: [UInt8]] = [:]) throws {
    var template = Array((NSTemporaryDirectory() + "/fr-profile-udev.XXXXXX").utf8CString)
    guard let made = mkdtemp(&template) else { throw CocoaError(.fileWriteUnknown) }
    path = String(cString: made)
    for (name, bytes) in files {
      let url = URL(fileURLWithPath: path + name)
      try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
      try Data(bytes).write(to: url)
    }
  }
  deinit { try? FileManager.default.removeItem(atPath: path) }

  var system: SystemSource { SystemSource(root: path, environment: [:]) }
}

/// Bytes from a hex string; white space ignored.
func bytesFromHex(_ hex: String) -> [UInt8] {
  let digits = Array(hex.filter(\.isHexDigit).utf8)
  return stride(from: 0, to: digits.count - 1, by: 2).map { UInt8(String(decoding: digits[$0...$0 + 1], as: UTF8.self), radix: 16)! }
}

/// Real EDIDs of laptop panels (as published in X.org logs and autorandr fingerprints) and the
/// monitor of the shared umockdev fixture, with the preferred modes their sources report.
enum RealEDID {
  /// AUO B140QAN02.3, 14" panel, 2560x1440.
  static let auo2560x1440 = bytesFromHex(
    """
    00ffffffffffff0006af362300000000001b0104a51f117802f4f5a4544d9c270f505400000001010101010101010101010101010101\
    e65f00a0a0a040503020350035ae100000180000000f0000000000000000000000000020000000fe0041554f0a202020202020202020\
    000000fe004231343051414e30322e33200a00b2
    """)
  /// AUO B154EW02 V1, 15.4" panel, 1280x800 (X.org log: h_active 1280, v_active 800).
  static let auo1280x800 = bytesFromHex(
    """
    00ffffffffffff0006af742100000000010f0103802115780a1cf59758508e2727505400000001010101010101010101010101010101\
    c71b00a050201730302036004bcf100000180000000f0000000000000000000000000020000000fe0041554f0a202020202020202020\
    000000fe004231353445573032205631200a00aa
    """)
  /// AUO B140UAN02.1 (ThinkPad), 1920x1200.
  static let auo1920x1200 = bytesFromHex(
    """
    00ffffffffffff0006af91d200000000161e0104a51e1378035f55a755499d220d4f5500000001010101010101010101010101010101\
    fa3c80b870b0244010103e002dbc10000018000000fd00303c4b4b10010a202020202020000000fe0041554f0a202020202020202020\
    000000fe004231343055414e30322e31200a00ff
    """)
  /// "UMOCK HDMI 24" of ../shared/fixtures/umockdev/drm.umockdev, 1920x1080.
  static let umockHDMI1920x1080 = bytesFromHex(
    """
    00FFFFFFFFFFFF0052740124452301000A210104A2351E783AEE91A3544C99260F5054210800D1C081C08180B3009500010101010101\
    023A801871382D40582C45000F282100001E000000FD00384C1E5311000A202020202020000000FC00554D4F434B2048444D49203234\
    000000FF00554D44303031323334350A20200096
    """)

  /// The umock monitor with the 1920x1080i detailed timing of CTA-861 VIC 5 as its preferred
  /// timing, the way TVs and AV receivers carry it (348 of the 140,982 EDIDs of the public
  /// linuxhw/EDID corpus have an interlaced preferred timing): 74.25 MHz, 1920 active of 2200,
  /// 540 active lines per field of 562, byte 17 bit 7 set (interlaced). edid-decode and the
  /// kernel's mode list report 1920x1080i.
  static let interlaced1920x1080i = withChecksum(
    Array(umockHDMI1920x1080[0..<54])
      + bytesFromHex("011D8018711C1620582C2500C48E2100009E") + Array(umockHDMI1920x1080[72..<128]))

  /// A DisplayID-only panel: the base block's four descriptors hold no detailed timing (a dummy
  /// descriptor where the preferred timing would be, then the AUO panel's three display
  /// descriptors; 199 EDIDs of the corpus are like this) and its timings are in a DisplayID
  /// extension block (tag 0x70), which the parser does not read, so the connector's `modes` decide.
  static let displayIDOnly =
    withChecksum(
      Array(auo2560x1440[0..<54]) + bytesFromHex("000000100000000000000000000000000000") + Array(auo2560x1440[72..<126])
        + [0x01, 0x00])
    + withChecksum([0x70, 0x13, 0x79, 0x00, 0x00] + Array(repeating: 0, count: 123))

  /// `block` with its last byte set so that its bytes sum to 0 modulo 256.
  static func withChecksum(_ block: [UInt8]) -> [UInt8] {
    var block = block
    block[127] = 0
    block[127] = 0 &- block.reduce(UInt8(0), &+)
    return block
  }
}
