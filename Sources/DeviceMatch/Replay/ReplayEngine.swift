import Dispatch
import ProfileJSON
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// The replay engine behind `fr-profile match` (package-level: only the executable uses it).
/// Runs the incoming profile against a stream of stored profiles: the script's decision (the
/// first stored profile with the same identifier), and with `each`, every such profile; with
/// `summary`, totals counted by the fast path where it answers (`FastMatcher`), in parallel
/// over JSON Lines, and by the reference `DeviceMatcher` everywhere else.
///
/// It prints nothing: results go to `emit` and warnings to `warn`, so the executable owns
/// the wording and the output stream.
package struct ReplayEngine {
  package let matcher: DeviceMatcher
  package let incoming: JSON?
  package let each: Bool
  package let summary: Bool
  /// Workers for the parallel summary (default: the online cores, at most 8).
  package var workers: Int
  /// Bytes per worker block for the parallel summary (tests set it small to cross blocks).
  package var blockSize = 1 << 20
  package let warn: (String) -> Void
  /// Test hook: called with a stored entry's index each time the reference path parses it.
  package var referenceParsed: ((_ index: Int) -> Void)?

  package init(
    matcher: DeviceMatcher, incoming: JSON?, each: Bool, summary: Bool, workers: Int? = nil,
    warn: @escaping (String) -> Void
  ) {
    self.matcher = matcher
    self.incoming = incoming
    self.each = each
    self.summary = summary
    self.workers = workers ?? max(1, min(8, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))))
    self.warn = warn
  }

  /// At most this many "not JSON" warnings are printed one by one.
  static let warningLimit = 20

  package struct Report {
    package var decision = MatchResult(outcome: .unknownDevice, identifierMatches: false)
    package var decisionSource: String?
    package var totals = ReplayTotals()
  }

  /// One result for the output: the comparison, where the stored profile is, its position.
  package typealias Emit = (_ result: MatchResult, _ source: String?, _ index: Int?) throws -> Void

  /// Replays every stored entry of `reader`. `emit` gets the deciding result (and with
  /// `each`, every result with the identifier; nothing with `summary`).
  ///
  /// A stored array or listing is one JSON text, like the single profile: until its framing
  /// is validated to the end nothing read from it stands. When the framing breaks (`]` or `,`
  /// missing, text after the end) the file is what `JSON.parse` rejects, one entry the script
  /// skips: read 1, skipped 1, no profile with the identifier (`unknownDevice`), whatever its
  /// elements before the break gave. JSON Lines are framed line by line, so each line stands
  /// on its own and the first with the identifier still decides at once.
  package func run(reader: StoredProfileReader, storedName: String, emit: Emit) throws -> Report {
    var report = Report()
    guard let incoming else {
      // The script returns before it looks at the stored profiles.
      if !summary && !each { try emit(report.decision, nil, nil) }
      return report
    }
    let layout: StoredLayout
    do {
      layout = try reader.detectLayout()
    } catch {
      warn("\(storedName):\(error.line):\(error.column): \(error.message); no further stored profiles read")
      report.totals.unreadable = true
      if !summary { try emit(report.decision, nil, nil) }
      return report
    }
    let fast = summary ? FastMatcher(matcher: matcher, incoming: incoming) : nil
    if let fast, fast.isEnabled, layout == .jsonLines {
      try parallelSummary(reader: reader, storedName: storedName, incoming: incoming, report: &report)
      return report
    }
    // Results and warnings of an array or listing are held until its end is reached. `--each`
    // prints one result per profile with the identifier, which could be many: for a regular
    // file its framing is checked first, in one structural pass, so they need not be held.
    var framed = layout == .array || layout == .listing
    if framed && each && !summary, let ahead = reader.lookahead() {
      do {
        while try ahead.next() != nil {}
        framed = false
      } catch let error where error.kind == .framing {
        return try notJSON(error, storedName: storedName, emit: emit)
      } catch {
        // Unreadable ahead: hold, and let the replay itself meet the error.
      }
    }
    var held: [(result: MatchResult, source: String, index: Int)] = []
    var heldWarnings: [String] = []
    func note(_ message: String) {
      if framed { heldWarnings.append(message) } else { warn(message) }
    }

    var fastTotals = FastMatcher.Totals()
    var decided = false
    var index = -1
    var skippedWarnings = 0
    while true {
      let entry: StoredEntryText?
      do {
        entry = try reader.next()
      } catch {
        if framed && error.kind == .framing { return try notJSON(error, storedName: storedName, emit: emit) }
        note("\(storedName):\(error.line):\(error.column): \(error.message); no further stored profiles read")
        report.totals.unreadable = true
        break
      }
      guard let entry else { break }
      index += 1
      report.totals.read += 1
      // Decided, but the framing is still to be read to its end.
      if decided && !each { continue }
      if entry.oversize {
        report.totals.skipped += 1
        report.totals.oversize += 1
        note(Self.oversizeWarning(storedName, entry.line, entry.column, index))
        continue
      }

      // The fast path answers the common case (a plain object profile) without building
      // a tree; anything unusual falls back to the general path, which is the reference.
      // Until the script's answer is decided, an entry whose identifier matches is handed
      // over uncounted: the general path decides, explains and counts it, parsing it once.
      if let fast, case .counted = fast.count(entry.bytes, into: &fastTotals, handingOffMatch: !decided) { continue }

      let stored: JSON
      switch referenceParse(
        entry.bytes, index: index, unwrapString: entry.isArrayElement, line: entry.line, column: entry.column,
        offset: entry.offset)
      {
      case .success(let value): stored = value
      case .failure(let error):
        report.totals.skipped += 1
        if skippedWarnings < Self.warningLimit {
          note("\(storedName):\(error.line):\(error.column): \(error.message) (stored entry #\(index) skipped, as the script does)")
        }
        skippedWarnings += 1
        continue
      }
      var result = matcher.match(incoming: incoming, stored: stored)
      result.storedIndex = index
      let source = "\(storedName):\(entry.line):\(entry.column)"
      report.totals.count(result)
      if !decided && result.outcome != .unknownDevice {
        decided = true
        report.decision = result
        report.decisionSource = source
        if !each && !framed {
          try emit(result, source, index)
          return report
        }
      }
      if each && !summary && result.outcome != .unknownDevice {
        if framed { held.append((result, source, index)) } else { try emit(result, source, index) }
      }
    }
    // The end of the file: what was held stands.
    for message in heldWarnings { warn(message) }
    if let fast { report.totals.merge(fastTotals, names: fast.keyNames) }
    if skippedWarnings > Self.warningLimit {
      warn("\(storedName): \(skippedWarnings - Self.warningLimit) more stored entries were not JSON and were skipped")
    }
    if decided && !each { try emit(report.decision, report.decisionSource, report.decision.storedIndex) }
    for result in held { try emit(result.result, result.source, result.index) }
    if !summary && !decided { try emit(report.decision, nil, nil) }
    return report
  }

  /// A stored array or listing whose framing `JSON.parse` would reject: the whole file is one
  /// stored entry that is not JSON, which the script skips (src/index.js: `catch` … `continue`),
  /// so no stored profile decides.
  func notJSON(_ error: StoredReadError, storedName: String, emit: Emit) throws -> Report {
    var report = Report()
    report.totals.read = 1
    report.totals.skipped = 1
    warn(
      "\(storedName):\(error.line):\(error.column): \(error.message) (the stored file is not JSON, so it is one "
        + "stored entry, #0, skipped, as the script does)")
    if !summary { try emit(report.decision, nil, nil) }
    return report
  }

  /// The reference path's reading of stored entry `index`: every parse of a stored entry in
  /// the replay goes through here (and `referenceParsed` sees it).
  func referenceParse(
    _ bytes: UnsafeBufferPointer<UInt8>, index: Int, unwrapString: Bool = false, line: Int, column: Int, offset: Int
  ) -> Result<JSON, JSONParseError> {
    referenceParsed?(index)
    return ProfileText.parse(bytes, unwrapString: unwrapString, line: line, column: column, offset: offset)
  }

  static func oversizeWarning(_ storedName: String, _ line: Int, _ column: Int, _ index: Int) -> String {
    "\(storedName):\(line):\(column): stored entry #\(index) is larger than \(ProfileLimits.maxProfileBytes >> 20) MiB, "
      + "the limit for one profile; skipped (the script would not see it either)"
  }
}

