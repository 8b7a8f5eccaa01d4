import Crypto

/// A crypto-agile firmware event log written byte by byte as the PC Client Platform Firmware
/// Profile lays it out, with the SHA-256 PCR values its extends give (computed here as a TPM
/// would: new = SHA-256(old ‖ digest)), so each test can alter one thing.
public struct BuiltLog {
  public struct Record {
    public var pcr: UInt32
    public var type: UInt32
    public var data: [UInt8]
    /// The SHA-256 digest logged; the hash of `data` unless a test says otherwise.
    public var sha256: [UInt8]
    public var sha1: [UInt8]

    public init(pcr: UInt32, type: UInt32, data: [UInt8], sha256: [UInt8], sha1: [UInt8]) {
      self.pcr = pcr
      self.type = type
      self.data = data
      self.sha256 = sha256
      self.sha1 = sha1
    }
  }

  public var records: [Record] = []

  public init() {}
  /// The banks the Spec ID event lists (SHA-1 only makes a SHA-1-only crypto-agile log).
  public var banks: [(id: UInt16, size: UInt16)] = [(0x0004, 20), (0x000B, 32)]
  public var startupLocality: UInt8?

  public static let efiGlobalVariable: [UInt8] = [
    0x61, 0xdf, 0xe4, 0x8b, 0xca, 0x93, 0xd2, 0x11, 0xaa, 0x0d, 0x00, 0xe0, 0x98, 0x03, 0x2b, 0x8c,
  ]
  public static let imageSecurityDatabase: [UInt8] = [
    0xcb, 0xb2, 0x19, 0xd7, 0x3a, 0x3d, 0x96, 0x45, 0xa3, 0xbc, 0xda, 0xd0, 0x0e, 0x67, 0x65, 0x6f,
  ]

  public static func le(_ value: UInt64, _ bytes: Int) -> [UInt8] { (0..<bytes).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }

  /// UEFI_VARIABLE_DATA: GUID, name length (UTF-16 units) u64, data length u64, name, data.
  public static func variable(_ guid: [UInt8], _ name: String, _ data: [UInt8]) -> [UInt8] {
    let name16 = Array(name.utf16)
    return guid + le(UInt64(name16.count), 8) + le(UInt64(data.count), 8) + name16.flatMap { le(UInt64($0), 2) } + data
  }

  public static let certSHA256: [UInt8] = [0x26, 0x16, 0xc4, 0xc1, 0x4c, 0x50, 0x92, 0x40, 0xac, 0xa9, 0x41, 0xf9, 0x36, 0x93, 0x43, 0x28]

  /// An EFI_SIGNATURE_LIST of EFI_CERT_SHA256 entries (SignatureType, SignatureListSize,
  /// SignatureHeaderSize 0, SignatureSize 48, then owner GUID and hash per entry), one per name.
  public static func signatureList(_ names: String...) -> [UInt8] {
    let owner = [UInt8](repeating: 0x77, count: 16)
    return certSHA256 + le(UInt64(28 + 48 * names.count), 4) + le(0, 4) + le(48, 4)
      + names.flatMap { owner + Array(SHA256.hash(data: Array($0.utf8))) }
  }

  public mutating func add(pcr: UInt32, type: UInt32, data: [UInt8], sha256: [UInt8]? = nil) {
    records.append(
      Record(
        pcr: pcr, type: type, data: data, sha256: sha256 ?? Array(SHA256.hash(data: data)),
        sha1: Array(Insecure.SHA1.hash(data: data))))
  }

  public mutating func separator(_ pcr: UInt32) { add(pcr: pcr, type: 0x4, data: [0, 0, 0, 0]) }

  public mutating func efiAction(_ pcr: UInt32, _ text: String) { add(pcr: pcr, type: 0x8000_0007, data: Array(text.utf8)) }

  public mutating func driverConfig(_ guid: [UInt8], _ name: String, _ data: [UInt8]) {
    add(pcr: 7, type: 0x8000_0001, data: Self.variable(guid, name, data))
  }

