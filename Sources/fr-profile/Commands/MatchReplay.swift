#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif
import DeviceMatch
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
        if !decided && quick != .unknownDevice {
          decided = true
          report.decision = matcher.match(incoming: incoming, stored: try! ProfileText.parse(entry.bytes, unwrapString: entry.isArrayElement).get())
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
