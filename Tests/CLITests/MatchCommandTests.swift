import Foundation
import ProfileJSON
import Testing

/// The checkout's root (this file is Tests/CLITests/MatchCommandTests.swift in it).
let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
  .deletingLastPathComponent().path

/// `fr-profile match` end to end: formats, exit codes, output modes, config and bad input.
@Suite(.timeLimit(.minutes(10))) struct MatchCommandTests {
  static let incoming: JSON = [
    "identifier": "dev-1",
    "metadata": [
      "platform": ["platform": "Linux", "version": "6.8.0-45-generic", "timeZone": "Europe/Berlin"],
      "hardware": ["cpu": 16, "memory": 31812, "display": ["width": 2880, "height": 1800]],
      "network": ["connected": true],
    ],
    "location": ["latitude": 52.520008, "longitude": 13.404954],
  ]

  /// The incoming profile with some leaves changed.
  static func drifted(_ changes: [(String, String, JSON)], identifier: String = "dev-1", latitude: Double = 52.520008)
    -> JSON
  {
    var metadata = incoming["metadata"]!.objectValue!
    for (section, key, value) in changes {
      var object = metadata[section]!.objectValue!
      object[key] = value
      metadata[section] = .object(object)
    }
    return [
      "identifier": .string(identifier), "metadata": .object(metadata),
      "location": ["latitude": .number(latitude), "longitude": 13.404954],
    ]
  }

  static let config = #"{"attrWeights": {"cpu": 3, "version": 0.5}, "maxUnmatchedAttrs": 1, "allowedRadius": 100}"#

  /// A temporary directory with `files`, the config as `config.json`, removed afterwards.
  func withFiles(_ files: [String: String], _ body: (String) throws -> Void) throws {
    let directory = try makeTemporaryDirectory()
    defer { removeTemporaryDirectory(directory) }
    try Self.config.write(toFile: directory + "/config.json", atomically: true, encoding: .utf8)
    for (name, text) in files { try text.write(toFile: directory + "/" + name, atomically: true, encoding: .utf8) }
    try body(directory)
  }

  func match(_ directory: String, _ arguments: [String], stdin: String? = nil) throws -> RunResult {
    let resolved = arguments.map { $0.hasSuffix(".json") || $0.hasSuffix(".jsonl") || $0.hasSuffix(".txt") ? directory + "/" + $0 : $0 }
    return try run(["match", "--config", directory + "/config.json"] + resolved, stdin: stdin)
  }

  static func text(_ value: JSON) -> String { JSONWriter.compact(value) }

  // MARK: Formats

  @Test("STORED as one profile")
  func singleProfile() throws {
    try withFiles(["stored.json": JSONWriter.pretty(Self.incoming), "incoming.json": Self.text(Self.incoming)]) { dir in
      let result = try match(dir, ["stored.json", "incoming.json"])
      #expect(result.status == 0)
      #expect(result.stdout.hasPrefix("outcome: true\n"))
      #expect(result.stdout.contains("distance 0 m < allowedRadius 100 m"))
    }
  }

  @Test("STORED as a JSON array: the first profile with the identifier decides")
  func arrayOfProfiles() throws {
    let other = Self.drifted([], identifier: "dev-2")
    let changed = Self.drifted([("hardware", "cpu", 8)])
    let stored = "[\(Self.text(other)), \(Self.text(changed)), \(Self.text(Self.incoming))]"
    try withFiles(["stored.json": stored, "incoming.json": Self.text(Self.incoming)]) { dir in
      let result = try match(dir, ["stored.json", "incoming.json"])
      #expect(result.status == 1)
      #expect(result.stdout.contains("stored profile: #1"))
      #expect(result.stdout.contains("metadata.hardware.cpu: stored 8, incoming 16, weight 3 (cpu), sum 3"))
      #expect(result.stdout.contains("sum 3 > maxUnmatchedAttrs 1"))
    }
  }

  @Test("STORED as a JSON array of serialised profile strings (AM's DAO)")
  func arrayOfStrings() throws {
    let strings = JSON.array([.string(Self.text(Self.drifted([], identifier: "x"))), .string(Self.text(Self.incoming))])
    try withFiles(["stored.json": Self.text(strings), "incoming.json": Self.text(Self.incoming)]) { dir in
      let result = try match(dir, ["--json", "stored.json", "incoming.json"])
      #expect(result.status == 0)
      expectValid(result.stdout, schema: "match-result")
      let output = try JSONParser.parse(result.stdout)
      #expect(output["outcome"] == "true")
      #expect(output["storedIndex"] == 1)
    }
  }

  @Test("STORED as JSON Lines; a line that is not JSON is skipped with file:line:column")
  func jsonLines() throws {
    let lines = [Self.text(Self.drifted([], identifier: "x")), "{\"identifier\": tru}", Self.text(Self.incoming)]
    try withFiles(["stored.jsonl": lines.joined(separator: "\n") + "\n", "incoming.json": Self.text(Self.incoming)]) { dir in
      let result = try match(dir, ["stored.jsonl", "incoming.json"])
      #expect(result.status == 0)
      #expect(result.stderr.contains("stored.jsonl:2:19: unexpected '}'"))
      #expect(result.stderr.contains("skipped, as the script does"))
      #expect(result.stdout.contains("stored profile: #2 at \(dir)/stored.jsonl:3:1"))
    }
  }

  @Test("JSON Lines with a damaged first line are still read line by line", arguments: ["not json", "{\"identifier\": \"dev-1\", \"meta"])
  func jsonLinesWithBrokenFirstLine(first: String) throws {
    let lines = [first, Self.text(Self.drifted([], identifier: "x")), Self.text(Self.incoming)]
    try withFiles(["stored.txt": lines.joined(separator: "\n"), "incoming.json": Self.text(Self.incoming)]) { dir in
      let result = try match(dir, ["stored.txt", "incoming.json"])
      #expect(result.status == 0)
      #expect(result.stderr.contains("stored.txt:1:"))
      #expect(result.stdout.contains("stored profile: #2 at \(dir)/stored.txt:3:1"))
    }
  }

  @Test("a pretty-printed array with one profile per line is one document, not JSON Lines")
  func prettyArrayIsOneDocument() throws {
    let stored = "[\n" + [Self.text(Self.drifted([], identifier: "x")), Self.text(Self.incoming)].joined(separator: ",\n") + "\n]\n"
    try withFiles(["stored.txt": stored, "incoming.json": Self.text(Self.incoming)]) { dir in
      let result = try match(dir, ["stored.txt", "incoming.json"])
      #expect(result.status == 0)
      #expect(result.stderr.isEmpty)
    }
  }

  @Test("JSON Lines are sniffed without a .jsonl name")
  func jsonLinesSniffed() throws {
    let lines = [Self.text(Self.drifted([], identifier: "x")), Self.text(Self.drifted([("hardware", "cpu", 4)]))]
    try withFiles(["stored.txt": lines.joined(separator: "\n"), "incoming.json": Self.text(Self.incoming)]) { dir in
      let result1 = try match(dir, ["stored.txt", "incoming.json"])
      #expect(result1.status == 1)
    }
  }

  /// AM's REST listing as the team's reference payloads recorded it
  /// (reference/profiles/am-rest-device-profiles.json, copied into the fixtures so that a clone
  /// needs nothing beside it).
  static let amListingPath = packageRoot + "/Tests/CLITests/Fixtures/reference/am-rest-device-profiles.json"

  @Test("STORED as AM's REST listing; a stored profile without location makes the script throw")
  func amListing() throws {
    let listing = try String(contentsOfFile: Self.amListingPath, encoding: .utf8)
    let stored = try JSONParser.parse(listing)["result"]!.arrayValue![0]
    var profile = stored.objectValue!
    profile["location"] = ["latitude": 49.2, "longitude": -123.1]
    try withFiles(["am.json": listing, "incoming.json": Self.text(.object(profile))]) { dir in
      let result = try match(dir, ["am.json", "incoming.json"])
      #expect(result.status == 2)
      #expect(result.stdout.contains("the stored profile has no location"))
      #expect(result.stderr.contains("matchLocation"))
      try #"{"matchLocation": false}"#.write(toFile: dir + "/config.json", atomically: true, encoding: .utf8)
      let metadataOnly = try match(dir, ["am.json", "incoming.json"])
      #expect(metadataOnly.status == 0)
      #expect(metadataOnly.stdout.hasPrefix("outcome: true"))
    }
  }

  @Test("'-' reads STORED or INCOMING from standard input")
  func standardInput() throws {
    try withFiles(["stored.json": Self.text(Self.incoming), "incoming.json": Self.text(Self.incoming)]) { dir in
      let result2 = try match(dir, ["stored.json", "-"], stdin: Self.text(Self.incoming))
      #expect(result2.status == 0)
      let result3 = try match(dir, ["-", "incoming.json"], stdin: Self.text(Self.incoming))
      #expect(result3.status == 0)
    }
  }

  // MARK: Exit codes

  @Test("exit 3 for unknownDevice")
  func unknownDevice() throws {
    try withFiles(["stored.json": Self.text(Self.drifted([], identifier: "x")), "incoming.json": Self.text(Self.incoming)]) {
      dir in
      let result = try match(dir, ["stored.json", "incoming.json"])
      #expect(result.status == 3)
      #expect(result.stdout.contains("no stored profile has the incoming identifier \"dev-1\""))
    }
  }

  @Test("exit 1 when the location is out of range (strict <)")
  func outOfRange() throws {
    let far = Self.drifted([], latitude: 52.521)
    try withFiles(["stored.json": Self.text(far), "incoming.json": Self.text(Self.incoming)]) { dir in
      let result = try match(dir, ["stored.json", "incoming.json"])
      #expect(result.status == 1)
      #expect(result.stdout.contains("location: no match (distance 110 m >= allowedRadius 100 m)"))
    }
  }

  @Test("exit 64 for usage errors")
  func usageErrors() throws {
    try withFiles([:]) { dir in
      let result4 = try match(dir, ["-", "-"])
      #expect(result4.status == 64)
      let result5 = try run(["match", "only-one"])
      #expect(result5.status == 64)
      let result6 = try run(["match", "--config", "a", "--script-defaults", "b", "c"])
      #expect(result6.status == 64)
    }
  }

  @Test("exit 66 when a file cannot be read")
  func unreadableFile() throws {
    try withFiles(["incoming.json": Self.text(Self.incoming)]) { dir in
      let result = try match(dir, ["missing.json", "incoming.json"])
      #expect(result.status == 66)
      #expect(result.stderr.hasPrefix("fr-profile: error: cannot read "))
      #expect(result.stderr.split(separator: "\n").count == 1)
      #expect(result.stderr.contains("cannot read"))
    }
  }

  // MARK: Output modes

  @Test("--json prints one object with the explanation")
  func jsonOutput() throws {
    let changed = Self.drifted([("platform", "version", "6.8.0-47-generic"), ("platform", "timeZone", "UTC")])
    try withFiles(["stored.json": Self.text(changed), "incoming.json": Self.text(Self.incoming)]) { dir in
      let result = try match(dir, ["--json", "stored.json", "incoming.json"])
      #expect(result.status == 1)
      let output = try JSONParser.parse(result.stdout)
      #expect(output["outcome"] == "false")
      let mismatches = output["metadata"]!["mismatches"]!.arrayValue!
      #expect(mismatches.map { $0["path"]! } == ["metadata.platform.version", "metadata.platform.timeZone"])
      #expect(mismatches[0]["weight"] == 0.5 && mismatches[1]["sum"] == 1.5)
      #expect(output["location"]!["distance"] == 0)
    }
  }

  @Test("--each prints every stored profile with the identifier; JSON Lines with --json")
  func each() throws {
    let lines = [Self.incoming, Self.drifted([], identifier: "x"), Self.drifted([("hardware", "cpu", 2)])].map(Self.text)
    try withFiles(["stored.jsonl": lines.joined(separator: "\n"), "incoming.json": Self.text(Self.incoming)]) { dir in
      let result = try match(dir, ["--each", "--json", "stored.jsonl", "incoming.json"])
      #expect(result.status == 0)
      expectValid(result.stdout, schema: "match-result", lines: true)
      let outcomes = try result.stdout.split(separator: "\n").map { try JSONParser.parse(String($0))["outcome"]! }
      #expect(outcomes == ["true", "false"])
      let text = try match(dir, ["--each", "stored.jsonl", "incoming.json"])
      #expect(text.stdout.components(separatedBy: "outcome: ").count == 3)
    }
  }

  @Test("--each reports a profile the script would throw on as an error; the first one still decides")
  func eachWithError() throws {
    let noLocation = #"{"identifier": "dev-1", "metadata": {}}"#
    let lines = [JSONWriter.compact(Self.incoming), noLocation]
    try withFiles(["stored.jsonl": lines.joined(separator: "\n"), "incoming.json": Self.text(Self.incoming)]) { dir in
      let result = try match(dir, ["--each", "--json", "stored.jsonl", "incoming.json"])
      #expect(result.status == 0)
      let outcomes = try result.stdout.split(separator: "\n").map { try JSONParser.parse(String($0)) }
      #expect(outcomes.map { $0["outcome"]! } == ["true", "error"])
      #expect(outcomes[1]["suggestion"]?.stringValue?.contains("matchLocation") == true)
      let reversed = try match(dir, ["stored.jsonl", "incoming.json"])
      #expect(reversed.status == 0)
      try [noLocation, JSONWriter.compact(Self.incoming)].joined(separator: "\n").write(
        toFile: dir + "/stored.jsonl", atomically: true, encoding: .utf8)
      let first = try match(dir, ["--summary", "stored.jsonl", "incoming.json"])
      #expect(first.status == 2)
      #expect(first.stdout.contains("true: 1  false: 0  unknownDevice: 0  error: 1"))
    }
  }

  @Test("--summary prints totals and the most frequent mismatching keys")
  func summary() throws {
    let lines =
      [
        Self.incoming, Self.drifted([], identifier: "x"), Self.drifted([("hardware", "cpu", 2)]),
        Self.drifted([("hardware", "cpu", 2), ("platform", "version", "7")]),
      ].map(Self.text) + ["not json"]
    try withFiles(["stored.jsonl": lines.joined(separator: "\n"), "incoming.json": Self.text(Self.incoming)]) { dir in
      let result = try match(dir, ["--summary", "stored.jsonl", "incoming.json"])
      #expect(result.status == 0)
      #expect(result.stdout.contains("stored profiles: 5 read, 1 skipped (not JSON)"))
      #expect(result.stdout.contains("true: 1  false: 2  unknownDevice: 1  error: 0"))
      #expect(result.stdout.contains("  cpu      2  66.7%"))
      let summaryJSON = try match(dir, ["--summary", "--json", "stored.jsonl", "incoming.json"])
      expectValid(summaryJSON.stdout, schema: "match-summary")
      let json = try JSONParser.parse(summaryJSON.stdout)
      #expect(json["falseCount"] == 2 && json["skipped"] == 1)
      #expect(json["mismatchedKeys"]!.arrayValue!.first?["key"] == "cpu")
    }
  }

  @Test("help ends its discussion with EXAMPLES and lists the exit codes")
  func help() throws {
    let result = try run(["match", "--help"])
    #expect(result.stdout.contains("EXIT CODES:"))
    #expect(result.stdout.contains("EXAMPLES:\n  fr-profile match stored.json incoming.json"))
  }

  // MARK: Config

  @Test("an unknown config key is an error naming the nearest valid key")
  func unknownConfigKey() throws {
    try withFiles(["p.json": Self.text(Self.incoming)]) { dir in
      try #"{"maxUnmatchedAtrs": 2}"#.write(toFile: dir + "/config.json", atomically: true, encoding: .utf8)
      let result = try match(dir, ["p.json", "p.json"])
      #expect(result.status == 78)
      #expect(result.stderr.contains("unknown match config key 'maxUnmatchedAtrs'; did you mean 'maxUnmatchedAttrs'?"))
    }
  }

  @Test("a config that is not JSON, or mistyped, is an error with its position")
  func badConfig() throws {
    try withFiles(["p.json": Self.text(Self.incoming)]) { dir in
      try "{\"allowedRadius\": }".write(toFile: dir + "/config.json", atomically: true, encoding: .utf8)
      let notJSON = try match(dir, ["p.json", "p.json"])
      #expect(notJSON.status == 78)
      #expect(notJSON.stderr.contains("config.json:1:19"))
      try #"{"allowedRadius": "100"}"#.write(toFile: dir + "/config.json", atomically: true, encoding: .utf8)
      let result7 = try match(dir, ["p.json", "p.json"])
      #expect(result7.stderr.contains("'allowedRadius' must be a number"))
    }
  }

  @Test("without --config, the checkout's match-config.json is used")
  func defaultConfigFromCheckout() throws {
    try withFiles(["p.json": Self.text(Self.incoming)]) { dir in
      let result = try run(["match", dir + "/p.json", dir + "/p.json"], environment: ["FR_PROFILE_MATCH_CONFIG": dir + "/none.json"])
      #expect(result.status == 0)
      #expect(result.stdout.contains("match-config.json\n"))
    }
  }

  @Test("no default config anywhere: exit 2 instead of silently using other settings")
  func missingDefaultConfig() throws {
    try withFiles(["p.json": Self.text(Self.incoming)]) { dir in
      // Copied by cp, a child: a copy written by this process leaves its write descriptor in a
      // child another test forks meanwhile, and the exec fails with ETXTBSY; a hard link fails
      // when the temporary directory is on another filesystem (/tmp on tmpfs).
      let copied = try run([frProfilePath, dir + "/fr-profile"], executable: "/bin/cp")
      #expect(copied.status == 0, "\(copied.stderr)")
      let result = try run(
        ["match", dir + "/p.json", dir + "/p.json"], executable: dir + "/fr-profile", prefix: ["/usr/bin/env", "-C", dir])
      #expect(result.status == 78)
      #expect(result.stderr.contains("no match config found"))
      let defaults = try run(
        ["match", "--script-defaults", dir + "/p.json", dir + "/p.json"], executable: dir + "/fr-profile",
        prefix: ["/usr/bin/env", "-C", dir])
      #expect(defaults.status == 0)
    }
  }

  // MARK: Bad input

  @Test("100,000 levels of nesting: skipped with a clear warning, no crash")
  func deepNesting() throws {
    let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
    try withFiles(["stored.jsonl": deep + "\n" + Self.text(Self.incoming), "deep.json": deep, "p.json": Self.text(Self.incoming)]) {
      dir in
      let stored = try match(dir, ["stored.jsonl", "p.json"])
      #expect(stored.status == 0)
      #expect(stored.stderr.contains("nesting deeper than 1000 levels"))
      let incoming = try match(dir, ["p.json", "deep.json"])
      #expect(incoming.status == 3)
      #expect(incoming.stderr.contains("deep.json:1:1001: nesting deeper than 1000 levels"))
    }
  }

  @Test("huge numbers are Infinity, as in JavaScript: equal to each other")
  func hugeNumbers() throws {
    let profile = Self.text(Self.incoming).replacingOccurrences(of: "31812", with: "1e400")
    try withFiles(["a.json": profile, "b.json": profile.replacingOccurrences(of: "1e400", with: "2e999")]) { dir in
      let result8 = try match(dir, ["a.json", "b.json"])
      #expect(result8.status == 0)
    }
  }

  @Test("invalid UTF-8: the entry is skipped with its position")
  func invalidUTF8() throws {
    let directory = try makeTemporaryDirectory()
    defer { removeTemporaryDirectory(directory) }
    try Self.config.write(toFile: directory + "/config.json", atomically: true, encoding: .utf8)
    var bytes = Array("{\"identifier\": \"dev-1\", \"x\": \"".utf8) + [0xC3, 0x28] + Array("\"}\n".utf8)
    bytes += Array(Self.text(Self.incoming).utf8)
    _ = FileManager.default.createFile(atPath: directory + "/stored.jsonl", contents: Data(bytes))
    try Self.text(Self.incoming).write(toFile: directory + "/p.json", atomically: true, encoding: .utf8)
    let result = try match(directory, ["stored.jsonl", "p.json"])
    #expect(result.status == 0)
    #expect(result.stderr.contains("stored.jsonl:1:31: invalid UTF-8"))
  }

  @Test("duplicate keys: the last value wins, as in JSON.parse")
  func duplicateKeys() throws {
    let stored = #"{"identifier": "dev-2", "identifier": "dev-1", "# + Self.text(Self.incoming).dropFirst()
    try withFiles(["stored.json": String(stored), "p.json": Self.text(Self.incoming)]) { dir in
      let result = try match(dir, ["stored.json", "p.json"])
      #expect(result.status == 0)
      let summary = try match(dir, ["--summary", "stored.json", "p.json"])
      #expect(summary.stdout.contains("true: 1"))
    }
  }

  @Test("empty files: no stored profiles is unknownDevice; an empty incoming profile is not JSON")
  func emptyFiles() throws {
    try withFiles(["empty.json": "", "p.json": Self.text(Self.incoming)]) { dir in
      let result9 = try match(dir, ["empty.json", "p.json"])
      #expect(result9.status == 3)
      let incoming = try match(dir, ["p.json", "empty.json"])
      #expect(incoming.status == 3)
      #expect(incoming.stderr.contains("empty.json:1:1: unexpected end of input"))
    }
  }

  /// The script parses each stored profile AM's DAO hands it with `JSON.parse` and,
  /// when that throws, logs "Error parsing stored profile" and `continue`s (src/index.js). A
  /// stored array or listing is one JSON text; when its framing is broken (`]` missing, text
  /// after it, a missing `,`) JSON.parse rejects that text, so it is one entry the script
  /// skips and no profile has the identifier: unknownDevice (exit 3), although the first
  /// element, read before the break, matches. Every output mode waits for the end of the file.
  static let brokenFraming: [(name: String, text: String, message: String)] = {
    let (a, b) = (text(incoming), text(drifted([], identifier: "x")))
    return [
      ("[A, B", "[\(a), \(b)", "unexpected end of input in the array"),
      ("[A, B]x", "[\(a), \(b)]x", "unexpected text after the stored profiles"),
      ("[A", "[\(a)\n", "unexpected end of input in the array"),
      ("[A B]", "[\(a) \(b)]", "expected ',' or ']'"),
      ("pretty [A, B", "[\n  \(a),\n  \(b)\n", "unexpected end of input in the array"),
      ("listing [A, B", "{\"result\": [\(a), \(b)", "unexpected end of input in the result array"),
      ("listing x", "{\"result\": [\(a), \(b)], \"resultCount\": 2}x", "unexpected text after the stored profiles"),
    ]
  }()

  @Test("a stored array or listing cut short or with text after it is one entry the script skips: unknownDevice")
  func brokenFramingIsUnknownDevice() throws {
    for broken in Self.brokenFraming {
      try withFiles(["stored.json": broken.text, "p.json": Self.text(Self.incoming)]) { dir in
        let result = try match(dir, ["stored.json", "p.json"])
        #expect(result.status == 3, "\(broken.name): \(result.stdout)")
        #expect(result.stdout.hasPrefix("outcome: unknownDevice\n"), "\(broken.name)")
        #expect(result.stderr.contains(broken.message), "\(broken.name): \(result.stderr)")
        #expect(result.stderr.contains("skipped, as the script does"), "\(broken.name): \(result.stderr)")

        let json = try match(dir, ["--json", "stored.json", "p.json"])
        #expect(json.status == 3, "\(broken.name)")
        #expect(try JSONParser.parse(json.stdout)["outcome"] == "unknownDevice", "\(broken.name)")

        // --each prints nothing of a file that is not JSON: only the script's answer.
        let each = try match(dir, ["--each", "--json", "stored.json", "p.json"])
        #expect(each.status == 3, "\(broken.name)")
        let lines = each.stdout.split(separator: "\n")
        #expect(lines.count == 1, "\(broken.name): \(each.stdout)")
        #expect(try lines.first.map { try JSONParser.parse(String($0))["outcome"] } == "unknownDevice")
        // From a pipe, which cannot be read twice, the results are held until the end instead.
        let piped = try match(dir, ["--each", "--json", "-", "p.json"], stdin: broken.text)
        #expect(piped.status == 3 && piped.stdout == each.stdout, "\(broken.name): \(piped.stdout)")

        for workers in ["1", "2"] {
          let summary = try run(
            ["match", "--config", dir + "/config.json", "--summary", "--json", dir + "/stored.json", dir + "/p.json"],
            environment: ["FR_PROFILE_MATCH_WORKERS": workers])
          #expect(summary.status == 3, "\(broken.name)")
          let totals = try JSONParser.parse(summary.stdout)
          #expect(totals["outcome"] == "unknownDevice", "\(broken.name)")
          #expect(totals["read"] == 1 && totals["skipped"] == 1, "\(broken.name): \(summary.stdout)")
          #expect(totals["trueCount"] == 0 && totals["unknownDeviceCount"] == 0, "\(broken.name)")
        }
      }
    }
  }

  @Test("--each over a well-framed array from a file or a pipe prints every profile with the identifier")
  func eachOverWellFramedArray() throws {
    let profiles = [Self.incoming, Self.drifted([], identifier: "x"), Self.drifted([("hardware", "cpu", 2)])]
    let stored = "[\n" + profiles.map(Self.text).joined(separator: ",\n") + "\n]\n"
    try withFiles(["stored.json": stored, "p.json": Self.text(Self.incoming)]) { dir in
      let file = try match(dir, ["--each", "--json", "stored.json", "p.json"])
      let piped = try match(dir, ["--each", "--json", "-", "p.json"], stdin: stored)
      for result in [file, piped] {
        #expect(result.status == 0)
        #expect(try result.stdout.split(separator: "\n").map { try JSONParser.parse(String($0))["outcome"]! } == ["true", "false"])
        #expect(result.stderr.isEmpty)
      }
    }
  }

  @Test("a JSON Lines file whose last line is cut mid-object: that line is skipped, the lines before it decide")
  func cutLastLineOfJSONLines() throws {
    let incoming = Self.text(Self.incoming)
    let lines = [Self.text(Self.drifted([], identifier: "x")), incoming, String(incoming.dropLast(40))]
    try withFiles(["stored.jsonl": lines.joined(separator: "\n"), "p.json": incoming]) { dir in
      let result = try match(dir, ["stored.jsonl", "p.json"])
      #expect(result.status == 0)
      #expect(result.stdout.contains("stored profile: #1 at \(dir)/stored.jsonl:2:1"))
      let each = try match(dir, ["--each", "--json", "stored.jsonl", "p.json"])
      #expect(each.status == 0)
      #expect(each.stderr.contains("stored.jsonl:3:"))
      #expect(each.stderr.contains("stored entry #2 skipped, as the script does"))
      for (workers, block) in [("1", "1048576"), ("2", "64")] {
        let summary = try run(
          ["match", "--config", dir + "/config.json", "--summary", "--json", dir + "/stored.jsonl", dir + "/p.json"],
          environment: ["FR_PROFILE_MATCH_WORKERS": workers, "FR_PROFILE_MATCH_BLOCK": block])
        #expect(summary.status == 0)
        #expect(summary.stderr == each.stderr)
        let totals = try JSONParser.parse(summary.stdout)
        #expect(totals["read"] == 3 && totals["skipped"] == 1 && totals["trueCount"] == 1)
        #expect(totals["decidedBy"]?.stringValue?.hasSuffix("stored.jsonl:2:1") == true)
      }
    }
  }

  @Test("the fast path used by --summary agrees with the general path on unusual profiles")
  func fastPathAgreesWithGeneralPath() throws {
    let variants: [String] = [
      Self.text(Self.incoming),
      Self.text(Self.drifted([("hardware", "cpu", "16")])),
      Self.text(Self.drifted([("hardware", "display", "2880")])),
      Self.text(Self.drifted([("network", "connected", .null)])),
      #"{"identifier": "dev-1", "metadata": {"1": 2, "platform": {}}, "location": {"lat": 52.52, "lng": 13.4}}"#,
      #"{"identifier": "dev-1", "metadata": {"hardware": {"cpu": 1.6e1}}, "location": {"latitude": "52.520008", "longitude": 13.404954}}"#,
      #"{"identifier": "dev-1", "metadata": {"platform": "Linux"}, "location": [13.404954, 52.520008]}"#,
      #"{"identifier": "dev-1", "metadata": {"platform": {"platform": "Lin\u0075x"}}, "location": {"lat": 52.520008, "lon": 13.404954}}"#,
      #"{"identifier": "dev-1", "metadata": null, "location": {"lat": 52.520008, "lon": 13.404954}}"#,
      #"{"identifier": "dev-1", "metadata": {}, "location": null}"#,
      #"{"identifier": "dev-1", "metadata": {"x": [1, {"a": 2}]}}"#,
      #"{"metadata": {}, "location": {}}"#,
      #"{"identifier": "dev-1", "metadata": {"hardware": {"cpu": 16, "cpu": 8}}, "location": {"latitude": 52.520008, "longitude": 13.404954}}"#,
      #"{"identifier": "dev-1", "location": {"latitude": 52.520008, "longitude": 13.404954}, "metadata": {"hardware": {"cpu": 8, "memory": 1}}}"#,
      #"{"identifier": "dev-1", "metadata": {"hardware": {"display": {"width": 2880, "height": 1800, "depth": 24}}}, "location": {"latitude": 52.5209, "longitude": 13.404954}}"#,
      "null", "\"dev-1\"", "[]",
    ]
    try withFiles(["stored.jsonl": variants.joined(separator: "\n"), "p.json": Self.text(Self.incoming)]) { dir in
      let each = try match(dir, ["--each", "--json", "stored.jsonl", "p.json"])
      var counts: [String: Int] = [:]
      for line in each.stdout.split(separator: "\n") {
        counts[try JSONParser.parse(String(line))["outcome"]!.stringValue!, default: 0] += 1
      }
      let summaryRun = try match(dir, ["--summary", "--json", "stored.jsonl", "p.json"])
      let summary = try JSONParser.parse(summaryRun.stdout)
      #expect(summary["trueCount"]?.numberValue == Double(counts["true"] ?? 0))
      #expect(summary["falseCount"]?.numberValue == Double(counts["false"] ?? 0))
      #expect(summary["errorCount"]?.numberValue == Double(counts["error"] ?? 0))
      #expect(counts["true", default: 0] > 0 && counts["false", default: 0] > 0 && counts["error", default: 0] > 0)
    }
  }
}

