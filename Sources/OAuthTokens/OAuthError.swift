import ProfileJSON

/// Why the OAuth 2.0 part of a login, a refresh or a logout failed. Domain facts; the command
/// line says what to do and picks the exit code.
///
/// A struct, not an enum, so that a release can add a failure without breaking an embedder's
/// `switch`: new codes may be added in any release. Match on ``code`` (`error.code ==
/// .tokenRefused`, or `switch error.code` with a `default:`); the values callers act on are the
/// optional properties (`nil` where a code has none), ``description`` is the message.
public struct OAuthError: Error, Sendable, Hashable, CustomStringConvertible {
  /// What kind of failure it is. New codes may be added in any release: switch with a
  /// `default:`.
  public struct Code: Hashable, Sendable, CustomStringConvertible {
    private enum Backing: Hashable, Sendable {
      case badResponse, foreignEndpoint, sessionNotAccepted, consentRequired, authorizationRefused, stateMismatch
      case badRedirect, tokenRefused, httpStatus, idToken
    }

    private var backing: Backing
    private init(_ backing: Backing) { self.backing = backing }

    /// The discovery document, JWKS or token response is not what the specification says.
    public static let badResponse = Code(.badResponse)
    /// An endpoint the discovery document names is on another origin than the server's, or plain
    /// http to another machine: tokens would go where the user did not point them.
    public static let foreignEndpoint = Code(.foreignEndpoint)
    /// The authorize endpoint sent the session to a login page: the SSO token is not (or no
    /// longer) valid.
    public static let sessionNotAccepted = Code(.sessionNotAccepted)
    /// The authorize endpoint answered a consent page: the client needs AM's implied consent.
    public static let consentRequired = Code(.consentRequired)
    /// The redirect carried an OAuth error (``oauthError``, `error_description`).
    public static let authorizationRefused = Code(.authorizationRefused)
    /// The redirect's `state` is not the one sent: a forged or replayed redirect.
    public static let stateMismatch = Code(.stateMismatch)
    /// The redirect does not go to the redirect URI sent, or carries no code.
    public static let badRedirect = Code(.badRedirect)
    /// The token endpoint refused (``oauthError`` `invalid_grant` for an ended refresh token, …).
    public static let tokenRefused = Code(.tokenRefused)
    /// An unexpected HTTP status (``status``) from ``endpoint``.
    public static let httpStatus = Code(.httpStatus)
    /// The ID token failed verification (``idTokenError``).
    public static let idToken = Code(.idToken)

    public var description: String { String(describing: backing) }
  }

  /// What kind of failure it is.
  public let code: Code
  /// The endpoint concerned (``Code/badResponse``, ``Code/httpStatus``; the URL the discovery
  /// document names for ``Code/foreignEndpoint``).
  public let endpoint: String?
  /// The HTTP status (``Code/tokenRefused``, ``Code/httpStatus``).
  public let status: Int?
  /// The OAuth error code the server sent, its `error` (``Code/authorizationRefused``,
  /// ``Code/tokenRefused``): `invalid_grant`, `invalid_client`, ….
  public let oauthError: String?
  /// Why the ID token is refused (``Code/idToken``).
  public let idTokenError: IDTokenError?
  /// One line of bounded length: every string here but the client id came from a server (a
  /// discovery document, a redirect, a token endpoint's `error` and `error_description`), so
  /// each goes through the one sanitizer (`PrintableText.line`): no newline forging a line of
  /// ours, no control driving the terminal, no 200 KB on stderr.
  public let description: String

  private init(
    _ code: Code, endpoint: String? = nil, status: Int? = nil, oauthError: String? = nil, idTokenError: IDTokenError? = nil,
    _ description: String
  ) {
    self.code = code
    self.endpoint = endpoint
    self.status = status
    self.oauthError = oauthError
    self.idTokenError = idTokenError
    self.description = description
  }

  private static func said(_ text: String) -> String { PrintableText.line(text) }

  /// Whether logging in again is what helps (the grant or session ended), as opposed to a broken
  /// server or network.
  public var needsLogin: Bool {
    code == .sessionNotAccepted || (code == .tokenRefused && oauthError == "invalid_grant")
  }

  /// The discovery document, JWKS or token response is not what the specification says.
  public static func badResponse(endpoint: String, reason: String) -> Self {
    Self(.badResponse, endpoint: endpoint, "the answer of \(said(endpoint)) is not usable: \(said(reason))")
  }

  /// An endpoint the discovery document names is on another origin than the server's, or plain
  /// http to another machine: tokens would go where the user did not point them.
  public static func foreignEndpoint(name: String, url: String) -> Self {
    Self(
      .foreignEndpoint, endpoint: url,
      "the server's OpenID configuration names \(said(name)) \(said(url)), which is not on the server's origin; refusing to send tokens there"
    )
  }

