import Crypto
import Foundation
import TestSupport
import Testing

@testable import TPMAttestation

/// A crypto-agile firmware event log written byte by byte as the PC Client Platform Firmware
/// Profile lays it out, with the SHA-256 PCR values its extends give (computed here as a TPM
/// would: new = SHA-256(old ‖ digest)), so each test can alter one thing.
struct BuiltLog {
  struct Record {
    var pcr: UInt32
    var type: UInt32
    var data: [UInt8]
    /// The SHA-256 digest logged; the hash of `data` unless a test says otherwise.
    var sha256: [UInt8]
    var sha1: [UInt8]
  }

  var records: [Record] = []
  /// The banks the Spec ID event lists (SHA-1 only makes a SHA-1-only crypto-agile log).
  var banks: [(id: UInt16, size: UInt16)] = [(0x0004, 20), (0x000B, 32)]
  var startupLocality: UInt8?

  static let efiGlobalVariable: [UInt8] = [0x61, 0xdf, 0xe4, 0x8b, 0xca, 0x93, 0xd2, 0x11, 0xaa, 0x0d, 0x00, 0xe0, 0x98, 0x03, 0x2b, 0x8c]
  static let imageSecurityDatabase: [UInt8] = [
    0xcb, 0xb2, 0x19, 0xd7, 0x3a, 0x3d, 0x96, 0x45, 0xa3, 0xbc, 0xda, 0xd0, 0x0e, 0x67, 0x65, 0x6f,
  ]

  static func le(_ value: UInt64, _ bytes: Int) -> [UInt8] { (0..<bytes).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }

  /// UEFI_VARIABLE_DATA: GUID, name length (UTF-16 units) u64, data length u64, name, data.
  static func variable(_ guid: [UInt8], _ name: String, _ data: [UInt8]) -> [UInt8] {
    let name16 = Array(name.utf16)
    return guid + le(UInt64(name16.count), 8) + le(UInt64(data.count), 8) + name16.flatMap { le(UInt64($0), 2) } + data
  }

  static let certSHA256: [UInt8] = [0x26, 0x16, 0xc4, 0xc1, 0x4c, 0x50, 0x92, 0x40, 0xac, 0xa9, 0x41, 0xf9, 0x36, 0x93, 0x43, 0x28]

  /// An EFI_SIGNATURE_LIST of EFI_CERT_SHA256 entries (SignatureType, SignatureListSize,
  /// SignatureHeaderSize 0, SignatureSize 48, then owner GUID and hash per entry), one per name.
  static func signatureList(_ names: String...) -> [UInt8] {
    let owner = [UInt8](repeating: 0x77, count: 16)
    return certSHA256 + le(UInt64(28 + 48 * names.count), 4) + le(0, 4) + le(48, 4)
      + names.flatMap { owner + Array(SHA256.hash(data: Array($0.utf8))) }
  }

  mutating func add(pcr: UInt32, type: UInt32, data: [UInt8], sha256: [UInt8]? = nil) {
    records.append(
      Record(
        pcr: pcr, type: type, data: data, sha256: sha256 ?? Array(SHA256.hash(data: data)),
        sha1: Array(Insecure.SHA1.hash(data: data))))
  }

  mutating func separator(_ pcr: UInt32) { add(pcr: pcr, type: 0x4, data: [0, 0, 0, 0]) }

  mutating func efiAction(_ pcr: UInt32, _ text: String) { add(pcr: pcr, type: 0x8000_0007, data: Array(text.utf8)) }

  mutating func driverConfig(_ guid: [UInt8], _ name: String, _ data: [UInt8]) {
    add(pcr: 7, type: 0x8000_0001, data: Self.variable(guid, name, data))
  }

