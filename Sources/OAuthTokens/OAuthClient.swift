import Journey
import ProfileJSON

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// Which client, for which realm of which server.
public struct OAuthClientSettings: Sendable, Equatable {
  public var server: String
  public var realm: String
  public var clientId: String
  public var scope: String
  /// Registered on the client in AM. The code comes back in the redirect's Location, which is
  /// read, never followed: nothing needs to listen there.
  public var redirectURI: String
  /// AM's session cookie.
  public var cookieName: String

  public init(server: String, realm: String, clientId: String, scope: String, redirectURI: String, cookieName: String) {
    self.server = server
    self.realm = realm
    self.clientId = clientId
    self.scope = scope
    self.redirectURI = redirectURI
    self.cookieName = cookieName
  }

  /// The redirect URI fr-profile registers by default: a loopback address (RFC 8252 §7.3),
  /// where no browser is ever sent.
  public static let defaultRedirectURI = "http://127.0.0.1/fr-profile/callback"
  public static let defaultScope = "openid profile"
}

/// The OAuth 2.0 half of a journey client, as the ForgeRock/Ping SDKs do it after a journey
/// (the JS SDK's TokenManager, Android's FRUser, the Ping SDKs' OidcClient): the SSO token is
/// traded for tokens with the authorization code flow and PKCE (`/authorize` with the session
/// cookie, the code read from the redirect, `/access_token` with the verifier), the ID token
/// verified against the realm's JWKS; then refresh, revocation and AM's session logout.
public final class OAuthClient {
  public let settings: OAuthClientSettings
  private let transport: OAuthTransport
  /// Seconds since the epoch; a test may fix it.
  public var now: () -> Double = OAuthClient.realTime
  /// Clock skew allowed on `exp`.
  public var leeway = 60.0
  /// Headers sent with every request (User-Agent, …).
  public var extraHeaders: [String] = []

  public init(settings: OAuthClientSettings, transport: @escaping OAuthTransport) {
    self.settings = settings
    self.transport = transport
  }

