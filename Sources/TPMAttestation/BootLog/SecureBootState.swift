import ProfileJSON

/// What the replayed firmware log says about Secure Boot (PCR 7) and the boot chain (PCR 4).
/// Read only from a `ReplayedLog`, so only from events whose PCRs equalled the TPM's values; every
/// event read here must also hash to its own digest where the PC Client Platform Firmware
/// Profile says the digest is the hash of the event data (variables, separators, actions).
public struct SecureBootState: Sendable, Equatable {
  /// The `SecureBoot` variable as measured: 1 is enabled; 0, or the empty measurement of firmware
  /// that has no such variable, is not.
  public var enabled: Bool
  /// The PK, KEK, db and dbx variables as measured (EFI_SIGNATURE_LIST bytes, possibly empty).
  public var platformKey: [UInt8]?
  public var keyExchangeKeys: [UInt8]?
  public var signatureDatabase: [UInt8]?
  public var forbiddenSignatures: [UInt8]?
  /// EV_EFI_VARIABLE_AUTHORITY data: the db entries that verified each loaded image.
  public var authorities: [[UInt8]] = []
  /// Names of variables measured into PCR 7 after its separator (shim's SbatLevel, MokListTrusted).
  public var variablesAfterSeparator: [String] = []
  /// EV_EFI_ACTION strings in PCR 7 other than "UEFI Debug Mode" (e.g. "DMA Protection Disabled").
  public var actions: [String] = []
  /// False when shim measured its `MokSBState` variable as 1 into PCR 7 (`mokutil
  /// --disable-validation`: shim loads GRUB and the kernel without verifying them); true
  /// otherwise, which says only that nothing in the log switched shim's verification off.
  public var shimValidation = true
  /// The firmware measured the EV_EFI_ACTION "DMA Protection Disabled" into PCR 7 (a DMA
  /// remapping unit, IOMMU, left off before the OS).
  public var dmaProtectionDisabled = false
  /// The EV_EFI_BOOT_SERVICES_APPLICATION digests of PCR 4, in order (shim, GRUB, the kernel…).
  public var bootApplications: [[UInt8]] = []
  /// EV_EFI_ACTION strings in PCR 4 ("Calling EFI Application from Boot Option"…).
  public var bootActions: [String] = []

  static let globalVariable = GUID("8be4df61-93ca-11d2-aa0d-00e098032b8c")
  static let imageSecurityDatabase = GUID("d719b2cb-3d3a-4596-a3bc-dad00e67656f")
  /// Compared as bytes: a String == would take a canonically equivalent spelling for it.
  static let debugMode = Array("UEFI Debug Mode".utf8)
  static let dmaProtectionDisabled = Array("DMA Protection Disabled".utf8)
  /// shim's vendor GUID (SHIM_LOCK_GUID), under which it measures MokSBState.
  static let shimLock = GUID("605dab50-e046-4300-abb6-3dd810dd8b23")
  static let mokSBState = Array("MokSBState".utf16)

