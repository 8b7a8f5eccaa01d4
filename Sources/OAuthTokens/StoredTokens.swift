import ProfileJSON

/// What a login leaves for later `token` and `logout` runs, for one server, realm and client
/// (schemas/tokens.schema.json). Kept in a 0600 file of the caller's (TokenStore); holds
/// credentials, so it is never printed whole.
public struct StoredTokens: Sendable, Equatable {
  public static let version = 1

  public var server: String
  public var realm: String
  public var clientId: String
  public var scope: String
  public var redirectURI: String
  public var provider: ProviderConfiguration
  public var accessToken: String
  public var tokenType: String
  /// Seconds since the epoch at which the access token expires (now + expires_in when issued).
  public var expiresAt: Double
  public var refreshToken: String?
  /// The last verified ID token.
  public var idToken: String?
  /// The scope granted, when the server said (else the one asked).
  public var grantedScope: String?
  /// AM's SSO token and its cookie name, ended by `logout`.
  public var sessionToken: String?
  public var cookieName: String
  /// The tree that logged in, walked again when the refresh token no longer works.
  public var tree: String?
  public var obtainedAt: Double
  /// Where `token --format git` may hand out the access token (`GitHost.description` forms, set
  /// with `--git-host`); empty means the server's own origin.
  public var gitHosts: [String]

  public init(
    server: String, realm: String, clientId: String, scope: String, redirectURI: String, provider: ProviderConfiguration,
    accessToken: String, tokenType: String, expiresAt: Double, refreshToken: String?, idToken: String?, grantedScope: String?,
    sessionToken: String?, cookieName: String, tree: String?, obtainedAt: Double, gitHosts: [String] = []
  ) {
    self.server = server
    self.realm = realm
    self.clientId = clientId
    self.scope = scope
    self.redirectURI = redirectURI
    self.provider = provider
    self.accessToken = accessToken
    self.tokenType = tokenType
    self.expiresAt = expiresAt
    self.refreshToken = refreshToken
    self.idToken = idToken
    self.grantedScope = grantedScope
    self.sessionToken = sessionToken
    self.cookieName = cookieName
    self.tree = tree
    self.obtainedAt = obtainedAt
    self.gitHosts = gitHosts
  }

  /// The longest `expires_in` taken from a token endpoint: a year (RFC 6749 sets none; AM's
  /// default access token lifetime is an hour). A longer one is refused where the response is
  /// read, and a stored expiry further away than this reads as expired.
  public static let maximumLifetime: Double = 31_536_000

  /// Whether the access token is good for at least `margin` more seconds at `now`. An expiry
  /// more than `maximumLifetime` away (a store written before that bound, or edited) is not
  /// believed: the token reads as expired, so it is refreshed rather than trusted for ever.
  public func isValid(at now: Double, margin: Double) -> Bool {
    expiresAt - margin > now && expiresAt - now <= Self.maximumLifetime
  }

  /// `expiresAt` as whole seconds since the epoch, clamped to what a 64-bit `time_t` and the
  /// formats that print it hold: never a trap on a stored value, however large.
  public var expiresAtSeconds: Int {
    guard expiresAt.isFinite else { return 0 }
    return Int(max(0, min(expiresAt.rounded(.down), 253_402_300_799)))  // 9999-12-31T23:59:59Z
  }

  public var json: JSON {
    var object = JSONObject()
    object["version"] = .number(Double(Self.version))
    object["server"] = .string(server)
    object["realm"] = .string(realm)
    object["clientId"] = .string(clientId)
    object["scope"] = .string(scope)
    object["redirectUri"] = .string(redirectURI)
    var endpoints = JSONObject()
    endpoints["issuer"] = .string(provider.issuer)
    endpoints["authorizationEndpoint"] = .string(provider.authorizationEndpoint)
    endpoints["tokenEndpoint"] = .string(provider.tokenEndpoint)
    if let revocation = provider.revocationEndpoint { endpoints["revocationEndpoint"] = .string(revocation) }
    endpoints["jwksUri"] = .string(provider.jwksURI)
    object["provider"] = .object(endpoints)
    object["accessToken"] = .string(accessToken)
    object["tokenType"] = .string(tokenType)
    object["expiresAt"] = .number(expiresAt)
    if let refreshToken { object["refreshToken"] = .string(refreshToken) }
    if let idToken { object["idToken"] = .string(idToken) }
    if let grantedScope { object["grantedScope"] = .string(grantedScope) }
    if let sessionToken { object["sessionToken"] = .string(sessionToken) }
    object["cookieName"] = .string(cookieName)
    if let tree { object["tree"] = .string(tree) }
    object["obtainedAt"] = .number(obtainedAt)
    if !gitHosts.isEmpty { object["gitHosts"] = .array(gitHosts.map(JSON.string)) }
    return .object(object)
  }