  /// A machine that booted shim from a boot option with Secure Boot `secureBoot`: the CRTM
  /// version, SecureBoot, PK, KEK, db, dbx, separators 0–7, the boot application in PCR 4, and the
  /// db entry that verified it.
  public static func standard(secureBoot: UInt8 = 1, debugMode: Bool = false) -> BuiltLog {
    var log = BuiltLog()
    log.add(pcr: 0, type: 0x8, data: [0, 0])
    log.driverConfig(efiGlobalVariable, "SecureBoot", [secureBoot])
    log.driverConfig(efiGlobalVariable, "PK", signatureList("platform key"))
    log.driverConfig(efiGlobalVariable, "KEK", signatureList("kek 1", "kek 2"))
    log.driverConfig(imageSecurityDatabase, "db", signatureList("shim"))
    log.driverConfig(imageSecurityDatabase, "dbx", signatureList("revoked 1", "revoked 2", "revoked 3"))
    if debugMode { log.efiAction(7, "UEFI Debug Mode") }
    for pcr: UInt32 in [7, 0, 1, 2, 3, 5, 6] { log.separator(pcr) }
    log.efiAction(4, "Calling EFI Application from Boot Option")
    log.separator(4)
    log.add(pcr: 7, type: 0x8000_00E0, data: variable(imageSecurityDatabase, "db", Array(signatureList("shim").dropFirst(28))))
    // UEFI_IMAGE_LOAD_EVENT: the image's address, length, link-time address, the device path's
    // length and the device path (a file path node, then the end node). Its digest is the
    // image's Authenticode hash, not the hash of the event.
    let file: [UInt8] = "\\EFI\\debian\\shimx64.efi".utf16.flatMap { le(UInt64($0), 2) } + [0, 0]
    let path: [UInt8] = [0x04, 0x04] + le(UInt64(4 + file.count), 2) + file + [0x7f, 0xff, 0x04, 0x00]
    let image = le(0x7d00_0000, 8) + le(0x10_0000, 8) + le(0, 8) + le(UInt64(path.count), 8) + path
    log.add(pcr: 4, type: 0x8000_0003, data: image, sha256: Array(SHA256.hash(data: Array("shim".utf8))))
    return log
  }

  /// The Spec ID event (legacy layout) then each record as TCG_PCR_EVENT2.
  public var bytes: [UInt8] {
    var specID = Array("Spec ID Event03".utf8) + [0] + Self.le(0, 4) + [0, 2, 0, 2] + Self.le(UInt64(banks.count), 4)
    for bank in banks { specID += Self.le(UInt64(bank.id), 2) + Self.le(UInt64(bank.size), 2) }
    specID += [0]
    var out = Self.le(0, 4) + Self.le(3, 4) + [UInt8](repeating: 0, count: 20) + Self.le(UInt64(specID.count), 4) + specID
    var all = records
    if let startupLocality {
      let locality = Array("StartupLocality".utf8) + [0, startupLocality]
      all.insert(
        Record(pcr: 0, type: 0x3, data: locality, sha256: .init(repeating: 0, count: 32), sha1: .init(repeating: 0, count: 20)), at: 0)
    }
    for record in all {
      out += Self.le(UInt64(record.pcr), 4) + Self.le(UInt64(record.type), 4) + Self.le(UInt64(banks.count), 4)
      for bank in banks { out += Self.le(UInt64(bank.id), 2) + (bank.id == 0x0004 ? record.sha1 : record.sha256) }
      out += Self.le(UInt64(record.data.count), 4) + record.data
    }
    return out
  }

  /// The SHA-256 PCR values a TPM holds after these extends (EV_NO_ACTION is never extended).
  public var pcrs: [Int: [UInt8]] {
    var values: [Int: [UInt8]] = [:]
    for pcr in 0..<24 {
      var value = [UInt8](repeating: 0, count: 32)
      if pcr == 0, let startupLocality { value[31] = startupLocality }
      for record in records where record.pcr == pcr && record.type != 0x3 { value = Array(SHA256.hash(data: value + record.sha256)) }
      values[pcr] = value
    }
    return values.filter { $0.key <= 16 }
  }
}
