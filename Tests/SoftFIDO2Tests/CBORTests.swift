import SoftFIDO2
import Testing

@Suite struct CBORTests {
  @Test func mapKeysAreInCTAP2CanonicalOrder() {
    let map: CBOR = .map([
      CBORPair(.text("up"), .bool(true)), CBORPair(.int(-1), .int(1)), CBORPair(.int(3), .int(-7)), CBORPair(.int(1), .int(2)),
    ])
    #expect(map.encoded == [0xA4, 0x01, 0x02, 0x03, 0x26, 0x20, 0x01, 0x62, 0x75, 0x70, 0xF5])
  }

  @Test func roundTripsEveryKind() throws {
    let value: CBOR = .map([
      CBORPair(.int(1), .bytes(Array(repeating: 7, count: 300))), CBORPair(.int(2), .text("é")),
      CBORPair(.int(3), .array([.int(70_000), .int(-5_000_000_000), .null, .bool(false)])),
    ])
    #expect(try CBOR.decode(value.encoded) == value)
  }

  @Test func rejectsTruncatedAndTrailingBytes() {
    #expect(throws: CBORError.self) { try CBOR.decode([0x42, 0x01]) }
    #expect(throws: CBORError.self) { try CBOR.decode([0x01, 0x02]) }
    #expect(throws: CBORError.self) { try CBOR.decode([0x9F, 0xFF]) }  // indefinite length
  }
}