  /// Reads a stored document; nil names the first member that is missing or of the wrong type.
  public init(json: JSON) throws(StoredTokensError) {
    func string(_ name: String, in value: JSON? = nil) throws(StoredTokensError) -> String {
      guard let text = (value ?? json)[name]?.stringValue, !text.isEmpty else { throw .member(name) }
      return text
    }
    func optional(_ name: String) throws(StoredTokensError) -> String? {
      guard let value = json[name] else { return nil }
      guard let text = value.stringValue else { throw .member(name) }
      return text
    }
    func number(_ name: String) throws(StoredTokensError) -> Double {
      guard let value = json[name]?.numberValue, value.isFinite else { throw .member(name) }
      return value
    }
    guard json["version"]?.numberValue == Double(Self.version) else { throw .version }
    var gitHosts: [String] = []
    if let hosts = json["gitHosts"] {
      guard let items = hosts.arrayValue else { throw .member("gitHosts") }
      for item in items {
        guard let host = item.stringValue else { throw .member("gitHosts") }
        gitHosts.append(host)
      }
    }
    guard let provider = json["provider"], provider.objectValue != nil else { throw .member("provider") }
    let revocation = provider["revocationEndpoint"]
    guard revocation == nil || revocation?.stringValue != nil else { throw .member("provider.revocationEndpoint") }
    self.init(
      server: try string("server"), realm: try string("realm"), clientId: try string("clientId"), scope: try string("scope"),
      redirectURI: try string("redirectUri"),
      provider: ProviderConfiguration(
        issuer: try string("issuer", in: provider), authorizationEndpoint: try string("authorizationEndpoint", in: provider),
        tokenEndpoint: try string("tokenEndpoint", in: provider), revocationEndpoint: revocation?.stringValue,
        jwksURI: try string("jwksUri", in: provider)),
      accessToken: try string("accessToken"), tokenType: try string("tokenType"), expiresAt: try number("expiresAt"),
      refreshToken: try optional("refreshToken"), idToken: try optional("idToken"), grantedScope: try optional("grantedScope"),
      sessionToken: try optional("sessionToken"), cookieName: try string("cookieName"), tree: try optional("tree"),
      obtainedAt: try number("obtainedAt"), gitHosts: gitHosts)
  }
}

/// Why a stored token document cannot be read.
///
/// A struct, not an enum, so that a release can add a failure without breaking an embedder's
/// `switch`: new codes may be added in any release. Match on ``code`` (`error.code ==
/// .version`, or `switch error.code` with a `default:`); ``description`` is the message.
public struct StoredTokensError: Error, Sendable, Hashable, CustomStringConvertible {
  /// What kind of failure it is. New codes may be added in any release: switch with a
  /// `default:`.
  public struct Code: Hashable, Sendable, CustomStringConvertible {
    private enum Backing: Hashable, Sendable { case notJSON, version, member }

    private var backing: Backing
    private init(_ backing: Backing) { self.backing = backing }

    /// The document is not JSON.
    public static let notJSON = Code(.notJSON)
    /// The document is not of the version this library reads.
    public static let version = Code(.version)
    /// A member is missing or of the wrong type.
    public static let member = Code(.member)

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

  /// The document is not JSON (`why`: the parser's reason).
  public static func notJSON(_ why: String) -> Self { Self(.notJSON, "not JSON (\(why))") }

  /// The document is not of the version this library reads.
  public static var version: Self { Self(.version, "not a version \(StoredTokens.version) token file") }

  /// The member `name` is missing or of the wrong type.
  public static func member(_ name: String) -> Self { Self(.member, "\"\(name)\" is missing or of the wrong type") }
}
