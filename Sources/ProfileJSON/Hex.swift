/// Hex, two digits a byte: the one encoder and decoder of the package (identifiers, token
/// file names, PCR values, EK names, machine-ids, GUIDs, percent and JSON escapes). In
/// ProfileJSON because every target that writes or reads hex already depends on it.
///
/// Inlinable: collect's identifier cache check writes the machine-id with `append`, and the
/// JSON tokenizer reads `\u` escapes with `digitValue`, so both are specialised and inlined at
/// the caller as the private copies they replace were.
@usableFromInline package enum Hex {
  /// Appends the lower-case hex digits of `bytes`, two per byte.
  @inlinable
  package static func append<Bytes: Sequence<UInt8>>(_ bytes: Bytes, to out: inout [UInt8]) {
    let digits: StaticString = "0123456789abcdef"
    for byte in bytes {
      out.append(digits.utf8Start[Int(byte >> 4)])
      out.append(digits.utf8Start[Int(byte & 0xF)])
    }
  }

  /// The lower-case hex digits of `bytes`, two per byte.
  @inlinable
  package static func encode<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> String {
    var out: [UInt8] = []
    out.reserveCapacity(bytes.underestimatedCount * 2)
    append(bytes, to: &out)
    return String(decoding: out, as: UTF8.self)
  }

  /// The value of an ASCII hex digit of either case; nil for any other byte (`Character.isHexDigit`
  /// also accepts full-width digits, which `UInt8(_:radix:)` does not).
  @inlinable @inline(__always)
  package static func digitValue(_ byte: UInt8) -> UInt8? {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): byte &- 0x30
    case UInt8(ascii: "a")...UInt8(ascii: "f"): byte &- 0x57
    case UInt8(ascii: "A")...UInt8(ascii: "F"): byte &- 0x37
    default: nil
    }
  }

  /// The bytes of an even number of ASCII hex digits of either case; nil for anything else.
  package static func decode<Digits: Collection<UInt8>>(_ digits: Digits) -> [UInt8]? {
    let digits = Array(digits)
    guard digits.count % 2 == 0 else { return nil }
    var bytes: [UInt8] = []
    bytes.reserveCapacity(digits.count / 2)
    for index in stride(from: 0, to: digits.count, by: 2) {
      guard let high = digitValue(digits[index]), let low = digitValue(digits[index + 1]) else { return nil }
      bytes.append(high << 4 | low)
    }
    return bytes
  }

  /// The bytes of `text` as hex digits (`decode(text.utf8)`).
  package static func decode(_ text: String) -> [UInt8]? { decode(text.utf8) }
}
