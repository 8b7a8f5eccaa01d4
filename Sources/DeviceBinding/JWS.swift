import Crypto
import ProfileJSON

/// The compact ES256 JWS the Device Binding and Device Signing Verifier nodes verify: one
/// encoder for every key store. Header and claims are written by ProfileJSON's writer (members
/// in order, whole numbers as integers, as NumericDate wants), base64url-encoded, and the
/// signing input `base64url(header).base64url(claims)` goes to the key's store, which returns the
/// raw 64-byte R‖S over its SHA-256: swift-crypto for file and PIN keys, the TPM for hardware
/// keys. Hand-written rather than vapor/jwt-kit because a compact ES256 JWS is 30 lines over
/// swift-crypto, while jwt-kit's actor-based key collection made signing `async` for a
/// synchronous tool, brought swift-certificates and Foundation into the binary, and encoded TPM
/// signatures through a second path. The tests verify what it makes with independent
/// implementations (swift-crypto in the test AM, PyJWT with `cryptography`).
package enum BindingJWS {
  /// The claim names a caller may not set through custom claims (the SDKs' reserved list).
  package static let reservedClaims: Set<String> = ["sub", "exp", "iat", "nbf", "iss", "challenge"]

  /// The public key as the binding header's `jwk`: `kty`, `crv`, `x`, `y`, `use`, `alg`, `kid`.
  package static func jwk(x: String, y: String, kid: String) -> JSON {
    var jwk = P256JWK.members(x: x, y: y)
    jwk["use"] = "sig"
    jwk["alg"] = "ES256"
    jwk["kid"] = .string(kid)
    return .object(jwk)
  }

  /// The JWK members `x` and `y` of a P-256 public key.
  package static func coordinates(_ key: P256.Signing.PublicKey) -> (x: String, y: String) {
    P256JWK.coordinates(raw: Array(key.rawRepresentation))
  }

  /// The claims of every binding and signing JWS, built in one place: `sub`, `iss`,
  /// `challenge`, `iat` = `nbf` = `seconds`, `exp` = `seconds` + the timeout capped at
  /// `DeviceBinder.maximumJWSLifetime`, then `platform: "linux"` for a binding, or the custom
  /// claims for a signing.
  package static func claims(
    subject: String, issuer: String, challenge: String, seconds: Int, timeout: Int, binding: Bool,
    custom: [(String, JSON)] = []
  ) -> [(String, JSON)] {
    var claims: [(String, JSON)] = [
      ("sub", .string(subject)), ("iss", .string(issuer)), ("challenge", .string(challenge)),
      ("iat", .number(Double(seconds))), ("nbf", .number(Double(seconds))),
      ("exp", .number(Double(seconds + DeviceBinder.jwsLifetime(timeout)))),
    ]
    claims += binding ? [("platform", "linux")] : custom
    return claims
  }

  /// Signs `claims` (in order) with a key in memory.
  package static func sign(
    claims: [(String, JSON)], key: P256.Signing.PrivateKey, kid: String, includeJWK: Bool
  ) throws -> String {
    try sign(claims: claims, publicKey: key.publicKey, kid: kid, includeJWK: includeJWK) { input in
      Array(try key.signature(for: input).rawRepresentation)
    }
  }

  /// The JWS of `claims`: the header has `alg: ES256`, `typ: "JWS"`, `kid` and, for a binding,
  /// the public `jwk`; `signer` gets the signing input and returns the raw 64-byte R‖S over its
  /// SHA-256 (a key in memory, or one in a TPM).
  package static func sign(
    claims: [(String, JSON)], publicKey: P256.Signing.PublicKey, kid: String, includeJWK: Bool,
    signer: ([UInt8]) throws -> [UInt8]
  ) throws -> String {
    var header = JSONObject()
    header["alg"] = "ES256"
    header["typ"] = "JWS"
    header["kid"] = .string(kid)
    if includeJWK {
      let (x, y) = coordinates(publicKey)
      header["jwk"] = jwk(x: x, y: y, kid: kid)
    }
    let payload = JSONObject(claims.map { (key: $0.0, value: $0.1) })
    let input = CompactJWS.signingInput(header: header, claims: payload)
    let signature = try signer(input)
    guard signature.count == 64 else { throw JWSError.badSignature(count: signature.count) }
    return CompactJWS.serialized(signingInput: input, signature: signature)
  }
}

/// A signer returned something that is not a raw P-256 R‖S signature.
package enum JWSError: Error, CustomStringConvertible {
  case badSignature(count: Int)

  package var description: String {
    switch self {
    case .badSignature(let count): "the signature has \(count) bytes, not the 64 of a raw P-256 R‖S"
    }
  }
}
