/// Base64url without padding (RFC 7515 §2), for JWK members, stored key bytes and
/// the TPM structures of attestation evidence.
package enum Base64URL {
  private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

  package static func encode<Bytes: Collection>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
    let input = Array(bytes)
    var out: [UInt8] = []
    out.reserveCapacity((input.count * 4 + 2) / 3)
    var index = 0
    while index + 3 <= input.count {
      let value = UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8 | UInt32(input[index + 2])
      for shift in [18, 12, 6, 0] { out.append(alphabet[Int(value >> UInt32(shift) & 63)]) }
      index += 3
    }
    let rest = input.count - index
    if rest > 0 {
      let value = UInt32(input[index]) << 16 | (rest == 2 ? UInt32(input[index + 1]) << 8 : 0)
      out.append(alphabet[Int(value >> 18 & 63)])
      out.append(alphabet[Int(value >> 12 & 63)])
      if rest == 2 { out.append(alphabet[Int(value >> 6 & 63)]) }
    }
    return String(decoding: out, as: UTF8.self)
  }

  /// Nil for characters outside the alphabet, padding, an impossible length, or unused bits
  /// that are not zero: one byte string has one spelling ("QQ" is "A"; "QR" is refused), so
  /// nothing signed or compared can take two forms (RFC 4648 §3.5).
  package static func decode(_ text: String) -> [UInt8]? {
    var values: [UInt8] = []
    for byte in text.utf8 {
      switch byte {
      case UInt8(ascii: "A")...UInt8(ascii: "Z"): values.append(byte - 65)
      case UInt8(ascii: "a")...UInt8(ascii: "z"): values.append(byte - 97 + 26)
      case UInt8(ascii: "0")...UInt8(ascii: "9"): values.append(byte - 48 + 52)
      case UInt8(ascii: "-"): values.append(62)
      case UInt8(ascii: "_"): values.append(63)
      default: return nil
      }
    }
    switch values.count % 4 {
    case 1: return nil
    case 2: guard values[values.count - 1] & 0x0F == 0 else { return nil }  // 12 bits for 8
    case 3: guard values[values.count - 1] & 0x03 == 0 else { return nil }  // 18 bits for 16
    default: break
    }
    var out: [UInt8] = []
    var index = 0
    while index < values.count {
      let chunk = values[index..<min(index + 4, values.count)]
      var value: UInt32 = 0
      for (offset, digit) in chunk.enumerated() { value |= UInt32(digit) << UInt32(18 - 6 * offset) }
      out.append(UInt8(value >> 16 & 0xFF))
      if chunk.count > 2 { out.append(UInt8(value >> 8 & 0xFF)) }
      if chunk.count > 3 { out.append(UInt8(value & 0xFF)) }
      index += 4
    }
    return out
  }
}
