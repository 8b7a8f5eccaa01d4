import ProfileJSON

/// What the script assigns to `outcome`, plus `error` where it would throw instead.
public enum Outcome: String, Sendable, CaseIterable {
  case `true`
  case `false`
  case unknownDevice
  case error
}

/// The answer for one incoming profile against one stored profile (or a list), and why.
public struct MatchResult: Sendable, Equatable {
  /// The script's answer, or `.error` where it would throw.
  public var outcome: Outcome
  /// Whether the identifiers are strictly equal (`===`); when false, nothing else was compared.
  public var identifierMatches: Bool
  /// The metadata comparison, `nil` when not run (identifiers differ, `matchMetadata` false).
  public var metadata: MetadataResult?
  /// The location comparison, `nil` when not run (identifiers differ, `matchLocation` false,
  /// or the metadata comparison threw first).
  public var location: LocationResult?
  /// Set when `outcome` is `.error`.
  public var error: ScriptError?
  /// For list matches: the position of the deciding stored profile, if one decided.
  public var storedIndex: Int?

  public init(
    outcome: Outcome, identifierMatches: Bool, metadata: MetadataResult? = nil, location: LocationResult? = nil,
    error: ScriptError? = nil, storedIndex: Int? = nil
  ) {
    self.outcome = outcome
    self.identifierMatches = identifierMatches
    self.metadata = metadata
    self.location = location
    self.error = error
    self.storedIndex = storedIndex
  }

  static let unknownDevice = MatchResult(outcome: .unknownDevice, identifierMatches: false)
}

/// The device-match script (src/index.js with src/profile.js): identifier, then metadata and
/// location, configured by a `MatchConfig`. Pure: the same profiles always give the same result.
public struct DeviceMatcher: Sendable {
  /// The settings it was made with.
  public let config: MatchConfig
  /// The metadata half (`src/metadata.js`).
  public let metadataMatcher: MetadataMatcher
  /// The location half (`src/location.js`).
  public let locationMatcher: LocationMatcher

  /// A matcher for `config` (the script's defaults when omitted).
  public init(config: MatchConfig = MatchConfig()) {
    self.config = config
    metadataMatcher = MetadataMatcher(attrWeights: config.attrWeights, maxUnmatchedAttrs: config.maxUnmatchedAttrs)
    locationMatcher = LocationMatcher(allowedRadius: config.allowedRadius)
  }

  /// Compares the incoming profile with one stored profile, as one turn of the script's loop:
  /// `unknownDevice` when the identifiers differ, else `true` iff metadata and location match.
  public func match(incoming: JSON, stored: JSON) -> MatchResult {
    match(incoming: incoming, stored: stored, record: true)
  }

  func match(incoming: JSON, stored: JSON, record: Bool) -> MatchResult {
    if case .null = incoming { return MatchResult(outcome: .error, identifierMatches: false, error: .incomingProfileNull) }
    if case .null = stored { return MatchResult(outcome: .error, identifierMatches: false, error: .storedProfileNull) }
    let incomingValue = JSValue.json(incoming)
    let storedValue = JSValue.json(stored)
    guard JS.strictEquals(JS.get(incomingValue, "identifier"), JS.get(storedValue, "identifier")) else {
      return .unknownDevice
    }
    var result = MatchResult(outcome: .true, identifierMatches: true)
    do {
      var matches = true
      if config.matchMetadata {
        let metadata = try metadataMatcher.match(
          incoming: JS.get(incomingValue, "metadata"), stored: JS.get(storedValue, "metadata"), record: record)
        result.metadata = metadata
        matches = metadata.matches
      }
      if config.matchLocation {
        let location = try locationMatcher.match(
          incoming: JS.get(incomingValue, "location"), stored: JS.get(storedValue, "location"))
        result.location = location
        matches = matches && location.matches
      }
      result.outcome = matches ? .true : .false
    } catch {
      result.outcome = .error
      result.error = error
    }
    return result
  }

  /// The script's whole decision: the first stored profile whose identifier equals the
  /// incoming one decides; none gives `unknownDevice`. `incoming` nil means it did not parse
  /// (`unknownDevice`); stored entries that did not parse are left out by the caller.
  public func match(incoming: JSON?, storedProfiles stored: some Sequence<JSON>) -> MatchResult {
    guard let incoming else { return .unknownDevice }
    for (index, profile) in stored.enumerated() {
      var result = match(incoming: incoming, stored: profile)
      if result.outcome != .unknownDevice {
        result.storedIndex = index
        return result
      }
    }
    return .unknownDevice
  }
}
