import Foundation
import ProfileJSON
import Testing

/// `fr-profile callback` on AM's own authenticate responses and on our own.
@Suite(.timeLimit(.minutes(10))) struct CallbackCommandTests {
  static let reference = [
    "authenticate-device-profile-All.json", "authenticate-device-profile-MetadataOnly.json",
    "authenticate-device-profile-LocationOnly.json", "several-callbacks.json",
  ]

  func parse(_ text: String) throws -> JSON { try JSONParser.parse(text) }

  /// Checks the output is the input with only each DeviceProfileCallback's input[0].value
  /// filled, and returns the profiles that were filled in, parsed.
  func profiles(input: JSON, output: JSON) throws -> [JSON] {
    var expected = input
    var found: [JSON] = []
    guard case .object(var body) = expected, case .array(var callbacks)? = body["callbacks"] else {
      Issue.record("no callbacks")
      return []
    }
    let answered = output["callbacks"]?.arrayValue ?? []
    #expect(answered.count == callbacks.count)
    for index in callbacks.indices where callbacks[index]["type"] == "DeviceProfileCallback" {
      let value = try #require(answered[index]["input"]?.arrayValue?.first?["value"]?.stringValue)
      found.append(try parse(value))
      guard case .object(var callback) = callbacks[index], case .array(var inputs)? = callback["input"],
        case .object(var first) = inputs[0]
      else { continue }
      first["value"] = .string(value)
      inputs[0] = .object(first)
      callback["input"] = .array(inputs)
      callbacks[index] = .object(callback)
    }
    body["callbacks"] = .array(callbacks)
    expected = .object(body)
    #expect(output == expected, "only input[0].value may change")
    return found
  }

  @Test("answers exactly what each callback asks for", arguments: reference)
  func answersWhatIsAsked(file: String) throws {
    let state = try makeTemporaryDirectory()
    defer { removeTemporaryDirectory(state) }
    let path = cliFixture("callbacks/\(file)")
    let result = try run(["callback", path, "--state-dir", state, "--latitude", "52.52", "--longitude", "13.405"])
    #expect(result.status == 0)
    let input = try parse(try String(contentsOfFile: path, encoding: .utf8))
    let answered = try profiles(input: input, output: try parse(result.stdout))
    let requests = (input["callbacks"]?.arrayValue ?? []).filter { $0["type"] == "DeviceProfileCallback" }
    #expect(answered.count == requests.count)
    for (request, profile) in zip(requests, answered) {
      let outputs = request["output"]?.arrayValue ?? []
      func flag(_ name: String) -> Bool { outputs.first { $0["name"] == .string(name) }?["value"] == .bool(true) }
      var keys = ["identifier", "version"]
      if flag("metadata") { keys.append("metadata") }
      if flag("location") { keys.append("location") }
      #expect(profile.objectValue?.keys == keys)
      if flag("location") { #expect(profile["location"] == ["latitude": 52.52, "longitude": 13.405]) }
      if flag("metadata") { #expect(profile["metadata"]?["platform"]?["platform"] == "Linux") }
    }
    let identifier = try run(["identifier", "--state-dir", state]).stdout.trimmingCharacters(in: .newlines)
    #expect(answered.allSatisfy { $0["identifier"] == .string(identifier) })
  }

  @Test func readsStandardInputAndPrintsTheMessage() throws {
    let state = try makeTemporaryDirectory()
    defer { removeTemporaryDirectory(state) }
    let body = try String(contentsOfFile: cliFixture("callbacks/several-callbacks.json"), encoding: .utf8)
    let result = try run(["callback", "-", "--state-dir", state], stdin: body)
    #expect(result.status == 0)
    #expect(result.stderr.contains("Collecting device profile..."))
    #expect(result.stderr.contains("no position is configured"))
    let answered = try profiles(input: try parse(body), output: try parse(result.stdout))
    #expect(answered.count == 2)
    #expect(answered[0].objectValue?.keys == ["identifier", "version", "metadata"])  // location asked, none known
    #expect(answered[1].objectValue?.keys == ["identifier", "version"])
  }

  @Test func stepWithoutDeviceProfileCallbackPassesThroughUnchanged() throws {
    let state = try makeTemporaryDirectory()
    defer { removeTemporaryDirectory(state) }
    let path = cliFixture("callbacks/no-device-profile.json")
    let result = try run(["callback", path, "--state-dir", state])
    #expect(result.status == 0)
    #expect(result.stdout == (try String(contentsOfFile: path, encoding: .utf8)))
    #expect(result.stderr.contains("no DeviceProfileCallback"))
  }

  @Test(
    "malformed bodies are errors naming what is wrong",
    arguments: [
      ("{\"authId\": \"x\", \"callbacks\": [", "line 1"),
      ("[1, 2]", "not a JSON object"),
      ("{\"authId\": \"x\"}", "no \"callbacks\""),
      (
        #"{"callbacks":[{"type":"DeviceProfileCallback","output":[{"name":"metadata","value":"yes"},{"name":"location","value":false}],"input":[{"name":"IDToken1","value":""}]}]}"#,
        "callbacks[0]"
      ),
      (
        #"{"callbacks":[{"type":"DeviceProfileCallback","output":[{"name":"location","value":false}],"input":[{"name":"IDToken1","value":""}]}]}"#,
        "no output \"metadata\""
      ),
      (
        #"{"callbacks":[{"type":"DeviceProfileCallback","output":[{"name":"metadata","value":true},{"name":"location","value":false}]}]}"#,
        "input[0]"
      ),
      (
        #"{"callbacks":[{"type":"NameCallback"},{"type":"DeviceProfileCallback","output":[{"name":"metadata","value":true},{"name":"location","value":false},{"name":"message","value":7}],"input":[{}]}]}"#,
        "callbacks[1]"
      ),
      ("", "not JSON"),
    ])
  func rejectsMalformed(body: String, mentions: String) throws {
    let state = try makeTemporaryDirectory()
    defer { removeTemporaryDirectory(state) }
    let result = try run(["callback", "--state-dir", state], stdin: body)
    #expect(result.status == 65)
    #expect(result.stderr.contains(mentions))
    #expect(result.stderr.hasPrefix("fr-profile: error: standard input: "))
    #expect(result.stdout.isEmpty)
    #expect(!FileManager.default.fileExists(atPath: state + "/device-key.pem"), "no key is made for a bad body")
  }

  @Test func missingFileIsNoInput() throws {
    let result = try run(["callback", "/nonexistent/step.json", "--state-dir", "/nonexistent/state"])
    #expect(result.status == 66)
    #expect(result.stderr.contains("/nonexistent/step.json"))
  }
}
