/// A key created inside a TPM, as the state directory keeps it: only the TPM-wrapped public
/// and private areas (marshalled TPM2B_PUBLIC and TPM2B_PRIVATE), useless without the TPM
/// whose storage key wrapped them, and which storage key that was.
///
/// File form (`bytes`): the magic `FRPTPM1\n`, one byte for the parent (1 = the standard SRK
/// re-created from its template, 2 = the persistent SRK at 0x81000001), then the two
/// marshalled structures (each starts with its own big-endian size). Parsed here with the one
/// TPM reader, by tpm2-tss's users (TPMKeys) and by collect (which must not load tpm2-tss) alike.
public struct TPMKeyBlob: Sendable, Equatable {
  /// Which storage key wraps the private area.
  public enum Parent: String, Sendable, Equatable {
    case templateSRK = "template ECC SRK"
    case persistentSRK = "persistent SRK 0x81000001"
  }

  public var parent: Parent
  public var publicArea: [UInt8]
  public var privateArea: [UInt8]

  public init(parent: Parent, publicArea: [UInt8], privateArea: [UInt8]) {
    self.parent = parent
    self.publicArea = publicArea
    self.privateArea = privateArea
  }

  package static let magic = Array("FRPTPM1\n".utf8)

  /// The serialized form written to the state directory.
  public var bytes: [UInt8] {
    Self.magic + [parent == .templateSRK ? 1 : 2] + publicArea + privateArea
  }

  /// Parses `bytes` (the form `bytes` writes). The public area must parse as a `TPMPublic`; the
  /// private area is opaque here (the TPM checks it on load).
  public init(bytes: [UInt8]) throws(AttestationError) {
    guard bytes.starts(with: Self.magic) else { throw .malformed("not an fr-profile TPM key") }
    var reader = TPMReader(bytes)
    _ = try reader.take(Self.magic.count)
    switch try reader.u8() {
    case 1: parent = .templateSRK
    case 2: parent = .persistentSRK
    default: throw .malformed("an unknown parent key")
    }
    publicArea = try reader.sizedWhole()
    privateArea = try reader.sizedWhole()
    try reader.expectEnd("the key file")
    _ = try TPMPublic(tpm2b: publicArea)
  }

  /// The public area, parsed.
  public func publicKey() throws(AttestationError) -> TPMPublic { try TPMPublic(tpm2b: publicArea) }
}
