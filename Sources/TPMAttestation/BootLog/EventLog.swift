/// The TCG PC Client firmware event log, as Linux exposes it in
/// /sys/kernel/security/tpm0/binary_bios_measurements: what the firmware (and shim, GRUB…) says it
/// extended into each PCR. Untrusted until replayed against PCR values the TPM vouched for
/// (Replay.swift); this file only parses, with every length bounded by what is left.
///
/// Two layouts (TCG PC Client Platform Firmware Profile, section 10):
/// - crypto-agile: a first TCG_PCR_EVENT (SHA-1 layout) whose data is the "Spec ID Event03"
///   structure listing each digest algorithm and its size, then TCG_PCR_EVENT2 records
///   (pcrIndex, eventType, digest count, (algorithmId, digest)…, eventSize, event);
/// - legacy (TPM 1.2 and old firmware): TCG_PCR_EVENT records only, SHA-1 digests only.
/// All integers are little-endian.
public struct EventLog: Sendable, Equatable {
  /// One digest algorithm of the log, with the size the Spec ID event gives it.
  public struct Algorithm: Sendable, Equatable {
    /// TPM_ALG_ID (0x0004 SHA-1, 0x000B SHA-256, 0x000C SHA-384…).
    public var id: UInt16
    public var digestSize: Int
  }

  /// One measurement as logged.
  public struct Event: Sendable, Equatable {
    /// Position in the log, from 0 (the Spec ID event of a crypto-agile log is not counted).
    public var sequence: Int
    /// Byte offset of the record in the log.
    public var offset: Int
    /// 0–23; an EV_NO_ACTION event may name any index (Windows appends its own with 0xFFFFFFFF).
    public var pcr: Int
    public var type: EventType
    /// The digest per algorithm id (a legacy log has SHA-1 only).
    public var digests: [UInt16: [UInt8]]
    public var data: [UInt8]
  }

  /// Whether the log is crypto-agile (a Spec ID event) rather than SHA-1 legacy.
  public var cryptoAgile: Bool
  /// The digest algorithms every event may carry: the Spec ID table, or SHA-1 for a legacy log.
  public var algorithms: [Algorithm]
  public var events: [Event]

  // The log's bounds, the same as am/fr-tpm-attestation.js's (MAX_LOG_SIZE, MAX_EVENTS,
  // MAX_EVENT_SIZE; both verifiers refuse beyond them as "eventLog", naming the bound). The log is
  // not signed: only its replay vouches for it, after it was parsed, so without bounds a device
  // could send a megabyte of tiny events and cost the AM node seconds of CPU (1.2-2 s for 15,600
  // events of 780 KB, against 40 ms for a real log). Real logs have tens to a few hundred events
  // and are up to ~100 KB (Fixtures/eventlogs: at most 106 events, 73 KB); their largest events
  // are firmware variables (dbx: 12 KB there) and a Windows log's own EV_EVENT_TAG records in
  // PCR 13 (36 KB there). 4096 events, 64 KiB an event and 512 KiB a log leave room for them
  // (40x, 1.8-5x, 5x). 512 KiB is 683 Ki characters of base64url, within the AM script's
  // 1 Mi-character boot quote, so a log just past the bound is refused by name there too.

  /// The largest log accepted, in bytes: checked before anything is parsed.
  public static let maximumLogSize = 512 * 1024
  /// The most events a log may have (the Spec ID event of a crypto-agile log is not counted).
  public static let maximumEvents = 4096
  /// The largest event data accepted, in bytes.
  public static let maximumEventSize = 64 * 1024
  /// More algorithms than TPM banks exist is a corrupt table.
  public static let maximumAlgorithms = 16
  /// SHA-512's 64 bytes is the largest digest a TPM bank has.
  public static let maximumDigestSize = 64
  /// PCRs 0–23 are the PC Client TPM's.
  public static let pcrCount = 24

  static let specIDSignature = Array("Spec ID Event03".utf8) + [0]