/// The parallel `--summary` path over JSON Lines against the serial `--each` path.
@Suite(.timeLimit(.minutes(10))) struct MatchParallelSummaryTests {
  @Test("--summary in parallel blocks agrees with --each: counts, decision and warning positions", arguments: [64, 700, 5000, 1 << 20])
  func parallelBlocksAgree(blockSize: Int) throws {
    let good = JSONWriter.compact(MatchCommandTests.incoming)
    let other = JSONWriter.compact(MatchCommandTests.drifted([], identifier: "x"))
    let cpu = JSONWriter.compact(MatchCommandTests.drifted([("hardware", "cpu", 2)]))
    let deferred = #"{"identifier": "dev-1", "metadata": {"0": 1}, "location": {"latitude": "52.52", "longitude": 13.4}}"#
    var lines: [String] = []
    for index in 0..<300 {
      switch index % 13 {
      case 0: lines.append(other)
      case 3: lines.append("not json \(index)")
      case 5: lines.append(deferred)
      case 7: lines.append("")
      case 9: lines.append("   " + cpu)
      default: lines.append(index % 2 == 0 ? good : cpu)
      }
    }
    let directory = try makeTemporaryDirectory()
    defer { removeTemporaryDirectory(directory) }
    try MatchCommandTests.config.write(toFile: directory + "/config.json", atomically: true, encoding: .utf8)
    try lines.joined(separator: "\n").write(toFile: directory + "/stored.jsonl", atomically: true, encoding: .utf8)
    try good.write(toFile: directory + "/p.json", atomically: true, encoding: .utf8)
    let common = ["match", "--config", directory + "/config.json", directory + "/stored.jsonl", directory + "/p.json"]
    let each = try run(common + ["--each", "--json"])
    var counts: [String: Double] = [:]
    for line in each.stdout.split(separator: "\n") {
      counts[try JSONParser.parse(String(line))["outcome"]!.stringValue!, default: 0] += 1
    }
    let summary = try run(common + ["--summary", "--json"], environment: ["FR_PROFILE_MATCH_BLOCK": String(blockSize)])
    let totals = try JSONParser.parse(summary.stdout)
    #expect(summary.status == each.status)
    #expect(totals["trueCount"]?.numberValue == counts["true"] ?? 0)
    #expect(totals["falseCount"]?.numberValue == counts["false"] ?? 0)
    #expect(totals["errorCount"]?.numberValue == counts["error"] ?? 0)
    #expect(totals["skipped"] == 23)
    #expect(totals["read"] == 277)
    #expect(totals["decidedBy"]?.stringValue?.hasSuffix("stored.jsonl:2:1") == true)
    // The serial path prints at most 20 warnings; the parallel one must name the same lines.
    let serialWarnings = each.stderr.split(separator: "\n").filter { $0.contains("skipped") }
    let parallelWarnings = summary.stderr.split(separator: "\n").filter { $0.contains("skipped") }
    #expect(serialWarnings == parallelWarnings)
    #expect(parallelWarnings.first?.contains("stored.jsonl:4:2: unexpected") == true)
  }
}

