/// A debugger or tracer is attached to this process: `TracerPid` in /proc/self/status.
/// Score 1: someone is reading or steering the collector while it runs (the SDKs' debugger checks).
public struct DebuggerDetector: TamperDetector {
  public let name = "debugger"
  public init() {}

  public func analyze(_ context: CollectionContext) -> TamperFinding {
    guard let status = context.system.readText("/proc/self/status", limit: 16384),
      let tracer = parseTracerPid(status), tracer != 0
    else { return .clean }
    return TamperFinding(score: 1, evidence: ["TracerPid is \(tracer) in /proc/self/status"])
  }
}

/// `TracerPid:\t4242` from /proc/<pid>/status.
///
///     Name:	fr-profile
///     TracerPid:	0
public func parseTracerPid(_ status: String) -> Int? {
  for line in status.split(separator: "\n") where line.hasPrefix("TracerPid:") {
    return Int(trimmed(line.dropFirst("TracerPid:".count)))
  }
  return nil
}
