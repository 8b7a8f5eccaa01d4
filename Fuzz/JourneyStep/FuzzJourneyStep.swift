import FuzzSupport
import Journey
import ProfileJSON

// Fuzz target: the authenticate-step parser and callback reading (Journey; engineer 11's
// sources, called through their public entry points only).
// Invariants: no crash on any body; a parsed step's callbacks can be read and classified.
#if canImport(Glibc)
  import Glibc
#endif

func fuzzJourneyStep(_ input: UnsafeBufferPointer<UInt8>) {
  guard let step = try? AuthenticateStep(parsing: Array(input)) else { return }
  _ = step.tokenId
  guard let callbacks = step.callbacks else { return }
  for callback in callbacks {
    _ = try? CallbackRequest(callback)
    _ = try? DeviceProfileRequest(callback)
  }
  _ = try? step.requests()
}

@main enum Main {
  static func main() { runTarget(name: "fuzz-journey-step", fuzzJourneyStep) }
}

#if Fuzzing
  // A debug build renames the executable's `main` (SwiftPM's testable entry point), so
  // libFuzzer's own `main` runs and calls this directly.
  @_cdecl("LLVMFuzzerTestOneInput") func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    fuzzJourneyStep(UnsafeBufferPointer(start: data, count: size))
    return 0
  }
#endif
