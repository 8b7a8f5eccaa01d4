import DeviceMatch
import ProfileJSON
import Testing

/// The script's decision over stored profiles (src/index.js) and the config.
@Suite(.timeLimit(.minutes(10))) struct DeviceMatcherTests {
  let incoming: JSON = ["identifier": "dev-1", "metadata": ["a": 1], "location": ["lat": 1, "lng": 1]]

  @Test("unknownDevice unless an identifier is strictly equal")
  func unknownDevice() {
    let other: JSON = ["identifier": "dev-2", "metadata": ["a": 1], "location": ["lat": 1, "lng": 1]]
    #expect(DeviceMatcher().match(incoming: incoming, storedProfiles: [other]).outcome == .unknownDevice)
    #expect(DeviceMatcher().match(incoming: incoming, storedProfiles: []).outcome == .unknownDevice)
    let numeric: JSON = ["identifier": 1, "metadata": [:], "location": ["lat": 1, "lng": 1]]
    let text: JSON = ["identifier": "1", "metadata": [:], "location": ["lat": 1, "lng": 1]]
    #expect(DeviceMatcher().match(incoming: numeric, stored: text).outcome == .unknownDevice)
  }

  @Test("the first stored profile with the same identifier decides")
  func firstDecides() {
    let differs: JSON = ["identifier": "dev-1", "metadata": ["a": 2], "location": ["lat": 1, "lng": 1]]
    let result = DeviceMatcher().match(incoming: incoming, storedProfiles: [["identifier": "x"], differs, incoming])
    #expect(result.outcome == .false)
    #expect(result.storedIndex == 1)
  }

  @Test("true iff metadata and location both match")
  func trueNeedsBoth() {
    let far: JSON = ["identifier": "dev-1", "metadata": ["a": 1], "location": ["lat": 2, "lng": 1]]
    #expect(DeviceMatcher().match(incoming: incoming, stored: incoming).outcome == .true)
    let result = DeviceMatcher().match(incoming: incoming, stored: far)
    #expect(result.outcome == .false)
    #expect(result.metadata?.matches == true && result.location?.matches == false)
  }

  @Test("missing identifiers on both sides are equal (undefined === undefined)")
  func missingIdentifiersEqual() {
    let a: JSON = ["metadata": ["a": 1], "location": ["lat": 1, "lng": 1]]
    #expect(DeviceMatcher().match(incoming: a, stored: a).outcome == .true)
  }

  @Test("a null profile: the script would throw reading its identifier")
  func nullProfiles() {
    #expect(DeviceMatcher().match(incoming: .null, stored: incoming).outcome == .error)
    #expect(DeviceMatcher().match(incoming: incoming, stored: .null).outcome == .error)
  }

  @Test("an unparsable incoming profile gives unknownDevice")
  func unparsableIncoming() {
    #expect(DeviceMatcher().match(incoming: nil, storedProfiles: [incoming]).outcome == .unknownDevice)
  }

  @Test("location is compared even when metadata fails, and its throw wins")
  func locationEvaluatedAfterMetadata() {
    let stored: JSON = ["identifier": "dev-1", "metadata": ["a": 2]]
    let result = DeviceMatcher().match(incoming: incoming, stored: stored)
    #expect(result.outcome == .error)
    #expect(result.metadata?.matches == false)
  }

  @Test("matchLocation false compares metadata only; matchMetadata false location only")
  func halvesCanBeSwitchedOff() {
    let noLocation: JSON = ["identifier": "dev-1", "metadata": ["a": 1]]
    #expect(DeviceMatcher(config: MatchConfig(matchLocation: false)).match(incoming: incoming, stored: noLocation).outcome == .true)
    let noMetadata: JSON = ["identifier": "dev-1", "location": ["lat": 1, "lng": 1]]
    #expect(DeviceMatcher(config: MatchConfig(matchMetadata: false)).match(incoming: incoming, stored: noMetadata).outcome == .true)
    #expect(DeviceMatcher().match(incoming: incoming, stored: noMetadata).outcome == .error)
  }

  @Test("config defaults: attrWeights {}, maxUnmatchedAttrs 0, allowedRadius 100, both halves")
  func configDefaults() throws {
    let config = try MatchConfig(json: [:])
    #expect(config == MatchConfig(attrWeights: [:], maxUnmatchedAttrs: 0, allowedRadius: 100))
    #expect(config.matchMetadata && config.matchLocation)
  }

  @Test("config reads every key")
  func configReadsKeys() throws {
    let config = try MatchConfig(json: [
      "attrWeights": ["cpu": 3], "maxUnmatchedAttrs": 2, "allowedRadius": 250, "matchMetadata": false,
      "matchLocation": false,
    ])
    #expect(config.attrWeights["cpu"] == 3)
    #expect(config.maxUnmatchedAttrs == 2 && config.allowedRadius == 250)
    #expect(!config.matchMetadata && !config.matchLocation)
  }

  @Test("an unknown config key is an error naming the nearest valid key")
  func unknownConfigKey() {
    #expect(throws: MatchConfigError.unknownKey("allowedRadious", suggestion: "allowedRadius")) {
      try MatchConfig(json: ["allowedRadious": 1])
    }
    #expect(throws: MatchConfigError.unknownKey("attrweight", suggestion: "attrWeights")) {
      try MatchConfig(json: ["attrweight": [:]])
    }
  }

  @Test("wrongly typed config values are errors")
  func wrongConfigTypes() {
    #expect(throws: MatchConfigError.self) { try MatchConfig(json: ["maxUnmatchedAttrs": "2"]) }
    #expect(throws: MatchConfigError.self) { try MatchConfig(json: ["attrWeights": [1]]) }
    #expect(throws: MatchConfigError.self) { try MatchConfig(json: ["matchLocation": 1]) }
    #expect(throws: MatchConfigError.notAnObject) { try MatchConfig(json: [1]) }
  }
}