  public init(_ log: ReplayedLog) throws(BootStateError) {
    let missing = (0...7).filter { !log.pcrs.contains($0) }
    guard missing.isEmpty else { throw .pcrsNotReplayed(missing) }
    var separators: [Int: Int] = [:]
    var seen: Set<SecurityVariable> = []
    var secureBoot: Bool?
    for event in log.events where event.pcr <= 7 && event.type != .noAction {
      let digest = log.digest(event)
      func requireDigestOfData(_ what: String) throws(BootStateError) {
        guard digest == log.bank.hash(event.data) else { throw .digestMismatch(sequence: event.sequence, pcr: event.pcr, what: what) }
      }
      if event.type == .separator {
        guard separators[event.pcr] == nil else { throw .duplicateSeparator(pcr: event.pcr, sequence: event.sequence) }
        separators[event.pcr] = event.sequence
        // 0x00000000 ends the pre-OS phase; 0xFFFFFFFF says the firmware hit an error.
        guard event.data == [0, 0, 0, 0] else { throw .separatorSignalsError(pcr: event.pcr, sequence: event.sequence) }
        try requireDigestOfData("separator")
        continue
      }
      switch (event.pcr, event.type) {
      case (7, .efiVariableDriverConfig):
        let variable = try UEFIVariable(event)
        try requireDigestOfData("variable \(variable.name)")
        let known = variable.securityVariable
        if separators[7] != nil {
          // The firmware's Secure Boot configuration is measured before the separator; one
          // measured again afterwards would replace what the firmware enforced.
          guard known == nil else { throw .variableAfterSeparator(name: variable.name, sequence: event.sequence) }
          variablesAfterSeparator.append(variable.name)
          continue
        }
        guard let known else { throw .unexpectedVariable(name: variable.name, sequence: event.sequence) }
        guard seen.insert(known).inserted else { throw .duplicateVariable(name: known.name, sequence: event.sequence) }
        switch known {
        case .secureBoot:
          // Firmware without the variable measures it with no data: Secure Boot is not enforced.
          guard variable.data.count <= 1 else {
            throw .malformedVariable(sequence: event.sequence, reason: "SecureBoot is longer than one byte")
          }
          secureBoot = variable.data == [1]
        case .platformKey: platformKey = variable.data
        case .keyExchangeKeys: keyExchangeKeys = variable.data
        case .signatureDatabase: signatureDatabase = variable.data
        case .forbiddenSignatures: forbiddenSignatures = variable.data
        }
      case (7, .efiVariableAuthority):
        let variable: UEFIVariable
        do { variable = try UEFIVariable(event) } catch {
          // Only the shape old shims wrote after the separator (UEFIVariable(shimLengthBug:)),
          // digest and all; any other malformed authority is refused.
          guard separators[7] != nil, let old = UEFIVariable(shimLengthBug: event),
            digest == log.bank.hash(Array(event.data.dropLast()))
          else { throw error }
          authorities.append(old.data)
          continue
        }
        try requireDigestOfData("authority \(variable.name)")
        if variable.guid == Self.shimLock, variable.units == Self.mokSBState {
          guard variable.data == [0] || variable.data == [1] else {
            throw .malformedVariable(sequence: event.sequence, reason: "MokSBState is not one byte 0 or 1")
          }
          if variable.data == [1] { shimValidation = false }
        }
        authorities.append(variable.data)
      case (7, .efiAction), (4, .efiAction):
        guard !(event.pcr == 7 && event.data == Self.debugMode) else { throw .debugMode(sequence: event.sequence) }
        let action = String(decoding: event.data, as: UTF8.self)
        try requireDigestOfData("action \"\(action)\"")
        if event.pcr == 7 {
          actions.append(action)
          if event.data == Self.dmaProtectionDisabled { dmaProtectionDisabled = true }
        } else {
          bootActions.append(action)
        }
      case (7, _): throw .unexpectedEvent(sequence: event.sequence, pcr: 7, type: event.type)
      case (4, .efiBootServicesApplication): bootApplications.append(digest)
      default: continue
      }
    }
    if let pcr = (0...7).first(where: { separators[$0] == nil }) { throw .missingSeparator(pcr: pcr) }
    guard let secureBoot else { throw .secureBootNotMeasured }
    enabled = secureBoot
  }
}

/// The five Secure Boot policy variables, each under the GUID UEFI gives it.
enum SecurityVariable: CaseIterable, Hashable {
  case secureBoot, platformKey, keyExchangeKeys, signatureDatabase, forbiddenSignatures

  var name: String {
    switch self {
    case .secureBoot: "SecureBoot"
    case .platformKey: "PK"
    case .keyExchangeKeys: "KEK"
    case .signatureDatabase: "db"
    case .forbiddenSignatures: "dbx"
    }
  }

  /// The name as the firmware writes it, UTF-16 code units: what a measured name is compared with.
  var units: [UInt16] { Array(name.utf16) }

