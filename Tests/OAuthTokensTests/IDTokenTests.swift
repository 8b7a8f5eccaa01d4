import Foundation
import OAuthTokens
import ProfileJSON
import TestSupport
import Testing

/// The ID token verifier against tokens PyJWT signed (make-id-tokens.py): RS256, PS256 and
/// ES256 accepted, the claims' rules applied, and every shortcut refused.
@Suite(.timeLimit(.minutes(10)))
struct IDTokenTests {
  static let issuer = "https://am.example.com/am/oauth2/realms/root/realms/alpha"
  static let client = "fr-cli"
  static let nonce = "n-0S6_WzA2Mj"
  static let now = 1_790_000_000.0

  struct Signed {
    var keys: JSONWebKeySet
    var tokens: [String: String]
  }

  static func signed() throws -> Signed {
    let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("make-id-tokens.py").path
    let result = try TestProcess.run(
      ["/usr/bin/python3", script, issuer, client, nonce, String(Int(now))], environment: [:], stdin: [], timeout: 60)
    try #require(result.status == 0, "\(result.stderr)")
    let document = try JSONParser.parse(Array(result.stdout.utf8))
    let keys = try JSONWebKeySet(document: try #require(document["jwks"]))
    var tokens: [String: String] = [:]
    for (name, value) in document["tokens"]?.objectValue?.members ?? [] { tokens[name] = value.stringValue }
    return Signed(keys: keys, tokens: tokens)
  }

  func verify(_ token: String, _ keys: JSONWebKeySet, nonce: String? = IDTokenTests.nonce, now: Double = IDTokenTests.now)
    throws(IDTokenError) -> IDToken
  {
    try IDToken.verify(token, keys: keys, issuer: Self.issuer, clientId: Self.client, nonce: nonce, now: now)
  }

  @Test("RS256, PS256 and ES256 tokens PyJWT signed verify; the JWKS skips the symmetric key")
  func acceptsWhatPyJWTSigned() throws {
    let signed = try Self.signed()
    #expect(signed.keys.keys.count == 2)
    for name in ["RS256", "PS256", "ES256", "RS256-no-kid", "aud-list-azp"] {
      let token = try #require(signed.tokens[name])
      #expect(throws: Never.self, "\(name)") { _ = try verify(token, signed.keys) }
    }
    #expect(try verify(try #require(signed.tokens["ES256"]), signed.keys).subject == "demo")
  }

  @Test("refused: HMAC, a changed payload or signature, another issuer, audience, azp or nonce, an expired token, no sub")
  func refusesEveryShortcut() throws {
    let signed = try Self.signed()
    let rs256 = try #require(signed.tokens["RS256"])
    #expect(throws: IDTokenError.unsupportedAlgorithm("HS256")) { _ = try verify(signed.tokens["HS256"]!, signed.keys) }
    let parts = rs256.split(separator: ".").map(String.init)
    var claims = try JSONParser.parse(Base64URL.decode(parts[1])!).objectValue!
    claims["sub"] = "admin"
    let forged = [parts[0], Base64URL.encode(Array(JSONWriter.compact(.object(claims)).utf8)), parts[2]].joined(separator: ".")
    #expect(throws: IDTokenError.badSignature) { _ = try verify(forged, signed.keys) }
    var signature = Base64URL.decode(parts[2])!
    signature[signature.count / 2] ^= 1
    #expect(throws: IDTokenError.badSignature) {
      _ = try verify([parts[0], parts[1], Base64URL.encode(signature)].joined(separator: "."), signed.keys)
    }
    let none = [Base64URL.encode(Array(#"{"alg":"none","kid":"rsa"}"#.utf8)), parts[1], ""].joined(separator: ".")
    #expect(throws: IDTokenError.unsupportedAlgorithm("none")) { _ = try verify(none, signed.keys) }
    // The RSA key named by kid, but the header claims ES256: no EC key has that kid.
    let confused = [Base64URL.encode(Array(#"{"alg":"ES256","kid":"rsa"}"#.utf8)), parts[1], parts[2]].joined(separator: ".")
    #expect(throws: IDTokenError.noKey(kid: "rsa")) { _ = try verify(confused, signed.keys) }

    #expect(throws: IDTokenError.self) {
      _ = try IDToken.verify(rs256, keys: signed.keys, issuer: Self.issuer + "x", clientId: Self.client, nonce: Self.nonce, now: Self.now)
    }
    #expect(throws: IDTokenError.self) {
      _ = try IDToken.verify(rs256, keys: signed.keys, issuer: Self.issuer, clientId: "other-client", nonce: Self.nonce, now: Self.now)
    }
    #expect(throws: IDTokenError.claim(name: "nonce", reason: "is not the one sent: a replayed token")) {
      _ = try verify(rs256, signed.keys, nonce: "another")
    }
    #expect(throws: IDTokenError.claim(name: "exp", reason: "is in the past: the token expired")) {
      _ = try verify(rs256, signed.keys, now: Self.now + 3600 + 61)
    }
    #expect(throws: Never.self) { _ = try verify(rs256, signed.keys, now: Self.now + 3600 + 59) }
    #expect(throws: IDTokenError.claim(name: "azp", reason: "is not this client (fr-cli)")) {
      _ = try verify(signed.tokens["aud-list-other-azp"]!, signed.keys)
    }
    #expect(throws: IDTokenError.claim(name: "sub", reason: "is missing")) { _ = try verify(signed.tokens["no-sub"]!, signed.keys) }
    #expect(throws: IDTokenError.self) { _ = try verify("a.b", signed.keys) }
    #expect(throws: IDTokenError.self) { _ = try verify(String(repeating: "a", count: IDToken.maximumSize + 1), signed.keys) }
  }

  @Test("a JWKS without a usable key (RSA below 2048 bits, another curve) is an error")
  func weakKeysAreSkipped() throws {
    let small: JSON = ["keys": [["kty": "RSA", "n": .string(Base64URL.encode([UInt8](repeating: 0xC3, count: 128))), "e": "AQAB"]]]
    #expect(throws: OAuthError.self) { _ = try JSONWebKeySet(document: small) }
    let p384: JSON = ["keys": [["kty": "EC", "crv": "P-384", "x": "AA", "y": "AA"]]]
    #expect(throws: OAuthError.self) { _ = try JSONWebKeySet(document: p384) }
  }
}

@Suite(.timeLimit(.minutes(10)))
struct ProviderConfigurationTests {
  static let server = "https://am.example.com/am"
  static let issuer = "https://am.example.com/am/oauth2/realms/root/realms/alpha"