  /// A machine that booted shim from a boot option with Secure Boot `secureBoot`: the CRTM
  /// version, SecureBoot, PK, KEK, db, dbx, separators 0–7, the boot application in PCR 4, and the
  /// db entry that verified it.
  static func standard(secureBoot: UInt8 = 1, debugMode: Bool = false) -> BuiltLog {
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
  var bytes: [UInt8] {
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
  var pcrs: [Int: [UInt8]] {
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

/// The event log parser, its replay and the Secure Boot state read from replayed PCR 7, on logs
/// built in code; replays judged by tpm2-tools' `tpm2_eventlog`.
@Suite(.timeLimit(.minutes(10)))
struct EventLogTests {
  static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

  /// `tpm2_eventlog`'s replay: the "pcrs: sha256:" section of its YAML ("    7  : 0x…").
  static func tpm2Eventlog(_ log: [UInt8]) throws -> TestProcess.Result {
    let tree = try TemporaryTree()
    defer { tree.remove() }
    try tree.write("/binary_bios_measurements", bytes: log)
    return try TestProcess.run(["/usr/bin/tpm2_eventlog", tree.root + "/binary_bios_measurements"], environment: [:], timeout: 30)
  }

  /// The SHA-256 digests tpm2_eventlog shows for PCR 4's EV_EFI_BOOT_SERVICES_APPLICATION events.
  static func tpm2EventlogBootApplications(_ log: [UInt8]) throws -> [String] {
    let run = try tpm2Eventlog(log)
    #expect(run.status == 0, "\(run.stderr)")
    var digests: [String] = []
    var pcr = ""
    var type = ""
    var algorithm = ""
    for line in run.stdout.split(separator: "\n").map({ $0.trimmingCharacters(in: .whitespaces) }) {
      if line.hasPrefix("PCRIndex:") { pcr = String(line.dropFirst("PCRIndex:".count)).trimmingCharacters(in: .whitespaces) }
      if line.hasPrefix("EventType:") { type = String(line.dropFirst("EventType:".count)).trimmingCharacters(in: .whitespaces) }
      if line.hasPrefix("- AlgorithmId:") {
        algorithm = String(line.dropFirst("- AlgorithmId:".count)).trimmingCharacters(in: .whitespaces)
      }
      if line.hasPrefix("Digest:"), pcr == "4", type == "EV_EFI_BOOT_SERVICES_APPLICATION", algorithm == "sha256" {
        digests.append(line.dropFirst("Digest:".count).trimmingCharacters(in: CharacterSet(charactersIn: " \"")))
      }
    }
    return digests
  }

  static func tpm2EventlogReplay(_ log: [UInt8]) throws -> [Int: String] {
    let run = try tpm2Eventlog(log)
    #expect(run.status == 0, "\(run.stderr)")
    var values: [Int: String] = [:]
    var inPCRs = false
    var inSHA256 = false
    for line in run.stdout.split(separator: "\n", omittingEmptySubsequences: false) {
      if line == "pcrs:" {
        inPCRs = true
        continue
      }
      guard inPCRs else { continue }
      if line.hasPrefix("  ") && !line.hasPrefix("    ") {
        inSHA256 = line == "  sha256:"
        continue
      }
      guard inSHA256, line.hasPrefix("    ") else { continue }
      let parts = line.split(separator: ":").map { $0.trimmingCharacters(in: .whitespaces) }
      guard parts.count == 2, let pcr = Int(parts[0]), parts[1].hasPrefix("0x") else { continue }
      values[pcr] = String(parts[1].dropFirst(2))
    }
    return values
  }

  @Test("a standard log parses, replays to the PCRs its extends give, and tpm2_eventlog replays it the same")
  func standardLogReplaysAsTpm2Eventlog() throws {
    let built = BuiltLog.standard()
    let log = try EventLog(parsing: built.bytes)
    #expect(log.cryptoAgile)
    #expect(log.algorithms.map(\.id) == [0x0004, 0x000B])
    #expect(log.events.count == built.records.count)
    let replay = try log.replay()
    #expect(replay == built.pcrs.filter { $0.value != [UInt8](repeating: 0, count: 32) })
    let judged = try Self.tpm2EventlogReplay(built.bytes)
    #expect(judged.count == 8)
    #expect(judged == replay.mapValues(Self.hex))
    let replayed = try log.verify(pcrs: built.pcrs)
    #expect(replayed.pcrs == Set(0...16))
  }

  @Test("Secure Boot on, its variables, the boot application and the boot option are read from replayed PCRs 7 and 4")
  func secureBootStateFromReplayedLog() throws {
    let built = BuiltLog.standard()
    let state = try SecureBootState(try EventLog(parsing: built.bytes).verify(pcrs: built.pcrs))
    #expect(state.enabled)
    #expect(state.platformKey == BuiltLog.signatureList("platform key"))
    #expect(state.keyExchangeKeys == BuiltLog.signatureList("kek 1", "kek 2"))
    #expect(state.signatureDatabase == BuiltLog.signatureList("shim"))
    #expect(state.forbiddenSignatures == BuiltLog.signatureList("revoked 1", "revoked 2", "revoked 3"))
    #expect(state.authorities == [Array(BuiltLog.signatureList("shim").dropFirst(28))])
    #expect(state.bootApplications == [Array(SHA256.hash(data: Array("shim".utf8)))])
    #expect(try Self.tpm2EventlogBootApplications(built.bytes) == state.bootApplications.map(Self.hex))
    #expect(state.bootActions == ["Calling EFI Application from Boot Option"])
    #expect(state.actions.isEmpty)
  }

  @Test("SecureBoot=0 is reported as off")
  func secureBootZeroIsOff() throws {
    let built = BuiltLog.standard(secureBoot: 0)
    #expect(try SecureBootState(try EventLog(parsing: built.bytes).verify(pcrs: built.pcrs)).enabled == false)
  }

  @Test("a SecureBoot variable measured empty (firmware without it) is off; longer than a byte is refused")
  func secureBootEmptyIsOff() throws {
    var empty = BuiltLog.standard()
    empty.records[1] = BuiltLog.standard(secureBoot: 0).records[1]
    empty.records[1].data = BuiltLog.variable(BuiltLog.efiGlobalVariable, "SecureBoot", [])
    empty.records[1].sha256 = Array(SHA256.hash(data: empty.records[1].data))
    #expect(try SecureBootState(try EventLog(parsing: empty.bytes).verify(pcrs: empty.pcrs)).enabled == false)
    var long = empty
    long.records[1].data = BuiltLog.variable(BuiltLog.efiGlobalVariable, "SecureBoot", [1, 1])
    long.records[1].sha256 = Array(SHA256.hash(data: long.records[1].data))
    #expect(throws: BootStateError.malformedVariable(sequence: 1, reason: "SecureBoot is longer than one byte")) {
      try SecureBootState(try EventLog(parsing: long.bytes).verify(pcrs: long.pcrs))
    }
  }

  @Test("an EV_NO_ACTION event may name PCR 0xFFFFFFFF (Windows); any other event past PCR 23 is refused")
  func noActionMayNameAnyPCR() throws {
    var built = BuiltLog.standard()
    built.records.append(
      BuiltLog.Record(
        pcr: 0xFFFF_FFFF, type: 0x3, data: Array("Windows".utf8), sha256: .init(repeating: 0, count: 32),
        sha1: .init(repeating: 0, count: 20)))
    let log = try EventLog(parsing: built.bytes)
    #expect(log.events.last?.pcr == 0xFFFF_FFFF)
    #expect(try SecureBootState(try log.verify(pcrs: built.pcrs)).enabled)
    built.records[built.records.count - 1].type = 0x5
    let offset = built.bytes.count - 4 - 7 - 12 - 2 * 2 - 20 - 32
    #expect(throws: EventLogError.pcrOutOfRange(offset: offset, pcr: 0xFFFF_FFFF)) { try EventLog(parsing: built.bytes) }
  }

  @Test("Secure Boot needs PCRs 0–7 replayed: events of PCRs not compared are never read")
  func secureBootNeedsReplayedPCRs() throws {
    let built = BuiltLog.standard()
    let onlySeven = try EventLog(parsing: built.bytes).verify(pcrs: built.pcrs.filter { $0.key == 7 })
    #expect(onlySeven.events.allSatisfy { $0.pcr == 7 })
    #expect(throws: BootStateError.pcrsNotReplayed([0, 1, 2, 3, 4, 5, 6])) { try SecureBootState(onlySeven) }
  }

  @Test("an extend outside the log makes that PCR's replay differ, named")
  func extendOutsideTheLogIsAMismatch() throws {
    let built = BuiltLog.standard()
    var pcrs = built.pcrs
    pcrs[7] = Array(SHA256.hash(data: pcrs[7]! + Array(SHA256.hash(data: Array("unlogged".utf8)))))
    #expect(throws: EventLogError.replayMismatch(pcr: 7, bank: .sha256)) { try EventLog(parsing: built.bytes).verify(pcrs: pcrs) }
    // A PCR the log never extends must still be zero.
    pcrs = built.pcrs
    pcrs[9] = Array(SHA256.hash(data: [UInt8](repeating: 0, count: 64)))
    #expect(throws: EventLogError.replayMismatch(pcr: 9, bank: .sha256)) { try EventLog(parsing: built.bytes).verify(pcrs: pcrs) }
  }

  @Test("reordered events replay to other values: the PCR is named")
  func reorderedEventsMismatch() throws {
    let built = BuiltLog.standard()
    var reordered = built
    reordered.records.swapAt(2, 3)  // PK and KEK
    #expect(throws: EventLogError.replayMismatch(pcr: 7, bank: .sha256)) { try EventLog(parsing: reordered.bytes).verify(pcrs: built.pcrs) }
  }

  @Test("a truncated log is refused at the offset where it ends, at every cut")
  func truncatedLogIsRefused() throws {
    let bytes = BuiltLog.standard().bytes
    for cut in [1, 4, 30, 33, bytes.count / 2] {
      let error = #expect(throws: EventLogError.self) { try EventLog(parsing: Array(bytes.dropLast(cut))) }
      guard case .truncated(let offset, _) = error else {
        Issue.record("cut \(cut): \(String(describing: error)) is not a truncation")
        continue
      }
      #expect(offset <= bytes.count - cut)
      #expect(try Self.tpm2Eventlog(Array(bytes.dropLast(cut))).status != 0, "tpm2_eventlog accepted the log cut by \(cut)")
    }
  }

  @Test("an unknown digest algorithm, an absurd event size or PCR index is refused with its offset")
  func malformedFieldsAreRefused() throws {
    let built = BuiltLog.standard()
    let specIDEnd = 32 + 16 + 8 + 4 + 2 * 4 + 1
    // The first TCG_PCR_EVENT2's first algorithm id (after pcrIndex, eventType, count).
    var unknown = built.bytes
    unknown[specIDEnd + 12] = 0x12  // SM3_256, not listed
    unknown[specIDEnd + 13] = 0x00
    #expect(throws: EventLogError.unknownAlgorithm(offset: specIDEnd + 12, id: 0x0012)) { try EventLog(parsing: unknown) }
    var huge = built.bytes
    let sizeAt = specIDEnd + 12 + 2 + 20 + 2 + 32
    huge.replaceSubrange(sizeAt..<sizeAt + 4, with: [0xff, 0xff, 0xff, 0x7f])
    #expect(throws: EventLogError.sizeOutOfBounds(offset: sizeAt, field: "eventSize", size: 0x7fff_ffff, limit: EventLog.maximumEventSize))
    {
      try EventLog(parsing: huge)
    }
    var pcr = built.bytes
    pcr[specIDEnd] = 200
    #expect(throws: EventLogError.pcrOutOfRange(offset: specIDEnd, pcr: 200)) { try EventLog(parsing: pcr) }
    var count = built.bytes
    count[specIDEnd + 8] = 9
    #expect(throws: EventLogError.sizeOutOfBounds(offset: specIDEnd + 8, field: "digest count", size: 9, limit: 2)) {
      try EventLog(parsing: count)
    }
  }

  @Test("a duplicate separator is refused though the log replays")
  func duplicateSeparatorIsRefused() throws {
    var built = BuiltLog.standard()
    built.separator(4)
    let replayed = try EventLog(parsing: built.bytes).verify(pcrs: built.pcrs)
    #expect(throws: BootStateError.duplicateSeparator(pcr: 4, sequence: built.records.count - 1)) { try SecureBootState(replayed) }
  }

  @Test("a missing separator is refused")
  func missingSeparatorIsRefused() throws {
    var built = BuiltLog.standard()
    built.records.removeAll { $0.pcr == 5 && $0.type == 0x4 }
    #expect(throws: BootStateError.missingSeparator(pcr: 5)) {
      try SecureBootState(try EventLog(parsing: built.bytes).verify(pcrs: built.pcrs))
    }
  }

  @Test("a UEFI Debug Mode action in PCR 7 is refused")
  func debugModeIsRefused() throws {
    let built = BuiltLog.standard(debugMode: true)
    #expect(throws: BootStateError.debugMode(sequence: 6)) {
      try SecureBootState(try EventLog(parsing: built.bytes).verify(pcrs: built.pcrs))
    }
  }