  public static func realTime() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_REALTIME, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
  }

  // MARK: - Login

  /// The realm's endpoints, from its discovery document.
  public func discover() throws -> ProviderConfiguration {
    let issuer = ProviderConfiguration.issuer(server: settings.server, realm: settings.realm)
    let url = ProviderConfiguration.discoveryURL(issuer: issuer)
    let document = try json(try send("GET", url, headers: ["Accept: application/json"]), endpoint: url)
    let server = settings.server
    return try ProviderConfiguration(document: document, expectedIssuer: issuer) { endpoint in
      ProviderConfiguration.sameOrigin(endpoint, as: server)
    }
  }

  /// Trades AM's SSO token for tokens: authorization code with PKCE (S256, fresh verifier, state
  /// and nonce), the state checked, the code exchanged at once and never kept, the ID token
  /// verified. `tree` is remembered for logging in again.
  public func login(sessionToken: String, tree: String?) throws -> StoredTokens {
    let provider = try discover()
    let secrets = AuthorizationSecrets()
    let code = try authorize(provider, sessionToken: sessionToken, secrets: secrets)
    let response = try tokenRequest(
      provider,
      [
        ("grant_type", "authorization_code"), ("code", code), ("redirect_uri", settings.redirectURI),
        ("client_id", settings.clientId), ("code_verifier", secrets.codeVerifier),
      ])
    return try stored(
      response, provider: provider, nonce: secrets.nonce, previous: nil, sessionToken: sessionToken, tree: tree)
  }

  /// The authorization request with the session cookie; the code from the redirect.
  func authorize(_ provider: ProviderConfiguration, sessionToken: String, secrets: AuthorizationSecrets) throws -> String {
    let query = FormEncoding.encode([
      ("client_id", settings.clientId), ("response_type", "code"), ("redirect_uri", settings.redirectURI),
      ("scope", settings.scope), ("state", secrets.state), ("nonce", secrets.nonce),
      ("code_challenge", secrets.codeChallenge), ("code_challenge_method", "S256"),
    ])
    let separator = provider.authorizationEndpoint.contains("?") ? "&" : "?"
    let response = try send(
      "GET", provider.authorizationEndpoint + separator + query,
      headers: [AuthenticateEndpoint.apiVersionHeader, "Cookie: \(settings.cookieName)=\(sessionToken)"])
    let endpoint = provider.authorizationEndpoint
    switch response.status {
    case 301, 302, 303, 307:
      guard let location = response.location else { throw OAuthError.badRedirect(reason: "a redirect without a Location") }
      guard Self.base(of: location) == Self.base(of: settings.redirectURI) else {
        throw OAuthError.sessionNotAccepted(location: Self.base(of: location))
      }
      let parameters = FormEncoding.parameters(of: location)
      if let error = parameters["error"] {
        throw OAuthError.authorizationRefused(error: error, description: parameters["error_description"])
      }
      guard parameters["state"] == secrets.state else { throw OAuthError.stateMismatch }
      if let iss = parameters["iss"], iss != provider.issuer {
        throw OAuthError.badRedirect(reason: "its iss is \(iss), not \(provider.issuer) (RFC 9207)")
      }
      guard let code = parameters["code"], !code.isEmpty else { throw OAuthError.badRedirect(reason: "it carries no code") }
      return code
    case 200:
      throw OAuthError.consentRequired(clientId: settings.clientId)
    default:
      if let body = try? JSONParser.parse(response.body), let error = body["error"]?.stringValue {
        throw OAuthError.authorizationRefused(error: error, description: body["error_description"]?.stringValue)
      }
      throw OAuthError.httpStatus(endpoint: endpoint, status: response.status)
    }
  }

  // MARK: - Refresh, revoke, end the session

  /// New tokens for `tokens` from its refresh token; a new refresh token replaces the old one,
  /// an ID token that comes back is verified (same issuer and subject, OpenID Connect Core §12.2).
  public func refresh(_ tokens: StoredTokens) throws -> StoredTokens {
    guard let refreshToken = tokens.refreshToken else {
      throw OAuthError.tokenRefused(status: 0, error: "invalid_grant", description: "no refresh token was issued")
    }
    let response = try tokenRequest(
      tokens.provider,
      [("grant_type", "refresh_token"), ("refresh_token", refreshToken), ("client_id", settings.clientId)])
    return try stored(
      response, provider: tokens.provider, nonce: nil, previous: tokens, sessionToken: tokens.sessionToken, tree: tokens.tree)
  }

  /// Revokes the refresh token (which ends the access tokens issued with it in AM), else the
  /// access token (RFC 7009). False when the realm has no revocation endpoint.
  @discardableResult
  public func revoke(_ tokens: StoredTokens) throws -> Bool {
    guard let endpoint = tokens.provider.revocationEndpoint else { return false }
    let (token, hint) = tokens.refreshToken.map { ($0, "refresh_token") } ?? (tokens.accessToken, "access_token")
    let response = try send(
      "POST", endpoint, headers: ["Content-Type: application/x-www-form-urlencoded", "Accept: application/json"],
      body: FormEncoding.encode([("token", token), ("token_type_hint", hint), ("client_id", settings.clientId)]))
    guard response.status == 200 else { throw Self.tokenError(response, endpoint: endpoint) }
    return true
  }

  /// Ends AM's session (`POST …/sessions?_action=logout`). False when AM no longer knew it.
  public func endSession(_ sessionToken: String, cookieName: String) throws -> Bool {
    var base = settings.server
    while base.hasSuffix("/") { base.removeLast() }
    let url = base + "/json" + AuthenticateEndpoint.realmPath(settings.realm) + "/sessions?_action=logout"
    let response = try send(
      "POST", url,
      headers: [
        "Accept-API-Version: resource=3.1, protocol=1.0", "Content-Type: application/json", "Accept: application/json",
        "\(cookieName): \(sessionToken)",
      ], body: Array("{}".utf8))
    switch response.status {
    case 200, 204: return true
    case 401: return false
    default: throw OAuthError.httpStatus(endpoint: url, status: response.status)
    }
  }

  // MARK: - Pieces

  private func tokenRequest(_ provider: ProviderConfiguration, _ form: [(String, String)]) throws -> JSONObject {
    let response = try send(
      "POST", provider.tokenEndpoint,
      headers: [AuthenticateEndpoint.apiVersionHeader, "Content-Type: application/x-www-form-urlencoded", "Accept: application/json"],
      body: FormEncoding.encode(form))
    guard response.status == 200 else { throw Self.tokenError(response, endpoint: provider.tokenEndpoint) }
    guard case .object(let object) = try json(response, endpoint: provider.tokenEndpoint) else {
      throw OAuthError.badResponse(endpoint: provider.tokenEndpoint, reason: "not a JSON object")
    }
    return object
  }

  /// The stored form of a token response: `access_token`, a Bearer `token_type` and
  /// `expires_in` are required; with the `openid` scope at login, a verified `id_token` too.
  private func stored(
    _ response: JSONObject, provider: ProviderConfiguration, nonce: String?, previous: StoredTokens?, sessionToken: String?,
    tree: String?
  ) throws -> StoredTokens {
    let endpoint = provider.tokenEndpoint
    func bad(_ reason: String) -> OAuthError { .badResponse(endpoint: endpoint, reason: reason) }
    guard let accessToken = response["access_token"]?.stringValue, !accessToken.isEmpty else { throw bad("no access_token") }
    guard let tokenType = response["token_type"]?.stringValue, tokenType.lowercased() == "bearer" else {
      throw bad("token_type is not Bearer")
    }
    guard let expiresIn = response["expires_in"]?.numberValue else { throw bad("no expires_in: there is no telling when to refresh") }
    // No arithmetic on the server's number before it is known to be in range: 1e300 or 1e19
    // would make an expiry that never comes, and traps where it is made an integer.
    guard expiresIn.isFinite, expiresIn >= 1, expiresIn <= StoredTokens.maximumLifetime else {
      throw bad(
        "expires_in \(PrintableText.line(JSONWriter.compact(.number(expiresIn)))) is outside 1…\(Int(StoredTokens.maximumLifetime)) seconds"
      )
    }
    let issued = now()
    var idToken = previous?.idToken
    if let newIDToken = response["id_token"]?.stringValue {
      let keys = try JSONWebKeySet(
        document: try json(try send("GET", provider.jwksURI, headers: ["Accept: application/json"]), endpoint: provider.jwksURI))
      let verified: IDToken
      do {
        verified = try IDToken.verify(
          newIDToken, keys: keys, issuer: provider.issuer, clientId: settings.clientId, nonce: nonce, now: issued, leeway: leeway)
      } catch { throw OAuthError.idToken(error) }
      if let previous = previous?.idToken.flatMap(Self.unverifiedSubject), previous != verified.subject {
        throw OAuthError.idToken(.claim(name: "sub", reason: "changed on refresh"))
      }
      idToken = newIDToken
    } else if previous == nil && settings.scope.split(separator: " ").contains("openid") {
      throw bad("no id_token although the openid scope was asked")
    }
    return StoredTokens(
      server: settings.server, realm: settings.realm, clientId: settings.clientId, scope: previous?.scope ?? settings.scope,
      redirectURI: previous?.redirectURI ?? settings.redirectURI, provider: provider, accessToken: accessToken, tokenType: "Bearer",
      expiresAt: issued + expiresIn, refreshToken: response["refresh_token"]?.stringValue ?? previous?.refreshToken,
      idToken: idToken, grantedScope: response["scope"]?.stringValue ?? previous?.grantedScope, sessionToken: sessionToken,
      cookieName: previous?.cookieName ?? settings.cookieName, tree: tree, obtainedAt: issued, gitHosts: previous?.gitHosts ?? [])
  }

  /// The subject of an ID token stored earlier (it was verified when it arrived).
  static func unverifiedSubject(_ token: String) -> String? {
    CompactJWS.unverifiedClaims(token)?["sub"]?.stringValue
  }

  /// The OAuth error of a refused token or revocation request (RFC 6749 §5.2).
  static func tokenError(_ response: OAuthResponse, endpoint: String) -> OAuthError {
    if let body = try? JSONParser.parse(response.body), let error = body["error"]?.stringValue {
      return .tokenRefused(status: response.status, error: error, description: body["error_description"]?.stringValue)
    }
    return .httpStatus(endpoint: endpoint, status: response.status)
  }

  private func send(_ method: String, _ url: String, headers: [String], body: [UInt8] = []) throws -> OAuthResponse {
    try transport(OAuthRequest(method: method, url: url, headers: headers + extraHeaders, body: body))
  }

  private func send(_ method: String, _ url: String, headers: [String], body: String) throws -> OAuthResponse {
    try send(method, url, headers: headers, body: Array(body.utf8))
  }

  private func json(_ response: OAuthResponse, endpoint: String) throws -> JSON {
    guard response.status == 200 else { throw OAuthError.httpStatus(endpoint: endpoint, status: response.status) }
    do { return try JSONParser.parse(response.body) } catch {
      throw OAuthError.badResponse(endpoint: endpoint, reason: "not JSON")
    }
  }

  /// A URL without its query and fragment.
  public static func base(of url: String) -> String { String(url.prefix { $0 != "?" && $0 != "#" }) }
}
