import ProfileJSON
import SystemCalls

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// Where a journey starts: AM's authenticate endpoint for a realm, and how the journey is
/// chosen — a tree by name, an authorization advice (step-up), or a suspended journey resumed.
public struct AuthenticateEndpoint: Sendable, Equatable {
  /// The AM base URL, e.g. `https://am.example.com/am` (a trailing slash is ignored).
  public var server: String
  /// The realm: `root` (or `/` or empty) for the top-level realm, `alpha`, or a path of
  /// sub-realms such as `alpha/staff`.
  public var realm: String
  public var start: Start
  /// `ForceAuth=true`: authenticate again although the session sent is valid (step-up, session
  /// upgrade), as the SDKs' `forceAuth`.
  public var forceAuth = false
  /// `noSession=true`: finish without creating a session (a journey that only registers).
  public var noSession = false

  /// How the journey is chosen.
  public enum Start: Sendable, Equatable {
    /// `authIndexType=service&authIndexValue=<tree>`.
    case tree(String)
    /// `authIndexType=composite_advice&authIndexValue=<advice>`: the journey AM picks for an
    /// authorization advice (the XML a policy decision returns), for step-up.
    case compositeAdvice(String)
    /// `suspendedId=<id>[&authIndexType=service&authIndexValue=<tree>]`: a journey a Suspend
    /// node stopped, continued from its email link (`ResumeLink`), with the link's tree when it
    /// names one, as the JavaScript SDK's `resume(url)` sends it.
    case resume(suspendedId: String, tree: String? = nil)
  }

  public init(server: String, realm: String, tree: String) {
    self.init(server: server, realm: realm, start: .tree(tree))
  }

  public init(server: String, realm: String, start: Start) {
    self.server = server
    self.realm = realm
    self.start = start
  }

  /// The tree of a `.tree` start.
  public var tree: String? {
    if case .tree(let name) = start { return name }
    return nil
  }

  /// The `Accept-API-Version` header of AM's authenticate endpoint, spelt as the JavaScript SDK
  /// sends it (`auth/index.ts`). AM reads the value as comma-separated `key=value` pairs in any
  /// order: the Android SDK's `resource=2.1, protocol=1.0` and the iOS SDK's
  /// `resource=2.1,protocol=1.0` mean the same.
  public static let apiVersionHeader = "Accept-API-Version: protocol=1.0,resource=2.1"

  /// Every header a journey request carries besides the session cookie, as the JavaScript SDK
  /// sends them (`Auth.configureRequest`): JSON both ways, the API version, and
  /// `X-Requested-With: forgerock-sdk`, which all three SDKs send and which AM's CSRF filter
  /// accepts as the mark of a non-browser client.
  public static let requestHeaders = [
    "Accept: application/json", apiVersionHeader, "Content-Type: application/json", "X-Requested-With: forgerock-sdk",
  ]

  /// `<server>/json/realms/root[/realms/<realm>…]/authenticate?<start>[&ForceAuth=true][&noSession=true]`.
  public var url: String {
    var base = server
    while base.hasSuffix("/") { base.removeLast() }
    let path = "/json" + Self.realmPath(realm)
    var query: String
    switch start {
    case .tree(let tree): query = "authIndexType=service&authIndexValue=" + Self.percentEncoded(tree)
    case .compositeAdvice(let advice): query = "authIndexType=composite_advice&authIndexValue=" + Self.percentEncoded(advice)
    case .resume(let id, let tree):
      query = "suspendedId=" + Self.percentEncoded(id)
      if let tree { query += "&authIndexType=service&authIndexValue=" + Self.percentEncoded(tree) }
    }
    if forceAuth { query += "&ForceAuth=true" }
    if noSession { query += "&noSession=true" }
    return base + path + "/authenticate?" + query
  }

  /// AM's path of a realm, as its REST and OAuth 2.0 URLs carry it: `/realms/root` for the
  /// top-level realm (`root`, `/` or empty), `/realms/root/realms/alpha/realms/staff` for
  /// `alpha/staff`.
  public static func realmPath(_ realm: String) -> String {
    realmNames(realm).reduce("/realms/root") { $0 + "/realms/" + percentEncoded($1) }
  }

  /// The realm's names below the top-level realm, not encoded: `[]` for `root`, `/` or empty,
  /// `["alpha", "staff"]` for `alpha/staff` and `/root/alpha/staff`. The one reading of a
  /// realm option: `realmPath` and the token store's file names use it.
  package static func realmNames(_ realm: String) -> [String] {
    let parts = realm.split(separator: "/").map(String.init).filter { !$0.isEmpty }
    return parts.first == "root" ? Array(parts.dropFirst()) : parts
  }

  /// `%XX` decoded (and `+` as a space, as in a query); nil for a malformed escape or text that
  /// is not UTF-8.
  package static func percentDecoded(_ text: String) -> String? {
    var bytes: [UInt8] = []
    var iterator = Array(text.utf8).makeIterator()
    while let byte = iterator.next() {
      if byte == UInt8(ascii: "%") {
        guard let high = iterator.next().flatMap(Hex.digitValue), let low = iterator.next().flatMap(Hex.digitValue) else { return nil }
        bytes.append(high << 4 | low)
      } else {
        bytes.append(byte == UInt8(ascii: "+") ? UInt8(ascii: " ") : byte)
      }
    }
    return String(validating: bytes, as: UTF8.self)
  }