  var guid: GUID {
    switch self {
    case .secureBoot, .platformKey, .keyExchangeKeys: SecureBootState.globalVariable
    case .signatureDatabase, .forbiddenSignatures: SecureBootState.imageSecurityDatabase
    }
  }
}

/// UEFI_VARIABLE_DATA: VariableName (GUID, 16 bytes), UnicodeNameLength u64 (in UTF-16 code
/// units), VariableDataLength u64, UnicodeName (UTF-16LE, no terminator), VariableData.
struct UEFIVariable {
  var guid: GUID
  /// The name's UTF-16 code units as measured: the name compared, never `name` (String == holds
  /// canonically equivalent names equal: "P\u{212A}", with U+212A KELVIN SIGN, == "PK").
  var units: [UInt16]
  /// The name for messages (a lone surrogate shown as U+FFFD).
  var name: String
  var data: [UInt8]

  init(_ event: EventLog.Event) throws(BootStateError) {
    func malformed(_ reason: String) -> BootStateError { .malformedVariable(sequence: event.sequence, reason: reason) }
    let bytes = event.data
    guard bytes.count >= 32 else { throw malformed("shorter than its 32-byte header") }
    func uint64(_ at: Int) -> UInt64 { bytes[at..<at + 8].reversed().reduce(0) { $0 << 8 | UInt64($1) } }
    let nameLength = uint64(16)
    let dataLength = uint64(24)
    // The whole event is at most EventLog.maximumEventSize, so these cannot overflow once bounded.
    guard nameLength <= UInt64(bytes.count), dataLength <= UInt64(bytes.count),
      32 + 2 * Int(nameLength) + Int(dataLength) == bytes.count
    else { throw malformed("its name and data lengths (\(nameLength), \(dataLength)) do not add up to the event's \(bytes.count) bytes") }
    guid = GUID(bytes: Array(bytes[0..<16]))
    units = stride(from: 32, to: 32 + 2 * Int(nameLength), by: 2).map { UInt16(bytes[$0]) | UInt16(bytes[$0 + 1]) << 8 }
    name = String(decoding: units, as: UTF16.self)
    data = Array(bytes[(32 + 2 * Int(nameLength))...])
  }

  /// The one malformed shape read, and only for EV_EFI_VARIABLE_AUTHORITY after PCR 7's
  /// separator, as old shims wrote it: the variable sized from shim's C struct, whose padding
  /// adds five zero bytes after the data, and the log event one byte longer than what was
  /// measured (fixed by shim commit 8a27a48, "tpm: Fix off-by-one error when calculating event
  /// size"). So the event is 6 bytes longer than its length fields say: the header, the name,
  /// VariableDataLength bytes that are one DER certificate (a SEQUENCE with a two-byte length,
  /// without EFI_SIGNATURE_DATA's owner GUID), five zero bytes and one more byte, which the
  /// digest does not cover (the caller checks the digest is the hash of the data without its
  /// last byte). Seen in Container-Optimized OS, Debian 10 and tpm2-tools' postcode logs;
  /// go-attestation reads it too (its issue 157).
  init?(shimLengthBug event: EventLog.Event) {
    let bytes = event.data
    guard bytes.count >= 32 + 6 + 4 else { return nil }
    func uint64(_ at: Int) -> UInt64 { bytes[at..<at + 8].reversed().reduce(0) { $0 << 8 | UInt64($1) } }
    let nameLength = uint64(16)
    let dataLength = uint64(24)
    guard nameLength <= UInt64(bytes.count), dataLength <= UInt64(bytes.count),
      32 + 2 * Int(nameLength) + Int(dataLength) + 6 == bytes.count
    else { return nil }
    let start = 32 + 2 * Int(nameLength)
    let certificate = Array(bytes[start..<start + Int(dataLength)])
    guard certificate.count >= 4, certificate[0] == 0x30, certificate[1] == 0x82,
      4 + (Int(certificate[2]) << 8 | Int(certificate[3])) == certificate.count,
      bytes[(bytes.count - 6)..<(bytes.count - 1)].allSatisfy({ $0 == 0 })
    else { return nil }
    guid = GUID(bytes: Array(bytes[0..<16]))
    units = stride(from: 32, to: start, by: 2).map { UInt16(bytes[$0]) | UInt16(bytes[$0 + 1]) << 8 }
    name = String(decoding: units, as: UTF16.self)
    data = certificate
  }

