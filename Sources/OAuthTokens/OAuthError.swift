import ProfileJSON

/// Why the OAuth 2.0 part of a login, a refresh or a logout failed. Domain facts; the command
/// line says what to do and picks the exit code.
public enum OAuthError: Error, Sendable, Equatable, CustomStringConvertible {
  /// The discovery document, JWKS or token response is not what the specification says.
  case badResponse(endpoint: String, reason: String)
  /// An endpoint the discovery document names is on another origin than the server's, or plain
  /// http to another machine: tokens would go where the user did not point them.
  case foreignEndpoint(name: String, url: String)
  /// The authorize endpoint sent the session to a login page: the SSO token is not (or no
  /// longer) valid.
  case sessionNotAccepted(location: String)
  /// The authorize endpoint answered a consent page: the client needs AM's implied consent.
  case consentRequired(clientId: String)
  /// The redirect carried an OAuth error (`error`, `error_description`).
  case authorizationRefused(error: String, description: String?)
  /// The redirect's `state` is not the one sent: a forged or replayed redirect.
  case stateMismatch
  /// The redirect does not go to the redirect URI sent, or carries no code.
  case badRedirect(reason: String)
  /// The token endpoint refused (`invalid_grant` for an ended refresh token, …).
  case tokenRefused(status: Int, error: String, description: String?)
  /// An unexpected HTTP status from `endpoint`.
  case httpStatus(endpoint: String, status: Int)
  /// The ID token failed verification.
  case idToken(IDTokenError)

  /// Whether logging in again is what helps (the grant or session ended), as opposed to a broken
  /// server or network.
  public var needsLogin: Bool {
    switch self {
    case .sessionNotAccepted: true
    case .tokenRefused(_, let error, _): error == "invalid_grant"
    default: false
    }
  }

  /// One line of bounded length: every string here but the client id came from a server (a
  /// discovery document, a redirect, a token endpoint's `error` and `error_description`), so
  /// each goes through the one sanitizer (`PrintableText.line`): no newline forging a line of
  /// ours, no control driving the terminal, no 200 KB on stderr.
  public var description: String {
    func said(_ text: String) -> String { PrintableText.line(text) }
    return switch self {
    case .badResponse(let endpoint, let reason): "the answer of \(said(endpoint)) is not usable: \(said(reason))"
    case .foreignEndpoint(let name, let url):
      "the server's OpenID configuration names \(said(name)) \(said(url)), which is not on the server's origin; refusing to send tokens there"
    case .sessionNotAccepted(let location):
      "AM did not accept the session for the authorization request (it redirected to \(said(location)))"
    case .consentRequired(let clientId):
      "AM asks the user's consent for OAuth 2.0 client \(clientId), which this client cannot give; enable Implied Consent on the client in AM"
    case .authorizationRefused(let error, let description):
      "the authorization request was refused: \(said(error))" + (description.map { " (\(said($0)))" } ?? "")
    case .stateMismatch: "the authorization response's state is not the one sent: a forged or replayed redirect; nothing was exchanged"
    case .badRedirect(let reason): "the authorization response is not usable: \(said(reason))"
    case .tokenRefused(let status, let error, let description):
      "the token endpoint refused (HTTP \(status)): \(said(error))" + (description.map { " (\(said($0)))" } ?? "")
    case .httpStatus(let endpoint, let status): "\(said(endpoint)) answered HTTP \(status)"
    case .idToken(let error): "the ID token is refused: \(said(error.description))"
    }
  }
}

/// Why an ID token is refused (OpenID Connect Core §3.1.3.7).
public enum IDTokenError: Error, Sendable, Equatable, CustomStringConvertible {
  case malformed(String)
  case unsupportedAlgorithm(String)
  case noKey(kid: String?)
  case badSignature
  case claim(name: String, reason: String)

  public var description: String {
    switch self {
    case .malformed(let why): "not a signed JWT (\(why))"
    case .unsupportedAlgorithm(let alg): "its algorithm \(alg) is not accepted (RS256, PS256 and ES256 are)"
    case .noKey(let kid): "the realm's JWKS has no key " + (kid.map { "with kid \($0) " } ?? "") + "for its algorithm"
    case .badSignature: "its signature does not verify against the realm's JWKS"
    case .claim(let name, let reason): "its \(name) claim \(reason)"
    }
  }
}
