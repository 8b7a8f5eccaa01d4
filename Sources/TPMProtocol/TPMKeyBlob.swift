/// A key created inside a TPM, as the state directory keeps it: only the TPM-wrapped public
/// and private areas (marshalled TPM2B_PUBLIC and TPM2B_PRIVATE), useless without the TPM
/// whose storage key wrapped them, and which storage key that was.
///
/// File form (`bytes`): the magic `FRPTPM1\n`, one byte for the parent (1 = the standard SRK
/// re-created from its template, 2 = the persistent SRK at 0x81000001), then the two
/// marshalled structures (each starts with its own big-endian size).
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

  static let magic = Array("FRPTPM1\n".utf8)

  /// The serialized form written to the state directory.
  public var bytes: [UInt8] {
    Self.magic + [parent == .templateSRK ? 1 : 2] + publicArea + privateArea
  }

  /// Parses `bytes` (the form `bytes` writes); the areas are checked by the TPM on load.
  public init(bytes: [UInt8]) throws(TPMError) {
    guard bytes.count > Self.magic.count + 5, bytes.starts(with: Self.magic) else { throw .corrupt(reason: "not an fr-profile TPM key") }
    var index = Self.magic.count
    switch bytes[index] {
    case 1: parent = .templateSRK
    case 2: parent = .persistentSRK
    default: throw .corrupt(reason: "unknown parent key")
    }
    index += 1
    func sized() throws(TPMError) -> [UInt8] {
      guard index + 2 <= bytes.count else { throw .corrupt(reason: "truncated") }
      let size = Int(bytes[index]) << 8 | Int(bytes[index + 1])
      guard index + 2 + size <= bytes.count else { throw .corrupt(reason: "truncated") }
      defer { index += 2 + size }
      return Array(bytes[index..<(index + 2 + size)])
    }
    publicArea = try sized()
    privateArea = try sized()
    guard index == bytes.count else { throw .corrupt(reason: "trailing bytes") }
  }
}
