import ProfileJSON

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// Why geolib would throw while reading a coordinate (the script does not catch it).
struct GeolibThrow: Error {
  /// geolib's own message, e.g. `'null' is no valid coordinate.`
  var message: String
}

/// A port of geolib 3.3.3's `getDistance` (the version the script bundles), including how it
/// finds and reads coordinates: key lists, numeric and sexagesimal strings, arrays, and the
/// JavaScript conversions behind `toRad`. Only the default accuracy of 1 m is used.
package enum Geolib {
  static let earthRadius = 6_378_137.0
  static let longitudeKeys = ["lng", "lon", "longitude", "0"]
  static let latitudeKeys = ["lat", "latitude", "1"]
  static let altitudeKeys = ["alt", "altitude", "elevation", "elev", "2"]

  /// The coordinates geolib read and the distance in whole metres (NaN when unreadable).
  struct Distance {
    var fromLatitude: Double
    var fromLongitude: Double
    var toLatitude: Double
    var toLongitude: Double
    var metres: Double
  }

  /// `getDistance(from, to)`.
  static func distance(from: JSValue, to: JSValue) throws(GeolibThrow) -> Distance {
    let fromLat = try coordinate(from, keys: latitudeKeys)
    let fromLon = try coordinate(from, keys: longitudeKeys)
    let toLat = try coordinate(to, keys: latitudeKeys)
    let toLon = try coordinate(to, keys: longitudeKeys)
    let metres = distance(fromLatitude: fromLat, fromLongitude: fromLon, toLatitude: toLat, toLongitude: toLon)
    return Distance(fromLatitude: fromLat, fromLongitude: fromLon, toLatitude: toLat, toLongitude: toLon, metres: metres)
  }

  /// The spherical law of cosines on plain degrees, evaluated in geolib's order with the
  /// engine's fdlibm sin/cos/acos, rounded with `Math.round`.
  @inline(__always)
  static func distance(fromLatitude: Double, fromLongitude: Double, toLatitude: Double, toLongitude: Double) -> Double {
    let toLat = toRad(toLatitude)
    let fromLat = toRad(fromLatitude)
    let cosine =
      FDLibm.sin(toLat) * FDLibm.sin(fromLat) + FDLibm.cos(toLat) * FDLibm.cos(fromLat)
      * FDLibm.cos(toRad(fromLongitude) - toRad(toLongitude))
    return JS.round(FDLibm.acos(robustAcos(cosine)) * earthRadius)
  }

  @inline(__always) static func toRad(_ value: Double) -> Double { value * Double.pi / 180 }

  @inline(__always) static func robustAcos(_ value: Double) -> Double {
    if value > 1 { return 1 }
    if value < -1 { return -1 }
    return value
  }

  /// `toRad(getLatitude(point))` / `toRad(getLongitude(point))` before the multiplication by π:
  /// the number `toRad` would see (`undefined` → NaN).
  static func coordinate(_ point: JSValue, keys: [String]) throws(GeolibThrow) -> Double {
    guard let key = try coordinateKey(point, keys) else { return .nan }
    // A fast path for the common case: a plain number is returned unchanged by toDecimal.
    let value = JS.get(point, key)
    if case .json(.number(let number)) = value { return number }
    guard case .json(let json) = value else { return JS.toNumber(value) }
    return JS.toNumber(try toDecimal(json))
  }

  /// `getCoordinateKey`: the first key of `keys` that `point` owns; throws for null/undefined.
  static func coordinateKey(_ point: JSValue, _ keys: [String]) throws(GeolibThrow) -> String? {
    switch point {
    case .undefined: throw GeolibThrow(message: "'undefined' is no valid coordinate.")
    case .json(.null): throw GeolibThrow(message: "'null' is no valid coordinate.")
    default: break
    }
    return keys.first { JS.hasOwn(point, $0) }
  }

  // MARK: Value conversion (geolib's toDecimal and its helpers)

  /// `value.toString()`, which throws on null (undefined never reaches here).
  static func stringOf(_ value: JSON) throws(GeolibThrow) -> String {
    if case .null = value { throw GeolibThrow(message: "Cannot read properties of null (reading 'toString')") }
    return JS.toString(value)
  }

  /// `isDecimal`: `parseFloat(s) === Number(s)` for the trimmed text, and not NaN.
  static func isDecimal(_ value: JSON) throws(GeolibThrow) -> Bool {
    if case .number(let number) = value { return !number.isNaN }
    let text = String(JS.trim(try stringOf(value)))
    let parsed = JS.parseFloat(text)
    if parsed.isNaN { return false }
    return parsed == JS.stringToNumber(text)
  }

  static func isSexagesimal(_ value: JSON) throws(GeolibThrow) -> Bool {
    sexagesimal(String(JS.trim(try stringOf(value)))) != nil
  }

  /// `sexagesimalToDecimal` on text that matched geolib's pattern.
  static func sexagesimalToDecimal(_ value: JSON) throws(GeolibThrow) -> Double {
    guard let parts = sexagesimal(String(JS.trim(try stringOf(value)))) else {
      throw GeolibThrow(message: "Given value is not in sexagesimal format")
    }
    let minutes = orZero(JS.stringToNumber(parts.minutes) / 60)
    let seconds = orZero(parts.seconds.map { JS.stringToNumber($0) / 3600 } ?? .nan)
    let decimal = JS.parseFloat(parts.degrees) + minutes + seconds
    return parts.direction == "S" || parts.direction == "W" ? -decimal : decimal
  }

  /// `x || 0` for a number.
  static func orZero(_ value: Double) -> Double { value.isNaN || value == 0 ? 0 : value }

  /// geolib's pattern
  /// `^([0-9]{1,3})°\s*([0-9]{1,3}(?:\.(?:[0-9]{1,}))?)['′]\s*(([0-9]{1,3}(\.([0-9]{1,}))?)["″]\s*)?([NEOSW]?)$`,
  /// matched by hand (it never needs to backtrack): degrees, minutes, optional seconds, direction.
  package static func sexagesimal(_ text: String) -> (degrees: String, minutes: String, seconds: String?, direction: String)? {
    let scalars = Array(text.unicodeScalars)
    var index = 0
    func digits(max: Int) -> String? {
      var count = 0
      while index + count < scalars.count, ("0"..."9").contains(scalars[index + count]) { count += 1 }
      guard count >= 1 && count <= max else { return nil }
      defer { index += count }
      return String(String.UnicodeScalarView(scalars[index..<index + count]))
    }
    func number() -> String? {
      guard var text = digits(max: 3) else { return nil }
      if index < scalars.count, scalars[index] == "." {
        index += 1
        guard let fraction = digits(max: Int.max) else { return nil }
        text += "." + fraction
      }
      return text
    }
    func spaces() { while index < scalars.count, JS.isWhitespace(scalars[index]) { index += 1 } }

    guard let degrees = digits(max: 3), index < scalars.count, scalars[index] == "°" else { return nil }
    index += 1
    spaces()
    guard let minutes = number(), index < scalars.count, scalars[index] == "'" || scalars[index] == "′" else { return nil }
    index += 1
    spaces()
    var seconds: String?
    let beforeSeconds = index
    if let value = number(), index < scalars.count, scalars[index] == "\"" || scalars[index] == "″" {
      index += 1
      spaces()
      seconds = value
    } else {
      index = beforeSeconds
    }
    var direction = ""
    if index < scalars.count, "NEOSW".unicodeScalars.contains(scalars[index]) {
      direction = String(scalars[index])
      index += 1
    }
    guard index == scalars.count else { return nil }
    return (degrees, minutes, seconds, direction)
  }

  static func isValidLatitude(_ value: JSON) throws(GeolibThrow) -> Bool {
    try isValid(value, limit: 90)
  }

  static func isValidLongitude(_ value: JSON) throws(GeolibThrow) -> Bool {
    try isValid(value, limit: 180)
  }

  /// `parseFloat(value) > MAX || value < MIN` on decimals, recursing once for sexagesimal text.
  static func isValid(_ value: JSON, limit: Double) throws(GeolibThrow) -> Bool {
    if try isDecimal(value) {
      return !(JS.parseFloat(JS.toString(value)) > limit || JS.toNumber(value) < -limit)
    }
    if try isSexagesimal(value) {
      return try isValid(.number(try sexagesimalToDecimal(value)), limit: limit)
    }
    return false
  }

  /// `isValidCoordinate(point)`.
  static func isValidCoordinate(_ point: JSON) throws(GeolibThrow) -> Bool {
    let value = JSValue.json(point)
    let longitudeKey = try coordinateKey(value, longitudeKeys)
    let latitudeKey = try coordinateKey(value, latitudeKeys)
    _ = try coordinateKey(value, altitudeKeys)
    if case .array(let elements) = point, elements.count >= 2 {
      if try !isValidLongitude(elements[0]) { return false }
      return try isValidLatitude(elements[1])
    }
    guard let latitudeKey, let longitudeKey else { return false }
    guard case .json(let latitude) = JS.get(value, latitudeKey), case .json(let longitude) = JS.get(value, longitudeKey)
    else { return false }
    if try !isValidLatitude(latitude) { return false }
    if try !isValidLongitude(longitude) { return false }
    return true
  }

  /// `toDecimal(value)`; objects it would rebuild are returned as an empty object (any object
  /// converts to NaN, which is all `toRad` will do with it).
  static func toDecimal(_ value: JSON) throws(GeolibThrow) -> JSON {
    if try isDecimal(value) { return .number(JS.toNumber(value)) }
    if try isSexagesimal(value) { return .number(try sexagesimalToDecimal(value)) }
    if try isValidCoordinate(value) {
      if case .array(let elements) = value {
        var mapped: [JSON] = []
        for (index, element) in elements.enumerated() {
          mapped.append(index < 2 ? try toDecimal(element) : element)
        }
        return .array(mapped)
      }
      return .object(JSONObject())
    }
    if case .array(let elements) = value {
      var mapped: [JSON] = []
      for element in elements {
        mapped.append(try isValidCoordinate(element) ? try toDecimal(element) : element)
      }
      return .array(mapped)
    }
    return value
  }
}
