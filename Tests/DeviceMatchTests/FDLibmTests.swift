import DeviceMatch
import Testing

/// geolib's distance must use the engine's trigonometry: V8's Math.sin/cos/acos are fdlibm,
/// which differs from glibc in the last bit for a few percent of arguments.
@Suite(.timeLimit(.minutes(10))) struct FDLibmTests {
  /// (function, argument bits, node 20's result bits), all cases where glibc's result differs.
  static let nodeResults: [(String, UInt64, UInt64)] = [
    ("cos", 0x3fff_ff95_11d7_e43e, 0xbfda_a0a1_6800_7a16), ("sin", 0x3fff_ffff_fc24_412a, 0x3fed_18f6_ee07_cc69),
    ("cos", 0xc05a_f7de_a000_0000, 0x3fdf_5aa4_d080_f4da), ("acos", 0xbfdf_4e47_0000_0000, 0x4000_a7c2_b2d3_ac3e),
    ("cos", 0x4083_43f5_0e00_0000, 0x3fe7_93bb_2429_0aa6), ("cos", 0x4077_c931_0200_0000, 0xbfec_ed98_523b_6cd9),
    ("sin", 0x3fff_ffec_2aad_8409, 0x3fed_1907_6c8e_131c), ("acos", 0xbfe0_b12e_0000_0000, 0x4000_f4d9_2358_3a28),
    ("sin", 0x3fff_ffff_ffff_fddf, 0x3fed_18f6_ead1_b60c), ("acos", 0xbfd8_801b_2000_0000, 0x3fff_6b13_fe7a_ac22),
    ("sin", 0x3fff_ffff_ffa8_488f, 0x3fed_18f6_eb1a_b5cc), ("sin", 0x4058_87a1_f000_0000, 0xbfe5_564d_cb7a_ad30),
    ("sin", 0x3fff_ffff_ffff_ffec, 0x3fed_18f6_ead1_b456), ("cos", 0x401d_6012_8000_0000, 0x3fdf_4099_5457_70c1),
    ("cos", 0xc07d_9b9d_9780_0000, 0xbfe9_630f_fe9d_2597),
  ]

  @Test("sin, cos and acos equal V8's bit for bit where glibc's differ")
  func matchesV8() {
    for (function, argument, expected) in Self.nodeResults {
      let x = Double(bitPattern: argument)
      let result: Double
      switch function {
      case "sin": result = FDLibm.sin(x)
      case "cos": result = FDLibm.cos(x)
      default: result = FDLibm.acos(x)
      }
      #expect(result.bitPattern == expected, "\(function)(\(x))")
    }
  }

  @Test("special values: NaN, infinities, |x| > 1 for acos, exact ends")
  func specialValues() {
    #expect(FDLibm.sin(.nan).isNaN && FDLibm.cos(.infinity).isNaN && FDLibm.acos(1.5).isNaN)
    #expect(FDLibm.acos(1) == 0 && FDLibm.acos(-1) == Double.pi)
    #expect(FDLibm.sin(0) == 0 && FDLibm.cos(0) == 1)
  }
}
