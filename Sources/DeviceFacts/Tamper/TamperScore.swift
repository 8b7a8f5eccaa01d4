import ProfileJSON

/// One check for signs that the machine or this process has been tampered with: the Linux
/// counterpart of the SDKs' `RootDetector`. Embedders add their own by conforming.
public protocol TamperDetector: Sendable {
  /// A short camelCase name for reports, e.g. "debugger".
  var name: String { get }
  /// A score in 0…1 (0: no sign; 1: certain) and the evidence behind it.
  func analyze(_ context: TamperContext) -> TamperFinding
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
  /// The highest score (a loop, not `map(…).max()`: an `[Double]` costs collect a runtime
  /// metadata instantiation).
  public var score: Double {
    var highest = HighestScore()
    for result in results { highest.add(result.finding.score) }
    return highest.value
  }

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
  /// The built-in detectors, in the order a report lists them.
  public static let defaultDetectors: [any TamperDetector] = [
    DebuggerDetector(), InjectedLibraryDetector(), WritableSystemDirectoryDetector(),
    SetuidInterpreterDetector(), TaintedKernelDetector(), SecureBootDetector(), VirtualizationDetector(),
  ]

  public static func evaluate(_ detectors: [any TamperDetector], _ context: TamperContext) -> TamperReport {
    TamperReport(results: detectors.map { ($0.name, $0.analyze(context)) })
  }

  /// `evaluate(detectors, context).score` without the report: what the profile's
  /// `jailBreakScore` needs at every login (the report's array of tuples costs a runtime
  /// metadata instantiation).
  public static func score(_ detectors: [any TamperDetector], _ context: TamperContext) -> Double {
    var highest = HighestScore()
    for detector in detectors { highest.add(detector.analyze(context).score) }
    return highest.value
  }
}

/// The maximum of scores as `[Double].max() ?? 0` computes it (the first of equal or
/// unordered values wins), without building the array.
private struct HighestScore {
  private var highest: Double?
  mutating func add(_ score: Double) {
    if highest.map({ $0 < score }) ?? true { highest = score }
  }
  var value: Double { highest ?? 0 }
}
