import Collectors
import DeviceMatch
import ProfileCLI
import ProfileJSON
import SystemCalls

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// Renders match results as text or JSON on standard output (buffered), or into `file`.
struct Output {
  let json: Bool
  /// Whether a single JSON result or summary is indented (never JSON Lines).
  let pretty: Bool
  /// The `-o FILE` to write atomically at the end, or nil for standard output. Its text is
  /// held in memory until then: it is written whole through the one hardened output path
  /// (`writeFileAtomically`) or not at all, and is small beside the stored profiles read.
  let file: String?
  var buffer: [UInt8] = []

  init(json: Bool, pretty: Bool = false, file: String? = nil) {
    self.json = json
    self.pretty = pretty
    self.file = file
    buffer.reserveCapacity(1 << 16)
  }

  mutating func write(_ text: String) throws {
    buffer.append(contentsOf: text.utf8)
    if file == nil && buffer.count > 1 << 16 { try flush() }
  }

  func encode(_ value: JSON) -> String { (pretty ? JSONWriter.pretty(value) : JSONWriter.compact(value)) + "\n" }

  /// Writes the whole output: the file atomically, or what is left for standard output.
  mutating func finish() throws {
    guard let file else { return try flush() }
    try writeFileAtomically(file, String(decoding: buffer, as: UTF8.self))
    buffer.removeAll()
  }

  /// Writes what is buffered through the one write loop (`writeAll`); a failed write (a full
  /// disk, a closed pipe) is an I/O error, exit 74, never a silent loss.
  mutating func flush() throws {
    guard !buffer.isEmpty else { return }
    do throws(SystemCallError) { try writeAll(1, buffer) } catch {
      throw Failure(.ioError, "cannot write to standard output: \(errorText(error.errno)).")
    }
    buffer.removeAll(keepingCapacity: true)
  }

  // MARK: One result

  mutating func result(_ result: MatchResult, source: String?, index: Int?, config: String, incoming: JSON?) throws {
    if json {
      try write(encode(Self.json(result, source: source, index: index, config: config)))
    } else {
      try write(Self.text(result, source: source, index: index, config: config, incoming: incoming))
    }
  }

  static func json(_ result: MatchResult, source: String?, index: Int?, config: String) -> JSON {
    var object: JSONObject = ["outcome": .string(result.outcome.rawValue)]
    if let index { object["storedIndex"] = .number(Double(index)) }
    if let source { object["storedSource"] = .string(source) }
    if let error = result.error {
      object["error"] = .string(error.message)
      if let suggestion = error.suggestion { object["suggestion"] = .string(suggestion) }
    }
    if let metadata = result.metadata {
      object["metadata"] = .object([
        "matches": .bool(metadata.matches), "sum": .number(metadata.sum),
        "maxUnmatchedAttrs": .number(metadata.maxUnmatchedAttrs), "stoppedEarly": .bool(metadata.stoppedEarly),
        "mismatches": .array(
          metadata.mismatches.map { mismatch in
            var entry: JSONObject = ["path": .string(mismatch.path)]
            entry["key"] = mismatch.key.map(JSON.string) ?? .null
            // A missing (undefined) value is left out.
            if let stored = mismatch.stored { entry["stored"] = stored }
            if let incoming = mismatch.incoming { entry["incoming"] = incoming }
            entry["weight"] = .number(mismatch.weight)
            entry["sum"] = .number(mismatch.sum)
            return .object(entry)
          }),
      ])
    }
    if let location = result.location {
      func number(_ value: Double) -> JSON { value.isFinite ? .number(value) : .null }
      object["location"] = .object([
        "matches": .bool(location.matches), "distance": number(location.distance),
        "allowedRadius": number(location.allowedRadius),
        "incoming": ["latitude": number(location.incoming.latitude), "longitude": number(location.incoming.longitude)],
        "stored": ["latitude": number(location.stored.latitude), "longitude": number(location.stored.longitude)],
      ])
    }
    object["config"] = .string(config)
    return .object(object)
  }

  static func show(_ value: JSON?) -> String {
    guard let value else { return "missing" }
    let text = JSONWriter.compact(value)
    return text.count > 80 ? String(text.prefix(77)) + "..." : text
  }

  static func number(_ value: Double) -> String { JSONWriter.formatNumber(value) == "null" ? "\(value)" : JSONWriter.formatNumber(value) }