@Suite(.timeLimit(.minutes(10))) struct MatchLargeInputTests {
  /// A profile of about `bytes` bytes that matches itself (a long identifier).
  static func bigProfile(_ bytes: Int) -> String {
    "{\"identifier\": \"" + String(repeating: "x", count: bytes)
      + "\", \"metadata\": {\"a\": 1}, \"location\": {\"latitude\": 1, \"longitude\": 2}}"
  }

  @Test("one size limit (16 MiB) for STORED entries and INCOMING: a 3 MiB profile matches either way, in every layout")
  func bigProfilesMatchAsStoredAndIncoming() throws {
    let directory = try makeTemporaryDirectory()
    defer { removeTemporaryDirectory(directory) }
    let profile = Self.bigProfile(3 << 20)
    let other = Self.bigProfile(10).replacingOccurrences(of: "xxxxxxxxxx", with: "other")
    try profile.write(toFile: directory + "/p.json", atomically: false, encoding: .utf8)
    try "[\(other), \(profile)]".write(toFile: directory + "/array.json", atomically: false, encoding: .utf8)
    try "\(other)\n\(profile)\n\(other)\n".write(toFile: directory + "/lines.jsonl", atomically: false, encoding: .utf8)
    for stored in ["p.json", "array.json", "lines.jsonl"] {
      for mode in [[], ["--each"], ["--summary"]] {
        let result = try run(["match", "--script-defaults"] + mode + [directory + "/" + stored, directory + "/p.json"])
        #expect(result.status == 0, "\(stored) \(mode): \(result.stderr)")
        #expect(result.stderr.isEmpty, "\(stored) \(mode)")
      }
    }
  }

  @Test("an entry over 16 MiB is skipped with a warning naming it; the same file as INCOMING is an error (65)")
  func oversizedEntry() throws {
    let directory = try makeTemporaryDirectory()
    defer { removeTemporaryDirectory(directory) }
    let huge = Self.bigProfile(17 << 20)
    let small = Self.bigProfile(10)
    try huge.write(toFile: directory + "/huge.json", atomically: false, encoding: .utf8)
    try small.write(toFile: directory + "/small.json", atomically: false, encoding: .utf8)
    try "\(huge)\n\(small)\n".write(toFile: directory + "/lines.jsonl", atomically: false, encoding: .utf8)
    try "[\(huge), \(small)]".write(toFile: directory + "/array.json", atomically: false, encoding: .utf8)
    let alone = try run(["match", "--script-defaults", directory + "/huge.json", directory + "/small.json"])
    #expect(alone.status == 3)
    #expect(alone.stderr.contains("huge.json:1:1: stored entry #0 is larger than 16 MiB, the limit for one profile; skipped"))
    for stored in ["lines.jsonl", "array.json"] {
      for mode in [[], ["--summary"]] {
        let result = try run(["match", "--script-defaults"] + mode + [directory + "/" + stored, directory + "/small.json"])
        #expect(result.status == 0, "\(stored) \(mode)")
        #expect(result.stderr.contains("stored entry #0 is larger than 16 MiB"), "\(stored) \(mode)")
        #expect(result.stderr.split(separator: "\n").count == 1, "\(stored) \(mode): \(result.stderr)")
        if mode == ["--summary"] { #expect(result.stdout.contains("2 read, 1 skipped (1 over the size limit")) }
      }
    }
    let incoming = try run(["match", "--script-defaults", directory + "/small.json", directory + "/huge.json"])
    #expect(incoming.status == 65)
    #expect(
      incoming.stderr
        == "fr-profile: error: \(directory)/huge.json is larger than 16 MiB, the limit for one profile (a device profile is a few KB)\n")
  }

  @Test("a compact one-line AM listing over 1 MiB is streamed element by element")
  func largeCompactListing() throws {
    let directory = try makeTemporaryDirectory()
    defer { removeTemporaryDirectory(directory) }
    let profile = JSONWriter.compact(MatchCommandTests.incoming)
    let other = JSONWriter.compact(MatchCommandTests.drifted([], identifier: "x"))
    let listing =
      "{\"result\":[" + Array(repeating: other, count: 5000).joined(separator: ",") + "," + profile
      + "],\"resultCount\":5001}\n"
    #expect(listing.utf8.count > 1 << 20)
    try listing.write(toFile: directory + "/am.json", atomically: true, encoding: .utf8)
    try profile.write(toFile: directory + "/p.json", atomically: true, encoding: .utf8)
    try MatchCommandTests.config.write(toFile: directory + "/config.json", atomically: true, encoding: .utf8)
    let result = try run(["match", "--config", directory + "/config.json", directory + "/am.json", directory + "/p.json"])
    #expect(result.status == 0)
    #expect(result.stdout.contains("stored profile: #5000 at \(directory)/am.json:1:"))
    #expect(result.stderr.isEmpty)
  }
}

