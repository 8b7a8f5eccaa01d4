import DeviceFacts

// The tamper detectors live in DeviceFacts, below the collectors, so that device binding's
// `deviceTampering` policy uses them without the collectors. A collection runs them on its own
// context's system and facts.

extension TamperDetector {
  /// The finding on a collection's system and facts.
  public func analyze(_ context: CollectionContext) -> TamperFinding { analyze(context.tamperContext) }
}

extension TamperScore {
  public static func evaluate(_ detectors: [any TamperDetector], _ context: CollectionContext) -> TamperReport {
    evaluate(detectors, context.tamperContext)
  }

  public static func score(_ detectors: [any TamperDetector], _ context: CollectionContext) -> Double {
    score(detectors, context.tamperContext)
  }
}
