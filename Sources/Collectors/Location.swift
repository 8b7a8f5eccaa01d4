import ProfileJSON
import SystemCalls

/// A position the user configured. fr-profile never invents one: no GPS, no IP geolocation.
public struct Location: Sendable, Equatable {
  public var latitude: Double
  public var longitude: Double

  /// Checks the ranges: latitude −90…90, longitude −180…180, both finite.
  public init(latitude: Double, longitude: Double, source: String) throws(LocationError) {
    guard latitude.isFinite, (-90...90).contains(latitude) else {
      throw .invalid(source: source, reason: "latitude \(latitude) is outside -90…90")
    }
    guard longitude.isFinite, (-180...180).contains(longitude) else {
      throw .invalid(source: source, reason: "longitude \(longitude) is outside -180…180")
    }
    self.latitude = latitude
    self.longitude = longitude
  }

  /// `{"latitude": …, "longitude": …}` as the SDKs send it.
  public var json: JSON {
    // Labelled members, not a dictionary literal (see DeviceProfile.profile).
    .object(JSONObject([(key: "latitude", value: .number(latitude)), (key: "longitude", value: .number(longitude))]))
  }

  /// Parses "52.52,13.405" (spaces allowed around either number).
  public static func parse(_ text: String, source: String) throws(LocationError) -> Location {
    let parts = text.split(separator: ",", omittingEmptySubsequences: false).map { trimmed($0) }
    guard parts.count == 2 else {
      throw .invalid(source: source, reason: "expected \"LATITUDE,LONGITUDE\", e.g. \"52.52,13.405\", got \"\(text)\"")
    }
    guard let latitude = parseCoordinate(parts[0]) else {
      throw .invalid(source: source, reason: "latitude \"\(parts[0])\" is not a number")
    }
    guard let longitude = parseCoordinate(parts[1]) else {
      throw .invalid(source: source, reason: "longitude \"\(parts[1])\" is not a number")
    }
    return try Location(latitude: latitude, longitude: longitude, source: source)
  }

  /// A decimal number; "nan", "inf" and hex floats, which `Double(_:)` accepts, are refused.
  static func parseCoordinate(_ text: String) -> Double? {
    guard !text.isEmpty, text.allSatisfy({ $0.isNumber || "+-.eE".contains($0) }) else { return nil }
    return Double(text)
  }

  /// The position in a location file's text: its first line that is neither empty nor a
  /// comment ("#"), as "LATITUDE,LONGITUDE". Where the file is and whether it beats flags or the
  /// environment is the caller's policy (fr-profile: flags, then FR_PROFILE_LOCATION, then the file).
  ///
  ///     # office
  ///     48.8566,2.3522
  public static func parseFile(_ text: String, source: String) throws(LocationError) -> Location {
    let lines = text.split(separator: "\n").map { trimmed($0) }.filter { !$0.isEmpty && !$0.hasPrefix("#") }
    guard let line = lines.first else { throw .invalid(source: source, reason: "no \"LATITUDE,LONGITUDE\" line") }
    return try parse(line, source: source)
  }
}

/// A configured position that is not one: ``source`` names where it came from (a flag, a
/// variable, a file), the message what is wrong.
///
/// A struct, not an enum, so that a release can add a failure without breaking an embedder's
/// `switch`: new codes may be added in any release. Match on ``code`` (`error.code ==
/// .invalid`, or `switch error.code` with a `default:`); ``description`` is the message.
public struct LocationError: Error, Sendable, Hashable, CustomStringConvertible {
  /// What kind of failure it is. New codes may be added in any release: switch with a
  /// `default:`.
  public struct Code: Hashable, Sendable, CustomStringConvertible {
    private enum Backing: Hashable, Sendable { case invalid }

    private var backing: Backing
    private init(_ backing: Backing) { self.backing = backing }

    /// The text is not a position, or the position is out of range.
    public static let invalid = Code(.invalid)

    public var description: String { String(describing: backing) }
  }

  /// What kind of failure it is.
  public let code: Code
  /// Where the position came from (a flag, a variable, a file).
  public let source: String
  /// One line saying what is wrong.
  public let description: String

  /// The position from `source` is not one: `reason` says what is wrong.
  public static func invalid(source: String, reason: String) -> Self {
    Self(code: .invalid, source: source, description: "invalid location in \(source): \(reason).")
  }
}