  static func text(_ result: MatchResult, source: String?, index: Int?, config: String, incoming: JSON?) -> String {
    var lines = ["outcome: \(result.outcome.rawValue)"]
    if let index, let source { lines.append("stored profile: #\(index) at \(source)") }
    switch result.outcome {
    case .unknownDevice:
      if let incoming {
        lines.append("no stored profile has the incoming identifier \(show(incoming["identifier"]))")
      } else {
        lines.append("the incoming profile is not JSON, so the script stops before comparing")
      }
    default: break
    }
    if let error = result.error {
      lines.append("the script would throw: \(error.message)")
      if let suggestion = error.suggestion { lines.append("hint: \(suggestion)") }
    }
    if let metadata = result.metadata {
      let relation = metadata.sum <= metadata.maxUnmatchedAttrs ? "<=" : ">"
      var line =
        "metadata: \(metadata.matches ? "match" : "no match") (sum \(number(metadata.sum)) \(relation) "
        + "maxUnmatchedAttrs \(number(metadata.maxUnmatchedAttrs))"
      if metadata.stoppedEarly { line += "; stopped at the first excess, as the script does" }
      lines.append(line + ")")
      for mismatch in metadata.mismatches {
        lines.append(
          "  \(mismatch.path): stored \(show(mismatch.stored)), incoming \(show(mismatch.incoming)), "
            + "weight \(number(mismatch.weight)) (\(mismatch.key ?? "undefined")), sum \(number(mismatch.sum))")
      }
    }
    if let location = result.location {
      let relation = location.distance < location.allowedRadius ? "<" : (location.distance.isNaN ? "is not <" : ">=")
      var line =
        "location: \(location.matches ? "match" : "no match") (distance \(number(location.distance)) m \(relation) "
        + "allowedRadius \(number(location.allowedRadius)) m)"
      if location.distance.isNaN { line += "; a coordinate could not be read" }
      lines.append(line)
    }
    lines.append("config: \(config)")
    return lines.joined(separator: "\n") + "\n\n"
  }

  // MARK: Summary

  /// The `--summary` report. Keys with equal counts are listed in code-unit order of their
  /// names (`ReplayTotals.rankedKeys`), so the output is the same for any number of workers.
  mutating func summary(_ totals: ReplayTotals, decision: MatchResult, decisionSource: String?) throws {
    let ranked = totals.rankedKeys
    let compared = totals.compared
    func share(_ count: Int) -> Double { compared == 0 ? 0 : Double(count) / Double(compared) }
    if json {
      var object: JSONObject = [
        "outcome": .string(decision.outcome.rawValue), "read": .number(Double(totals.read)),
        "skipped": .number(Double(totals.skipped)),
      ]
      for outcome in Outcome.allCases { object[outcome.rawValue + "Count"] = .number(Double(totals.outcomes[outcome] ?? 0)) }
      object["compared"] = .number(Double(compared))
      object["oversize"] = .number(Double(totals.oversize))
      object["mismatchedKeys"] = .array(
        ranked.map { entry in
          ["key": .string(entry.key), "count": .number(Double(entry.count)), "share": .number(share(entry.count))]
        })
      if let decisionSource { object["decidedBy"] = .string(decisionSource) }
      try write(encode(.object(object)))
      return
    }
    var lines = [
      "stored profiles: \(totals.read) read, \(totals.skipped) skipped ("
        + (totals.oversize > 0 ? "\(totals.oversize) over the size limit, the rest not JSON)" : "not JSON)"),
      Outcome.allCases.map { "\($0.rawValue): \(totals.outcomes[$0] ?? 0)" }.joined(separator: "  "),
      "script outcome: \(decision.outcome.rawValue)" + (decisionSource.map { " (decided by \($0))" } ?? ""),
    ]
    if ranked.isEmpty {
      lines.append("no metadata mismatches")
    } else {
      lines.append("mismatched leaf keys (profiles with the key mismatching, share of \(compared) compared):")
      // Names from stored profiles are shown as config names are: cut, control characters escaped.
      let shown = ranked.prefix(20).map { (MatchConfigError.shown($0.key), $0.count) }
      let width = shown.map(\.0.count).max() ?? 0
      for (key, count) in shown {
        let percent = (share(count) * 1000).rounded() / 10
        lines.append("  " + key.padding(width) + "  \(count)  \(percent)%")
      }
      if ranked.count > 20 { lines.append("  … and \(ranked.count - 20) more keys") }
    }
    try write(lines.joined(separator: "\n") + "\n")
  }
}

extension String {
  func padding(_ width: Int) -> String { self + String(repeating: " ", count: max(0, width - count)) }
}
