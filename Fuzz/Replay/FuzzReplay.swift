import DeviceMatch
import FuzzSupport
import ProfileJSON

// Fuzz target: the replay fast path against the reference port (DeviceMatch).
// The first input byte picks a config and an incoming profile; the rest is one stored
// entry. Invariant: wherever `FastMatcher` answers, `ReplayCheck` finds it equal to
// `DeviceMatcher` (outcome, ordered mismatches, summary counts).
#if canImport(Glibc)
  import Glibc
#endif

let configs: [MatchConfig] = [
  MatchConfig(),
  MatchConfig(attrWeights: ["version": 0.5, "cpu": 3, "tz": "x", "list": 0, "a": -1], maxUnmatchedAttrs: 2),
  MatchConfig(maxUnmatchedAttrs: 1e9, allowedRadius: 1e9),
  MatchConfig(maxUnmatchedAttrs: -1),
  MatchConfig(matchLocation: false),
  MatchConfig(attrWeights: ["x": 0, "y": 0.25], maxUnmatchedAttrs: 3, matchLocation: false),
  MatchConfig(matchMetadata: false),
  MatchConfig(attrWeights: ["undefined": 0, "list": 0], maxUnmatchedAttrs: 0.5),
]

let incomings: [JSON] = [
  try! JSONParser.parse(
    #"{"identifier": "d", "metadata": {"platform": {"version": "6.8", "tz": "UTC"}, "hardware": {"cpu": 16, "list": [1, 2], "flag": false, "none": null}}, "location": {"latitude": 52.52, "longitude": 13.405}}"#
  ),
  try! JSONParser.parse(
    #"{"identifier": "d", "metadata": {"a": [1, [2, {"b": "é"}]], "x": "", "y": 0}, "location": {"lat": 1, "lng": 2}}"#),
  try! JSONParser.parse(#"{"metadata": {"a": {"b": {"c": true}}}, "location": {"lon": -0.5, "lat": 89.9}}"#),
  try! JSONParser.parse(#"{"identifier": 7, "metadata": {"s": "x", "n": null, "arr": []}, "location": {"latitude": 0, "longitude": 0}}"#),
]

let matchers = configs.map { DeviceMatcher(config: $0) }
// libFuzzer calls the target from one thread; the matchers keep per-run scratch space.
nonisolated(unsafe) let fastMatchers: [[FastMatcher]] = matchers.map { matcher in
  incomings.map { FastMatcher(matcher: matcher, incoming: $0) }
}

func fuzzReplay(_ input: UnsafeBufferPointer<UInt8>) {
  guard let selector = input.first else { return }
  let configIndex = Int(selector & 7)
  let incomingIndex = Int(selector >> 3) % incomings.count
  let stored = UnsafeBufferPointer(rebasing: input[1...])
  let problem = ReplayCheck.disagreement(
    fast: fastMatchers[configIndex][incomingIndex], matcher: matchers[configIndex], incoming: incomings[incomingIndex],
    stored: stored)
  fuzzCheck(problem == nil, "config \(configIndex), incoming \(incomingIndex): \(problem ?? "")")
}

@main enum Main {
  static func main() { runTarget(name: "fuzz-replay", fuzzReplay) }
}

#if Fuzzing
  // A debug build renames the executable's `main` (SwiftPM's testable entry point), so
  // libFuzzer's own `main` runs and calls this directly.
  @_cdecl("LLVMFuzzerTestOneInput") func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    fuzzReplay(UnsafeBufferPointer(start: data, count: size))
    return 0
  }
#endif
