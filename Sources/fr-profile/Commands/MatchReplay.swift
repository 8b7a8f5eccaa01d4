#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif
import Dispatch
import DeviceMatch
import ProfileCLI
import ProfileJSON

/// Runs the incoming profile against a stream of stored profiles: the script's decision (the
/// first stored profile with the same identifier), and with `each`, every such profile.
struct Replay {
  let matcher: DeviceMatcher
  let incoming: JSON?
  let each: Bool
  let summary: Bool
  let configSource: String

  /// At most this many "not JSON" warnings are printed one by one.
  static let warningLimit = 20

  struct Report {
    var decision = MatchResult(outcome: .unknownDevice, identifierMatches: false)
    var decisionSource: String?
    var totals = Totals()
  }

  func run(reader: StoredProfileReader, storedName: String, output: inout Output) throws -> Report {
    var report = Report()
    guard let incoming else {
      // The script returns before it looks at the stored profiles.
      if summary {
        output.summary(report.totals, decision: report.decision, decisionSource: nil)
      } else if !each {
        output.result(report.decision, source: nil, index: nil, config: configSource, incoming: nil)
      }
      return report
    }
    let fast = summary ? FastMatcher(matcher: matcher, incoming: incoming) : nil
    if let fast, fast.isEnabled {
      let layout: StoredLayout
      do {
        layout = try reader.detectLayout()
      } catch {
        warn("\(storedName):\(error.line):\(error.column): \(error.message); no further stored profiles read")
        report.totals.unreadable = true
        output.summary(report.totals, decision: report.decision, decisionSource: nil)
        return report
      }
      if layout == .jsonLines {
        try parallelSummary(reader: reader, storedName: storedName, incoming: incoming, report: &report)
        output.summary(report.totals, decision: report.decision, decisionSource: report.decisionSource)
        return report
      }
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
        warn("\(storedName):\(error.line):\(error.column): \(error.message); no further stored profiles read")
        report.totals.unreadable = true
        break
      }
      guard let entry else { break }
      index += 1
      report.totals.read += 1

      // The fast path answers the common case (a plain object profile) without building
      // a tree; anything unusual falls back to the general path, which is the reference.
      if let fast, let quick = fast.count(entry.bytes, into: &fastTotals) {
        // The deciding profile gets the general path's full explanation (the fast path
        // validated it, so it parses).
        if !decided && quick != .unknownDevice,
          case .success(let stored) = ProfileText.parse(entry.bytes, unwrapString: entry.isArrayElement)
        {
          decided = true
          report.decision = matcher.match(incoming: incoming, stored: stored)
          report.decision.storedIndex = index
          report.decisionSource = "\(storedName):\(entry.line):\(entry.column)"
        }
        continue
      }

      let stored: JSON
      switch ProfileText.parse(
        entry.bytes, unwrapString: entry.isArrayElement, line: entry.line, column: entry.column, offset: entry.offset) {
      case .success(let value): stored = value
      case .failure(let error):
        report.totals.skipped += 1
        if skippedWarnings < Self.warningLimit {
          warn("\(storedName):\(error.line):\(error.column): \(error.message) (stored entry #\(index) skipped, as the script does)")
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
        if !each {
          output.result(result, source: source, index: index, config: configSource, incoming: incoming)
          return report
        }
      }
      if each && !summary && result.outcome != .unknownDevice {
        output.result(result, source: source, index: index, config: configSource, incoming: incoming)
      }
    }
    if let fast { report.totals.merge(fastTotals, names: fast.keyNames) }
    if skippedWarnings > Self.warningLimit {
      warn("\(storedName): \(skippedWarnings - Self.warningLimit) more stored entries were not JSON and were skipped")
    }
    if summary {
      output.summary(report.totals, decision: report.decision, decisionSource: report.decisionSource)
    } else if !decided {
      output.result(report.decision, source: nil, index: nil, config: configSource, incoming: incoming)
    }
    return report
  }
}

/// One core's share of a parallel replay.
final class ReplayWorker: @unchecked Sendable {
  let fast: FastMatcher
  var block: [UInt8] = []
  var totals = FastMatcher.Totals()
  var report = FastMatcher.BlockReport()
  var start = (line: 1, offset: 0)

  init(_ fast: FastMatcher) { self.fast = fast }
}