/// One core's share of a parallel replay: its fast path, its block of lines and what it
/// found, behind a lock that each side takes once per round (the driver to fill the block
/// and to read the results, one `concurrentPerform` iteration to match it). `FastMatcher` is
/// not `Sendable` (it interns key names and owns scratch buffers), so it lives inside the lock.
final class ReplayWorker: Sendable {
  struct State {
    let fast: FastMatcher
    var block: [UInt8] = []
    var totals = FastMatcher.Totals()
    var report = FastMatcher.BlockReport()
    var start = (line: 1, offset: 0)
    var oversize = false
  }

  let state: Mutex<State>

  init(_ fast: sending FastMatcher) { state = Mutex(State(fast: fast)) }
}

extension ReplayEngine {
  /// `--summary` over JSON Lines on every core: blocks of whole lines are matched by the fast
  /// path in parallel; entries it leaves over go through the general path here, in order,
  /// so warnings and the script's decision (the first stored profile with the identifier)
  /// come out exactly as in the serial path. Until the decision is made, each block's first
  /// entry with the identifier is left over too, so the general path decides and counts it.
  func parallelSummary(reader: StoredProfileReader, storedName: String, incoming: JSON, report: inout Report) throws {
    let workers = (0..<max(1, self.workers)).map { _ in ReplayWorker(FastMatcher(matcher: matcher, incoming: incoming)) }
    let blockSize = min(max(1, blockSize), 8 << 20)
    var decided = false
    var base = 0
    var skippedWarnings = 0
    while true {
      var filled = 0
      do {
        for worker in workers {
          let more = try worker.state.withLock { (state) throws(StoredReadError) -> Bool in
            guard let start = try reader.nextLines(into: &state.block, limit: blockSize) else { return false }
            state.start = (start.line, start.offset)
            state.oversize = start.oversize
            return true
          }
          guard more else { break }
          filled += 1
        }
      } catch {
        warn("\(storedName):\(error.line):\(error.column): \(error.message); no further stored profiles read")
        report.totals.unreadable = true
      }
      if filled == 0 { break }
      let handingOffMatch = !decided
      DispatchQueue.concurrentPerform(iterations: filled) { index in
        workers[index].state.withLock { state in
          let fast = state.fast
          var totals = state.totals
          state.report = state.block.withUnsafeBufferPointer {
            fast.scanLines($0, totals: &totals, handingOffMatch: handingOffMatch)
          }
          state.totals = totals
        }
      }
      for worker in workers.prefix(filled) {
        // The block's bytes and findings, taken out under the lock (the array is shared, not
        // copied); the general path then runs on them unlocked.
        let (bytes, block, start, oversize) = worker.state.withLock { ($0.block, $0.report, $0.start, $0.oversize) }
        report.totals.read += block.entries
        for entry in block.deferred {
          if oversize {
            // The block is the placeholder of one line read past for its size.
            report.totals.skipped += 1
            report.totals.oversize += 1
            warn(Self.oversizeWarning(storedName, start.line, 1, base + entry.ordinal))
            continue
          }
          let line = start.line + entry.line
          let parsed = bytes.withUnsafeBufferPointer { bytes in
            referenceParse(
              UnsafeBufferPointer(rebasing: bytes[entry.offset..<entry.offset + entry.length]),
              index: base + entry.ordinal, line: line, column: entry.column, offset: start.offset + entry.offset)
          }
          let stored: JSON
          switch parsed {
          case .success(let value): stored = value
          case .failure(let error):
            report.totals.skipped += 1
            if skippedWarnings < Self.warningLimit {
              warn(
                "\(storedName):\(error.line):\(error.column): \(error.message) (stored entry #\(base + entry.ordinal) skipped, as the script does)"
              )
            }
            skippedWarnings += 1
            continue
          }
          var result = matcher.match(incoming: incoming, stored: stored)
          result.storedIndex = base + entry.ordinal
          report.totals.count(result)
          if !decided && result.outcome != .unknownDevice {
            decided = true
            report.decision = result
            report.decisionSource = "\(storedName):\(line):\(entry.column)"
          }
        }
        base += block.entries
      }
      if report.totals.unreadable { break }
    }
    for worker in workers {
      worker.state.withLock { report.totals.merge($0.totals, names: $0.fast.keyNames) }
    }
    if skippedWarnings > Self.warningLimit {
      warn("\(storedName): \(skippedWarnings - Self.warningLimit) more stored entries were not JSON and were skipped")
    }
  }
}