  /// The authorize endpoint sent the session to a login page: the SSO token is not (or no
  /// longer) valid.
  public static func sessionNotAccepted(location: String) -> Self {
    Self(.sessionNotAccepted, "AM did not accept the session for the authorization request (it redirected to \(said(location)))")
  }

  /// The authorize endpoint answered a consent page: the client needs AM's implied consent.
  public static func consentRequired(clientId: String) -> Self {
    Self(
      .consentRequired,
      "AM asks the user's consent for OAuth 2.0 client \(clientId), which this client cannot give; enable Implied Consent on the client in AM"
    )
  }

  /// The redirect carried an OAuth error (`error`, `error_description`).
  public static func authorizationRefused(error: String, description: String?) -> Self {
    Self(
      .authorizationRefused, oauthError: error,
      "the authorization request was refused: \(said(error))" + (description.map { " (\(said($0)))" } ?? ""))
  }

  /// The redirect's `state` is not the one sent: a forged or replayed redirect.
  public static var stateMismatch: Self {
    Self(.stateMismatch, "the authorization response's state is not the one sent: a forged or replayed redirect; nothing was exchanged")
  }

  /// The redirect does not go to the redirect URI sent, or carries no code.
  public static func badRedirect(reason: String) -> Self {
    Self(.badRedirect, "the authorization response is not usable: \(said(reason))")
  }

  /// The token endpoint refused (`invalid_grant` for an ended refresh token, …).
  public static func tokenRefused(status: Int, error: String, description: String?) -> Self {
    Self(
      .tokenRefused, status: status, oauthError: error,
      "the token endpoint refused (HTTP \(status)): \(said(error))" + (description.map { " (\(said($0)))" } ?? ""))
  }

  /// An unexpected HTTP status from `endpoint`.
  public static func httpStatus(endpoint: String, status: Int) -> Self {
    Self(.httpStatus, endpoint: endpoint, status: status, "\(said(endpoint)) answered HTTP \(status)")
  }

  /// The ID token failed verification.
  public static func idToken(_ error: IDTokenError) -> Self {
    Self(.idToken, idTokenError: error, "the ID token is refused: \(said(error.description))")
  }
}

/// Why an ID token is refused (OpenID Connect Core §3.1.3.7).
///
/// A struct, not an enum, so that a release can add a failure without breaking an embedder's
/// `switch`: new codes may be added in any release. Match on ``code`` (`error.code ==
/// .badSignature`, or `switch error.code` with a `default:`); ``description`` is the message.
public struct IDTokenError: Error, Sendable, Hashable, CustomStringConvertible {
  /// What kind of failure it is. New codes may be added in any release: switch with a
  /// `default:`.
  public struct Code: Hashable, Sendable, CustomStringConvertible {
    private enum Backing: Hashable, Sendable { case malformed, unsupportedAlgorithm, noKey, badSignature, claim }

    private var backing: Backing
    private init(_ backing: Backing) { self.backing = backing }

    /// The token is not a signed JWT.
    public static let malformed = Code(.malformed)
    /// Its algorithm is not one accepted (RS256, PS256, ES256).
    public static let unsupportedAlgorithm = Code(.unsupportedAlgorithm)
    /// The realm's JWKS has no key for it.
    public static let noKey = Code(.noKey)
    /// Its signature does not verify.
    public static let badSignature = Code(.badSignature)
    /// A claim is refused (``claim`` names it).
    public static let claim = Code(.claim)

    public var description: String { String(describing: backing) }
  }

  /// What kind of failure it is.
  public let code: Code
  /// The refused claim (``Code/claim``).
  public let claim: String?
  /// One line saying what is wrong.
  public let description: String

  private init(_ code: Code, claim: String? = nil, _ description: String) {
    self.code = code
    self.claim = claim
    self.description = description
  }

  public static func malformed(_ why: String) -> Self { Self(.malformed, "not a signed JWT (\(why))") }

  public static func unsupportedAlgorithm(_ alg: String) -> Self {
    Self(.unsupportedAlgorithm, "its algorithm \(alg) is not accepted (RS256, PS256 and ES256 are)")
  }

  public static func noKey(kid: String?) -> Self {
    Self(.noKey, "the realm's JWKS has no key " + (kid.map { "with kid \($0) " } ?? "") + "for its algorithm")
  }

  public static var badSignature: Self { Self(.badSignature, "its signature does not verify against the realm's JWKS") }

  public static func claim(name: String, reason: String) -> Self { Self(.claim, claim: name, "its \(name) claim \(reason)") }
}