  @Test("a variable whose digest is not the hash of its data is refused though the PCR replays")
  func variableDigestMustHashItsData() throws {
    var built = BuiltLog.standard()
    // The firmware measured SecureBoot=0, the log shows SecureBoot=1 with the measured digest.
    built.records[1].sha256 = Array(SHA256.hash(data: BuiltLog.variable(BuiltLog.efiGlobalVariable, "SecureBoot", [0])))
    let replayed = try EventLog(parsing: built.bytes).verify(pcrs: built.pcrs)
    #expect(throws: BootStateError.digestMismatch(sequence: 1, pcr: 7, what: "variable SecureBoot")) { try SecureBootState(replayed) }
  }

  @Test("a SHA-1-only log has no SHA-256 bank, crypto-agile or legacy")
  func sha1OnlyLogHasNoSHA256Bank() throws {
    var agile = BuiltLog.standard()
    agile.banks = [(0x0004, 20)]
    let log = try EventLog(parsing: agile.bytes)
    #expect(throws: EventLogError.noBank(.sha256)) { try log.verify(pcrs: agile.pcrs) }
    // Legacy TCG_PCR_EVENT records: pcrIndex, eventType, SHA-1 digest, eventSize, event.
    let data: [UInt8] = [0, 0]
    let legacy =
      BuiltLog.le(0, 4) + BuiltLog.le(8, 4) + Array(Insecure.SHA1.hash(data: data)) + BuiltLog.le(2, 4) + data
    let parsed = try EventLog(parsing: legacy + legacy)
    #expect(!parsed.cryptoAgile)
    #expect(parsed.events.count == 2)
    #expect(throws: EventLogError.noBank(.sha256)) { try parsed.replay() }
    #expect(try parsed.replay(bank: .sha1).count == 1)
  }

