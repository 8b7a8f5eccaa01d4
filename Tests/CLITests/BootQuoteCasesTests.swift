import Foundation
import ProfileJSON
import TPMAttestation
import TPMProtocol
import TestSupport
import Testing

/// The boot-quote cases of Tests/TPMAttestationTests/Fixtures/bootquote — quotes made by swtpm
/// and tpm2-tools alone, over event logs built in Python (make-cases.py, checked there with
/// tpm2_checkquote and tpm2_eventlog) — through both verifiers: the Swift one
/// (`AttestationVerifier.verifyBoot`) and the AM script's quote round under Rhino. Each must reach
/// the case's verdict, and a refusal must name the same check in both.
@Suite(.timeLimit(.minutes(10)))
struct BootQuoteCasesTests {
  static let directory = AMScript.packageRoot + "/Tests/TPMAttestationTests/Fixtures/bootquote"

  struct Case {
    let name: String
    let document: JSON

    func bytes(_ key: String) throws -> [UInt8] {
      guard let bytes = document[key]?.stringValue.flatMap(Base64URL.decode) else { throw CaseError("\(name): no base64url \(key)") }
      return bytes
    }
    var expect: JSON { document["expect"] ?? .null }
    var policy: JSON { document["policy"] ?? .null }
  }

  static func cases(in directory: String = directory) throws -> [Case] {
    let names = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".json") }.sorted()
    return try names.map { name in
      Case(
        name: String(name.dropLast(5)),
        document: try JSONParser.parse(Array(try String(contentsOfFile: directory + "/" + name, encoding: .utf8).utf8)))
    }
  }

  /// The Swift verifier's verdict: nil when accepted (and the boot state), else the check.
  static func swift(_ item: Case) throws -> (check: String?, state: BootState?) {
    var enrolled: [Int: [UInt8]]?
    if let ekName = item.document["ekName"]?.stringValue, case .object(let values)? = item.policy["enrolledPcrs"]?[ekName] {
      enrolled = [:]
      for (key, value) in values.members {
        guard let pcr = Int(key), let bytes = value.stringValue.flatMap(Base64URL.decode) else {
          throw CaseError("\(item.name): enrolled PCR \(key)")
        }
        enrolled?[pcr] = bytes
      }
    }
    let policy = BootPolicy(requireSecureBoot: item.policy["requireSecureBoot"]?.boolValue ?? true, enrolledPCRs: enrolled)
    let nonce = try item.bytes("nonce")
    let ak = try TPMPublic(tpm2b: try item.bytes("akPublic"))
    do throws(BootRefusal) {
      return (
        nil, try AttestationVerifier.verifyBoot(quote: item.document["quote"] ?? .null, nonce: nonce, attestationKey: ak, policy: policy)
      )
    } catch {
      return (error.check.rawValue, nil)
    }
  }

  /// The AM script's verdict, run as the node's quote round after a verified activation.
  static func script(_ item: Case) throws -> (check: String?, boot: JSON?, outcome: String) {
    var boot: JSONObject = ["quote": true, "requireSecureBoot": item.policy["requireSecureBoot"] ?? true]
    if let enrolled = item.policy["enrolledPcrs"] { boot["enrolledPcrs"] = enrolled }
    let state: JSON = [
      "akPublic": item.document["akPublic"] ?? .null, "ekName": item.document["ekName"] ?? .null, "ekCertified": true,
      "activated": false, "quoteNonce": item.document["nonce"] ?? .null,
    ]
    let context: JSON = [
      "sharedState": ["frTpmAttestation": .string(JSONWriter.compact(state))], "transientState": [:],
      "callbacks": [["id": "frTpmBootQuote", "value": .string(JSONWriter.compact(item.document["quote"] ?? .null))]],
      "config": ["rootsPem": "", "intermediatesPem": "", "trustedEkNames": [], "boot": .object(boot)],
    ]
    let result = try AMScript.run(context: context)
    let shared = result["sharedState"]
    return (
      shared?["frTpmAttestation.refusedCheck"]?.stringValue,
      try shared?["frTpmAttestation.boot"]?.stringValue.map { try JSONParser.parse(Array($0.utf8)) },
      result["outcome"]?.stringValue ?? ""
    )
  }

  @Test("every case has the verdict it expects from the Swift verifier and from the AM script, refusals naming the same check")
  func bothVerifiersReachEachCasesVerdict() async throws {
    let cases = try Self.cases()
    #expect(cases.count >= 17)
    let checks = Set(cases.compactMap { $0.expect["check"]?.stringValue })
    // Every negative the issue names is among them.
    for check in [
      "secureBootOff", "shimValidationOff", "replay", "eventLog", "separators", "debugMode", "nonce", "signature", "selection", "pcrDigest",
    ] {
      #expect(checks.contains(check), "no case is refused by \(check)")
    }
    // One JVM at a time, on a thread of its own (each case starts Rhino: ~1 s).
    let verdicts = try await onOwnThread { try cases.map(Self.verdict) }
    for verdict in verdicts.compactMap({ $0 }) { Issue.record(Comment(rawValue: verdict)) }
  }

  @Test(
    "every real firmware log of the corpus (at least 20, from at least 3 projects' test data) has its ground truth's verdict from both verifiers"
  )
  func corpusLogsReachTheirVerdicts() async throws {
    // make-corpus-cases.py replays each log of Fixtures/eventlogs/corpus into swtpm and checks
    // the replay against the PCR values its source states (or tpm2_eventlog's) before writing.
    let manifest = try JSONParser.parse(
      Array(
        try String(
          contentsOfFile: AMScript.packageRoot + "/Tests/TPMAttestationTests/Fixtures/eventlogs/corpus/corpus.json", encoding: .utf8
        ).utf8))
    let logs = manifest["logs"]?.arrayValue ?? []
    let repositories = Set(logs.flatMap { ($0["sources"]?.arrayValue ?? []).compactMap { $0["repo"]?.stringValue } })
    #expect(logs.count >= 20)
    #expect(repositories.count >= 3, "\(repositories)")
    let cases = try Self.cases(in: Self.directory + "/corpus")
    #expect(Set(cases.map(\.name)) == Set(logs.compactMap { $0["name"]?.stringValue.map { "corpus-" + $0 } }))
    // The shapes the fixes are for are among them, read as their sources say.
    for name in ["corpus-go-tpm-tools-cos-85-amd-sev", "corpus-tpm2-tools-postcode", "corpus-go-tpm-tools-gdc-host"] {
      #expect(cases.first { $0.name == name }?.expect["verdict"] == "accept", "\(name)")
    }
    let verdicts = try await onOwnThread { try cases.map(Self.verdict) }
    for verdict in verdicts.compactMap({ $0 }) { Issue.record(Comment(rawValue: verdict)) }
  }

  @Test(
    "a log at each bound (4096 events, 64 KiB an event, 512 KiB a log) is accepted by both verifiers, one past it refused by both as eventLog"
  )
  func eventLogBoundsAgree() async throws {
    // bound-cases.py grows accept-secure-boot's log with EV_NO_ACTION events (the quote still
    // replays); the cases are not kept as files, their logs are up to half a megabyte.
    let tree = try TemporaryTree()
    defer { tree.remove() }
    let made = try TestProcess.run(["/usr/bin/python3", Self.directory + "/bound-cases.py", tree.root], environment: [:], timeout: 60)
    try #require(made.status == 0, "\(made.stderr)")
    let cases = try Self.cases(in: tree.root)
    #expect(cases.count == 6)
    let verdicts = try await onOwnThread { try cases.map(Self.verdict) }
    for verdict in verdicts.compactMap({ $0 }) { Issue.record(Comment(rawValue: verdict)) }
  }

  @Test("documents altered from an accepted case are malformed to both verifiers: both or neither log member, v2, a short or extra PCR")
  func malformedVariantsAgree() async throws {
    let accepted = try #require(try Self.cases().first { $0.name == "accept-secure-boot" })
    let quote = try #require(accepted.document["quote"]?.objectValue)
    var variants: [(String, JSONObject)] = []
    var both = quote
    both["eventLogMissing"] = "and yet"
    variants.append(("both log members", both))
    var neither = quote
    neither["eventLog"] = nil
    variants.append(("neither log member", neither))
    var v2 = quote
    v2["v"] = 2
    variants.append(("version 2", v2))
    var short = quote
    if case .object(var pcrs)? = quote["pcrs"] {
      pcrs["7"] = .string(Base64URL.encode([UInt8](repeating: 1, count: 31)))
      short["pcrs"] = .object(pcrs)
    }
    variants.append(("a 31-byte PCR", short))
    var extra = quote
    if case .object(var pcrs)? = quote["pcrs"] {
      pcrs["10"] = .string(Base64URL.encode([UInt8](repeating: 1, count: 32)))
      extra["pcrs"] = .object(pcrs)
    }
    variants.append(("PCR 10, not quoted", extra))
    let altered = variants
    let verdicts = try await onOwnThread {
      try altered.map { (name, document) -> String? in
        var changed = accepted.document.objectValue ?? [:]
        changed["quote"] = .object(document)
        changed["expect"] = ["verdict": "refuse", "check": "malformed"]
        return try Self.verdict(Case(name: "accept-secure-boot altered: \(name)", document: .object(changed)))
      }
    }
    for verdict in verdicts.compactMap({ $0 }) { Issue.record(Comment(rawValue: verdict)) }
  }

  /// nil when both verifiers reach the case's verdict, else what differs.
  static func verdict(_ item: Case) throws -> String? {
    let expected = item.expect
    let swift = try swift(item)
    let script = try script(item)
    var problems: [String] = []
    if expected["verdict"] == "accept" {
      if let check = swift.check { problems.append("Swift refused (\(check))") }
      if script.outcome != "activated" { problems.append("the script ended \(script.outcome) (\(script.check ?? "-"))") }
      if let state = swift.state {
        if expected["method"]?.stringValue != state.method.rawValue { problems.append("Swift method \(state.method.rawValue)") }
        if expected["secureBoot"] != state.secureBoot.map(JSON.bool) ?? .null {
          problems.append("Swift secureBoot \(String(describing: state.secureBoot))")
        }
        for key in ["shimValidation", "dmaProtectionDisabled"] where expected[key] != nil && expected[key] != state.json[key] {
          problems.append("Swift \(key) \(String(describing: state.json[key]))")
        }
        if script.boot?["method"] != .string(state.method.rawValue)
          || script.boot?["shimValidation"] != state.json["shimValidation"]
          || script.boot?["dmaProtectionDisabled"] != state.json["dmaProtectionDisabled"]
          || script.boot?["secureBoot"] != state.secureBoot.map(JSON.bool) ?? .null
          || script.boot?["pcrs"] != state.json["pcrs"] || script.boot?["bootApplications"] != state.json["bootApplications"]
        {
          problems.append("the script's boot state \(String(describing: script.boot)) is not Swift's \(state.json)")
        }
      }
    } else {
      let check = expected["check"]?.stringValue
      if swift.check != check { problems.append("Swift: \(swift.check ?? "accepted"), expected \(check ?? "-")") }
      if script.check != check || script.outcome != "false" {
        problems.append("script: \(script.check ?? "accepted") (\(script.outcome)), expected \(check ?? "-")")
      }
    }
    return problems.isEmpty ? nil : "\(item.name): " + problems.joined(separator: "; ")
  }

  struct CaseError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
  }
}
