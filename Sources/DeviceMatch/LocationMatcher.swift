import ProfileJSON

/// The location half of a comparison.
public struct LocationResult: Sendable, Equatable {
  /// `distance < allowedRadius` (false when the distance is NaN).
  public var matches: Bool
  /// Whole metres (JavaScript `Math.round`), NaN when a coordinate could not be read.
  public var distance: Double
  public var allowedRadius: Double
  /// The coordinates as geolib read them (NaN when unreadable).
  public var incoming: (latitude: Double, longitude: Double)
  public var stored: (latitude: Double, longitude: Double)

  public static func == (lhs: LocationResult, rhs: LocationResult) -> Bool {
    func same(_ a: Double, _ b: Double) -> Bool { a == b || (a.isNaN && b.isNaN) }
    return lhs.matches == rhs.matches && same(lhs.distance, rhs.distance) && lhs.allowedRadius == rhs.allowedRadius
      && same(lhs.incoming.latitude, rhs.incoming.latitude) && same(lhs.incoming.longitude, rhs.incoming.longitude)
      && same(lhs.stored.latitude, rhs.stored.latitude) && same(lhs.stored.longitude, rhs.stored.longitude)
  }
}

/// The script's `locationMatcher` (src/location.js): geolib `getDistance` below a radius.
public struct LocationMatcher: Sendable {
  /// Metres; a distance must be strictly below it.
  public let allowedRadius: Double

  /// The script's `locationMatcher(allowedRadius)`, 100 m by default.
  public init(allowedRadius: Double = 100) { self.allowedRadius = allowedRadius }

  /// Compares two locations (`nil` is a missing member). Throws where geolib throws: a
  /// location missing or `null`, or a coordinate member that is `null`.
  public func match(incoming: JSON?, stored: JSON?) throws(ScriptError) -> LocationResult {
    try match(incoming: incoming.map(JSValue.json) ?? .undefined, stored: stored.map(JSValue.json) ?? .undefined)
  }

  func match(incoming: JSValue, stored: JSValue) throws(ScriptError) -> LocationResult {
    let distance: Geolib.Distance
    do {
      distance = try Geolib.distance(from: incoming, to: stored)
    } catch {
      throw ScriptError.location(incoming: incoming, stored: stored, geolib: error.message)
    }
    return LocationResult(
      matches: distance.metres < allowedRadius, distance: distance.metres, allowedRadius: allowedRadius,
      incoming: (distance.fromLatitude, distance.fromLongitude), stored: (distance.toLatitude, distance.toLongitude))
  }
}
