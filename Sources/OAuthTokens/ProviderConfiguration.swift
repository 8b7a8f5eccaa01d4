import Journey
import ProfileJSON

/// Where a realm's OAuth 2.0 / OpenID Connect endpoints are, from its discovery document
/// (`<server>/oauth2<realm path>/.well-known/openid-configuration`, OpenID Connect Discovery
/// §4). The issuer must be the URL the document was fetched under (§4.3), and every endpoint
/// must be on the server's origin: a server cannot send the user's tokens elsewhere.
public struct ProviderConfiguration: Sendable, Equatable {
  public var issuer: String
  public var authorizationEndpoint: String
  public var tokenEndpoint: String
  public var revocationEndpoint: String?
  public var jwksURI: String

  public init(issuer: String, authorizationEndpoint: String, tokenEndpoint: String, revocationEndpoint: String?, jwksURI: String) {
    self.issuer = issuer
    self.authorizationEndpoint = authorizationEndpoint
    self.tokenEndpoint = tokenEndpoint
    self.revocationEndpoint = revocationEndpoint
    self.jwksURI = jwksURI
  }

  /// AM's issuer for a realm: `<server>/oauth2` for the top-level realm,
  /// `<server>/oauth2/realms/root/realms/alpha` for alpha.
  public static func issuer(server: String, realm: String) -> String {
    var base = server
    while base.hasSuffix("/") { base.removeLast() }
    let path = AuthenticateEndpoint.realmPath(realm)
    return base + "/oauth2" + (path == "/realms/root" ? "" : path)
  }

  /// The discovery document's URL for `issuer`.
  public static func discoveryURL(issuer: String) -> String { issuer + "/.well-known/openid-configuration" }

  /// Reads a discovery document fetched for `expectedIssuer`; `allowed` says whether an
  /// endpoint URL may receive tokens (the server's origin).
  public init(document: JSON, expectedIssuer: String, allowed: (String) -> Bool) throws(OAuthError) {
    func endpoint(_ name: String, required: Bool = true) throws(OAuthError) -> String? {
      guard let url = document[name]?.stringValue else {
        if required { throw .badResponse(endpoint: "the OpenID configuration", reason: "no \(name)") }
        return nil
      }
      guard allowed(url) else { throw .foreignEndpoint(name: name, url: url) }
      return url
    }
    guard let issuer = document["issuer"]?.stringValue else {
      throw .badResponse(endpoint: "the OpenID configuration", reason: "no issuer")
    }
    guard issuer == expectedIssuer else {
      throw .badResponse(endpoint: "the OpenID configuration", reason: "its issuer is \(issuer), not \(expectedIssuer)")
    }
    if case .array(let methods)? = document["code_challenge_methods_supported"], !methods.contains(.string("S256")) {
      throw .badResponse(endpoint: "the OpenID configuration", reason: "the server does not support PKCE with S256")
    }
    self.init(
      issuer: issuer, authorizationEndpoint: try endpoint("authorization_endpoint")!, tokenEndpoint: try endpoint("token_endpoint")!,
      revocationEndpoint: try endpoint("revocation_endpoint", required: false), jwksURI: try endpoint("jwks_uri")!)
  }

  /// Whether `url` is on `server`'s origin (scheme, host and port).
  public static func sameOrigin(_ url: String, as server: String) -> Bool {
    guard let origin = FormEncoding.origin(of: url) else { return false }
    return origin == FormEncoding.origin(of: server)
  }
}
