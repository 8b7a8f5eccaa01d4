import ProfileJSON

/// A comparison where the script would throw inside AM (the node then fails instead of
/// choosing an outcome). fr-profile reports it rather than guessing an answer.
public struct ScriptError: Error, Sendable, Equatable, CustomStringConvertible {
  /// What happened, in the user's terms.
  public var message: String
  /// What to change, if anything applies.
  public var suggestion: String?

  public init(message: String, suggestion: String? = nil) {
    self.message = message
    self.suggestion = suggestion
  }

  public var description: String { suggestion.map { "\(message); \($0)" } ?? message }

  static func storedMetadataMissing(isNull: Bool) -> ScriptError {
    ScriptError(
      message: "the stored profile's metadata is \(isNull ? "null" : "missing"): the script would throw "
        + "(Object.keys of \(isNull ? "null" : "undefined"))",
      suggestion: "set \"matchMetadata\": false to compare locations only")
  }

  static let incomingProfileNull = ScriptError(
    message: "the incoming profile is null: the script would throw reading its identifier")

  static let storedProfileNull = ScriptError(
    message: "a stored profile is null: the script would throw reading its identifier")

  static let neverTerminates = ScriptError(
    message: "the stored metadata's \"length\" is beyond 2^53: the script's loop over it would never end")

  static func location(incoming: JSValue, stored: JSValue, geolib: String) -> ScriptError {
    func describe(_ side: String, _ value: JSValue) -> String? {
      switch value {
      case .undefined: "the \(side) profile has no location"
      case .json(.null): "the \(side) profile's location is null"
      default: nil
      }
    }
    let what = describe("incoming", incoming) ?? describe("stored", stored) ?? "a coordinate is null"
    return ScriptError(
      message: "\(what): the script would throw in geolib's getDistance (\(geolib))",
      suggestion: "set \"matchLocation\": false to compare metadata only")
  }
}
