import ProfileJSON
import Testing

/// `JSONWriter.writeString` copies runs of bytes that need no escape; held here to the
/// byte-by-byte escaper it replaced, on strings with every special byte at every position of
/// runs of every length, plus seeded random strings (the seed is printed on failure).
@Suite(.timeLimit(.minutes(10))) struct JSONWriterEscapeTests {
  /// The escaper as it was: one byte at a time.
  static func reference(_ string: String) -> [UInt8] {
    let hex = Array("0123456789abcdef".utf8)
    var out: [UInt8] = [UInt8(ascii: "\"")]
    for byte in string.utf8 {
      switch byte {
      case UInt8(ascii: "\""): out += [UInt8(ascii: "\\"), UInt8(ascii: "\"")]
      case UInt8(ascii: "\\"): out += [UInt8(ascii: "\\"), UInt8(ascii: "\\")]
      case 0x08: out += [UInt8(ascii: "\\"), UInt8(ascii: "b")]
      case 0x0C: out += [UInt8(ascii: "\\"), UInt8(ascii: "f")]
      case 0x0A: out += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
      case 0x0D: out += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
      case 0x09: out += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
      case 0..<0x20: out += Array("\\u00".utf8) + [hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
      default: out.append(byte)
      }
    }
    out.append(UInt8(ascii: "\""))
    return out
  }

  static func written(_ string: String) -> [UInt8] {
    var out: [UInt8] = [0x41]  // something before: the writer appends
    JSONWriter.writeString(string, into: &out)
    return Array(out.dropFirst())
  }

  @Test func everySpecialByteAtEveryPosition() {
    let specials: [Character] = ["\"", "\\", "\n", "\r", "\t", "\u{08}", "\u{0C}", "\u{00}", "\u{01}", "\u{1F}"]
    for length in 0...20 {
      for position in 0...length {
        for special in specials {
          var text = String(repeating: "a", count: length)
          text.insert(special, at: text.index(text.startIndex, offsetBy: position))
          #expect(Self.written(text) == Self.reference(text), "\(text.debugDescription)")
        }
      }
    }
  }

  @Test func seededRandomStrings() {
    var state: UInt64 = 0x0008_2026_1122
    func next() -> UInt64 {
      state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
      return state >> 33
    }
    let pieces = ["a", "Z", "0", " ", "\"", "\\", "\n", "\u{01}", "\u{7F}", "é", "€", "𝄞", "\u{301}", "\t", "/"]
    for round in 0..<20_000 {
      let text = (0..<Int(next() % 24)).map { _ in pieces[Int(next() % UInt64(pieces.count))] }.joined()
      #expect(Self.written(text) == Self.reference(text), "seed 0x0008_2026_1122, round \(round): \(text.debugDescription)")
    }
  }
}
