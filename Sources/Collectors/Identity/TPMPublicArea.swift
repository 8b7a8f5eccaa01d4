// swift-format-ignore-file: NoBlockComments
// (Inline /* TPM2_… */ comments name the TPM constants where their numbers are used.)
/// The public point of a TPM-held P-256 key, read from its marshalled TPM2B_PUBLIC (TPM 2.0
/// Part 2, §12.2.5) without any TPM library, so that `collect` derives the identifier of a
/// key kept in the TPM with no libtss2 loaded. Hand-written because it is ~30 lines of fixed
/// big-endian framing and collect must not link tpm2-tss's marshalling library.
enum TPMPublicArea {
  /// `FRPTPM1\n`, parent byte, TPM2B_PUBLIC, TPM2B_PRIVATE (TPMKeys.TPMKeyBlob's file form).
  static let magic = Array("FRPTPM1\n".utf8)

  /// X ‖ Y (32 bytes each) of the ECC P-256 key in a key file, nil when it is not one.
  static func point(keyFile bytes: [UInt8]) -> [UInt8]? {
    guard bytes.count > magic.count + 1, bytes.starts(with: magic) else { return nil }
    var reader = Reader(bytes: bytes, index: magic.count + 1)
    guard let size = reader.u16(), let end = Optional(reader.index + Int(size)), end <= bytes.count else { return nil }
    // TPMT_PUBLIC: type, nameAlg, objectAttributes, authPolicy.
    guard reader.u16() == 0x0023 /* TPM2_ALG_ECC */, reader.u16() != nil, reader.u32() != nil, reader.sized() != nil else { return nil }
    // TPMS_ECC_PARMS: symmetric (alg [keyBits mode]), scheme (alg [hashAlg]), curveID, kdf (alg [hashAlg]).
    guard let symmetric = reader.u16() else { return nil }
    if symmetric != 0x0010 /* TPM2_ALG_NULL */ { guard reader.u16() != nil, reader.u16() != nil else { return nil } }
    guard let scheme = reader.u16() else { return nil }
    if scheme != 0x0010 { guard reader.u16() != nil else { return nil } }
    guard reader.u16() == 0x0003 /* TPM2_ECC_NIST_P256 */, let kdf = reader.u16() else { return nil }
    if kdf != 0x0010 { guard reader.u16() != nil else { return nil } }
    // TPMS_ECC_POINT: x, y.
    guard let x = reader.sized(), let y = reader.sized(), x.count <= 32, y.count <= 32, reader.index == end else { return nil }
    return [UInt8](repeating: 0, count: 32 - x.count) + x + [UInt8](repeating: 0, count: 32 - y.count) + y
  }

  private struct Reader {
    let bytes: [UInt8]
    var index: Int

    mutating func u16() -> UInt16? {
      guard index + 2 <= bytes.count else { return nil }
      defer { index += 2 }
      return UInt16(bytes[index]) << 8 | UInt16(bytes[index + 1])
    }

    mutating func u32() -> UInt32? {
      guard let high = u16(), let low = u16() else { return nil }
      return UInt32(high) << 16 | UInt32(low)
    }

    mutating func sized() -> [UInt8]? {
      guard let count = u16(), index + Int(count) <= bytes.count else { return nil }
      defer { index += Int(count) }
      return Array(bytes[index..<(index + Int(count))])
    }
  }
}
