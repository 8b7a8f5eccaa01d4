import Crypto
import Journey
import ProfileJSON

/// The secrets of one authorization request (RFC 7636, OpenID Connect Core §3.1.2.1), fresh for
/// every request and never written anywhere: the PKCE code verifier (32 random bytes, 43
/// base64url characters) and its S256 challenge, the `state` the redirect must return, and the
/// `nonce` the ID token must carry. Only S256: `plain` would send the verifier itself.
public struct AuthorizationSecrets: Sendable {
  public let codeVerifier: String
  public let state: String
  public let nonce: String

  public init() {
    self.init(codeVerifier: Self.random(32), state: Self.random(16), nonce: Self.random(16))
  }

  /// Given values, for tests that check the challenge against RFC 7636's example.
  public init(codeVerifier: String, state: String, nonce: String) {
    self.codeVerifier = codeVerifier
    self.state = state
    self.nonce = nonce
  }

  /// BASE64URL(SHA256(ASCII(code_verifier))) (RFC 7636 §4.2).
  public var codeChallenge: String { Base64URL.encode(Array(SHA256.hash(data: Array(codeVerifier.utf8)))) }

  /// `count` bytes from the system's CSPRNG (getrandom through SystemRandomNumberGenerator),
  /// base64url.
  static func random(_ count: Int) -> String {
    var generator = SystemRandomNumberGenerator()
    return Base64URL.encode((0..<count).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
  }
}

/// Form and query encoding, and reading the query of a redirect.
package enum FormEncoding {
  /// `application/x-www-form-urlencoded` (RFC 3986 unreserved kept, every other byte %XX).
  package static func encode(_ pairs: [(String, String)]) -> String {
    pairs.map { AuthenticateEndpoint.percentEncoded($0.0) + "=" + AuthenticateEndpoint.percentEncoded($0.1) }.joined(separator: "&")
  }

  /// The query (or, failing that, the fragment) parameters of `url`, decoded; a parameter that
  /// does not decode is left out.
  package static func parameters(of url: String) -> [String: String] {
    guard let start = url.firstIndex(where: { $0 == "?" || $0 == "#" }) else { return [:] }
    var result: [String: String] = [:]
    let query = url[url.index(after: start)...].prefix { $0 != "#" }
    for pair in query.split(separator: "&") {
      let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
      guard let name = AuthenticateEndpoint.percentDecoded(String(parts[0])) else { continue }
      let value = parts.count > 1 ? AuthenticateEndpoint.percentDecoded(String(parts[1])) : ""
      if let value, result[name] == nil { result[name] = value }
    }
    return result
  }

  /// `scheme://authority` of a URL (lowercased scheme and host), for same-origin checks, and
  /// the web origin WebAuthn names by default (AM's).
  package static func origin(of url: String) -> String? {
    guard let schemeEnd = url.firstRange(of: "://") else { return nil }
    let scheme = url[..<schemeEnd.lowerBound].lowercased()
    let authority = url[schemeEnd.upperBound...].prefix { $0 != "/" && $0 != "?" && $0 != "#" }
    guard scheme == "https" || scheme == "http", !authority.isEmpty, !authority.contains("@") else { return nil }
    return scheme + "://" + authority.lowercased()
  }
}
