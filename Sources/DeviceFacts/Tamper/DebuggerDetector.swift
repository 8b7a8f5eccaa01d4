import SystemCalls

/// A debugger or tracer is attached to this process: `TracerPid` in /proc/self/status.
/// Score 1: someone is reading or steering the collector while it runs (the SDKs' debugger checks).
public struct DebuggerDetector: TamperDetector {
  public let name = "debugger"
  public init() {}

  public func analyze(_ context: TamperContext) -> TamperFinding {
    guard let status = context.system.readBytes("/proc/self/status", limit: 16384),
      let tracer = parseTracerPid(status), tracer != 0
    else { return .clean }
    return TamperFinding(score: 1, evidence: ["TracerPid is \(tracer) in /proc/self/status"])
  }
}

/// `TracerPid:\t4242` from /proc/<pid>/status.
///
///     Name:	fr-profile
///     TracerPid:	0
package func parseTracerPid(_ status: [UInt8]) -> Int? {
  var result: Int?
  status.withUnsafeBufferPointer { bytes in
    forEachLine(bytes) { line in
      guard bytesHavePrefix(bytes, line, "TracerPid:") else { return true }
      result = Int(decode(bytes, trimRange(bytes, (line.lowerBound + 10)..<line.upperBound)))
      return false
    }
  }
  return result
}

package func parseTracerPid(_ status: String) -> Int? {
  parseTracerPid(Array(status.utf8))
}

/// This process's tracer now (0: none), from its own /proc/self/status — never a `--root`
/// tree; nil when the file cannot be read.
package func currentTracerPid() -> Int? {
  SystemSource(root: "/", environment: [:]).readBytes("/proc/self/status", limit: 16384).flatMap { parseTracerPid($0) }
}