  func document(_ overrides: [(String, JSON)] = []) -> JSON {
    var object: JSONObject = [
      "issuer": .string(Self.issuer), "authorization_endpoint": .string(Self.issuer + "/authorize"),
      "token_endpoint": .string(Self.issuer + "/access_token"), "revocation_endpoint": .string(Self.issuer + "/token/revoke"),
      "jwks_uri": .string(Self.issuer + "/connect/jwk_uri"), "code_challenge_methods_supported": ["plain", "S256"],
    ]
    for (key, value) in overrides { object[key] = value }
    return .object(object)
  }

  func parse(_ document: JSON) throws(OAuthError) -> ProviderConfiguration {
    try ProviderConfiguration(document: document, expectedIssuer: Self.issuer) { ProviderConfiguration.sameOrigin($0, as: Self.server) }
  }

  @Test("AM's issuer per realm: <server>/oauth2 for the top-level realm, …/realms/root/realms/<realm> below it")
  func issuers() {
    #expect(ProviderConfiguration.issuer(server: Self.server + "/", realm: "alpha") == Self.issuer)
    #expect(ProviderConfiguration.issuer(server: Self.server, realm: "root") == Self.server + "/oauth2")
    #expect(ProviderConfiguration.issuer(server: Self.server, realm: "/") == Self.server + "/oauth2")
    #expect(ProviderConfiguration.issuer(server: Self.server, realm: "alpha/staff") == Self.issuer + "/realms/staff")
  }

  @Test("endpoints on another origin, another issuer, or no S256 are refused")
  func refusesForeignDocuments() throws {
    #expect(throws: Never.self) { _ = try parse(document()) }
    #expect(throws: OAuthError.foreignEndpoint(name: "token_endpoint", url: "https://evil.example/token")) {
      _ = try parse(document([("token_endpoint", "https://evil.example/token")]))
    }
    #expect(throws: OAuthError.self) { _ = try parse(document([("jwks_uri", "http://am.example.com/am/jwks")])) }
    #expect(throws: OAuthError.self) { _ = try parse(document([("issuer", "https://am.example.com/am/oauth2")])) }
    #expect(throws: OAuthError.self) { _ = try parse(document([("code_challenge_methods_supported", ["plain"])])) }
    #expect(throws: OAuthError.self) { _ = try parse(document([("authorization_endpoint", "https://user@am.example.com/am/authorize")])) }
  }

  @Test("a redirect's parameters are decoded; the stored document reads back as written")
  func parametersAndStoredTokens() throws {
    let parameters = FormEncoding.parameters(of: "http://127.0.0.1/cb?code=a%2Bb&state=x+y&iss=https%3A%2F%2Fam#frag")
    #expect(parameters == ["code": "a+b", "state": "x y", "iss": "https://am"])
    #expect(FormEncoding.encode([("scope", "openid profile"), ("x", "a&b=c")]) == "scope=openid%20profile&x=a%26b%3Dc")
    let tokens = StoredTokens(
      server: Self.server, realm: "alpha", clientId: "fr-cli", scope: "openid", redirectURI: "http://127.0.0.1/cb",
      provider: try parse(document()), accessToken: "at", tokenType: "Bearer", expiresAt: 10, refreshToken: "rt", idToken: nil,
      grantedScope: nil, sessionToken: "sso", cookieName: "iPlanetDirectoryPro", tree: "Login", obtainedAt: 5)
    #expect(try StoredTokens(json: tokens.json) == tokens)
    #expect(throws: StoredTokensError.version) { _ = try StoredTokens(json: ["version": 2]) }
    #expect(tokens.isValid(at: 4, margin: 5) && !tokens.isValid(at: 6, margin: 5))
  }
}
