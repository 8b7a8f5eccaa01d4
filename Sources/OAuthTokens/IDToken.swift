import Crypto
import CryptoExtras
import ProfileJSON

/// A realm's signing keys (its `jwks_uri`): RSA keys of 2048 bits or more and P-256 keys; other
/// key types are skipped, as RFC 7517 §5 lets a client do.
public struct JSONWebKeySet: Sendable {
  public enum Key: Sendable {
    case rsa(_RSA.Signing.PublicKey)
    case p256(P256.Signing.PublicKey)
  }

  public struct Entry: Sendable {
    public var kid: String?
    public var alg: String?
    public var key: Key
  }

  public var keys: [Entry]

  /// Parses a JWKS document; a key whose members do not decode is skipped, not fatal (a realm
  /// may publish encryption keys of other shapes). No usable key at all is an error.
  public init(document: JSON) throws(OAuthError) {
    guard case .array(let items)? = document["keys"] else { throw .badResponse(endpoint: "jwks_uri", reason: "no \"keys\" array") }
    keys = items.compactMap(Self.entry)
    guard !keys.isEmpty else { throw .badResponse(endpoint: "jwks_uri", reason: "no RSA (2048 bits or more) or P-256 signing key") }
  }

  private static func entry(_ item: JSON) -> Entry? {
    guard case .object(let object) = item, object["use"]?.stringValue ?? "sig" == "sig" else { return nil }
    let kid = object["kid"]?.stringValue
    let alg = object["alg"]?.stringValue
    switch object["kty"]?.stringValue {
    case "RSA":
      guard let n = object["n"]?.stringValue.flatMap(Base64URL.decode), let e = object["e"]?.stringValue.flatMap(Base64URL.decode),
        let key = try? _RSA.Signing.PublicKey(n: n, e: e), key.keySizeInBits >= 2048
      else { return nil }
      return Entry(kid: kid, alg: alg, key: .rsa(key))
    case "EC":
      guard let raw = P256JWK.raw(object), let key = try? P256.Signing.PublicKey(rawRepresentation: raw) else { return nil }
      return Entry(kid: kid, alg: alg, key: .p256(key))
    default:
      return nil
    }
  }
}

/// An OpenID Connect ID token whose signature and claims were verified (OpenID Connect Core
/// §3.1.3.7): only then are its claims shown or trusted.
public struct IDToken: Sendable {
  public let header: JSONObject
  public let claims: JSONObject

  /// The largest token accepted.
  public static let maximumSize = 64 << 10

  /// Verifies `compact` (a JWS in compact form) against `keys`: the algorithm is RS256, PS256
  /// or ES256 (never `none` or an HMAC: a public client holds no secret), the key is the one
  /// `kid` names (or, without `kid`, one of the algorithm's type), `iss` is `issuer` exactly,
  /// `aud` holds `clientId` (and `azp`, when present, is it), `exp` is after `now` less
  /// `leeway`, `iat` and `sub` are there, and `nonce` is `nonce` when one was sent.
  public static func verify(
    _ compact: String, keys: JSONWebKeySet, issuer: String, clientId: String, nonce: String?, now: Double, leeway: Double = 60
  ) throws(IDTokenError) -> IDToken {
    guard compact.utf8.count <= maximumSize else { throw .malformed("larger than \(maximumSize) bytes") }
    let jws: CompactJWS
    do throws(CompactJWS.Malformed) { jws = try CompactJWS(compact) } catch {
      switch error {
      case .parts(let count): throw .malformed("\(count) parts instead of 3")
      case .header: throw .malformed("the header is not base64url JSON")
      case .payload: throw .malformed("the payload is not base64url JSON")
      case .signature: throw .malformed("the signature is not base64url")
      }
    }
    let (header, claims, signature) = (jws.header, jws.claims, jws.signature)
    guard header["crit"] == nil else { throw .malformed("it has critical header extensions (crit)") }
    let alg = header["alg"]?.stringValue ?? "(none)"
    let kid = header["kid"]?.stringValue
    let input = jws.signingInput
    let candidates = keys.keys.filter { entry in
      (kid == nil || entry.kid == kid) && (entry.alg == nil || entry.alg == alg)
    }
    let verified: Bool
    switch alg {
    case "RS256", "PS256":
      let rsa = candidates.compactMap { if case .rsa(let key) = $0.key { key } else { nil } }
      guard !rsa.isEmpty else { throw .noKey(kid: kid) }
      let padding: _RSA.Signing.Padding = alg == "RS256" ? .insecurePKCS1v1_5 : .PSS
      let digest = SHA256.hash(data: input)
      verified = rsa.contains {
        $0.isValidSignature(_RSA.Signing.RSASignature(rawRepresentation: signature), for: digest, padding: padding)
      }
    case "ES256":
      let ec = candidates.compactMap { if case .p256(let key) = $0.key { key } else { nil } }
      guard !ec.isEmpty else { throw .noKey(kid: kid) }
      guard signature.count == 64, let parsed = try? P256.Signing.ECDSASignature(rawRepresentation: signature) else {
        throw .badSignature
      }
      verified = ec.contains { $0.isValidSignature(parsed, for: input) }
    default:
      throw .unsupportedAlgorithm(alg)
    }
    guard verified else { throw .badSignature }

    guard claims["iss"]?.stringValue == issuer else {
      throw .claim(name: "iss", reason: "is \(claims["iss"]?.stringValue.map { "\"\($0)\"" } ?? "missing"), not \"\(issuer)\"")
    }
    let audiences: [String]
    switch claims["aud"] {
    case .string(let one)?: audiences = [one]
    case .array(let many)?: audiences = many.compactMap(\.stringValue)
    default: throw .claim(name: "aud", reason: "is missing")
    }
    guard audiences.contains(clientId) else { throw .claim(name: "aud", reason: "does not name this client (\(clientId))") }
    if let azp = claims["azp"] {
      guard azp.stringValue == clientId else { throw .claim(name: "azp", reason: "is not this client (\(clientId))") }
    }
    guard let exp = claims["exp"]?.numberValue else { throw .claim(name: "exp", reason: "is missing") }
    guard exp + leeway > now else { throw .claim(name: "exp", reason: "is in the past: the token expired") }
    guard claims["iat"]?.numberValue != nil else { throw .claim(name: "iat", reason: "is missing") }
    guard let sub = claims["sub"]?.stringValue, !sub.isEmpty else { throw .claim(name: "sub", reason: "is missing") }
    if let nonce {
      guard claims["nonce"]?.stringValue == nonce else { throw .claim(name: "nonce", reason: "is not the one sent: a replayed token") }
    }
    return IDToken(header: header, claims: claims)
  }

  /// The subject.
  public var subject: String { claims["sub"]?.stringValue ?? "" }
}
