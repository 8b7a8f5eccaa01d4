import ProfileJSON

/// One check for signs that the machine or this process has been tampered with: the Linux
/// counterpart of the SDKs' `RootDetector`. Embedders add their own by conforming.
public protocol TamperDetector: Sendable {
  /// A short camelCase name shown by `fr-profile tamper`, e.g. "debugger".
  var name: String { get }
  /// A score in 0…1 (0: no sign; 1: certain) and the evidence behind it.
  func analyze(_ context: CollectionContext) -> TamperFinding
}

/// What a detector found.
public struct TamperFinding: Sendable, Equatable {
  public var score: Double
  /// Human-readable facts, e.g. "TracerPid is 4242". Empty when nothing was found.
  public var evidence: [String]

  public init(score: Double, evidence: [String] = []) {
    self.score = min(max(score.isNaN ? 0 : score, 0), 1)
    self.evidence = evidence
  }

  public static let clean = TamperFinding(score: 0)

  /// The higher of two findings' scores with both findings' evidence.
  public func merged(_ other: TamperFinding) -> TamperFinding {
    TamperFinding(score: max(score, other.score), evidence: evidence + other.evidence)
  }
}

/// The combined tamper score: the maximum over detectors, as the SDKs compute `jailBreakScore`.
public struct TamperReport: Sendable {
  public var results: [(name: String, finding: TamperFinding)]
  public var score: Double { results.map(\.finding.score).max() ?? 0 }

  public var json: JSON {
    let detectors = results.map { result -> JSON in
      [
        "name": .string(result.name), "score": .number(result.finding.score),
        "evidence": .array(result.finding.evidence.map(JSON.string)),
      ]
    }
    return ["score": .number(score), "detectors": .array(detectors)]
  }
}

public enum TamperScore {
  /// The built-in detectors, in the order `fr-profile tamper` lists them.
  public static let defaultDetectors: [any TamperDetector] = [
    DebuggerDetector(), InjectedLibraryDetector(), WritableSystemDirectoryDetector(),
    SetuidInterpreterDetector(), TaintedKernelDetector(), SecureBootDetector(), VirtualizationDetector(),
  ]

  public static func evaluate(_ detectors: [any TamperDetector], _ context: CollectionContext) -> TamperReport {
    TamperReport(results: detectors.map { ($0.name, $0.analyze(context)) })
  }
}
