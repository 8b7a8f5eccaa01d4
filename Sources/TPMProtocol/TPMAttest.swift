/// A TPMS_ATTEST (TPM 2.0 Part 2 §10.12.12): what a TPM signs with an attestation key. Parsed
/// whole — every field read, nothing after it — so a structure is either this or refused.
public struct TPMAttest: Sendable, Equatable {
  /// TPM_GENERATED_VALUE: the TPM made this structure (a restricted key signs nothing else).
  public static let generatedValue: UInt32 = 0xFF54_4347
  public static let typeCertify: UInt16 = 0x8017
  public static let typeQuote: UInt16 = 0x8018

  public var type: UInt16
  public var qualifiedSigner: [UInt8]
  /// The caller's qualifying data (the verifier's nonce).
  public var extraData: [UInt8]
  public var clock: UInt64
  public var resetCount: UInt32
  public var restartCount: UInt32
  public var safe: Bool
  public var firmwareVersion: UInt64
  public var attested: Attested

  /// The type-specific part.
  public enum Attested: Sendable, Equatable {
    /// TPMS_CERTIFY_INFO: the certified object's name and qualified name.
    case certify(name: [UInt8], qualifiedName: [UInt8])
    /// TPMS_QUOTE_INFO: the PCRs quoted (hash algorithm and selection bitmap, per bank) and the
    /// digest of their values.
    case quote(selection: [PCRSelection], digest: [UInt8])
  }

  /// One bank of a TPML_PCR_SELECTION.
  public struct PCRSelection: Sendable, Equatable {
    public var hash: UInt16
    /// The selection bitmap: PCR n is bit n % 8 of byte n / 8.
    public var bitmap: [UInt8]

    public init(hash: UInt16, bitmap: [UInt8]) {
      self.hash = hash
      self.bitmap = bitmap
    }

    /// The selected PCR indices, ascending.
    public var indices: [Int] {
      bitmap.indices.flatMap { byte in (0..<8).filter { bitmap[byte] >> UInt8($0) & 1 == 1 }.map { byte * 8 + $0 } }
    }
  }

  public init(_ bytes: [UInt8]) throws(AttestationError) {
    var reader = TPMReader(bytes)
    guard try reader.u32() == Self.generatedValue else { throw .malformed("the signed structure was not made by a TPM") }
    type = try reader.u16()
    qualifiedSigner = try reader.sized()
    extraData = try reader.sized()
    clock = try reader.u64()
    resetCount = try reader.u32()
    restartCount = try reader.u32()
    safe = try reader.u8() != 0
    firmwareVersion = try reader.u64()
    switch type {
    case Self.typeCertify:
      attested = .certify(name: try reader.sized(), qualifiedName: try reader.sized())
    case Self.typeQuote:
      let count = try reader.u32()
      // TPM2_NUM_PCR_BANKS is 16 in the reference implementation; more is not a TPM's.
      guard count <= 16 else { throw .malformed("a PCR selection of \(count) banks") }
      var selection: [PCRSelection] = []
      for _ in 0..<count {
        let hash = try reader.u16()
        let size = try reader.u8()
        guard size <= 8 else { throw .malformed("a PCR bitmap of \(size) bytes") }
        selection.append(PCRSelection(hash: hash, bitmap: try reader.take(Int(size))))
      }
      attested = .quote(selection: selection, digest: try reader.sized())
    default:
      throw .unsupported("a TPMS_ATTEST of type 0x\(String(type, radix: 16))")
    }
    try reader.expectEnd("the signed structure")
  }
}
