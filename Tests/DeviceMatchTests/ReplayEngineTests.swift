import DeviceMatch
import ProfileJSON
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// The replay engine's handling of the script's deciding entry: the fast path hands it over
/// uncounted, and the reference path parses, decides and counts it, once.
@Suite(.timeLimit(.minutes(10))) struct ReplayEngineTests {
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

  // MARK: Framing

  /// What a replay of `text` gives in one output mode: the report, what was emitted (outcome
  /// and stored index) and the warnings.
  struct Replayed {
    var report: ReplayEngine.Report
    var emitted: [(outcome: Outcome, index: Int?)]
    var warnings: [String]
  }

  enum Mode: String, CaseIterable { case decision, each, summary }

  func replay(_ text: String, mode: Mode, workers: Int = 1, blockSize: Int = 1 << 20) throws -> Replayed {
    var template = Array("/tmp/fr-profile-replay-XXXXXX".utf8CString)
    let fd = mkstemp(&template)
    #expect(fd >= 0)
    unlink(template)
    defer { close(fd) }
    let bytes = Array(text.utf8)
    #expect(write(fd, bytes, bytes.count) == bytes.count)
    #expect(lseek(fd, 0, SEEK_SET) == 0)
    var warnings: [String] = []
    var engine = ReplayEngine(
      matcher: DeviceMatcher(), incoming: try JSONParser.parse(Self.incomingText), each: mode != .decision,
      summary: mode == .summary, workers: workers, warn: { warnings.append($0) })
    engine.blockSize = blockSize
    var emitted: [(outcome: Outcome, index: Int?)] = []
    let report = try engine.run(reader: StoredProfileReader(fileDescriptor: fd), storedName: "stored") { result, _, index in
      emitted.append((result.outcome, index))
    }
    return Replayed(report: report, emitted: emitted, warnings: warnings)
  }

  /// `A` matches the incoming profile (`true`), `B` belongs to another device.
  static let matching = stored[50]
  static let other = stored[0]

  /// A stored array or listing is one JSON text: the script gets its profiles from AM's DAO as
  /// a list of strings and runs `JSON.parse` on each, and when that throws it logs "Error
  /// parsing stored profile" and `continue`s (src/index.js). A file whose framing JSON.parse
  /// would reject (`]` missing, text after it, a missing `,`) is that text: one entry the
  /// script skips. With nothing else stored, no profile has the identifier: unknownDevice —
  /// even though an element read before the break matched. The single-profile layout already
  /// answers so for the same text.
  static let brokenFraming: [(name: String, text: String, message: String)] = [
    ("[A, B", "[\(matching), \(other)", "unexpected end of input in the array"),
    ("[A, B]x", "[\(matching), \(other)]x", "unexpected text after the stored profiles"),
    ("[A", "[\(matching)", "unexpected end of input in the array"),
    ("[A,", "[\(matching),\n", "unexpected end of input in the array"),
    ("[A B]", "[\(matching) \(other)]", "expected ',' or ']'"),
    ("[A, B,]", "[\(matching), \(other),]", "trailing ','"),
    ("[A, B cut short", "[\(matching), \(other.dropLast(9))", "unexpected end of input in the array"),
    ("listing without ]", "{\"result\": [\(matching), \(other)", "unexpected end of input in the result array"),
    ("listing without }", "{\"result\": [\(matching), \(other)], \"resultCount\": 2", "listing object"),
    ("listing, text after it", "{\"result\": [\(matching)], \"resultCount\": 1} x", "unexpected text after"),
  ]

  @Test(
    "a stored array or listing whose framing JSON.parse rejects is one entry the script skips: unknownDevice",
    arguments: Mode.allCases)
  func brokenFramingIsOneSkippedEntry(mode: Mode) throws {
    for broken in Self.brokenFraming {
      let replayed = try replay(broken.text, mode: mode)
      #expect(replayed.report.decision.outcome == .unknownDevice, "\(broken.name) (\(mode))")
      #expect(replayed.report.decisionSource == nil, "\(broken.name) (\(mode))")
      // Nothing of the file is reported: the one result is the script's unknownDevice.
      if mode == .summary {
        #expect(replayed.emitted.isEmpty, "\(broken.name)")
      } else {
        #expect(replayed.emitted.map(\.outcome) == [.unknownDevice], "\(broken.name) (\(mode))")
        #expect(replayed.emitted.map(\.index) == [nil], "\(broken.name) (\(mode))")
      }
      // Counted as what it is: one entry read, skipped as not JSON; no outcome.
      #expect(replayed.report.totals.read == 1, "\(broken.name) (\(mode))")
      #expect(replayed.report.totals.skipped == 1, "\(broken.name) (\(mode))")
      #expect(replayed.report.totals.outcomes.values.allSatisfy { $0 == 0 }, "\(broken.name) (\(mode))")
      #expect(replayed.report.totals.keys.isEmpty, "\(broken.name) (\(mode))")
      #expect(replayed.warnings.count == 1, "\(broken.name) (\(mode)): \(replayed.warnings)")
      #expect(replayed.warnings.first?.contains(broken.message) == true, "\(broken.name): \(replayed.warnings)")
      #expect(replayed.warnings.first?.contains("skipped, as the script does") == true, "\(broken.name)")
    }
  }

  @Test("the same arrays and listings, well framed, are decided by A", arguments: Mode.allCases)
  func wellFramedArraysAreDecided(mode: Mode) throws {
    for text in [
      "[\(Self.matching), \(Self.other)]", "[\(Self.matching), \(Self.other)]\n\n",
      "{\"result\": [\(Self.matching), \(Self.other)], \"resultCount\": 2}\n",
    ] {
      let replayed = try replay(text, mode: mode)
      #expect(replayed.report.decision.outcome == .true, "\(text.prefix(40)) (\(mode))")
      #expect(replayed.report.decision.storedIndex == 0)
      #expect(replayed.warnings.isEmpty)
      if mode == .summary { #expect(replayed.report.totals.read == 2) }
    }
  }

  /// JSON Lines are this repository's own layout (docs/match.md): each line is one entry, as
  /// one element of the DAO's list, so a last line cut mid-object is one entry the script
  /// skips, and the lines before it stand.
  @Test(
    "JSON Lines whose last line is cut mid-object: that line is skipped, the lines before it decide",
    arguments: [(Mode.decision, 1, 1 << 20), (.each, 1, 1 << 20), (.summary, 1, 1 << 20), (.summary, 2, 64)])
  func cutLastLineIsOneSkippedEntry(mode: Mode, workers: Int, blockSize: Int) throws {
    let text = "\(Self.other)\n\(Self.matching)\n\(Self.matching.dropLast(30))"
    let replayed = try replay(text, mode: mode, workers: workers, blockSize: blockSize)
    #expect(replayed.report.decision.outcome == .true)
    #expect(replayed.report.decision.storedIndex == 1)
    if mode == .decision {
      // Each line is framed on its own: the answer stands at line 2, where the script, too,
      // stops (it returns at the first profile with the identifier and never parses the rest).
      #expect(replayed.warnings.isEmpty, "\(replayed.warnings)")
      return
    }
    #expect(replayed.warnings.count == 1, "\(replayed.warnings)")
    #expect(replayed.warnings.first?.hasPrefix("stored:3:") == true, "\(replayed.warnings)")
    #expect(replayed.warnings.first?.contains("stored entry #2 skipped, as the script does") == true)
    if mode == .summary {
      #expect(replayed.report.totals.read == 3)
      #expect(replayed.report.totals.skipped == 1)
      #expect(replayed.report.totals.outcomes[.true] == 1 && replayed.report.totals.outcomes[.unknownDevice] == 1)
    }
  }
}