  /// Parses a whole log; any byte left over that is not a whole event is an error.
  public init(parsing bytes: [UInt8]) throws(EventLogError) {
    guard bytes.count <= Self.maximumLogSize else { throw .logTooLarge(size: bytes.count, limit: Self.maximumLogSize) }
    var reader = LogReader(bytes)
    // The first record always has the legacy layout.
    let first = try Self.legacyEvent(&reader, sequence: 0)
    if first.type == .noAction && first.data.starts(with: Self.specIDSignature) {
      cryptoAgile = true
      algorithms = try Self.specIDAlgorithms(first.data, offset: first.offset)
      events = []
      while !reader.atEnd {
        try Self.requireRoom(events, reader)
        events.append(try Self.agileEvent(&reader, sequence: events.count, algorithms: algorithms))
      }
    } else {
      cryptoAgile = false
      algorithms = [Algorithm(id: DigestAlgorithm.sha1.rawValue, digestSize: 20)]
      events = [first]
      while !reader.atEnd {
        try Self.requireRoom(events, reader)
        events.append(try Self.legacyEvent(&reader, sequence: events.count))
      }
    }
  }

  /// Another event may follow `events` (at the reader's offset) within `maximumEvents`.
  static func requireRoom(_ events: [Event], _ reader: LogReader) throws(EventLogError) {
    guard events.count < maximumEvents else { throw .tooManyEvents(offset: reader.offset, limit: maximumEvents) }
  }

  /// TCG_PCR_EVENT: pcrIndex u32, eventType u32, digest[20] (SHA-1), eventSize u32, event.
  static func legacyEvent(_ reader: inout LogReader, sequence: Int) throws(EventLogError) -> Event {
    let offset = reader.offset
    let index = try reader.uint32("pcrIndex")
    let type = EventType(rawValue: try reader.uint32("eventType"))
    let pcr = try pcr(index, type: type, offset: offset)
    let digest = try reader.bytes(20, "SHA-1 digest")
    let data = try eventData(&reader)
    return Event(
      sequence: sequence, offset: offset, pcr: pcr, type: type, digests: [DigestAlgorithm.sha1.rawValue: digest], data: data)
  }

  /// TCG_PCR_EVENT2: pcrIndex u32, eventType u32, TPML_DIGEST_VALUES (count u32, then algorithm
  /// id u16 and its digest, sized by the Spec ID table), eventSize u32, event.
  static func agileEvent(_ reader: inout LogReader, sequence: Int, algorithms: [Algorithm]) throws(EventLogError) -> Event {
    let offset = reader.offset
    let index = try reader.uint32("pcrIndex")
    let type = EventType(rawValue: try reader.uint32("eventType"))
    let pcr = try pcr(index, type: type, offset: offset)
    let countOffset = reader.offset
    let count = try reader.uint32("digest count")
    guard count <= algorithms.count else {
      throw .sizeOutOfBounds(offset: countOffset, field: "digest count", size: UInt64(count), limit: algorithms.count)
    }
    var digests: [UInt16: [UInt8]] = [:]
    for _ in 0..<count {
      let idOffset = reader.offset
      let id = try reader.uint16("digest algorithm")
      guard let algorithm = algorithms.first(where: { $0.id == id }) else { throw .unknownAlgorithm(offset: idOffset, id: id) }
      guard digests[id] == nil else { throw .duplicateDigest(offset: idOffset, id: id) }
      digests[id] = try reader.bytes(algorithm.digestSize, "digest")
    }
    let data = try eventData(&reader)
    return Event(sequence: sequence, offset: offset, pcr: pcr, type: type, digests: digests, data: data)
  }

  /// A PCR index past 23 only on an EV_NO_ACTION event, which extends nothing: Windows appends
  /// its boot log's own events with index 0xFFFFFFFF.
  static func pcr(_ index: UInt32, type: EventType, offset: Int) throws(EventLogError) -> Int {
    guard index < pcrCount || type == .noAction else { throw .pcrOutOfRange(offset: offset, pcr: index) }
    return Int(index)
  }

  static func eventData(_ reader: inout LogReader) throws(EventLogError) -> [UInt8] {
    let offset = reader.offset
    let size = try reader.uint32("eventSize")
    guard size <= maximumEventSize else {
      throw .sizeOutOfBounds(offset: offset, field: "eventSize", size: UInt64(size), limit: maximumEventSize)
    }
    return try reader.bytes(Int(size), "event data")
  }