  /// The Secure Boot policy variable this is, when its name is one's code unit for code unit and
  /// its GUID the one UEFI defines for that name (as am/fr-tpm-attestation.js compares them).
  var securityVariable: SecurityVariable? {
    SecurityVariable.allCases.first { $0.units == units && $0.guid == guid }
  }
}

/// An EFI_GUID: its first three fields little-endian in memory, the last eight bytes as written.
struct GUID: Equatable {
  var bytes: [UInt8]

  init(bytes: [UInt8]) { self.bytes = bytes }

  /// From the registry form "8be4df61-93ca-11d2-aa0d-00e098032b8c" (a constant: traps if malformed).
  init(_ text: String) {
    let raw = Hex.decode(text.utf8.filter { $0 != UInt8(ascii: "-") })!
    precondition(raw.count == 16, "a GUID has 16 bytes")
    bytes = Array(raw[0..<4].reversed()) + raw[4..<6].reversed() + raw[6..<8].reversed() + raw[8...]
  }
}

/// Why the replayed log does not give a Secure Boot state the verifier can rely on.
///
/// A struct, not an enum, so that a release can add a failure without breaking an embedder's
/// `switch`: new codes may be added in any release. Match on ``code`` (`error.code ==
/// .debugMode`, or `switch error.code` with a `default:`); ``pcr``, ``sequence`` and ``name``
/// locate the failure where it has them, ``description`` is the message.
public struct BootStateError: Error, Sendable, Hashable, CustomStringConvertible {
  /// What kind of failure it is. New codes may be added in any release: switch with a
  /// `default:`.
  public struct Code: Hashable, Sendable, CustomStringConvertible {
    private enum Backing: Hashable, Sendable {
      case pcrsNotReplayed, missingSeparator, duplicateSeparator, separatorSignalsError, debugMode, digestMismatch
      case malformedVariable, duplicateVariable, variableAfterSeparator, unexpectedVariable, unexpectedEvent
      case secureBootNotMeasured
    }

    private var backing: Backing
    private init(_ backing: Backing) { self.backing = backing }

    /// PCRs 0–7 must all be replayed (their separators are checked), these (``pcrs``) were not.
    public static let pcrsNotReplayed = Code(.pcrsNotReplayed)
    /// A PCR has no separator event.
    public static let missingSeparator = Code(.missingSeparator)
    /// A PCR has a second separator event.
    public static let duplicateSeparator = Code(.duplicateSeparator)
    /// A separator signals a firmware error.
    public static let separatorSignalsError = Code(.separatorSignalsError)
    /// The firmware ran with a UEFI debugger, which can change anything Secure Boot enforced.
    public static let debugMode = Code(.debugMode)
    /// The event's digest is not the hash of its data: the data shown is not what was measured.
    public static let digestMismatch = Code(.digestMismatch)
    /// A UEFI variable event does not parse.
    public static let malformedVariable = Code(.malformedVariable)
    /// A variable is measured a second time.
    public static let duplicateVariable = Code(.duplicateVariable)
    /// A variable is measured after PCR 7's separator.
    public static let variableAfterSeparator = Code(.variableAfterSeparator)
    /// A variable in PCR 7 before its separator that is not SecureBoot, PK, KEK, db or dbx.
    public static let unexpectedVariable = Code(.unexpectedVariable)
    /// An event of a type that does not belong in its PCR.
    public static let unexpectedEvent = Code(.unexpectedEvent)
    /// PCR 7 has no SecureBoot variable event: the state is unknown, not off.
    public static let secureBootNotMeasured = Code(.secureBootNotMeasured)

