import DeviceMatch
import FuzzSupport
import ProfileJSON

// Fuzz target: the reference port, `DeviceMatcher` (DeviceMatch), on two fuzzed profiles.
// Input: a selector byte, then INCOMING and STORED separated by the first NUL byte.
// Invariants: matching never crashes or hangs (huge `length`s, odd coordinates, deep
// metadata); it is deterministic; the list match is the first non-unknownDevice answer; and
// where the fast path answers for this incoming profile, it equals the reference.
#if canImport(Glibc)
  import Glibc
#endif

let configs: [MatchConfig] = [
  MatchConfig(),
  MatchConfig(attrWeights: ["a": 0.5, "b": 3, "c": "x", "undefined": 0], maxUnmatchedAttrs: 2),
  MatchConfig(maxUnmatchedAttrs: 1e9, allowedRadius: 1e9),
  MatchConfig(matchLocation: false),
  MatchConfig(matchMetadata: false),
  MatchConfig(attrWeights: ["a": -1], maxUnmatchedAttrs: -0.5, allowedRadius: -1),
]

func fuzzDeviceMatcher(_ input: UnsafeBufferPointer<UInt8>) {
  guard let selector = input.first else { return }
  let rest = input[1...]
  let split = rest.firstIndex(of: 0) ?? input.count
  guard case .success(let incoming) = ProfileText.parse(UnsafeBufferPointer(rebasing: input[1..<split])) else { return }
  let storedBytes = UnsafeBufferPointer(rebasing: input[min(split + 1, input.count)...])
  guard case .success(let stored) = ProfileText.parse(storedBytes) else { return }
  let matcher = DeviceMatcher(config: configs[Int(selector) % configs.count])
  let first = matcher.match(incoming: incoming, stored: stored)
  let second = matcher.match(incoming: incoming, stored: stored)
  fuzzCheck(first == second, "the same comparison gave two answers")
  let list = matcher.match(incoming: incoming, storedProfiles: [stored, stored])
  fuzzCheck(list.outcome == first.outcome, "list outcome \(list.outcome) != single \(first.outcome)")
  if first.outcome != .unknownDevice { fuzzCheck(list.storedIndex == 0, "the first profile must decide") }
  let fast = FastMatcher(matcher: matcher, incoming: incoming)
  let problem = ReplayCheck.disagreement(fast: fast, matcher: matcher, incoming: incoming, stored: storedBytes)
  fuzzCheck(problem == nil, problem ?? "")
}

@main enum Main {
  static func main() { runTarget(name: "fuzz-device-matcher", fuzzDeviceMatcher) }
}

#if Fuzzing
  // A debug build renames the executable's `main` (SwiftPM's testable entry point), so
  // libFuzzer's own `main` runs and calls this directly.
  @_cdecl("LLVMFuzzerTestOneInput") func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    fuzzDeviceMatcher(UnsafeBufferPointer(start: data, count: size))
    return 0
  }
#endif
