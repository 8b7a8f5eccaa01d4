import Crypto
import JWTKit
import ProfileJSON

/// The compact ES256 JWS the Device Binding and Device Signing Verifier nodes verify, made
/// with vapor/jwt-kit (header, claims, base64url, the raw 64-byte R‖S signature).
///
/// jwt-kit's signing API is `async` (its key collection is an actor), so binding and signing
/// are `async` too; the synchronous commands wait for them on the main thread, outside the
/// cooperative pool (the CLI's `runBlocking`). Blocking a pool thread instead
/// deadlocks: on a 2-core machine both pool threads ended up waiting (seen in this repo's tests).
package enum BindingJWS {
  /// The claim names a caller may not set through custom claims (the SDKs' reserved list).
  package static let reservedClaims: Set<String> = ["sub", "exp", "iat", "nbf", "iss", "challenge"]

  /// The public key as the binding header's `jwk`: `kty`, `crv`, `x`, `y`, `use`, `alg`, `kid`.
  package static func jwk(x: String, y: String, kid: String) -> [String: JWTHeaderField] {
    [
      "kty": .string("EC"), "crv": .string("P-256"), "x": .string(x), "y": .string(y), "use": .string("sig"),
      "alg": .string("ES256"), "kid": .string(kid),
    ]
  }

  /// The JWK members `x` and `y` of a P-256 public key.
  package static func coordinates(_ key: P256.Signing.PublicKey) -> (x: String, y: String) {
    let raw = Array(key.rawRepresentation)  // X ‖ Y, 32 bytes each
    return (Base64URL.encode(raw[0..<32]), Base64URL.encode(raw[32..<64]))
  }

  /// Signs `claims` (in order) with `key`; the header has `alg: ES256`, `kid`, `typ: "JWS"`
  /// and, for a binding, the public `jwk`.
  package static func sign(
    claims: [(String, JSON)], key: P256.Signing.PrivateKey, kid: String, includeJWK: Bool
  ) async throws -> String {
    var header = JWTHeader()
    header.alg = "ES256"
    header.kid = kid
    header.typ = "JWS"
    if includeJWK {
      let (x, y) = coordinates(key.publicKey)
      header.jwk = jwk(x: x, y: y, kid: kid)
    }
    let signingKey = try ES256PrivateKey(backing: key)
    let payload = Claims(members: claims)
    let keys = JWTKeyCollection()
    await keys.add(ecdsa: signingKey, kid: JWKIdentifier(string: kid))
    return try await keys.sign(payload, kid: JWKIdentifier(string: kid), header: header)
  }
}

extension BindingJWS {
  /// The same JWS with the signature made elsewhere (a key in a TPM): jwt-kit encodes header
  /// and claims exactly as `sign(claims:key:…)` does; `signer` gets the signing input
  /// (`base64url(header).base64url(claims)`) and returns the raw 64-byte R‖S over its SHA-256.
  package static func sign(
    claims: [(String, JSON)], publicKey: P256.Signing.PublicKey, kid: String, includeJWK: Bool,
    signer: ([UInt8]) throws -> [UInt8]
  ) throws -> String {
    var header = JWTHeader()
    header.alg = "ES256"
    header.kid = kid
    header.typ = "JWS"
    if includeJWK {
      let (x, y) = coordinates(publicKey)
      header.jwk = jwk(x: x, y: y, kid: kid)
    }
    let serializer = DefaultJWTSerializer()
    let headerJSON = try serializer.jsonEncoder.encode(header)
    let payload = try serializer.serialize(Claims(members: claims), header: header)
    let input = Array(Base64URL.encode(Array(headerJSON)).utf8) + [UInt8(ascii: ".")] + Array(payload)
    let signature = try signer(input)
    return String(decoding: input, as: UTF8.self) + "." + Base64URL.encode(signature)
  }
}

/// A claim set with members in a fixed order and JSON values (custom claims may be any JSON).
private struct Claims: JWTPayload {
  var members: [(String, JSON)]

  init(members: [(String, JSON)]) { self.members = members }

  init(from decoder: any Decoder) throws {
    throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "binding claims are only encoded"))
  }

  func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: ClaimKey.self)
    for (name, value) in members { try container.encode(EncodableJSON(value), forKey: ClaimKey(name)) }
  }

  func verify(using algorithm: some JWTAlgorithm) async throws {}
}

private struct ClaimKey: CodingKey {
  var stringValue: String
  var intValue: Int? { nil }
  init(_ name: String) { stringValue = name }
  init?(stringValue: String) { self.stringValue = stringValue }
  init?(intValue: Int) { nil }
}

/// A `JSON` value for `Encoder`s; whole numbers are written as integers (NumericDate).
private struct EncodableJSON: Encodable {
  var value: JSON
  init(_ value: JSON) { self.value = value }

  func encode(to encoder: any Encoder) throws {
    switch value {
    case .null:
      var container = encoder.singleValueContainer()
      try container.encodeNil()
    case .bool(let flag):
      var container = encoder.singleValueContainer()
      try container.encode(flag)
    case .number(let number):
      var container = encoder.singleValueContainer()
      if number == number.rounded(), abs(number) < 9e15 { try container.encode(Int64(number)) } else { try container.encode(number) }
    case .string(let text):
      var container = encoder.singleValueContainer()
      try container.encode(text)
    case .array(let items):
      var container = encoder.unkeyedContainer()
      for item in items { try container.encode(EncodableJSON(item)) }
    case .object(let object):
      var container = encoder.container(keyedBy: ClaimKey.self)
      for member in object.members { try container.encode(EncodableJSON(member.value), forKey: ClaimKey(member.key)) }
    }
  }
}