  @Test("a StartupLocality event starts PCR 0 at the locality and is not extended")
  func startupLocalitySetsPCR0() throws {
    var built = BuiltLog.standard()
    built.startupLocality = 3
    let log = try EventLog(parsing: built.bytes)
    #expect(log.events[0].type == .noAction)
    let replayed = try log.verify(pcrs: built.pcrs)
    #expect(replayed.pcrs.contains(0))
    // tpm2_eventlog 5.4 (Debian's) cannot judge this: it ignores StartupLocality and extends the
    // EV_NO_ACTION event's zero digest, which the Platform Firmware Profile says is never
    // extended. Its value is required to be either ours or exactly that one, so a fixed
    // tpm2-tools becomes the judge again.
    var pcr0 = [UInt8](repeating: 0, count: 32)
    for record in [BuiltLog.Record(pcr: 0, type: 3, data: [], sha256: .init(repeating: 0, count: 32), sha1: [])] + built.records
    where record.pcr == 0 {
      pcr0 = Array(SHA256.hash(data: pcr0 + record.sha256))
    }
    #expect([Self.hex(built.pcrs[0]!), Self.hex(pcr0)].contains(try Self.tpm2EventlogReplay(built.bytes)[0] ?? ""))
    var zero = built.pcrs
    zero[0] = BuiltLog.standard().pcrs[0]
    #expect(throws: EventLogError.replayMismatch(pcr: 0, bank: .sha256)) { try log.verify(pcrs: zero) }
  }

  @Test("the composite digest is SHA-256 over the selected values in index order")
  func compositeDigestInIndexOrder() throws {
    let pcrs = BuiltLog.standard().pcrs
    let expected = Array(SHA256.hash(data: pcrs[0]! + pcrs[4]! + pcrs[7]!))
    #expect(PCRComposite.digest(of: pcrs, selection: [7, 0, 4]) == expected)
    #expect(PCRComposite.digest(of: pcrs, selection: [0, 4, 7, 7]) == expected)
    #expect(PCRComposite.digest(of: pcrs, selection: [0, 23]) == nil)
  }
}
