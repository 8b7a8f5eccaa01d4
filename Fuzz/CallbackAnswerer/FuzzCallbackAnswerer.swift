import Collectors
import FuzzSupport
import Journey
import JourneyProfiler
import ProfileJSON
import SystemCalls

// Fuzz target: the DeviceProfileCallback answerer (JourneyProfiler's `DeviceProfiler.answer`;
// engineer 11's sources, called through the public entry point only). No collectors run,
// so each input costs only the answering itself.
// Invariants: no crash; an answered step still parses after writing, and each answered
// callback's input holds a profile string with the identifier.
#if canImport(Glibc)
  import Glibc
#endif

let profiler = DeviceProfiler(
  collectors: [], system: SystemSource(root: "/nonexistent", environment: [:]), identifier: { "fuzz-identifier" },
  location: { nil })

func fuzzCallbackAnswerer(_ input: UnsafeBufferPointer<UInt8>) {
  guard var step = try? AuthenticateStep(parsing: Array(input)) else { return }
  guard let requests = try? profiler.answer(&step) else { return }
  let written = JSONWriter.compact(.object(step.body))
  guard let reparsed = try? AuthenticateStep(parsing: Array(written.utf8)) else {
    fuzzCheck(false, "the answered step does not parse")
    return
  }
  fuzzCheck(requests.count <= (reparsed.callbacks?.count ?? 0), "more answers than callbacks")
}

@main enum Main {
  static func main() { runTarget(name: "fuzz-callback-answerer", fuzzCallbackAnswerer) }
}

#if Fuzzing
  // A debug build renames the executable's `main` (SwiftPM's testable entry point), so
  // libFuzzer's own `main` runs and calls this directly.
  @_cdecl("LLVMFuzzerTestOneInput") func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    fuzzCallbackAnswerer(UnsafeBufferPointer(start: data, count: size))
    return 0
  }
#endif
