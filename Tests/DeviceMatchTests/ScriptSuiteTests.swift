import DeviceMatch
import ProfileJSON
import Testing

/// The device-match script's own test suite (test/src/*.test.js, test/dist/script.test.js),
/// one Swift test per case, named as in the original.
@Suite(.timeLimit(.minutes(10))) struct ScriptSuiteTests {
  static func profile(_ text: String) -> JSON { try! JSONParser.parse(text) }
  static let stored = profile(ScriptProfiles.stored)
  static let similar = profile(ScriptProfiles.similar)
  static let unmatching = profile(ScriptProfiles.unmatching)
  static let unmatchingWeighted = profile(ScriptProfiles.unmatchingWeighted)
  static let missingProps = profile(ScriptProfiles.missingProps)
  static let test = profile(ScriptProfiles.test)

  // metadata.test.js: `undef: undefined` members cannot exist in JSON; an undefined stored
  // value equals an undefined incoming one, so leaving them out changes nothing.
  static let a: JSON = ["num": 1, "nulla": .null, "obj": ["alpha": "a", "beta": "b"], "arr": ["one", "two"]]
  static let b: JSON = ["num": 1, "nulla": .null, "obj": ["alpha": "a", "beta": "c"], "arr": ["one", "three"]]
  static let c: JSON = ["num": 4, "nulla": .null, "obj": ["alpha": "c", "beta": "b"], "arr": ["two", "three"]]
  static let attrWeights: JSONObject = [
    "deviceMemory": 3, "fonts": 2, "hardwareConcurrency": 3, "maxTouchPoints": 2, "platform": 3, "userAgent": "two",
  ]

  // MARK: Test simple objects with diverse value types

  @Test("simple objects: should return true for exact profile match")
  func simpleExactMatch() throws {
    #expect(try MetadataMatcher().match(incoming: Self.a, stored: Self.a).matches == true)
  }

  @Test("simple objects: should return true for allowed number of mismatch")
  func simpleAllowedMismatch() throws {
    let result = try MetadataMatcher(maxUnmatchedAttrs: 2).match(incoming: Self.a, stored: Self.b)
    #expect(result.matches == true)
    #expect(result.sum == 2)
  }

  @Test("simple objects: should return false for exceeding allowed mismatch")
  func simpleExceedingMismatch() throws {
    let result = try MetadataMatcher(attrWeights: ["num": 3], maxUnmatchedAttrs: 2).match(incoming: Self.a, stored: Self.c)
    #expect(result.matches == false)
    #expect(result.mismatches.map(\.path) == ["metadata.num"])
    #expect(result.stoppedEarly)
  }

  // MARK: Test actual profiles

  @Test("actual profiles: should return true for exact profile match")
  func profileExactMatch() throws {
    let matcher = MetadataMatcher(attrWeights: Self.attrWeights, maxUnmatchedAttrs: 2)
    #expect(try matcher.match(incoming: Self.stored["metadata"], stored: Self.stored["metadata"]).matches == true)
  }

  @Test("actual profiles: should return true for allowed number of mismatch")
  func profileAllowedMismatch() throws {
    let matcher = MetadataMatcher(attrWeights: Self.attrWeights, maxUnmatchedAttrs: 2)
    let result = try matcher.match(incoming: Self.similar["metadata"], stored: Self.stored["metadata"])
    #expect(result.matches == true)
    #expect(result.mismatches.map(\.path) == ["metadata.hardware.display.width", "metadata.hardware.display.height"])
  }

  @Test("actual profiles: should return false for exceeding allowed mismatch")
  func profileExceedingMismatch() throws {
    let matcher = MetadataMatcher(attrWeights: Self.attrWeights, maxUnmatchedAttrs: 2)
    #expect(try matcher.match(incoming: Self.unmatching["metadata"], stored: Self.stored["metadata"]).matches == false)
  }

  @Test("actual profiles: should return false for unmatched single, but highly weighted property")
  func profileHighlyWeightedMismatch() throws {
    let matcher = MetadataMatcher(attrWeights: Self.attrWeights, maxUnmatchedAttrs: 2)
    let result = try matcher.match(incoming: Self.unmatchingWeighted["metadata"], stored: Self.stored["metadata"])
    #expect(result.matches == false)
    #expect(result.mismatches.count == 1)
    #expect(result.mismatches.first?.key == "deviceMemory" && result.mismatches.first?.weight == 3)
  }

  @Test("actual profiles: should return false, and not crash, for missing props allowed mismatch")
  func profileMissingProps() throws {
    let matcher = MetadataMatcher(attrWeights: Self.attrWeights, maxUnmatchedAttrs: 2)
    #expect(try matcher.match(incoming: Self.missingProps["metadata"], stored: Self.stored["metadata"]).matches == false)
  }

  // MARK: Test location coordinates matcher with range

  @Test("location: should return true with exact coordinates")
  func locationExact() throws {
    let result = try LocationMatcher().match(incoming: Self.stored["location"], stored: Self.stored["location"])
    #expect(result.matches == true)
    #expect(result.distance == 0)
  }

  @Test("location: should return true of within range")
  func locationWithinRange() throws {
    let result = try LocationMatcher(allowedRadius: 200).match(incoming: Self.similar["location"], stored: Self.stored["location"])
    #expect(result.matches == true)
    #expect(result.distance == 125)
  }

  @Test("location: should return false when out of range")
  func locationOutOfRange() throws {
    let result = try LocationMatcher(allowedRadius: 200).match(
      incoming: Self.unmatching["location"], stored: Self.stored["location"])
    #expect(result.matches == false)
  }

  @Test("location: should return false when bad coordinates are given")
  func locationBadCoordinates() throws {
    let matcher = LocationMatcher(allowedRadius: 200)
    #expect(try matcher.match(incoming: ["latitude": 34], stored: Self.stored["location"]).matches == false)
    #expect(try matcher.match(incoming: "not proper", stored: Self.stored["location"]).matches == false)
    #expect(
      try matcher.match(incoming: Self.stored["location"], stored: ["latitude": "34", "logitude": -54.3456]).matches == false)
  }

  // MARK: Test the built script (test.config.js: the same profile incoming and stored)

  @Test("built script: matching profiles should match with \"true\"")
  func builtScriptMatches() {
    let result = DeviceMatcher().match(incoming: Self.test, storedProfiles: [Self.test])
    #expect(result.outcome == .true)
    #expect(result.storedIndex == 0)
  }
}
