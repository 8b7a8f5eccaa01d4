import Crypto

/// A PCR bank's hash. Only these can be replayed; a log may list others (SM3…), which are parsed
/// and carried but not replayed.
public enum DigestAlgorithm: UInt16, Sendable, CaseIterable, CustomStringConvertible {
  case sha1 = 0x0004
  case sha256 = 0x000B
  case sha384 = 0x000C
  case sha512 = 0x000D

  public var digestSize: Int {
    switch self {
    case .sha1: 20
    case .sha256: 32
    case .sha384: 48
    case .sha512: 64
    }
  }

  public func hash(_ bytes: [UInt8]) -> [UInt8] {
    switch self {
    case .sha1: Array(Insecure.SHA1.hash(data: bytes))
    case .sha256: Array(SHA256.hash(data: bytes))
    case .sha384: Array(SHA384.hash(data: bytes))
    case .sha512: Array(SHA512.hash(data: bytes))
    }
  }

  public var description: String {
    switch self {
    case .sha1: "sha1"
    case .sha256: "sha256"
    case .sha384: "sha384"
    case .sha512: "sha512"
    }
  }
}

/// The events of the PCRs whose replay equalled the values given: the only events a verifier may
/// read (SecureBootState.swift). Events of PCRs that were not given are not here.
public struct ReplayedLog: Sendable, Equatable {
  public var bank: DigestAlgorithm
  /// The PCRs replayed and found equal.
  public var pcrs: Set<Int>
  /// Their events, in log order, EV_NO_ACTION events included (they are logged, not extended).
  public var events: [EventLog.Event]

  /// This event's digest in the replayed bank (present: replay required it).
  public func digest(_ event: EventLog.Event) -> [UInt8] { event.digests[bank.rawValue] ?? [] }
}

extension EventLog {
  /// The value PCR `pcr` starts from after TPM2_Startup: zeros, except PCR 0 when the log has a
  /// StartupLocality event (its last byte is the locality TPM2_Startup came from, e.g. 3 with
  /// Intel TXT), and PCRs 17–22 (the dynamic-launch PCRs, all ones until a DRTM resets them).
  func initialValue(pcr: Int, bank: DigestAlgorithm) -> [UInt8] {
    if (17...22).contains(pcr) { return [UInt8](repeating: 0xFF, count: bank.digestSize) }
    var value = [UInt8](repeating: 0, count: bank.digestSize)
    if pcr == 0, let locality = startupLocality { value[value.count - 1] = locality }
    return value
  }

  /// "StartupLocality\0" and one byte, as an EV_NO_ACTION event in PCR 0 (PC Client Platform
  /// Firmware Profile, section 10.4.5.3).
  var startupLocality: UInt8? {
    let signature = Array("StartupLocality".utf8) + [0]
    let event = events.first { $0.pcr == 0 && $0.type == .noAction && $0.data.count == 17 && $0.data.starts(with: signature) }
    return event?.data.last
  }

  /// Whether events of this log carry digests of `bank`.
  public func hasBank(_ bank: DigestAlgorithm) -> Bool { algorithms.contains { $0.id == bank.rawValue } }

  /// What each PCR holds after the log's extends, for every PCR the log extends (EV_NO_ACTION
  /// events are not extended): new = H(old ‖ event digest).
  public func replay(bank: DigestAlgorithm = .sha256) throws(EventLogError) -> [Int: [UInt8]] {
    guard hasBank(bank) else { throw .noBank(bank) }
    var values: [Int: [UInt8]] = [:]
    for event in events where event.type != .noAction {
      guard let digest = event.digests[bank.rawValue] else { throw .missingDigest(sequence: event.sequence, pcr: event.pcr, bank: bank) }
      let old = values[event.pcr] ?? initialValue(pcr: event.pcr, bank: bank)
      values[event.pcr] = bank.hash(old + digest)
    }
    return values
  }

  /// Replays the log and requires each given PCR value to equal its replay (a PCR the log never
  /// extends must still hold its initial value: an extend outside the log is a mismatch).
  /// Returns the events of exactly those PCRs.
  public func verify(pcrs given: [Int: [UInt8]], bank: DigestAlgorithm = .sha256) throws(EventLogError) -> ReplayedLog {
    let replayed = try replay(bank: bank)
    for (pcr, value) in given.sorted(by: { $0.key < $1.key }) {
      guard value.count == bank.digestSize else { throw .pcrValueSize(pcr: pcr, size: value.count, bank: bank) }
      guard (0..<Self.pcrCount).contains(pcr), value == replayed[pcr] ?? initialValue(pcr: pcr, bank: bank) else {
        throw .replayMismatch(pcr: pcr, bank: bank)
      }
    }
    return ReplayedLog(bank: bank, pcrs: Set(given.keys), events: events.filter { given[$0.pcr] != nil })
  }
}

/// TPM2_Quote's pcrDigest: the hash of the selected PCRs' values concatenated in ascending index
/// order (TPM 2.0 Part 1, 17.6.2 / Part 3, TPM2_Quote), in the quote key's hash, which for our
/// sha256 bank and SHA-256 AK is SHA-256.
public enum PCRComposite {
  /// Nil when a selected PCR has no value.
  public static func digest(of values: [Int: [UInt8]], selection: [Int], hash: DigestAlgorithm = .sha256) -> [UInt8]? {
    var concatenated: [UInt8] = []
    for pcr in Set(selection).sorted() {
      guard let value = values[pcr] else { return nil }
      concatenated += value
    }
    return hash.hash(concatenated)
  }
}
