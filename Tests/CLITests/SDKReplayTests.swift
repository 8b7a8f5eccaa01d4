import Foundation
import ProfileJSON
import Testing

/// The AM pages recorded in the ForgeRock SDKs' test resources
/// (Tests/JourneyTests/Fixtures/sdk-recorded) served to the built `fr-profile journey`, answered
/// from an answers file; what it posts back must be the page with exactly the inputs the SDKs'
/// own tests expect (`expectations.json`, each citing its test) and nothing else changed, with
/// the JavaScript SDK's headers.
@Suite(.timeLimit(.minutes(10)))
struct SDKReplayTests {
  static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("JourneyTests/Fixtures/sdk-recorded")
  static let success = #"{"tokenId":"AQIC-sdk-replay-token","successUrl":"/am/console","realm":"/"}"#

  /// One entry of expectations.json.
  struct Replay: CustomTestStringConvertible, Sendable {
    var json: JSON
    var page: String { json["page"]?.stringValue ?? "" }
    var testDescription: String { page }
  }

  static let replays: [Replay] = {
    guard let bytes = try? Data(contentsOf: directory.appendingPathComponent("expectations.json")),
      let json = try? JSONParser.parse(Array(bytes)), case .array(let items)? = json["replays"]
    else { return [] }
    return items.map { Replay(json: $0) }
  }()

  @Test("the expectations name pages that exist, from each SDK")
  func expectationsAreThere() {
    #expect(Self.replays.count >= 30)
    for sdk in ["javascript/", "android/", "ios/"] { #expect(Self.replays.contains { $0.page.hasPrefix(sdk) }, "\(sdk)") }
  }

  @Test("fr-profile posts back what the SDKs' tests expect", arguments: replays)
  func postsWhatTheSDKsExpect(_ replay: Replay) throws {
    if let pending = replay.json["pending"]?.stringValue {
      withKnownIssue("pending: \(pending)") { try check(replay) }
    } else {
      try check(replay)
    }
  }

  func check(_ replay: Replay) throws {
    let bytes = Array(try Data(contentsOf: Self.directory.appendingPathComponent(replay.page)))
    let recorded = try JSONParser.parse(bytes)
    let page: JSON = replay.page.hasSuffix(".callback.json") ? ["authId": "sdk-recorded", "callbacks": [recorded]] : recorded
    let pageText = JSONWriter.compact(page)
    var configuration = AuthenticateServer.Configuration()
    configuration.behaviour = .scripted { _, index in (200, Array((index == 0 ? pageText : Self.success).utf8)) }
    let server = try AuthenticateServer(configuration)
    defer { server.stop() }
    let directory = try makeTemporaryDirectory("fr-profile-sdk-replay")
    defer { removeTemporaryDirectory(directory) }
    var arguments = [
      "journey", "--server", server.url, "--realm", "root", "--tree", "SDKReplay", "--state-dir", directory + "/state", "--root",
      machineRoot("laptop"), "--max-time", "30",
    ]
    let answers = replay.json["answers"]?.arrayValue ?? []
    if !answers.isEmpty {
      let path = directory + "/answers.json"
      try (JSONWriter.compact(["answers": .array(answers)]) + "\n").write(toFile: path, atomically: false, encoding: .utf8)
      chmod(path, 0o600)
      arguments += ["--answers", path]
    }
    arguments += (replay.json["options"]?.arrayValue ?? []).compactMap(\.stringValue)
    let started = Date()
    let result = try run(arguments)
    let elapsed = Date().timeIntervalSince(started)

    let exit = Int32(replay.json["exit"]?.numberValue ?? 0)
    #expect(result.status == exit, "\(result.stderr)")
    let posts = Int(replay.json["posts"]?.numberValue ?? 1)
    let requests = server.requests
    try #require(requests.count == 1 + posts, "\(requests.count) requests; \(result.stderr)")
    for request in requests {
      #expect(request.target == "/json/realms/root/authenticate?authIndexType=service&authIndexValue=SDKReplay")
      #expect(request.headers["accept-api-version"] == "protocol=1.0,resource=2.1")
      #expect(request.headers["x-requested-with"] == "forgerock-sdk")
      #expect(request.headers["content-type"] == "application/json")
    }
    #expect(requests[0].body == "{}")
    if let seconds = replay.json["minimumSeconds"]?.numberValue {
      #expect(elapsed >= seconds, "the PollingWaitCallback's waitTime was not waited")
    }
    // A page that ends the walk (a suspension) posts nothing back: the count above is the check.
    if posts == 0 { return }
    let posted = try JSONParser.parse(Array(requests[1].body.utf8))
    var expected = page
    for input in replay.json["inputs"]?.arrayValue ?? [] {
      let callback = Int(input["callback"]?.numberValue ?? -1)
      let name = input["input"]?.stringValue ?? ""
      let sent = Self.input(posted, callback: callback, name: name)
      if let value = input["value"] {
        Self.setInput(&expected, callback: callback, name: name, value: value)
      } else if input["nonEmpty"] == .bool(true) {
        #expect(sent?.stringValue?.isEmpty == false, "callbacks[\(callback)] \(name) is empty")
        Self.setInput(&expected, callback: callback, name: name, value: sent ?? .null)
      } else if let keys = input["profileKeys"]?.arrayValue?.compactMap(\.stringValue) {
        let profile = sent?.stringValue.flatMap { try? JSONParser.parse(Array($0.utf8)) }
        for key in keys { #expect(profile?[key] != nil, "the profile in callbacks[\(callback)] \(name) has no \(key)") }
        Self.setInput(&expected, callback: callback, name: name, value: sent ?? .null)
      }
    }
    #expect(posted == expected, "posted \(JSONWriter.compact(posted))\nexpected \(JSONWriter.compact(expected))")
  }

  static func input(_ body: JSON, callback: Int, name: String) -> JSON? {
    guard let callbacks = body["callbacks"]?.arrayValue, callbacks.indices.contains(callback) else { return nil }
    return callbacks[callback]["input"]?.arrayValue?.first { $0["name"]?.stringValue == name }?["value"]
  }

  /// Sets `callbacks[callback].input[name=name].value`, keeping everything else.
  static func setInput(_ body: inout JSON, callback: Int, name: String, value: JSON) {
    guard case .object(var object) = body, case .array(var callbacks)? = object["callbacks"], callbacks.indices.contains(callback),
      case .object(var entry) = callbacks[callback], case .array(var inputs)? = entry["input"],
      let position = inputs.firstIndex(where: { $0["name"]?.stringValue == name }), case .object(var field) = inputs[position]
    else {
      Issue.record("the page has no callbacks[\(callback)] input \(name)")
      return
    }
    field["value"] = value
    inputs[position] = .object(field)
    entry["input"] = .array(inputs)
    callbacks[callback] = .object(entry)
    object["callbacks"] = .array(callbacks)
    body = .object(object)
  }
}
