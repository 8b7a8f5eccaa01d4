import DeviceMatch
import ProfileJSON
import Testing

/// geolib getDistance as the script uses it (src/location.js).
@Suite(.timeLimit(.minutes(10))) struct LocationRuleTests {
  let berlin: JSON = ["latitude": 52.5205, "longitude": 13.4055]

  func distance(_ incoming: JSON?, _ stored: JSON?) throws -> Double {
    try LocationMatcher().match(incoming: incoming, stored: stored).distance
  }

  @Test(
    "coordinate key variants: lat/lng, lat/lon, latitude/longitude, [lon, lat]",
    arguments: [
      ["lat": 52.52, "lng": 13.405] as JSON, ["lat": 52.52, "lon": 13.405], ["latitude": 52.52, "longitude": 13.405],
      [13.405, 52.52],
    ])
  func keyVariants(point: JSON) throws {
    #expect(try distance(point, berlin) == 65)
  }

  @Test("lat is found before latitude, lng before lon and longitude")
  func keyPriority() throws {
    #expect(try distance(["lat": 52.52, "latitude": 0, "lng": 13.405, "longitude": 0], berlin) == 65)
  }

  @Test("numeric strings are accepted")
  func numericStrings() throws {
    #expect(try distance(["lat": "52.52", "lon": " 13.405 "], berlin) == 65)
  }

  @Test("sexagesimal strings are accepted")
  func sexagesimal() throws {
    let point: JSON = ["latitude": "52° 31' 12\" N", "longitude": "13° 24' 18\" E"]
    #expect(try distance(point, berlin) == 65)
    #expect(Geolib.sexagesimal("51° 31' S")?.direction == "S")
    #expect(Geolib.sexagesimal("1234° 1'") == nil)
  }

  @Test("JavaScript conversions: true is 1, [] and blank text are 0, hex text is read")
  func javaScriptConversions() throws {
    #expect(try distance(["latitude": true, "longitude": []], ["latitude": 1, "longitude": 0]) == 0)
    #expect(try distance(["latitude": " ", "longitude": "0x1"], ["latitude": 0, "longitude": 1]) == 0)
  }

  @Test("an unreadable coordinate makes the distance NaN, which never matches")
  func unreadableIsNaN() throws {
    let result = try LocationMatcher(allowedRadius: .infinity).match(incoming: ["latitude": "north"], stored: berlin)
    #expect(result.distance.isNaN)
    #expect(result.matches == false)
  }

  @Test("the match is strict: distance < allowedRadius")
  func strictRadius() throws {
    #expect(try LocationMatcher(allowedRadius: 65).match(incoming: [13.405, 52.52], stored: berlin).matches == false)
    #expect(try LocationMatcher(allowedRadius: 66).match(incoming: [13.405, 52.52], stored: berlin).matches)
  }

  @Test("distances round with Math.round (halves up)")
  func mathRound() {
    #expect(JS.round(2.5) == 3)
    #expect(JS.round(-2.5) == -2)
    #expect(JS.round(0.49999999999999994) == 0)
    #expect(JS.round(.nan).isNaN)
  }

  @Test("antipodes clamp the cosine to [-1, 1]")
  func antipodes() throws {
    #expect(try distance([0, 0], [180, 0]) == 20_037_508)
  }

  @Test(
    "a location missing or null on either side: the script would throw",
    arguments: [
      (JSON?.none, JSON?.some(["lat": 1, "lng": 1])), (.some(.null), .some(["lat": 1, "lng": 1])),
      (.some(["lat": 1, "lng": 1]), .none), (.some(["lat": 1, "lng": 1]), .some(.null)),
      (.some(["lat": .null, "lng": 1]), .some(["lat": 1, "lng": 1])),
    ])
  func missingLocationThrows(incoming: JSON?, stored: JSON?) {
    #expect {
      try LocationMatcher().match(incoming: incoming, stored: stored)
    } throws: { error in
      (error as? ScriptError)?.suggestion?.contains("matchLocation") == true
    }
  }
}
