// swift-format-ignore-file: AlwaysUseLowerCamelCase

// (fdlibm's own constant names, kept so the port can be read line by line against e_rem_pio2.c / k_sin.c.)
#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

// sin, cos and acos as JavaScript engines compute them: V8's Math.sin/cos/acos (and Java's
// StrictMath) are fdlibm 5.3, whose results differ from glibc's in the last bit for a few
// percent of arguments — enough to move a short geolib distance across a metre. This is a
// Swift port of those fdlibm routines:
//
//   Copyright (C) 1993 by Sun Microsystems, Inc. All rights reserved.
//   Developed at SunSoft, a Sun Microsystems, Inc. business.
//   Permission to use, copy, modify, and distribute this software is freely granted,
//   provided that this notice is preserved.
//
// Arguments beyond 2^19·π/2 (coordinates of ~47 million degrees) would need fdlibm's
// multi-precision reduction (__kernel_rem_pio2); they fall back to the C library.
package enum FDLibm {
  @inline(__always) static func high(_ x: Double) -> Int32 { Int32(truncatingIfNeeded: Int64(bitPattern: x.bitPattern) >> 32) }
  @inline(__always) static func low(_ x: Double) -> UInt32 { UInt32(truncatingIfNeeded: x.bitPattern) }
  @inline(__always) static func withLowZero(_ x: Double) -> Double { Double(bitPattern: x.bitPattern & 0xFFFF_FFFF_0000_0000) }
  @inline(__always) static func make(high: Int32, low: UInt32) -> Double {
    Double(bitPattern: UInt64(UInt32(bitPattern: high)) << 32 | UInt64(low))
  }

  // MARK: Kernels on [-π/4, π/4]

  static let s1 = -1.66666666666666324348e-01
  static let s2 = 8.33333333332248946124e-03
  static let s3 = -1.98412698298579493134e-04
  static let s4 = 2.75573137070700676789e-06
  static let s5 = -2.50507602534068634195e-08
  static let s6 = 1.58969099521155010221e-10

  /// __kernel_sin(x, y, iy): y is the tail of x; iy 0 means y is zero.
  static func kernelSin(_ x: Double, _ y: Double, _ iy: Int) -> Double {
    let ix = high(x) & 0x7fff_ffff
    if ix < 0x3e40_0000 && Int(x) == 0 { return x }  // |x| < 2^-27
    let z = x * x
    let v = z * x
    let r = s2 + z * (s3 + z * (s4 + z * (s5 + z * s6)))
    if iy == 0 { return x + v * (s1 + z * r) }
    return x - ((z * (0.5 * y - v * r) - y) - v * s1)
  }

  static let c1 = 4.16666666666666019037e-02
  static let c2 = -1.38888888888741095749e-03
  static let c3 = 2.48015872894767294178e-05
  static let c4 = -2.75573143513906633035e-07
  static let c5 = 2.08757232129817482790e-09
  static let c6 = -1.13596475577881948265e-11

  /// __kernel_cos(x, y): y is the tail of x.
  static func kernelCos(_ x: Double, _ y: Double) -> Double {
    let ix = high(x) & 0x7fff_ffff
    if ix < 0x3e40_0000 && Int(x) == 0 { return 1 }  // |x| < 2^-27
    let z = x * x
    let r = z * (c1 + z * (c2 + z * (c3 + z * (c4 + z * (c5 + z * c6)))))
    if ix < 0x3FD3_3333 { return 1 - (0.5 * z - (z * r - x * y)) }  // |x| < 0.3
    let qx: Double = ix > 0x3fe9_0000 ? 0.28125 : make(high: ix - 0x0020_0000, low: 0)  // x/4, low word cleared
    let hz = 0.5 * z - qx
    let a = 1 - qx
    return a - (hz - (z * r - x * y))
  }

  // MARK: Argument reduction

  static let invpio2 = 6.36619772367581382433e-01
  static let pio2_1 = 1.57079632673412561417e+00
  static let pio2_1t = 6.07710050650619224932e-11
  static let pio2_2 = 6.07710050630396597660e-11
  static let pio2_2t = 2.02226624879595063154e-21
  static let pio2_3 = 2.02226624871116645580e-21
  static let pio2_3t = 8.47842766036889956997e-32
  static let npio2_hw: [Int32] = [
    0x3FF9_21FB, 0x4009_21FB, 0x4012_D97C, 0x4019_21FB, 0x401F_6A7A, 0x4022_D97C, 0x4025_FDBB, 0x4029_21FB,
    0x402C_463A, 0x402F_6A7A, 0x4031_475C, 0x4032_D97C, 0x4034_6B9C, 0x4035_FDBB, 0x4037_8FDB, 0x4039_21FB,
    0x403A_B41B, 0x403C_463A, 0x403D_D85A, 0x403F_6A7A, 0x4040_7E4C, 0x4041_475C, 0x4042_106C, 0x4042_D97C,
    0x4043_A28C, 0x4044_6B9C, 0x4045_34AC, 0x4045_FDBB, 0x4046_C6CB, 0x4047_8FDB, 0x4048_58EB, 0x4049_21FB,
  ]

  /// __ieee754_rem_pio2 for |x| ≤ 2^19·π/2: n with x = n·π/2 + (y0 + y1).
  static func remPio2(_ x: Double) -> (n: Int, y0: Double, y1: Double) {
    let hx = high(x)
    let ix = hx & 0x7fff_ffff
    if ix <= 0x3fe9_21fb { return (0, x, 0) }
    if ix < 0x4002_d97c {  // |x| < 3π/4: n = ±1
      if hx > 0 {
        var z = x - pio2_1
        if ix != 0x3ff9_21fb {
          let y0 = z - pio2_1t
          return (1, y0, (z - y0) - pio2_1t)
        }
        z -= pio2_2
        let y0 = z - pio2_2t
        return (1, y0, (z - y0) - pio2_2t)
      }
      var z = x + pio2_1
      if ix != 0x3ff9_21fb {
        let y0 = z + pio2_1t
        return (-1, y0, (z - y0) + pio2_1t)
      }
      z += pio2_2
      let y0 = z + pio2_2t
      return (-1, y0, (z - y0) + pio2_2t)
    }
    // Medium size (the caller guarantees |x| ≤ 2^19·π/2).
    var t = abs(x)
    let n = Int(t * invpio2 + 0.5)
    let fn = Double(n)
    var r = t - fn * pio2_1
    var w = fn * pio2_1t
    var y0: Double
    if n < 32 && ix != npio2_hw[n - 1] {
      y0 = r - w
    } else {
      let j = Int(ix >> 20)
      y0 = r - w
      var i = j - Int((high(y0) >> 20) & 0x7ff)
      if i > 16 {
        t = r
        w = fn * pio2_2
        r = t - w
        w = fn * pio2_2t - ((t - r) - w)
        y0 = r - w
        i = j - Int((high(y0) >> 20) & 0x7ff)
        if i > 49 {
          t = r
          w = fn * pio2_3
          r = t - w
          w = fn * pio2_3t - ((t - r) - w)
          y0 = r - w
        }
      }
    }
    let y1 = (r - y0) - w
    if hx < 0 { return (-n, -y0, -y1) }
    return (n, y0, y1)
  }

  // MARK: sin, cos, acos

  package static func sin(_ x: Double) -> Double {
    let ix = high(x) & 0x7fff_ffff
    if ix <= 0x3fe9_21fb { return kernelSin(x, 0, 0) }
    if ix >= 0x7ff0_0000 { return x - x }
    if ix > 0x4139_21fb { return Glibc.sin(x) }
    let (n, y0, y1) = remPio2(x)
    switch n & 3 {
    case 0: return kernelSin(y0, y1, 1)
    case 1: return kernelCos(y0, y1)
    case 2: return -kernelSin(y0, y1, 1)
    default: return -kernelCos(y0, y1)
    }
  }

  package static func cos(_ x: Double) -> Double {
    let ix = high(x) & 0x7fff_ffff
    if ix <= 0x3fe9_21fb { return kernelCos(x, 0) }
    if ix >= 0x7ff0_0000 { return x - x }
    if ix > 0x4139_21fb { return Glibc.cos(x) }
    let (n, y0, y1) = remPio2(x)
    switch n & 3 {
    case 0: return kernelCos(y0, y1)
    case 1: return -kernelSin(y0, y1, 1)
    case 2: return -kernelCos(y0, y1)
    default: return kernelSin(y0, y1, 1)
    }
  }

  static let pi = 3.14159265358979311600e+00
  static let pio2_hi = 1.57079632679489655800e+00
  static let pio2_lo = 6.12323399573676603587e-17
  static let pS0 = 1.66666666666666657415e-01
  static let pS1 = -3.25565818622400915405e-01
  static let pS2 = 2.01212532134862925881e-01
  static let pS3 = -4.00555345006794114027e-02
  static let pS4 = 7.91534994289814532176e-04
  static let pS5 = 3.47933107596021167570e-05
  static let qS1 = -2.40339491173441421878e+00
  static let qS2 = 2.02094576023350569471e+00
  static let qS3 = -6.88283971605453293030e-01
  static let qS4 = 7.70381505559019352791e-02

  package static func acos(_ x: Double) -> Double {
    let hx = high(x)
    let ix = hx & 0x7fff_ffff
    if ix >= 0x3ff0_0000 {  // |x| ≥ 1
      if (UInt32(bitPattern: ix - 0x3ff0_0000) | low(x)) == 0 {
        return hx > 0 ? 0.0 : pi + 2.0 * pio2_lo
      }
      return (x - x) / (x - x)
    }
    if ix < 0x3fe0_0000 {  // |x| < 0.5
      if ix <= 0x3c60_0000 { return pio2_hi + pio2_lo }
      let z = x * x
      let p = z * (pS0 + z * (pS1 + z * (pS2 + z * (pS3 + z * (pS4 + z * pS5)))))
      let q = 1 + z * (qS1 + z * (qS2 + z * (qS3 + z * qS4)))
      let r = p / q
      return pio2_hi - (x - (pio2_lo - x * r))
    }
    if hx < 0 {  // x < -0.5
      let z = (1 + x) * 0.5
      let p = z * (pS0 + z * (pS1 + z * (pS2 + z * (pS3 + z * (pS4 + z * pS5)))))
      let q = 1 + z * (qS1 + z * (qS2 + z * (qS3 + z * qS4)))
      let s = z.squareRoot()
      let r = p / q
      let w = r * s - pio2_lo
      return pi - 2.0 * (s + w)
    }
    // x > 0.5
    let z = (1 - x) * 0.5
    let s = z.squareRoot()
    let df = withLowZero(s)
    let c = (z - df * df) / (s + df)
    let p = z * (pS0 + z * (pS1 + z * (pS2 + z * (pS3 + z * (pS4 + z * pS5)))))
    let q = 1 + z * (qS1 + z * (qS2 + z * (qS3 + z * qS4)))
    let r = p / q
    let w = r * s + c
    return 2.0 * (df + w)
  }
}
