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
public enum MatchConfigError: Error, Equatable, CustomStringConvertible {
  case notAnObject
  case unknownKey(String, suggestion: String)
  case wrongType(key: String, expected: String)

  public var description: String {
    switch self {
    case .notAnObject:
      "the match config must be a JSON object with keys \(MatchConfig.keys.joined(separator: ", "))"
    case .unknownKey(let key, let suggestion):
      "unknown match config key '\(Self.shown(key))'; did you mean '\(suggestion)'? (valid keys: \(MatchConfig.keys.joined(separator: ", ")))"
    case .wrongType(let key, let expected):
      "match config key '\(key)' must be \(expected)"
    }
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
