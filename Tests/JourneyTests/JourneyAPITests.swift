import Collectors
import DeviceIdentity
import Foundation
import Journey
import JourneyProfiler
import ProfileJSON
import SystemCalls
import Testing

@Suite(.timeLimit(.minutes(10))) struct JourneyAPITests {
  static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

  @Test func readmeExampleAnswersWithCustomCollectorAndDetector() throws {
    let state = FileManager.default.temporaryDirectory.appendingPathComponent("fr-profile-api-\(UUID().uuidString)").path
    defer { try? FileManager.default.removeItem(atPath: state) }
    let response = try Data(
      contentsOf: Self.root.appendingPathComponent("Tests/CLITests/Fixtures/callbacks/authenticate-device-profile-MetadataOnly.json"))
    let fixture = Self.root.appendingPathComponent("Tests/CollectorsTests/Fixtures/machines/laptop").path
    let body = try answerDeviceProfile(
      response: Array(response), keys: DeviceKeyStore(directory: state), system: SystemSource(root: fixture, environment: [:]))
    let step = try AuthenticateStep(parsing: Array(body.utf8))
    let value = try #require(step.callbacks?.first?.json["input"]?.arrayValue?.first?["value"]?.stringValue)
    let profile = try JSONParser.parse(value)
    #expect(profile["metadata"]?["kiosk"] == ["terminal": "unknown"])
    #expect(profile["metadata"]?.objectValue?.keys == ["platform", "hardware", "browser", "bluetooth", "network", "kiosk"])
    #expect(profile["metadata"]?["platform"]?["model"] == "ThinkPad X1 Carbon Gen 10")
  }

  @Test func apiDocumentShowsTheCompiledExampleVerbatim() throws {
    let source = try String(contentsOf: Self.root.appendingPathComponent("Tests/JourneyTests/APIExample.swift"), encoding: .utf8)
    let document = try String(contentsOf: Self.root.appendingPathComponent("docs/api.md"), encoding: .utf8)
    let begin = try #require(source.range(of: "// API-EXAMPLE-BEGIN\n"))
    let end = try #require(source.range(of: "// API-EXAMPLE-END"))
    let example = String(source[begin.upperBound..<end.lowerBound])
    #expect(document.contains("```swift\n" + example + "```"), "copy Tests/JourneyTests/APIExample.swift into docs/api.md")
  }

  @Test func requestReadsOutputsAndRejectsWrongTypes() throws {
    let good = Callback(
      index: 2,
      json: [
        "type": "DeviceProfileCallback",
        "output": [["name": "metadata", "value": true], ["name": "location", "value": false], ["name": "message", "value": "hi"]],
        "input": [["name": "IDToken1", "value": ""]],
      ])
    #expect(try DeviceProfileRequest(good) == DeviceProfileRequest(metadata: true, location: false, message: "hi"))
    #expect(try DeviceProfileRequest(Callback(index: 0, json: ["type": "NameCallback"])) == nil)
    let bad = Callback(
      index: 4,
      json: [
        "type": "DeviceProfileCallback", "output": [["name": "metadata", "value": 1], ["name": "location", "value": false]], "input": [[:]],
      ])
    #expect(throws: JourneyError.malformedCallback(index: 4, reason: "DeviceProfileCallback output \"metadata\" is not a boolean")) {
      try DeviceProfileRequest(bad)
    }
  }

  @Test func setInputKeepsNameAndOtherMembers() throws {
    var step = AuthenticateStep(body: [
      "authId": "a",
      "callbacks": [
        ["type": "X", "input": [["name": "IDToken1", "value": ""], ["name": "IDToken1validateOnly", "value": false]], "_id": 5]
      ],
    ])
    try step.setInput(callback: 0, value: "v")
    #expect(
      step.text
        == #"{"authId":"a","callbacks":[{"type":"X","input":[{"name":"IDToken1","value":"v"},{"name":"IDToken1validateOnly","value":false}],"_id":5}]}"#
    )
    #expect(throws: JourneyError.self) { try step.setInput(callback: 3, value: "v") }
  }
}