  /// RFC 3986 unreserved characters kept, every other byte percent-encoded: the one encoder of
  /// the path segments and query values sent to AM.
  package static func percentEncoded(_ text: String) -> String {
    let hex = Array("0123456789ABCDEF".utf8)
    var out: [UInt8] = []
    for byte in text.utf8 {
      switch byte {
      case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
        UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
        out.append(byte)
      default: out += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 15)]]
      }
    }
    return String(decoding: out, as: UTF8.self)
  }
}

/// How a journey ended.
public enum JourneyOutcome: Sendable, Equatable {
  /// AM's success body (`tokenId`, `successUrl`, `realm`).
  case success(JSONObject)
  /// A 401: AM's `message` (e.g. "Login failure") and its body when it was a JSON object.
  case failure(message: String, body: JSONObject?)
  /// A Suspend node stopped the journey (`SuspendedTextOutputCallback`): its message (e.g.
  /// "check your email"); the link it sent continues it (`AuthenticateEndpoint.Start.resume`).
  case suspended(message: String)
  /// The journey continues in a browser (`RedirectCallback`) at `url`, which a client without
  /// one can only show.
  case redirect(url: String)
}

/// Walks a journey: posts `{}` to start the tree, then each answered step back, until AM
/// returns a success (200 with `tokenId`) or a failure (401). Transport and answering are
/// given as closures, so the walk knows nothing of HTTP or terminals.
public struct JourneyWalker {
  /// Sends a body to the URL and returns the status and body of the response.
  public var post: (_ url: String, _ body: [UInt8]) throws -> (status: Int, body: [UInt8])
  /// Fills in the callbacks of a step, in place.
  public var answer: (_ step: inout AuthenticateStep) throws -> Void
  /// Steps after which the walk gives up (a tree that loops).
  public var maximumSteps = 100
  /// The most callbacks a step may have (`JourneyError.tooManyCallbacks`), checked before
  /// anything is answered.
  public var maximumCallbacks = AuthenticateStep.defaultMaximumCallbacks
  /// Seconds the whole walk may take (`JourneyError.timeLimit`), answering included; nil for
  /// no limit. It is checked before each post and after each answer.
  public var maximumTime: Double?
  /// The clock, in seconds (monotonic); replaceable in tests.
  public var now: () -> Double = monotonicSeconds

  public init(
    post: @escaping (_ url: String, _ body: [UInt8]) throws -> (status: Int, body: [UInt8]),
    answer: @escaping (_ step: inout AuthenticateStep) throws -> Void
  ) {
    self.post = post
    self.answer = answer
  }

  /// Walks the tree at `endpoint` to its end. Throws `JourneyError` for answers that are not
  /// AM authenticate responses, and whatever `post` and `answer` throw.
  public func walk(_ endpoint: AuthenticateEndpoint) throws -> JourneyOutcome {
    let url = endpoint.url
    var body = Array("{}".utf8)
    let deadline = maximumTime.map { now() + $0 }
    for _ in 0..<maximumSteps {
      if let deadline, let maximumTime, now() >= deadline { throw JourneyError.timeLimit(seconds: maximumTime) }
      let response = try post(url, body)
      switch response.status {
      case 200:
        var step = try AuthenticateStep(parsing: response.body)
        if step.tokenId != nil || (step.callbacks == nil && step.body["successUrl"] != nil) {
          return .success(step.body)
        }
        guard let callbacks = step.callbacks else { throw JourneyError.notAStep }
        guard callbacks.count <= maximumCallbacks else {
          throw JourneyError.tooManyCallbacks(count: callbacks.count, limit: maximumCallbacks)
        }
        // Steps that end the walk here: nothing of them is answered or posted. Only those
        // callbacks are read first, so a step that ends the journey is never refused for a
        // callback of another type beside it.
        for callback in callbacks where callback.type.flatMap(CallbackType.init(rawValue:))?.endsJourney == true {
          switch try CallbackRequest(callback) {
          case .suspendedTextOutput(let message, _): return .suspended(message: message)
          case .redirect(let url, _): return .redirect(url: url)
          default: continue
          }
        }
        try answer(&step)
        if let deadline, let maximumTime, now() >= deadline { throw JourneyError.timeLimit(seconds: maximumTime) }
        body = Array(step.text.utf8)
      case 401:
        let parsed = try? AuthenticateStep(parsing: response.body)
        let message = parsed?.body["message"]?.stringValue ?? Self.excerpt(response.body)
        return .failure(message: message.isEmpty ? "authentication failed" : message, body: parsed?.body)
      default:
        let parsed = try? AuthenticateStep(parsing: response.body)
        throw JourneyError.unexpectedStatus(
          status: response.status, message: parsed?.body["message"]?.stringValue ?? Self.excerpt(response.body))
      }
    }
    throw JourneyError.tooManySteps(maximumSteps)
  }

  /// The first line of a non-JSON body, shortened, for an error message.
  static func excerpt(_ body: [UInt8]) -> String {
    let text = String(decoding: body.prefix(200), as: UTF8.self)
    let line = text.split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
    return line.trimmingCharacters(in: " \t")
  }
}

extension String {
  fileprivate func trimmingCharacters(in set: String) -> String {
    var text = Substring(self)
    while let first = text.first, set.contains(first) { text.removeFirst() }
    while let last = text.last, set.contains(last) { text.removeLast() }
    return String(text)
  }
}
