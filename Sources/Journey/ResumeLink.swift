import ProfileJSON

/// The link AM's Email Suspend node sends to continue a suspended journey, read the way the
/// JavaScript SDK's `FRAuth.resume(url)` reads it: `suspendedId`, and the tree
/// (`authIndexValue`) it sends back, plus the realm, which the SDK takes from its configuration
/// and a command line takes from the link.
///
/// The links AM 6.5–8 and PingOne Advanced Identity Cloud send put the parameters in the query,
/// in the fragment (XUI routes by fragment), or in both:
///
///     https://am.example.com/am/XUI/?realm=/alpha&suspendedId=ID&authIndexType=service&authIndexValue=Login#/
///     https://am.example.com/am/XUI/#/?realm=/alpha&suspendedId=ID
///     https://am.example.com/openam/XUI/#login/&realm=/&suspendedId=ID
///     https://tenant.forgeblocks.com/am/XUI/?realm=alpha&suspendedId=ID&authIndexType=service&authIndexValue=Login
///
/// A parameter given twice with different values, or a malformed escape, is an error rather
/// than a guess: the id decides which journey continues.
public struct ResumeLink: Sendable, Equatable {
  /// The suspended journey's id.
  public var suspendedId: String
  /// The link's `realm` (`/alpha`, `alpha`, `/` …), when it has one.
  public var realm: String?
  /// The link's `authIndexValue` when its `authIndexType` is `service` (or absent): the tree.
  public var tree: String?

  /// Reads `link`; the error says what is wrong with it, for a one-line message.
  public init(parsing link: String) throws(ResumeLinkError) {
    var parameters: [String: String] = [:]
    let (beforeFragment, fragment) = Self.split(link, at: "#")
    if let query = Self.split(beforeFragment, at: "?").1 { try Self.read(query, into: &parameters) }
    // XUI's route comes first in the fragment (`/`, `login/`, `/login`), then `?` or `&` and the
    // parameters.
    if let fragment, let start = fragment.firstIndex(where: { $0 == "?" || $0 == "&" }) {
      try Self.read(String(fragment[fragment.index(after: start)...]), into: &parameters)
    }
    guard let id = parameters["suspendedId"], !id.isEmpty else { throw .noSuspendedId }
    suspendedId = id
    realm = parameters["realm"].flatMap { $0.isEmpty ? nil : $0 }
    if let type = parameters["authIndexType"], type != "service" { throw .unsupportedIndexType(type) }
    tree = parameters["authIndexValue"].flatMap { $0.isEmpty ? nil : $0 }
  }

  private static func split(_ text: String, at separator: Character) -> (String, String?) {
    guard let index = text.firstIndex(of: separator) else { return (text, nil) }
    return (String(text[..<index]), String(text[text.index(after: index)...]))
  }

  private static func read(_ query: String, into parameters: inout [String: String]) throws(ResumeLinkError) {
    for pair in query.split(separator: "&") {
      let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
      guard let name = AuthenticateEndpoint.percentDecoded(String(parts[0])),
        let value = AuthenticateEndpoint.percentDecoded(parts.count == 2 ? String(parts[1]) : "")
      else { throw .malformedEscape(String(pair)) }
      if let earlier = parameters[name], earlier != value { throw .conflicting(name) }
      parameters[name] = value
    }
  }
}

/// What is wrong with a resume link.
///
/// A struct, not an enum, so that a release can add a failure without breaking an embedder's
/// `switch`: new codes may be added in any release. Match on ``code`` (`error.code ==
/// .noSuspendedId`, or `switch error.code` with a `default:`); ``description`` is the message.
public struct ResumeLinkError: Error, Sendable, Hashable, CustomStringConvertible {
  /// What kind of failure it is. New codes may be added in any release: switch with a
  /// `default:`.
  public struct Code: Hashable, Sendable, CustomStringConvertible {
    private enum Backing: Hashable, Sendable { case noSuspendedId, conflicting, malformedEscape, unsupportedIndexType }

    private var backing: Backing
    private init(_ backing: Backing) { self.backing = backing }

    /// No `suspendedId` in the query or the fragment.
    public static let noSuspendedId = Code(.noSuspendedId)
    /// A parameter given twice (query and fragment) with different values.
    public static let conflicting = Code(.conflicting)
    /// A `%` escape that is not two hex digits, or text that is not UTF-8.
    public static let malformedEscape = Code(.malformedEscape)
    /// An `authIndexType` other than `service` (a tree).
    public static let unsupportedIndexType = Code(.unsupportedIndexType)

    public var description: String { String(describing: backing) }
  }

  /// What kind of failure it is.
  public let code: Code
  /// One line saying what is wrong.
  public let description: String

  private init(_ code: Code, _ description: String) {
    self.code = code
    self.description = description
  }

  /// No `suspendedId` in the query or the fragment.
  public static var noSuspendedId: Self {
    Self(.noSuspendedId, "the link has no suspendedId (the link of AM's Suspend node email, …?suspendedId=…)")
  }

  /// The parameter `name` given twice (query and fragment) with different values.
  public static func conflicting(_ name: String) -> Self {
    Self(.conflicting, "the link gives \(PrintableText.line(name, limit: 40)) twice, with different values")
  }

  /// A `%` escape in `pair` that is not two hex digits, or text that is not UTF-8.
  public static func malformedEscape(_ pair: String) -> Self {
    Self(.malformedEscape, "the link's parameter \(PrintableText.line(pair, limit: 60)) has a malformed %-escape")
  }

  /// An `authIndexType` other than `service` (a tree).
  public static func unsupportedIndexType(_ type: String) -> Self {
    Self(
      .unsupportedIndexType,
      "the link's authIndexType is \(PrintableText.line(type, limit: 40)); only service (a tree) continues a suspended journey")
  }
}