/// Totals over all stored profiles, for `--summary`.
package struct ReplayTotals {
  package var read = 0
  /// Entries skipped: not JSON, or (also counted in `oversize`) over the size limit.
  package var skipped = 0
  package var oversize = 0
  package var unreadable = false
  package var outcomes: [Outcome: Int] = [:]
  /// Mismatching leaf keys and how many compared profiles mismatched on them (once per
  /// profile), keyed by code units (canonically equivalent names stay apart).
  package var keys: [CodeUnitKey: Int] = [:]

  package init() {}

  package mutating func count(_ result: MatchResult) {
    outcomes[result.outcome, default: 0] += 1
    guard let metadata = result.metadata else { return }
    add(metadata.mismatches.map { $0.key ?? "undefined" })
  }

  mutating func merge(_ fast: FastMatcher.Totals, names: [String]) {
    for outcome in Outcome.allCases { outcomes[outcome, default: 0] += fast[outcome] }
    for (id, count) in fast.keyCounts.enumerated() where count > 0 {
      keys[CodeUnitKey(names[id]), default: 0] += count
    }
  }

  /// Counts each key once per profile.
  mutating func add(_ mismatched: [String]) {
    for (position, key) in mismatched.enumerated()
    where !mismatched[..<position].contains(where: { sameCodeUnits($0, key) }) {
      keys[CodeUnitKey(key), default: 0] += 1
    }
  }

  package var compared: Int { (outcomes[.true] ?? 0) + (outcomes[.false] ?? 0) + (outcomes[.error] ?? 0) }

  /// The mismatching keys, most frequent first; equal counts in code-unit (UTF-8 byte) order
  /// of the key, so the ranking never depends on which worker saw a key first.
  package var rankedKeys: [(key: String, count: Int)] {
    keys.map { ($0.key.text, $0.value) }.sorted { a, b in
      a.1 != b.1 ? a.1 > b.1 : a.0.utf8.lexicographicallyPrecedes(b.0.utf8)
    }
  }
}

/// A dictionary key compared by code units (JavaScript's string equality), not by Swift's
/// canonical equivalence.
package struct CodeUnitKey: Hashable, Sendable {
  package let text: String
  package init(_ text: String) { self.text = text }
  package static func == (a: Self, b: Self) -> Bool { sameCodeUnits(a.text, b.text) }
  package func hash(into hasher: inout Hasher) {
    hasher.combine(text.utf8.count)
    for byte in text.utf8 { hasher.combine(byte) }
  }
}