    public var description: String { String(describing: backing) }
  }

  /// What kind of failure it is.
  public let code: Code
  /// The PCR concerned, where there is one.
  public let pcr: Int?
  /// The event's sequence number in the log, where there is one.
  public let sequence: Int?
  /// The UEFI variable's name (``Code/duplicateVariable``, ``Code/variableAfterSeparator``,
  /// ``Code/unexpectedVariable``).
  public let name: String?
  /// The PCRs that were not replayed (``Code/pcrsNotReplayed``).
  public let pcrs: [Int]?
  /// One line saying what is wrong.
  public let description: String

  private init(
    _ code: Code, pcr: Int? = nil, sequence: Int? = nil, name: String? = nil, pcrs: [Int]? = nil, _ description: String
  ) {
    self.code = code
    self.pcr = pcr
    self.sequence = sequence
    self.name = name
    self.pcrs = pcrs
    self.description = description
  }

  /// PCRs 0–7 must all be replayed (their separators are checked), these were not.
  public static func pcrsNotReplayed(_ pcrs: [Int]) -> Self {
    Self(.pcrsNotReplayed, pcrs: pcrs, "PCRs \(pcrs.map(String.init).joined(separator: ", ")) were not replayed")
  }

  public static func missingSeparator(pcr: Int) -> Self { Self(.missingSeparator, pcr: pcr, "PCR \(pcr) has no separator event") }

  public static func duplicateSeparator(pcr: Int, sequence: Int) -> Self {
    Self(.duplicateSeparator, pcr: pcr, sequence: sequence, "event \(sequence) is a second separator in PCR \(pcr)")
  }

  public static func separatorSignalsError(pcr: Int, sequence: Int) -> Self {
    Self(
      .separatorSignalsError, pcr: pcr, sequence: sequence,
      "the separator of PCR \(pcr) (event \(sequence)) signals a firmware error")
  }

  /// The firmware ran with a UEFI debugger, which can change anything Secure Boot enforced.
  public static func debugMode(sequence: Int) -> Self {
    Self(.debugMode, sequence: sequence, "event \(sequence): the firmware booted in UEFI debug mode")
  }

  /// The event's digest is not the hash of its data: the data shown is not what was measured.
  public static func digestMismatch(sequence: Int, pcr: Int, what: String) -> Self {
    Self(
      .digestMismatch, pcr: pcr, sequence: sequence, "event \(sequence) in PCR \(pcr) (\(what)): its digest is not the hash of its data")
  }

  public static func malformedVariable(sequence: Int, reason: String) -> Self {
    Self(.malformedVariable, sequence: sequence, "event \(sequence): malformed UEFI variable: \(reason)")
  }

  public static func duplicateVariable(name: String, sequence: Int) -> Self {
    Self(.duplicateVariable, sequence: sequence, name: name, "event \(sequence) measures \(name) a second time")
  }

  public static func variableAfterSeparator(name: String, sequence: Int) -> Self {
    Self(.variableAfterSeparator, sequence: sequence, name: name, "event \(sequence) measures \(name) after PCR 7's separator")
  }

  /// A variable in PCR 7 before its separator that is not SecureBoot, PK, KEK, db or dbx.
  public static func unexpectedVariable(name: String, sequence: Int) -> Self {
    Self(.unexpectedVariable, sequence: sequence, name: name, "event \(sequence) measures an unexpected variable \(name) into PCR 7")
  }

  public static func unexpectedEvent(sequence: Int, pcr: Int, type: EventType) -> Self {
    Self(.unexpectedEvent, pcr: pcr, sequence: sequence, "event \(sequence) in PCR \(pcr) has an unexpected type \(type)")
  }

  /// PCR 7 has no SecureBoot variable event: the state is unknown, not off.
  public static var secureBootNotMeasured: Self {
    Self(.secureBootNotMeasured, "PCR 7 has no SecureBoot variable event: Secure Boot state unknown")
  }
}
