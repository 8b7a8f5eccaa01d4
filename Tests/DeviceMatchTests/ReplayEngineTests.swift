import ProfileJSON
import Testing

@testable import DeviceMatch

#if canImport(Glibc)
  import Glibc
#endif

/// The replay engine's handling of the script's deciding entry: the fast path hands it over
/// uncounted, and the reference path parses, decides and counts it, once.
@Suite struct ReplayEngineTests {
  static let incomingText =
    #"{"identifier": "dev", "metadata": {"a": 1, "b": "x", "c": [1, 2]}, "location": {"latitude": 52.52, "longitude": 13.40}}"#

  /// 400 plain stored profiles (all within the fast path): the first 50 belong to another
  /// device, entry 50 is the first with the incoming identifier, later ones alternate.
  static let stored: [String] = (0..<400).map { index in
    let identifier = index < 50 || index % 3 == 0 ? "other" : "dev"
    let (a, c) = index == 50 ? (1, 2) : (index % 4, index % 5)
    let longitude = index % 7 == 0 ? "13.41" : "13.40"
    return #"{"identifier": "\#(identifier)", "metadata": {"a": \#(a), "b": "x", "c": [1, \#(c)]}, "#
      + #""location": {"latitude": 52.52, "longitude": \#(longitude)}, "n": \#(index)}"#
  }

  /// Replays `text` from a temporary file; returns the report and how often each stored
  /// entry was parsed by the reference path.
  func replay(_ text: String, workers: Int, blockSize: Int) throws -> (ReplayEngine.Report, [Int: Int]) {
    var template = Array("/tmp/fr-profile-replay-XXXXXX".utf8CString)
    let fd = mkstemp(&template)
    #expect(fd >= 0)
    unlink(template)
    defer { close(fd) }
    let bytes = Array(text.utf8)
    #expect(write(fd, bytes, bytes.count) == bytes.count)
    #expect(lseek(fd, 0, SEEK_SET) == 0)
    let incoming = try JSONParser.parse(Self.incomingText)
    var engine = ReplayEngine(
      matcher: DeviceMatcher(), incoming: incoming, each: true, summary: true, workers: workers, warn: { _ in })
    engine.blockSize = blockSize
    var parses: [Int: Int] = [:]
    engine.referenceParsed = { parses[$0, default: 0] += 1 }
    let report = try engine.run(reader: StoredProfileReader(fileDescriptor: fd), storedName: "stored") { _, _, _ in }
    return (report, parses)
  }

  /// What the reference path alone gives: the totals and the first entry with the identifier.
  static func reference() throws -> (ReplayTotals, MatchResult) {
    let incoming = try JSONParser.parse(incomingText)
    var totals = ReplayTotals()
    let results = try stored.map { DeviceMatcher().match(incoming: incoming, stored: try JSONParser.parse($0)) }
    for result in results { totals.count(result) }
    totals.read = stored.count
    let index = try #require(results.firstIndex { $0.outcome != .unknownDevice })
    var decision = results[index]
    decision.storedIndex = index
    return (totals, decision)
  }

  @Test(
    "the deciding entry is parsed once, by the reference path, and counted once (serial and parallel paths)",
    arguments: [
      (layout: "array", workers: 1, blockSize: 1 << 20), (layout: "jsonl", workers: 1, blockSize: 1 << 20),
      (layout: "jsonl", workers: 2, blockSize: 700), (layout: "jsonl", workers: 8, blockSize: 3000),
    ])
  func decidingEntryIsParsedOnce(layout: String, workers: Int, blockSize: Int) throws {
    let text =
      layout == "array" ? "[\n" + Self.stored.joined(separator: ",\n") + "\n]\n" : Self.stored.joined(separator: "\n") + "\n"
    let (report, parses) = try replay(text, workers: workers, blockSize: blockSize)
    let (totals, decision) = try Self.reference()
    #expect(decision.storedIndex == 50 && decision.outcome == .true)

    #expect(report.decision.storedIndex == 50)
    #expect(report.decision.outcome == decision.outcome)
    #expect(report.decision.metadata?.mismatches.count == decision.metadata?.mismatches.count)
    #expect(parses[50] == 1, "the deciding entry was parsed \(parses[50] ?? 0) times")
    #expect(parses.values.allSatisfy { $0 == 1 }, "entries parsed more than once: \(parses.filter { $0.value > 1 })")
    if workers == 1 && blockSize == 1 << 20 {
      // One block: only the deciding entry leaves the fast path.
      #expect(Array(parses.keys) == [50])
    }
    // Every entry counted exactly once, the deciding one included.
    #expect(report.totals.read == totals.read)
    #expect(report.totals.outcomes.filter { $0.value > 0 } == totals.outcomes.filter { $0.value > 0 })
    #expect(report.totals.keys == totals.keys)
  }

  @Test("handing off: an entry with the incoming identifier is left uncounted; others are counted")
  func handOffLeavesMatchesUncounted() throws {
    let incoming = try JSONParser.parse(Self.incomingText)
    let fast = FastMatcher(matcher: DeviceMatcher(), incoming: incoming)
    var totals = FastMatcher.Totals()
    func count(_ text: String, handingOff: Bool) -> FastMatcher.Counted {
      Array(text.utf8).withUnsafeBufferPointer { fast.count($0, into: &totals, handingOffMatch: handingOff) }
    }
    #expect(count(Self.stored[50], handingOff: true) == .identifierMatches)
    #expect(totals.outcomes == [0, 0, 0, 0])
    #expect(count(Self.stored[0], handingOff: true) == .counted(.unknownDevice))
    #expect(count(Self.stored[50], handingOff: false) == .counted(.true))
    #expect(totals.outcomes == [1, 0, 1, 0])
    // A duplicate identifier (the last one wins) or broken text is not a verdict: the general path decides.
    #expect(count(#"{"identifier": "dev", "identifier": "other", "metadata": {}}"#, handingOff: true) == .general)
    #expect(count(#"{"identifier": "dev", "metadata": {"a": 1} "#, handingOff: true) == .general)
  }
}
