import ProfileJSON

/// The matcher's settings: the script's three options plus which halves of the match to run.
///
/// Absent keys take the script's defaults (`attrWeights` {}, `maxUnmatchedAttrs` 0,
/// `allowedRadius` 100) and both halves run, as in the script's `src/index.js`.
public struct MatchConfig: Sendable, Equatable {
  /// Weight of a mismatching leaf, by the leaf's own key name (array elements use the array's
  /// key). A value that is not a JSON number counts as 1, as `getMultiplier` does.
  public var attrWeights: JSONObject
  /// The walk fails once the summed weights exceed this.
  public var maxUnmatchedAttrs: Double
  /// Locations match when their distance in whole metres is strictly below this.
  public var allowedRadius: Double
  /// Run the metadata half (`false` counts it as matching, like the script's location-only variant).
  public var matchMetadata: Bool
  /// Run the location half (`false` counts it as matching, like the metadata-only variant).
  public var matchLocation: Bool

  /// The keys a config file may hold.
  public static let keys = ["attrWeights", "maxUnmatchedAttrs", "allowedRadius", "matchMetadata", "matchLocation"]

  /// A config from values; every parameter defaults as in the script.
  public init(
    attrWeights: JSONObject = JSONObject(), maxUnmatchedAttrs: Double = 0, allowedRadius: Double = 100,
    matchMetadata: Bool = true, matchLocation: Bool = true
  ) {
    self.attrWeights = attrWeights
    self.maxUnmatchedAttrs = maxUnmatchedAttrs
    self.allowedRadius = allowedRadius
    self.matchMetadata = matchMetadata
    self.matchLocation = matchLocation
  }

  /// Reads a config object; unknown keys and wrongly typed values are errors.
  public init(json: JSON) throws(MatchConfigError) {
    guard case .object(let object) = json else { throw .notAnObject }
    self.init()
    for (key, value) in object.members {
      switch key {
      case "attrWeights":
        guard case .object(let weights) = value else { throw .wrongType(key: key, expected: "an object") }
        attrWeights = weights
      case "maxUnmatchedAttrs":
        guard case .number(let number) = value else { throw .wrongType(key: key, expected: "a number") }
        maxUnmatchedAttrs = number
      case "allowedRadius":
        guard case .number(let number) = value else { throw .wrongType(key: key, expected: "a number") }
        allowedRadius = number
      case "matchMetadata":
        guard case .bool(let bool) = value else { throw .wrongType(key: key, expected: "true or false") }
        matchMetadata = bool
      case "matchLocation":
        guard case .bool(let bool) = value else { throw .wrongType(key: key, expected: "true or false") }
        matchLocation = bool
      default:
        // Edit distance on a prefix: a hostile multi-megabyte key costs no more than a long one.
        throw .unknownKey(key, suggestion: MatchConfig.nearestKey(to: String(key.unicodeScalars.prefix(64))))
      }
    }
  }

  /// The config as JSON, keys in the documented order.
  public var json: JSON {
    .object([
      "attrWeights": .object(attrWeights), "maxUnmatchedAttrs": .number(maxUnmatchedAttrs),
      "allowedRadius": .number(allowedRadius), "matchMetadata": .bool(matchMetadata),
      "matchLocation": .bool(matchLocation),
    ])
  }

  /// Keys of `attrWeights` whose value is not a number (the script counts them as 1).
  public var nonNumericWeights: [String] {
    attrWeights.members.filter { if case .number = $0.value { false } else { true } }.map(\.key)
  }

  /// The valid key closest to `key` by edit distance (case-insensitive).
  static func nearestKey(to key: String) -> String {
    keys.min { editDistance($0.lowercased(), key.lowercased()) < editDistance($1.lowercased(), key.lowercased()) }!
  }

  static func editDistance(_ a: String, _ b: String) -> Int {
    let a = Array(a.unicodeScalars)
    let b = Array(b.unicodeScalars)
    if a.isEmpty { return b.count }
    var previous = Array(0...b.count)
    for i in 1...a.count {
      var current = [i] + Array(repeating: 0, count: b.count)
      if !b.isEmpty {
        for j in 1...b.count {
          current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
        }
      }
      previous = current
    }
    return previous[b.count]
  }
}

/// A config file the matcher cannot use.
///
/// A struct, not an enum, so that a release can add a failure without breaking an embedder's
/// `switch`: new codes may be added in any release. Match on ``code`` (`error.code ==
/// .unknownKey`, or `switch error.code` with a `default:`); ``description`` is the message.
public struct MatchConfigError: Error, Sendable, Hashable, CustomStringConvertible {
  /// What kind of failure it is. New codes may be added in any release: switch with a
  /// `default:`.
  public struct Code: Hashable, Sendable, CustomStringConvertible {
    private enum Backing: Hashable, Sendable { case notAnObject, unknownKey, wrongType }

    private var backing: Backing
    private init(_ backing: Backing) { self.backing = backing }

    /// The config is not a JSON object.
    public static let notAnObject = Code(.notAnObject)
    /// A key the config does not have (``key``).
    public static let unknownKey = Code(.unknownKey)
    /// A key whose value is of the wrong type (``key``).
    public static let wrongType = Code(.wrongType)

    public var description: String { String(describing: backing) }
  }

  /// What kind of failure it is.
  public let code: Code
  /// The key concerned, as the config spells it (``Code/unknownKey``, ``Code/wrongType``).
  public let key: String?
  /// One line saying what is wrong.
  public let description: String

  private init(_ code: Code, key: String? = nil, _ description: String) {
    self.code = code
    self.key = key
    self.description = description
  }

  /// The config is not a JSON object.
  public static var notAnObject: Self {
    Self(.notAnObject, "the match config must be a JSON object with keys \(MatchConfig.keys.joined(separator: ", "))")
  }

  /// `key` is not a config key; `suggestion` is the nearest one.
  public static func unknownKey(_ key: String, suggestion: String) -> Self {
    Self(
      .unknownKey, key: key,
      "unknown match config key '\(Self.shown(key))'; did you mean '\(suggestion)'? (valid keys: \(MatchConfig.keys.joined(separator: ", ")))"
    )
  }

  /// The value of `key` is not `expected`.
  public static func wrongType(key: String, expected: String) -> Self {
    Self(.wrongType, key: key, "match config key '\(key)' must be \(expected)")
  }

  /// Longest name echoed in a message, in characters.
  public static let maxShownCharacters = 64

  /// `name` as messages echo it: control characters escaped (nothing a config holds can
  /// drive the terminal), and cut to `maxShownCharacters` with its full length noted.
  public static func shown(_ name: String) -> String {
    var text = ""
    var shown = 0
    for scalar in name.unicodeScalars {
      if shown == maxShownCharacters {
        return text + "… (\(name.utf8.count) bytes)"
      }
      if scalar.value < 0x20 || (scalar.value >= 0x7F && scalar.value < 0xA0) {
        text +=
          "\\u" + String(repeating: "0", count: 4 - String(scalar.value, radix: 16).count)
          + String(scalar.value, radix: 16)
      } else {
        text.unicodeScalars.append(scalar)
      }
      shown += 1
    }
    return text
  }
}
