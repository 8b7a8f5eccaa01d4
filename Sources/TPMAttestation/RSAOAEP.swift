import Crypto
import TPMProtocol

/// RSAES-OAEP encryption (RFC 8017, 7.1.1) with SHA-256, MGF1-SHA-256 and a label: how
/// TPM2_MakeCredential seals its seed to an RSA endorsement key (label "IDENTITY\0", TPM 2.0
/// part 1, "Secret Sharing"). Hand-written because swift-crypto's OAEP takes no label and
/// exposes no raw RSA; the modular exponentiation is `PublicExponentiation` below (a big-number
/// library would bring full Foundation into fr-profile, whose `attest` commands link this
/// target). Public data only: no constant-time concern.
package enum RSAOAEP {
  static let hashLength = 32

  package static func encrypt(_ message: [UInt8], modulus: [UInt8], exponent: UInt32, label: [UInt8]) throws(AttestationError) -> [UInt8] {
    let modulus = Array(modulus.drop { $0 == 0 })
    let k = modulus.count
    guard k >= 128, message.count <= k - 2 * hashLength - 2 else { throw .unsupported("an RSA key too small for the seed") }
    let labelHash = Array(SHA256.hash(data: label))
    let block = labelHash + [UInt8](repeating: 0, count: k - message.count - 2 * hashLength - 2) + [0x01] + message
    let seed = (0..<hashLength).map { _ in UInt8.random(in: 0...255) }
    let maskedBlock = zip(block, mgf1(seed, count: k - hashLength - 1)).map { $0 ^ $1 }
    let maskedSeed = zip(seed, mgf1(maskedBlock, count: hashLength)).map { $0 ^ $1 }
    let encoded = [0x00] + maskedSeed + maskedBlock
    return PublicExponentiation.power(encoded, exponent: exponent, modulus: modulus)
  }

  /// MGF1 with SHA-256: `count` bytes.
  static func mgf1(_ seed: [UInt8], count: Int) -> [UInt8] {
    var output: [UInt8] = []
    var counter: UInt32 = 0
    while output.count < count {
      output += SHA256.hash(data: seed + CredentialChallenge.bigEndian(counter))
      counter += 1
    }
    return Array(output.prefix(count))
  }

  /// `value` big-endian, without leading zero bytes (65537: 01 00 01).
  static func minimalBytes(_ value: UInt32) -> [UInt8] {
    Array(CredentialChallenge.bigEndian(value).drop { $0 == 0 })
  }
}

/// base^exponent mod modulus for RSA's public operation: unsigned numbers as little-endian
/// 32-bit limbs, schoolbook products, and reduction one bit at a time (shift in, subtract the
/// modulus when it fits). Slow next to Montgomery but short enough to check by eye; a 2048-bit
/// encryption with e = 65537 is 17 products.
enum PublicExponentiation {
  typealias Limbs = [UInt32]

  /// `base` and `modulus` big-endian; the result big-endian, as long as `modulus`.
  static func power(_ base: [UInt8], exponent: UInt32, modulus: [UInt8]) -> [UInt8] {
    let n = limbs(modulus)
    let b = reduce(limbs(base), n)
    var result: Limbs = [1]
    for bit in stride(from: 31, through: 0, by: -1) {
      result = reduce(multiply(result, result), n)
      if exponent >> UInt32(bit) & 1 == 1 { result = reduce(multiply(result, b), n) }
    }
    return bytes(result, count: modulus.count)
  }

  static func limbs(_ bigEndian: [UInt8]) -> Limbs {
    var out = Limbs(repeating: 0, count: (bigEndian.count + 3) / 4)
    for (offset, byte) in bigEndian.reversed().enumerated() { out[offset / 4] |= UInt32(byte) << UInt32(8 * (offset % 4)) }
    return out
  }

  static func bytes(_ value: Limbs, count: Int) -> [UInt8] {
    (0..<count).reversed().map { index in
      index / 4 < value.count ? UInt8(truncatingIfNeeded: value[index / 4] >> UInt32(8 * (index % 4))) : 0
    }
  }

  static func multiply(_ a: Limbs, _ b: Limbs) -> Limbs {
    var out = Limbs(repeating: 0, count: a.count + b.count)
    for (i, x) in a.enumerated() {
      var carry: UInt64 = 0
      for (j, y) in b.enumerated() {
        let sum = UInt64(x) * UInt64(y) + UInt64(out[i + j]) + carry
        out[i + j] = UInt32(truncatingIfNeeded: sum)
        carry = sum >> 32
      }
      out[i + b.count] = UInt32(carry)
    }
    return out
  }

  /// value mod n, bit by bit from the top: r stays below n after each step.
  static func reduce(_ value: Limbs, _ n: Limbs) -> Limbs {
    var r = Limbs(repeating: 0, count: n.count + 1)
    for bit in stride(from: value.count * 32 - 1, through: 0, by: -1) {
      var carry = value[bit / 32] >> UInt32(bit % 32) & 1
      for index in r.indices {
        let next = r[index] >> 31
        r[index] = r[index] << 1 | carry
        carry = next
      }
      if !less(r, n) { subtract(&r, n) }
    }
    return Array(r.prefix(n.count))
  }

  static func less(_ a: Limbs, _ b: Limbs) -> Bool {
    for index in stride(from: max(a.count, b.count) - 1, through: 0, by: -1) {
      let x = index < a.count ? a[index] : 0
      let y = index < b.count ? b[index] : 0
      if x != y { return x < y }
    }
    return false
  }

  static func subtract(_ a: inout Limbs, _ b: Limbs) {
    var borrow: UInt64 = 0
    for index in a.indices {
      let y = UInt64(index < b.count ? b[index] : 0) + borrow
      let x = UInt64(a[index])
      a[index] = UInt32(truncatingIfNeeded: x &- y)
      borrow = x < y ? 1 : 0
    }
  }
}