extension Replay {
  /// `--summary` over JSON Lines on every core: blocks of whole lines are matched by the fast
  /// path in parallel; entries it leaves over go through the general path here, in order,
  /// so warnings and the script's decision (the first stored profile with the identifier)
  /// come out exactly as in the serial path.
  func parallelSummary(reader: StoredProfileReader, storedName: String, incoming: JSON, report: inout Report) throws {
    let cores = max(1, min(8, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))))
    let workers = (0..<cores).map { _ in ReplayWorker(FastMatcher(matcher: matcher, incoming: incoming)) }
    // Block size per core; FR_PROFILE_MATCH_BLOCK (bytes) lets tests cross block boundaries.
    var blockSize = 1 << 20
    if let text = getenv("FR_PROFILE_MATCH_BLOCK"), let size = Int(String(cString: text)), size > 0 { blockSize = min(size, 8 << 20) }
    var decided = false
    var base = 0
    var skippedWarnings = 0
    while true {
      var filled = 0
      do {
        for worker in workers {
          guard let start = try reader.nextLines(into: &worker.block, limit: blockSize) else { break }
          worker.start = start
          filled += 1
        }
      } catch {
        warn("\(storedName):\(error.line):\(error.column): \(error.message); no further stored profiles read")
        report.totals.unreadable = true
      }
      if filled == 0 { break }
      DispatchQueue.concurrentPerform(iterations: filled) { index in
        let worker = workers[index]
        worker.block.withUnsafeBufferPointer { worker.report = worker.fast.scanLines($0, totals: &worker.totals) }
      }
      for worker in workers.prefix(filled) {
        let block = worker.report
        report.totals.read += block.entries
        func source(_ entry: FastMatcher.Deferred) -> String {
          "\(storedName):\(worker.start.line + entry.line):\(entry.column)"
        }
        func general(_ entry: FastMatcher.Deferred) -> MatchResult? {
          worker.block.withUnsafeBufferPointer { bytes in
            let text = UnsafeBufferPointer(rebasing: bytes[entry.offset..<entry.offset + entry.length])
            switch ProfileText.parse(
              text, line: worker.start.line + entry.line, column: entry.column, offset: worker.start.offset + entry.offset)
            {
            case .success(let stored): return matcher.match(incoming: incoming, stored: stored)
            case .failure(let error):
              report.totals.skipped += 1
              if skippedWarnings < Self.warningLimit {
                warn("\(storedName):\(error.line):\(error.column): \(error.message) (stored entry #\(base + entry.ordinal) skipped, as the script does)")
              }
              skippedWarnings += 1
              return nil
            }
          }
        }
        /// The first entry the fast path decided, explained by the general path (the fast
        /// path validated it, so it parses).
        func decide(_ first: FastMatcher.Deferred) {
          let parsed = worker.block.withUnsafeBufferPointer { bytes in
            ProfileText.parse(UnsafeBufferPointer(rebasing: bytes[first.offset..<first.offset + first.length]))
          }
          guard case .success(let stored) = parsed else { return }
          decided = true
          report.decision = matcher.match(incoming: incoming, stored: stored)
          report.decision.storedIndex = base + first.ordinal
          report.decisionSource = source(first)
        }
        for entry in block.deferred {
          if !decided, let first = block.firstDecided, first.ordinal < entry.ordinal { decide(first) }
          guard var result = general(entry) else { continue }
          result.storedIndex = base + entry.ordinal
          report.totals.count(result)
          if !decided && result.outcome != .unknownDevice {
            decided = true
            report.decision = result
            report.decisionSource = source(entry)
          }
        }
        if !decided, let first = block.firstDecided { decide(first) }
        base += block.entries
      }
      if report.totals.unreadable { break }
    }
    for worker in workers { report.totals.merge(worker.totals, names: worker.fast.keyNames) }
    if skippedWarnings > Self.warningLimit {
      warn("\(storedName): \(skippedWarnings - Self.warningLimit) more stored entries were not JSON and were skipped")
    }
  }
}

/// Totals over all stored profiles.
struct Totals {
  var read = 0
  var skipped = 0
  var unreadable = false
  var outcomes: [Outcome: Int] = [:]
  /// Mismatching leaf keys and how many compared profiles mismatched on them (once per profile).
  var keys: [String: Int] = [:]
  var keyOrder: [String] = []

  mutating func count(_ result: MatchResult) {
    outcomes[result.outcome, default: 0] += 1
    guard let metadata = result.metadata else { return }
    add(metadata.mismatches.map { $0.key ?? "undefined" })
  }

  mutating func merge(_ fast: FastMatcher.Totals, names: [String]) {
    for outcome in Outcome.allCases { outcomes[outcome, default: 0] += fast[outcome] }
    for (id, count) in fast.keyCounts.enumerated() where count > 0 {
      let key = names[id]
      if keys[key] == nil { keyOrder.append(key) }
      keys[key, default: 0] += count
    }
  }

  /// Counts each key once per profile.
  mutating func add(_ mismatched: [String]) {
    for (position, key) in mismatched.enumerated() where !mismatched[..<position].contains(key) {
      if keys[key] == nil { keyOrder.append(key) }
      keys[key, default: 0] += 1
    }
  }

  var compared: Int { (outcomes[.true] ?? 0) + (outcomes[.false] ?? 0) + (outcomes[.error] ?? 0) }
}