  /// TCG_EfiSpecIDEvent: signature[16], platformClass u32, specVersionMinor, specVersionMajor,
  /// specErrata, uintnSize (u8 each), numberOfAlgorithms u32, (algorithmId u16, digestSize u16)…,
  /// vendorInfoSize u8, vendorInfo.
  static func specIDAlgorithms(_ data: [UInt8], offset: Int) throws(EventLogError) -> [Algorithm] {
    // Offsets in errors are the log's: the event data starts 32 bytes into its record.
    var reader = LogReader(data, base: offset + 32)
    _ = try reader.bytes(specIDSignature.count + 4 + 4, "Spec ID header")
    let countOffset = reader.offset
    let count = try reader.uint32("numberOfAlgorithms")
    guard count >= 1, count <= maximumAlgorithms else {
      throw .sizeOutOfBounds(offset: countOffset, field: "numberOfAlgorithms", size: UInt64(count), limit: maximumAlgorithms)
    }
    var algorithms: [Algorithm] = []
    for _ in 0..<count {
      let entryOffset = reader.offset
      let id = try reader.uint16("algorithmId")
      let size = Int(try reader.uint16("digestSize"))
      guard size >= 1, size <= maximumDigestSize else {
        throw .sizeOutOfBounds(offset: entryOffset + 2, field: "digestSize", size: UInt64(size), limit: maximumDigestSize)
      }
      if let known = DigestAlgorithm(rawValue: id), known.digestSize != size {
        throw .specIDMalformed(offset: entryOffset, reason: "algorithm \(known) listed with \(size)-byte digests")
      }
      guard !algorithms.contains(where: { $0.id == id }) else { throw .duplicateDigest(offset: entryOffset, id: id) }
      algorithms.append(Algorithm(id: id, digestSize: size))
    }
    let vendorSize = Int(try reader.uint8("vendorInfoSize"))
    _ = try reader.bytes(vendorSize, "vendorInfo")
    guard reader.atEnd else { throw .specIDMalformed(offset: reader.offset, reason: "bytes after vendorInfo") }
    return algorithms
  }
}

/// TCG event types (PC Client Platform Firmware Profile, table 9): the ones the verifier reads
/// are named; any other value is kept as is.
public struct EventType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
  public var rawValue: UInt32
  public init(rawValue: UInt32) { self.rawValue = rawValue }

  public static let postCode = EventType(rawValue: 0x1)
  public static let noAction = EventType(rawValue: 0x3)
  public static let separator = EventType(rawValue: 0x4)
  public static let action = EventType(rawValue: 0x5)
  public static let sCRTMVersion = EventType(rawValue: 0x8)
  public static let efiVariableDriverConfig = EventType(rawValue: 0x8000_0001)
  public static let efiVariableBoot = EventType(rawValue: 0x8000_0002)
  public static let efiBootServicesApplication = EventType(rawValue: 0x8000_0003)
  public static let efiBootServicesDriver = EventType(rawValue: 0x8000_0004)
  public static let efiGPTEvent = EventType(rawValue: 0x8000_0006)
  public static let efiAction = EventType(rawValue: 0x8000_0007)
  public static let efiPlatformFirmwareBlob = EventType(rawValue: 0x8000_0008)
  public static let efiHandoffTables = EventType(rawValue: 0x8000_0009)
  public static let efiVariableBoot2 = EventType(rawValue: 0x8000_000C)
  public static let efiVariableAuthority = EventType(rawValue: 0x8000_00E0)

  static let names: [UInt32: String] = [
    0x1: "EV_POST_CODE", 0x3: "EV_NO_ACTION", 0x4: "EV_SEPARATOR", 0x5: "EV_ACTION", 0x8: "EV_S_CRTM_VERSION",
    0x8000_0001: "EV_EFI_VARIABLE_DRIVER_CONFIG", 0x8000_0002: "EV_EFI_VARIABLE_BOOT",
    0x8000_0003: "EV_EFI_BOOT_SERVICES_APPLICATION", 0x8000_0004: "EV_EFI_BOOT_SERVICES_DRIVER",
    0x8000_0006: "EV_EFI_GPT_EVENT", 0x8000_0007: "EV_EFI_ACTION", 0x8000_0008: "EV_EFI_PLATFORM_FIRMWARE_BLOB",
    0x8000_0009: "EV_EFI_HANDOFF_TABLES", 0x8000_000C: "EV_EFI_VARIABLE_BOOT2", 0x8000_00E0: "EV_EFI_VARIABLE_AUTHORITY",
  ]

  public var description: String {
    Self.names[rawValue] ?? "event type 0x" + String(rawValue, radix: 16)
  }
}

