import FuzzSupport
import TPMAttestation
import TPMProtocol

// Fuzz target: the firmware event log a device sends (TPMAttestation/BootLog), any bytes.
// Invariants: no crash on any input; a parsed log's events lie inside the input in order, carry
// digests of listed algorithms only, of the listed sizes; every bank it lists replays; a log
// verified against its own replay gives its events back, and reading Secure Boot from it either
// answers or throws a BootStateError, never crashes.
#if canImport(Glibc)
  import Glibc
#endif

func fuzzEventLog(_ input: UnsafeBufferPointer<UInt8>) {
  let bytes = Array(input)
  guard let log = try? EventLog(parsing: bytes) else { return }
  var previous = -1
  for event in log.events {
    fuzzCheck(event.offset > previous && event.offset < bytes.count, "event \(event.sequence) at offset \(event.offset) out of order")
    previous = event.offset
    fuzzCheck(event.data.count <= EventLog.maximumEventSize, "an event of \(event.data.count) bytes")
    for (id, digest) in event.digests {
      let listed = log.algorithms.first { $0.id == id }
      fuzzCheck(listed?.digestSize == digest.count, "a digest of algorithm \(id) with \(digest.count) bytes")
    }
  }
  for bank in DigestAlgorithm.allCases where log.hasBank(bank) {
    guard let replay = try? log.replay(bank: bank) else { continue }
    var pcrs = replay.filter { $0.key < EventLog.pcrCount }
    for pcr in 0...7 where pcrs[pcr] == nil { pcrs[pcr] = [UInt8](repeating: 0, count: bank.digestSize) }
    guard let replayed = try? log.verify(pcrs: pcrs, bank: bank) else {
      // A PCR 0 that starts at a locality and has no extends is the only value not filled in right.
      fuzzCheck(replay[0] == nil, "a log does not verify against its own replay")
      continue
    }
    fuzzCheck(replayed.events.allSatisfy { pcrs[$0.pcr] != nil }, "an event of a PCR not verified")
    _ = try? SecureBootState(replayed)
  }
}

@main enum Main {
  static func main() { runTarget(name: "fuzz-event-log", fuzzEventLog) }
}

#if Fuzzing
  // A debug build renames the executable's `main` (SwiftPM's testable entry point), so
  // libFuzzer's own `main` runs and calls this directly.
  @_cdecl("LLVMFuzzerTestOneInput") func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    fuzzEventLog(UnsafeBufferPointer(start: data, count: size))
    return 0
  }
#endif
