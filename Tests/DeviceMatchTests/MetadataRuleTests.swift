import DeviceMatch
import ProfileJSON
import Testing

/// The metadata rules of the script (src/metadata.js, src/utils.js), one behaviour each.
@Suite(.timeLimit(.minutes(10))) struct MetadataRuleTests {
  func match(_ incoming: JSON?, _ stored: JSON?, weights: JSONObject = [:], max: Double = 0) throws -> MetadataResult {
    try MetadataMatcher(attrWeights: weights, maxUnmatchedAttrs: max).match(incoming: incoming, stored: stored)
  }

  @Test("walks stored keys in JavaScript property order: array indices ascending first")
  func propertyOrder() throws {
    let stored = try JSONParser.parse(#"{"b": 1, "10": 1, "a": 1, "2": 1, "01": 1, "4294967295": 1}"#)
    let result = try match([:], stored, max: 100)
    #expect(result.mismatches.map(\.key) == ["2", "10", "b", "a", "01", "4294967295"])
  }

  @Test("incoming-only keys are ignored")
  func incomingOnlyKeysIgnored() throws {
    #expect(try match(["a": 1, "extra": 2, "more": ["x": 1]], ["a": 1]).matches)
  }

  @Test("numbers compare as doubles: 1, 1.0 and 1e0 are equal")
  func numbersAsDoubles() throws {
    #expect(try match(try JSONParser.parse(#"{"a": 1.0, "b": 1e0}"#), ["a": 1, "b": 1]).sum == 0)
  }

  @Test("no type coercion: \"1\" and 1 differ, true and 1 differ")
  func noCoercion() throws {
    #expect(try match(["a": "1", "b": true], ["a": 1, "b": 1], max: 5).sum == 2)
  }

  @Test("null and missing differ")
  func nullVersusMissing() throws {
    let result = try match([:], ["a": .null], max: 5)
    #expect(result.sum == 1)
    #expect(result.mismatches.first?.incoming == nil && result.mismatches.first?.stored == .null)
    #expect(try match(["a": .null], ["a": .null]).matches)
  }

  @Test("strings compare by code units, without Unicode normalisation")
  func stringsByCodeUnits() throws {
    #expect(try match(["a": "e\u{301}"], ["a": "\u{E9}"]).matches == false)
    #expect(try match(["a": "\u{E9}"], ["a": "\u{E9}"]).matches)
  }

  @Test("arrays compare index by index over the stored length")
  func arraysOverStoredLength() throws {
    #expect(try match(["l": [1, 2, 3]], ["l": [1, 2]]).matches)
    let result = try match(["l": [1]], ["l": [1, 2, 3]], max: 5)
    #expect(result.mismatches.map(\.path) == ["metadata.l[1]", "metadata.l[2]"])
  }

  @Test("array elements weigh with the array's key")
  func arrayElementsUseArrayKey() throws {
    let result = try match(["l": [0, 0]], ["l": [1, 2]], weights: ["l": 0.5], max: 5)
    #expect(result.sum == 1)
    #expect(result.mismatches.allSatisfy { $0.key == "l" && $0.weight == 0.5 })
  }

  @Test("a leaf's weight is its own key name's, at any depth")
  func weightByLeafKeyName() throws {
    let result = try match(["p": ["version": 1]], ["p": ["version": 2]], weights: ["version": 4], max: 10)
    #expect(result.sum == 4)
  }

  @Test("non-number weight counts as 1")
  func nonNumberWeightCountsAsOne() throws {
    #expect(try match(["a": 1], ["a": 2], weights: ["a": "two"], max: 10).sum == 1)
    #expect(try match(["a": 1], ["a": 2], weights: ["a": .null], max: 10).sum == 1)
  }

  @Test("zero and negative weights are allowed")
  func zeroAndNegativeWeights() throws {
    #expect(try match(["a": 1, "b": 1], ["a": 2, "b": 2], weights: ["a": 0, "b": -1]).sum == -1)
    #expect(try match(["a": 1, "b": 1], ["a": 2, "b": 2], weights: ["a": 0, "b": -1]).matches)
  }

  @Test("weights sum as doubles: 0.1 + 0.2 exceeds 0.3")
  func weightsSumAsDoubles() throws {
    let result = try match(["a": 0, "b": 0], ["a": 1, "b": 1], weights: ["a": 0.1, "b": 0.2], max: 0.3)
    #expect(result.sum == 0.1 + 0.2)
    #expect(result.matches == false)
  }

  @Test("the walk stops as soon as the sum exceeds the maximum")
  func earlyStop() throws {
    let result = try match(["a": 0, "b": 0, "c": ["d": 0]], ["a": 1, "b": 1, "c": ["d": 1]], max: 1)
    #expect(result.mismatches.map(\.path) == ["metadata.a", "metadata.b"])
    #expect(result.stoppedEarly)
    #expect(result.sum == 2)
  }

  @Test("the sum may equal the maximum and still match")
  func sumEqualToMaximumMatches() throws {
    #expect(try match(["a": 0, "b": 0], ["a": 1, "b": 1], max: 2).matches)
  }

  @Test("a negative maximum fails before the first comparison")
  func negativeMaximum() throws {
    let result = try match(["a": 1], ["a": 1], max: -1)
    #expect(result.matches == false && result.mismatches.isEmpty)
  }

  @Test(
    "a falsy incoming value is passed down as itself",
    arguments: [
      (JSON.bool(false), JSON.bool(false)), (.null, .null), (.number(0), .number(0)), (.string(""), .string("")),
    ])
  func falsyPassedDown(incoming: JSON, leaf: JSON) throws {
    #expect(try match(["a": incoming], ["a": ["b": leaf, "c": ["d": leaf]]]).matches)
    #expect(try match(["a": incoming], ["a": ["b": "other"]]).matches == false)
  }

  @Test("a string is indexed by position and has a length")
  func stringIndexing() throws {
    #expect(try match(["a": "xy"], ["a": ["0": "x", "1": "y", "length": 2]]).matches)
    #expect(try match(["a": "xy"], ["a": ["x", "y"]]).matches)
    #expect(try match(["a": "xy"], ["a": ["x", "z"]]).matches == false)
    #expect(try match(["a": "😀"], ["a": ["length": 2]]).matches)
  }

  @Test("an array is indexed by key and has a length")
  func arrayIndexingByKey() throws {
    #expect(try match(["a": ["p", "q"]], ["a": ["1": "q", "length": 2]]).matches)
    #expect(try match(["a": ["p": 1]], ["a": ["p"]]).matches == false)
  }

  @Test("a truthy number or boolean has no members")
  func primitivesHaveNoMembers() throws {
    #expect(try match(["a": 5], ["a": ["b": 5]]).matches == false)
    #expect(try match(["a": true], ["a": ["length": .null]]).matches == false)
  }

  @Test("inherited Object.prototype members are not emulated")
  func noPrototypeMembers() throws {
    #expect(try match([:], ["toString": 1]).matches == false)
  }

  @Test("a top-level incoming array walks the stored value by index, weighed as \"undefined\"")
  func topLevelIncomingArray() throws {
    let result = try match(["x", "y"], ["x", "z"], weights: ["undefined": 7], max: 10)
    #expect(result.sum == 7)
    #expect(result.mismatches.first?.key == nil)
    // A stored object has no length: nothing is compared.
    #expect(try match(["x"], ["a": 1]).matches)
    // …unless it has a "length" member.
    #expect(try match(["x"], ["length": 1, "0": "y"]).matches == false)
  }

  @Test("stored metadata that is a string walks its characters; a number or boolean has no keys")
  func storedPrimitiveMetadata() throws {
    #expect(try match("ab", "ab").matches)
    #expect(try match("ab", "ac").matches == false)
    #expect(try match(["a": 1], 5).matches)
    #expect(try match(["a": 1], true).matches)
  }

  @Test("stored metadata missing or null: the script would throw")
  func storedMetadataMissing() {
    #expect(throws: ScriptError.self) { try match(["a": 1], nil) }
    #expect(throws: ScriptError.self) { try match(["a": 1], .null) }
    #expect(throws: ScriptError.self) { try match(["x"], .null) }
  }

  @Test("incoming metadata missing: every stored leaf mismatches")
  func incomingMetadataMissing() throws {
    #expect(try match(nil, ["a": 1, "b": ["c": 2]], max: 10).sum == 2)
  }

  @Test("a stored length beyond 2^53 would loop forever")
  func neverTerminates() {
    #expect(throws: ScriptError.self) { try match(["x"], ["length": 1e300, "0": "x"]) }
  }

  @Test("mismatch paths quote keys that are not identifiers")
  func pathRendering() throws {
    let result = try match([:], ["a b": ["c": [1]]], max: 5)
    #expect(result.mismatches.first?.path == #"metadata["a b"].c[0]"#)
  }

  @Test("every comparison starts from a fresh count")
  func freshCount() throws {
    let matcher = MetadataMatcher(maxUnmatchedAttrs: 1)
    #expect(try matcher.match(incoming: ["a": 0], stored: ["a": 1]).matches)
    #expect(try matcher.match(incoming: ["a": 0], stored: ["a": 1]).matches)
  }
}
