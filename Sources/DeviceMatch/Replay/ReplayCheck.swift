import ProfileJSON

/// The equality the replay engine promises: wherever the fast path answers a stored entry, its
/// outcome, its ordered list of mismatching keys and its contribution to `--summary` totals
/// are the reference path's. The differential test and the fuzz targets both call it.
package enum ReplayCheck {
  /// Nil when the two paths agree on `stored` (or the fast path left it to the reference);
  /// else what differs.
  package static func disagreement(
    fast: FastMatcher, matcher: DeviceMatcher, incoming: JSON, stored bytes: UnsafeBufferPointer<UInt8>
  ) -> String? {
    // Handing off the deciding entry: the fast path's "identifier matches" is the reference's.
    var handOffTotals = FastMatcher.Totals()
    let handOff = fast.count(bytes, into: &handOffTotals, handingOffMatch: true)
    if handOff != .general {
      guard case .success(let stored) = ProfileText.parse(bytes) else {
        return "the fast path answered \(handOff) (handing off) for text the parser rejects"
      }
      let reference = matcher.match(incoming: incoming, stored: stored).outcome
      switch handOff {
      case .identifierMatches where reference == .unknownDevice,
        .counted where reference != .unknownDevice:
        return "handing off: fast \(handOff), reference \(reference)"
      case .identifierMatches where handOffTotals.outcomes.contains(where: { $0 != 0 }):
        return "handing off: an entry handed off was counted"
      default: break
      }
    }
    guard let quick = fast.match(bytes) else { return nil }
    guard case .success(let stored) = ProfileText.parse(bytes) else {
      return "the fast path answered \(quick.outcome) for text the parser rejects"
    }
    let reference = matcher.match(incoming: incoming, stored: stored)
    if quick.outcome != reference.outcome {
      return "outcome: fast \(quick.outcome), reference \(reference.outcome)"
    }
    let referenceKeys = reference.metadata?.mismatches.map { $0.key ?? "undefined" } ?? []
    if quick.mismatchedKeys.count != referenceKeys.count
      || !zip(quick.mismatchedKeys, referenceKeys).allSatisfy({ sameCodeUnits($0, $1) })
    {
      return "mismatches: fast \(quick.mismatchedKeys.prefix(20)), reference \(referenceKeys.prefix(20))"
    }
    // The summary's totals, counted each way.
    var fastTotals = FastMatcher.Totals()
    guard fast.count(bytes, into: &fastTotals) == quick.outcome else { return "count() and match() disagree" }
    var viaFast = ReplayTotals()
    viaFast.merge(fastTotals, names: fast.keyNames)
    var viaReference = ReplayTotals()
    viaReference.count(reference)
    if viaFast.outcomes.filter({ $0.value > 0 }) != viaReference.outcomes.filter({ $0.value > 0 })
      || viaFast.keys.filter({ $0.value > 0 }) != viaReference.keys.filter({ $0.value > 0 })
    {
      return "summary counts: fast \(viaFast.rankedKeys.prefix(20)), reference \(viaReference.rankedKeys.prefix(20))"
    }
    return nil
  }
}
