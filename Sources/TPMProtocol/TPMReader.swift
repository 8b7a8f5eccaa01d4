/// Big-endian reading of marshalled TPM 2.0 structures (TPM 2.0 Part 2): the one reader of
/// TPM bytes in fr-profile, under `TPMPublic`, `TPMAttest` and `TPMKeyBlob`. Every read is
/// bounds-checked and fails with `AttestationError.malformed`; nothing here traps on input.
package struct TPMReader {
  package let bytes: [UInt8]
  package private(set) var index = 0

  package init(_ bytes: [UInt8]) { self.bytes = bytes }

  package var atEnd: Bool { index == bytes.count }

  package mutating func take(_ count: Int) throws(AttestationError) -> [UInt8] {
    guard count >= 0, count <= bytes.count - index else { throw .malformed("a TPM structure is truncated") }
    defer { index += count }
    return Array(bytes[index..<(index + count)])
  }

  package mutating func u8() throws(AttestationError) -> UInt8 { try take(1)[0] }
  package mutating func u16() throws(AttestationError) -> UInt16 { try take(2).reduce(0) { $0 << 8 | UInt16($1) } }
  package mutating func u32() throws(AttestationError) -> UInt32 { try take(4).reduce(0) { $0 << 8 | UInt32($1) } }
  package mutating func u64() throws(AttestationError) -> UInt64 { try take(8).reduce(0) { $0 << 8 | UInt64($1) } }
  /// A TPM2B: a 2-byte size, then that many bytes (the contents).
  package mutating func sized() throws(AttestationError) -> [UInt8] { try take(Int(try u16())) }
  /// A TPM2B whole, its size field included.
  package mutating func sizedWhole() throws(AttestationError) -> [UInt8] {
    let contents = try sized()
    return TPMWriter.sized(contents)
  }

  /// Fails unless every byte was read: no structure is accepted with bytes after it.
  package func expectEnd(_ what: String) throws(AttestationError) {
    guard atEnd else { throw .malformed("\(what) has trailing bytes") }
  }
}

/// Big-endian writing of TPM structures (what `TPMReader` reads).
package enum TPMWriter {
  /// A TPM2B: `bytes` after their 2-byte big-endian size.
  package static func sized(_ bytes: [UInt8]) -> [UInt8] { u16(UInt16(truncatingIfNeeded: bytes.count)) + bytes }
  package static func u16(_ value: UInt16) -> [UInt8] { [UInt8(value >> 8), UInt8(value & 0xFF)] }
  package static func u32(_ value: UInt32) -> [UInt8] {
    [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
  }
}
