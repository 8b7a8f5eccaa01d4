import Crypto
import Foundation
import TPMAttestation
import TPMProtocol
import TestSupport
import Testing

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

  @Test("variable names compare by UTF-16 code units: \"P\\u{212A}\" (KELVIN SIGN) is not PK, \"\\u{212A}EK\" not KEK")
  func variableNamesCompareByCodeUnits() throws {
    // Swift's String == says "P\u{212A}" == "PK" (U+212A is canonically equivalent to "K"); the AM
    // script compares code units, and so must this verifier.
    #expect("P\u{212A}" == "PK")
    var kelvinPK = BuiltLog.standard()
    var variable = BuiltLog()
    variable.driverConfig(BuiltLog.efiGlobalVariable, "P\u{212A}", BuiltLog.signatureList("platform key"))
    kelvinPK.records[2] = variable.records[0]  // PK's event
    let error = #expect(throws: BootStateError.self) {
      try SecureBootState(try EventLog(parsing: kelvinPK.bytes).verify(pcrs: kelvinPK.pcrs))
    }
    guard let error, error.code == .unexpectedVariable, let name = error.name, let sequence = error.sequence else {
      Issue.record("\(String(describing: error)) is not an unexpected variable")
      return
    }
    #expect(Array(name.utf16) == [0x50, 0x212A] && sequence == 2)
    // After the separator any variable but the five may be measured (shim's SbatLevel): one
    // named "\u{212A}EK" is such a variable, not KEK measured again.
    var kelvinKEK = BuiltLog.standard()
    kelvinKEK.driverConfig(BuiltLog.efiGlobalVariable, "\u{212A}EK", [1])
    let state = try SecureBootState(try EventLog(parsing: kelvinKEK.bytes).verify(pcrs: kelvinKEK.pcrs))
    #expect(state.enabled)
    #expect(state.variablesAfterSeparator.map { Array($0.utf16) } == [[0x212A, 0x45, 0x4B]])
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
      guard let error, error.code == .truncated, let offset = error.offset else {
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

  @Test("the log's bounds: 4096 events, 64 KiB an event, 512 KiB a log are parsed; one past each is refused naming it")
  func boundsAreRefusedByName() throws {
    #expect(EventLog.maximumEvents == 4096 && EventLog.maximumEventSize == 65536 && EventLog.maximumLogSize == 524288)
    // EV_NO_ACTION records in PCR 0: 72 bytes with SHA-1 and SHA-256 digests, then the data.
    func noAction(_ size: Int) -> BuiltLog.Record {
      BuiltLog.Record(
        pcr: 0, type: 0x3, data: .init(repeating: 0, count: size), sha256: .init(repeating: 0, count: 32),
        sha1: .init(repeating: 0, count: 20))
    }
    let specID = BuiltLog().bytes.count
    var events = BuiltLog()
    events.records = Array(repeating: noAction(0), count: EventLog.maximumEvents)
    #expect(try EventLog(parsing: events.bytes).events.count == EventLog.maximumEvents)
    events.records.append(noAction(0))
    let tooMany = EventLogError.tooManyEvents(offset: specID + 72 * EventLog.maximumEvents, limit: EventLog.maximumEvents)
    #expect(throws: tooMany) { try EventLog(parsing: events.bytes) }
    #expect(tooMany.description.contains("beyond its bound of 4096 events"))

    var large = BuiltLog()
    large.records = [noAction(EventLog.maximumEventSize)]
    #expect(try EventLog(parsing: large.bytes).events[0].data.count == EventLog.maximumEventSize)
    large.records = [noAction(EventLog.maximumEventSize + 1)]
    #expect(throws: EventLogError.sizeOutOfBounds(offset: specID + 68, field: "eventSize", size: 65537, limit: 65536)) {
      try EventLog(parsing: large.bytes)
    }

    // Eight full events and one that makes the log exactly 512 KiB.
    var log = BuiltLog()
    log.records = Array(repeating: noAction(EventLog.maximumEventSize), count: 7)
    log.records.append(noAction(EventLog.maximumLogSize - specID - 7 * (72 + EventLog.maximumEventSize) - 72))
    #expect(log.bytes.count == EventLog.maximumLogSize)
    #expect(try EventLog(parsing: log.bytes).events.count == 8)
    #expect(throws: EventLogError.logTooLarge(size: 524289, limit: 524288)) { try EventLog(parsing: log.bytes + [0]) }
    #expect(EventLogError.logTooLarge(size: 524289, limit: 524288).description.contains("beyond its bound of 524288 bytes"))
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