/// Why an event log was refused: each names the byte offset (in the log) where parsing stopped,
/// or the PCR whose replay failed.
///
/// A struct, not an enum, so that a release can add a failure without breaking an embedder's
/// `switch`: new codes may be added in any release. Match on ``code`` (`error.code ==
/// .replayMismatch`, or `switch error.code` with a `default:`); ``offset``, ``pcr`` and ``bank``
/// locate the failure where it has them, ``description`` is the message.
public struct EventLogError: Error, Sendable, Hashable, CustomStringConvertible {
  /// What kind of failure it is. New codes may be added in any release: switch with a
  /// `default:`.
  public struct Code: Hashable, Sendable, CustomStringConvertible {
    private enum Backing: Hashable, Sendable {
      case truncated, sizeOutOfBounds, logTooLarge, tooManyEvents, unknownAlgorithm, duplicateDigest, pcrOutOfRange
      case specIDMalformed, noBank, missingDigest, replayMismatch, pcrValueSize
    }

    private var backing: Backing
    private init(_ backing: Backing) { self.backing = backing }

    /// The log ends inside a field.
    public static let truncated = Code(.truncated)
    /// A size or count beyond what any real log holds (or than its table allows).
    public static let sizeOutOfBounds = Code(.sizeOutOfBounds)
    /// The log has more bytes than `EventLog.maximumLogSize`.
    public static let logTooLarge = Code(.logTooLarge)
    /// The log has more events than `EventLog.maximumEvents`.
    public static let tooManyEvents = Code(.tooManyEvents)
    /// An event carries a digest of an algorithm the Spec ID event does not list.
    public static let unknownAlgorithm = Code(.unknownAlgorithm)
    /// One algorithm twice in an event or in the Spec ID table.
    public static let duplicateDigest = Code(.duplicateDigest)
    /// An event names a PCR beyond PCR 23.
    public static let pcrOutOfRange = Code(.pcrOutOfRange)
    /// The Spec ID event is malformed.
    public static let specIDMalformed = Code(.specIDMalformed)
    /// The log has no digests of this bank (a SHA-1 legacy log has no SHA-256 bank).
    public static let noBank = Code(.noBank)
    /// An event extended into a PCR lacks the bank's digest, so the PCR cannot be replayed.
    public static let missingDigest = Code(.missingDigest)
    /// A given PCR value is not what the log replays to: the log is not that PCR's history
    /// (events altered, reordered, left out, or an extend made outside the log).
    public static let replayMismatch = Code(.replayMismatch)
    /// A PCR value of the wrong length for its bank.
    public static let pcrValueSize = Code(.pcrValueSize)

    public var description: String { String(describing: backing) }
  }

  /// What kind of failure it is.
  public let code: Code
  /// The byte offset in the log where parsing stopped (the codes of parsing).
  public let offset: Int?
  /// The PCR concerned (``Code/pcrOutOfRange``, ``Code/missingDigest``,
  /// ``Code/replayMismatch``, ``Code/pcrValueSize``).
  public let pcr: Int?
  /// The bank concerned (``Code/noBank``, ``Code/missingDigest``, ``Code/replayMismatch``,
  /// ``Code/pcrValueSize``).
  public let bank: DigestAlgorithm?
  /// One line saying what is wrong.
  public let description: String

  private init(_ code: Code, offset: Int? = nil, pcr: Int? = nil, bank: DigestAlgorithm? = nil, _ description: String) {
    self.code = code
    self.offset = offset
    self.pcr = pcr
    self.bank = bank
    self.description = description
  }

  /// The log ends inside a field.
  public static func truncated(offset: Int, field: String) -> Self {
    Self(.truncated, offset: offset, "the event log ends inside \(field) at offset \(offset)")
  }

  /// A size or count beyond what any real log holds (or than its table allows).
  public static func sizeOutOfBounds(offset: Int, field: String, size: UInt64, limit: Int) -> Self {
    Self(.sizeOutOfBounds, offset: offset, "the event log's \(field) at offset \(offset) is \(size), beyond its bound \(limit)")
  }

