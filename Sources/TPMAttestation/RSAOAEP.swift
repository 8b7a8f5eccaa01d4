import BigInt
import Crypto

/// RSAES-OAEP encryption (RFC 8017, 7.1.1) with SHA-256, MGF1-SHA-256 and a label: how
/// TPM2_MakeCredential seals its seed to an RSA endorsement key (label "IDENTITY\0", TPM 2.0
/// part 1, "Secret Sharing"). Hand-written because swift-crypto's OAEP takes no label; the
/// modular exponentiation is attaswift/BigInt's. Public data only: no constant-time concern.
enum RSAOAEP {
  static let hashLength = 32

  static func encrypt(_ message: [UInt8], modulus: [UInt8], exponent: UInt32, label: [UInt8]) throws(AttestationError) -> [UInt8] {
    let modulus = Array(modulus.drop { $0 == 0 })
    let k = modulus.count
    guard k >= 128, message.count <= k - 2 * hashLength - 2 else { throw .unsupported("an RSA key too small for the seed") }
    let labelHash = Array(SHA256.hash(data: label))
    let block = labelHash + [UInt8](repeating: 0, count: k - message.count - 2 * hashLength - 2) + [0x01] + message
    let seed = (0..<hashLength).map { _ in UInt8.random(in: 0...255) }
    let maskedBlock = zip(block, mgf1(seed, count: k - hashLength - 1)).map { $0 ^ $1 }
    let maskedSeed = zip(seed, mgf1(maskedBlock, count: hashLength)).map { $0 ^ $1 }
    let encoded = [0x00] + maskedSeed + maskedBlock
    let c = integer(encoded).power(BigUInt(exponent), modulus: integer(modulus))
    return bytes(c, count: k)
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

  /// The big-endian unsigned integer `bytes`.
  static func integer(_ bytes: [UInt8]) -> BigUInt {
    bytes.reduce(BigUInt(0)) { ($0 << 8) | BigUInt($1) }
  }

  /// `value` as `count` big-endian bytes.
  static func bytes(_ value: BigUInt, count: Int) -> [UInt8] {
    var value = value
    var out = [UInt8](repeating: 0, count: count)
    for index in stride(from: count - 1, through: 0, by: -1) {
      out[index] = UInt8(truncatingIfNeeded: value & 0xFF)
      value >>= 8
    }
    return out
  }
}
