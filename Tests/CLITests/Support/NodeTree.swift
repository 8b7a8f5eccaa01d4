import Foundation
import ProfileJSON

/// A loopback AM tree made of nodes, for the journeys enterprises run: each node is a
/// page of callbacks in AM's exact JSON (shapes from the SDKs' own test fixtures) and what the
/// node does with the answers — another node, success, a 401, or the same page again with
/// AM's error, as a Retry Limit or an OTP Collector does. Steps carry `authId`, `header`,
/// `_id`-numbered callbacks; success is `tokenId`/`successUrl`/`realm`; failure 401 `{code,…}`.
final class NodeTree: CustomTree, @unchecked Sendable {
  enum Next {
    case node(String)
    case success
    case failure(String)
    /// The page again, its error first in a TextOutputCallback (messageType 2).
    case again(error: String)
  }

  struct Node {
    var callbacks: [JSON]
    /// The answers (the callbacks posted back) → what the node does.
    var decide: @Sendable (_ answers: Answers, _ request: AuthenticateServer.Record) -> Next
  }

  /// The callbacks a client posted back.
  struct Answers {
    var callbacks: [JSON]

    /// The value of the first input whose name ends with `suffix` in the `n`-th callback of `type`.
    func value(_ type: String, _ n: Int = 0, input suffix: String = "") -> JSON? {
      let matching = callbacks.filter { $0["type"]?.stringValue == type }
      guard matching.indices.contains(n), case .array(let inputs)? = matching[n]["input"] else { return nil }
      return inputs.first { ($0["name"]?.stringValue ?? "").hasSuffix(suffix) }?["value"]
    }

    func text(_ type: String, _ n: Int = 0, input suffix: String = "") -> String? { value(type, n, input: suffix)?.stringValue }
  }

  let realmPath: String
  let nodes: [String: Node]
  /// The first node for a request without `authId` (its query and headers: a resume, an
  /// advice, a session cookie).
  let start: @Sendable (AuthenticateServer.Record) -> Next
  let token = "AQIC5wM2LY4Sfcz-node-tree-token.*AAJTSQACMDE.*"
  private let lock = NSLock()
  private var sessions: [String: String] = [:]
  private var log: [String] = []
  private var posted: [JSON] = []

  init(
    realmPath: String = "/json/realms/root/realms/alpha", nodes: [String: Node],
    start: @escaping @Sendable (AuthenticateServer.Record) -> Next = { _ in .node("start") }
  ) {
    self.realmPath = realmPath
    self.nodes = nodes
    self.start = start
  }

  /// What happened, in order: "node NAME", "again NAME: error", "success", "failure: message".
  var events: [String] { lock.withLock { log } }
  /// Every body posted back with an `authId`.
  var answered: [JSON] { lock.withLock { posted } }

  func respond(to request: AuthenticateServer.Record) -> (Int, String) {
    guard request.method == "POST", request.target.hasPrefix(realmPath + "/authenticate?"),
      AuthenticateServer.acceptsAuthenticateVersion(request.headers["accept-api-version"]),
      case .object(let body)? = try? JSONParser.parse(Array(request.body.utf8))
    else { return (400, #"{"code":400,"reason":"Bad Request","message":"bad request"}"#) }
    guard case .string(let authId)? = body["authId"] else { return go(start(request), from: nil) }
    guard let current = lock.withLock({ sessions.removeValue(forKey: authId) }), let node = nodes[current] else {
      return fail("Invalid authId")
    }
    lock.withLock { posted.append(.object(body)) }
    return go(node.decide(Answers(callbacks: body["callbacks"]?.arrayValue ?? []), request), from: current)
  }

  private func go(_ next: Next, from current: String?) -> (Int, String) {
    switch next {
    case .success:
      lock.withLock { log.append("success") }
      return (200, JSONWriter.compact(["tokenId": .string(token), "successUrl": "/am/console", "realm": "/alpha"]))
    case .failure(let message):
      return fail(message)
    case .node(let name):
      lock.withLock { log.append("node \(name)") }
      return (200, page(name, error: nil))
    case .again(let error):
      let name = current ?? "start"
      lock.withLock { log.append("again \(name): \(error)") }
      return (200, page(name, error: error))
    }
  }

  private func fail(_ message: String) -> (Int, String) {
    lock.withLock { log.append("failure: \(message)") }
    return (401, JSONWriter.compact(["code": 401, "reason": "Unauthorized", "message": .string(message)]))
  }

  private func page(_ name: String, error: String?) -> String {
    let id = UUID().uuidString
    lock.withLock { sessions[id] = name }
    var callbacks = nodes[name]?.callbacks ?? []
    if let error { callbacks.insert(Self.callback("TextOutputCallback", [("message", .string(error)), ("messageType", "2")]), at: 0) }
    let numbered = callbacks.enumerated().map { offset, callback -> JSON in
      guard case .object(var object) = callback else { return callback }
      object["_id"] = .number(Double(offset))
      return .object(object)
    }
    return JSONWriter.compact(["authId": .string(id), "callbacks": .array(numbered), "header": "Sign in", "stage": .string(name)])
  }

  /// One callback in AM's shape: `type`, `output` [{name, value}], `input` [{name, value}].
  static func callback(_ type: String, _ outputs: [(String, JSON)], inputs: [(String, JSON)] = []) -> JSON {
    var object: JSONObject = [
      "type": .string(type), "output": .array(outputs.map { ["name": .string($0.0), "value": $0.1] }),
    ]
    if !inputs.isEmpty { object["input"] = .array(inputs.map { ["name": .string($0.0), "value": $0.1] }) }
    return .object(object)
  }
}