  /// The log has more bytes than `EventLog.maximumLogSize`.
  public static func logTooLarge(size: Int, limit: Int) -> Self {
    Self(.logTooLarge, "the event log is \(size) bytes, beyond its bound of \(limit) bytes a log")
  }

  /// The log has more events than `EventLog.maximumEvents`: the first past it is at `offset`.
  public static func tooManyEvents(offset: Int, limit: Int) -> Self {
    Self(
      .tooManyEvents, offset: offset,
      "the event log has more than \(limit) events: event \(limit) at offset \(offset) is beyond its bound of \(limit) events a log")
  }

  /// An event carries a digest of an algorithm the Spec ID event does not list.
  public static func unknownAlgorithm(offset: Int, id: UInt16) -> Self {
    Self(
      .unknownAlgorithm, offset: offset,
      "the event at offset \(offset) has a digest of algorithm 0x\(String(id, radix: 16)), which the Spec ID event does not list")
  }

  /// One algorithm twice in an event or in the Spec ID table.
  public static func duplicateDigest(offset: Int, id: UInt16) -> Self {
    Self(.duplicateDigest, offset: offset, "algorithm 0x\(String(id, radix: 16)) appears twice at offset \(offset)")
  }

  public static func pcrOutOfRange(offset: Int, pcr: UInt32) -> Self {
    Self(.pcrOutOfRange, offset: offset, pcr: Int(pcr), "the event at offset \(offset) names PCR \(pcr), beyond PCR 23")
  }

  public static func specIDMalformed(offset: Int, reason: String) -> Self {
    Self(.specIDMalformed, offset: offset, "the Spec ID event is malformed at offset \(offset): \(reason)")
  }

  /// The log has no digests of this bank (a SHA-1 legacy log has no SHA-256 bank).
  public static func noBank(_ bank: DigestAlgorithm) -> Self {
    Self(.noBank, bank: bank, "the event log has no \(bank) digests (a SHA-1-only log?)")
  }

  /// An event extended into a PCR lacks the bank's digest, so the PCR cannot be replayed.
  public static func missingDigest(sequence: Int, pcr: Int, bank: DigestAlgorithm) -> Self {
    Self(.missingDigest, pcr: pcr, bank: bank, "event \(sequence) in PCR \(pcr) has no \(bank) digest")
  }

  /// A given PCR value is not what the log replays to: the log is not that PCR's history
  /// (events altered, reordered, left out, or an extend made outside the log).
  public static func replayMismatch(pcr: Int, bank: DigestAlgorithm) -> Self {
    Self(.replayMismatch, pcr: pcr, bank: bank, "PCR \(pcr) (\(bank)) is not what the event log replays to")
  }

  /// A PCR value of the wrong length for its bank.
  public static func pcrValueSize(pcr: Int, size: Int, bank: DigestAlgorithm) -> Self {
    Self(.pcrValueSize, pcr: pcr, bank: bank, "the value given for PCR \(pcr) has \(size) bytes, not a \(bank) digest")
  }
}

/// A bounded little-endian reader that names the field it could not read.
struct LogReader {
  let bytes: [UInt8]
  let base: Int
  private(set) var position = 0

  init(_ bytes: [UInt8], base: Int = 0) {
    self.bytes = bytes
    self.base = base
  }

  var offset: Int { base + position }
  var atEnd: Bool { position == bytes.count }

  mutating func bytes(_ count: Int, _ field: String) throws(EventLogError) -> [UInt8] {
    guard count <= bytes.count - position else { throw .truncated(offset: offset, field: field) }
    defer { position += count }
    return Array(bytes[position..<position + count])
  }

  mutating func uint8(_ field: String) throws(EventLogError) -> UInt8 { try bytes(1, field)[0] }

  mutating func uint16(_ field: String) throws(EventLogError) -> UInt16 {
    let raw = try bytes(2, field)
    return UInt16(raw[0]) | UInt16(raw[1]) << 8
  }

  mutating func uint32(_ field: String) throws(EventLogError) -> UInt32 {
    let raw = try bytes(4, field)
    return raw.reversed().reduce(0) { $0 << 8 | UInt32($1) }
  }
}