/// Configs, output and determinism of `fr-profile match` (issues 9 and 11).
@Suite(.timeLimit(.minutes(10))) struct MatchRobustnessTests {
  @Test("a config over 1 MiB is refused at once (78) with a short message")
  func hugeConfigIsRefused() throws {
    let directory = try makeTemporaryDirectory()
    defer { removeTemporaryDirectory(directory) }
    try ("{\"" + String(repeating: "k", count: 60 << 20) + "\": 1}").write(
      toFile: directory + "/config.json", atomically: false, encoding: .utf8)
    try JSONWriter.compact(MatchCommandTests.incoming).write(toFile: directory + "/p.json", atomically: true, encoding: .utf8)
    let result = try run(["match", "--config", directory + "/config.json", directory + "/p.json", directory + "/p.json"])
    #expect(result.status == 78)
    #expect(result.stderr.contains("larger than 1 MiB, the limit for a match config"))
    #expect(result.stderr.utf8.count < 300)
  }

  @Test("an unknown config key is echoed cut to 64 characters, control characters escaped")
  func longUnknownKeyIsTruncated() throws {
    let directory = try makeTemporaryDirectory()
    defer { removeTemporaryDirectory(directory) }
    let key = "\\u001b]0;owned\\u0007" + String(repeating: "k", count: 500_000)
    try ("{\"" + key + "\": 1}").write(toFile: directory + "/config.json", atomically: false, encoding: .utf8)
    try JSONWriter.compact(MatchCommandTests.incoming).write(toFile: directory + "/p.json", atomically: true, encoding: .utf8)
    let result = try run(["match", "--config", directory + "/config.json", directory + "/p.json", directory + "/p.json"])
    #expect(result.status == 78)
    #expect(result.stderr.utf8.count < 400, "\(result.stderr.prefix(400))")
    #expect(result.stderr.contains("… (500010 bytes)"))
    #expect(result.stderr.contains("\\u001b]0;owned\\u0007"))
    #expect(!result.stderr.contains("\u{1B}"))
  }

  @Test("--summary shows stored key names with control characters escaped and cut to 64 characters")
  func summaryKeysAreShownSafely() throws {
    let directory = try makeTemporaryDirectory()
    defer { removeTemporaryDirectory(directory) }
    let long = String(repeating: "k", count: 300)
    let stored = #"{"identifier": "d", "metadata": {"\u001b[31mred": 1, "\#(long)": 1}, "location": {"lat": 1, "lng": 1}}"#
    let incoming = #"{"identifier": "d", "metadata": {}, "location": {"lat": 1, "lng": 1}}"#
    try (stored + "\n").write(toFile: directory + "/s.jsonl", atomically: true, encoding: .utf8)
    try incoming.write(toFile: directory + "/p.json", atomically: true, encoding: .utf8)
    try #"{"maxUnmatchedAttrs": 5}"#.write(toFile: directory + "/config.json", atomically: true, encoding: .utf8)
    let result = try run(
      ["match", "--config", directory + "/config.json", "--summary", directory + "/s.jsonl", directory + "/p.json"])
    #expect(result.status == 0)
    #expect(result.stdout.contains("\\u001b[31mred"))
    #expect(!result.stdout.contains("\u{1B}"))
    #expect(result.stdout.contains(String(repeating: "k", count: 64) + "… (300 bytes)"))
  }

  @Test("match output to a full disk exits 74 with a message, in every output mode")
  func fullDiskIsAnError() throws {
    let directory = try makeTemporaryDirectory()
    defer { removeTemporaryDirectory(directory) }
    let profile = JSONWriter.compact(MatchCommandTests.incoming)
    try profile.write(toFile: directory + "/p.json", atomically: true, encoding: .utf8)
    try (profile + "\n" + profile + "\n").write(toFile: directory + "/s.jsonl", atomically: true, encoding: .utf8)
    for mode in [[], ["--json"], ["--each"], ["--summary"], ["--summary", "--json"]] {
      let result = try run(
        ["match", "--script-defaults"] + mode + [directory + "/s.jsonl", directory + "/p.json"],
        prefix: ["/bin/sh", "-c", "exec \"$0\" \"$@\" >/dev/full"])
      #expect(result.status == 74, "\(mode)")
      #expect(result.stderr == "fr-profile: error: cannot write to standard output: No space left on device.\n", "\(mode)")
    }
  }

  /// Stored JSON Lines where keys tie: every profile mismatches on one of a, b, c, x, and
  /// a, b, c each on 3 profiles, spread so that workers first see them in different orders.
  static func tiedProfiles() -> (stored: String, incoming: String) {
    let incoming: JSON = ["identifier": "d", "metadata": ["a": 0, "b": 0, "c": 0, "x": 0], "location": ["lat": 1, "lng": 1]]
    var lines: [String] = []
    for key in ["x", "c", "b", "a", "c", "a", "b", "b", "a", "c"] {
      var metadata = incoming["metadata"]!.objectValue!
      metadata[key] = 1
      lines.append(JSONWriter.compact(["identifier": "d", "metadata": .object(metadata), "location": ["lat": 1, "lng": 1]]))
    }
    return (lines.joined(separator: "\n") + "\n", JSONWriter.compact(incoming))
  }

  @Test("--summary output is byte-identical for 1, 2 and 8 workers; equal counts are listed by key name")
  func summaryDoesNotDependOnWorkers() throws {
    let directory = try makeTemporaryDirectory()
    defer { removeTemporaryDirectory(directory) }
    let (stored, incoming) = Self.tiedProfiles()
    try stored.write(toFile: directory + "/s.jsonl", atomically: true, encoding: .utf8)
    try incoming.write(toFile: directory + "/p.json", atomically: true, encoding: .utf8)
    var outputs: Set<String> = []
    for json in [false, true] {
      outputs = []
      for workers in ["1", "2", "8"] {
        for block in ["1", "64", "1048576"] {
          let result = try run(
            ["match", "--script-defaults", "--summary"] + (json ? ["--json"] : []) + [directory + "/s.jsonl", directory + "/p.json"],
            environment: ["FR_PROFILE_MATCH_WORKERS": workers, "FR_PROFILE_MATCH_BLOCK": block])
          #expect(result.status == 1)
          outputs.insert(result.stdout)
        }
      }
      #expect(outputs.count == 1, "\(outputs)")
    }
    let text = try run(["match", "--script-defaults", "--summary", directory + "/s.jsonl", directory + "/p.json"]).stdout
    let keys = text.split(separator: "\n").filter { $0.hasPrefix("  ") }.map { $0.split(separator: " ").first! }
    #expect(keys == ["a", "b", "c", "x"])
  }

  @Test("more mismatches than the fast path records: --summary and --each report the same keys")
  func manyMismatchesAgree() throws {
    let directory = try makeTemporaryDirectory()
    defer { removeTemporaryDirectory(directory) }
    let list = "[" + Array(repeating: "0", count: 4100).joined(separator: ",") + "]"
    let stored = #"{"identifier": "d", "metadata": {"list": \#(list), "last": 1}, "location": {"lat": 1, "lng": 1}}"#
    let incoming = #"{"identifier": "d", "metadata": {"list": [], "last": 2}, "location": {"lat": 1, "lng": 1}}"#
    try (stored + "\n" + stored + "\n").write(toFile: directory + "/s.jsonl", atomically: true, encoding: .utf8)
    try incoming.write(toFile: directory + "/p.json", atomically: true, encoding: .utf8)
    try #"{"attrWeights": {"list": 0}, "maxUnmatchedAttrs": 1}"#.write(
      toFile: directory + "/config.json", atomically: true, encoding: .utf8)
    let arguments = ["match", "--config", directory + "/config.json", "--json"]
    let summary = try JSONParser.parse(try run(arguments + ["--summary", directory + "/s.jsonl", directory + "/p.json"]).stdout)
    let keys = summary["mismatchedKeys"]?.arrayValue?.compactMap { $0["key"]?.stringValue }
    #expect(keys == ["last", "list"])
    #expect(summary["trueCount"] == 2)
    let each = try run(arguments + ["--each", directory + "/s.jsonl", directory + "/p.json"])
    for line in each.stdout.split(separator: "\n") {
      let result = try JSONParser.parse(String(line))
      let paths = Set(result["metadata"]?["mismatches"]?.arrayValue?.compactMap { $0["key"]?.stringValue } ?? [])
      #expect(paths == ["list", "last"])
    }
  }
}
