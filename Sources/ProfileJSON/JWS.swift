/// A JWS in compact form (RFC 7515 §7.1), split and decoded: the one reader of the JWSs the
/// package handles (ID tokens, binding and signing JWSs the verifier checks, stored tokens
/// shown) and the one writer (`BindingJWS`). Codec only: which algorithms are accepted and how
/// the signature is checked stay with each caller (the verifier takes ES256 alone, an ID token
/// RS256, PS256 or ES256), since those need swift-crypto, which ProfileJSON does not link.
package struct CompactJWS {
  /// What did not decode: the number of parts, or which part.
  package enum Malformed: Error, Equatable {
    case parts(Int)
    case header
    case payload
    case signature
  }

  package let header: JSONObject
  /// The payload as a JSON object (the claims).
  package let claims: JSONObject
  /// `BASE64URL(header) "." BASE64URL(payload)` as sent: what the signature covers.
  package let signingInput: [UInt8]
  package let signature: [UInt8]

  /// Three base64url parts, the first two JSON objects.
  package init(_ text: String) throws(Malformed) {
    let parts = text.split(separator: ".", omittingEmptySubsequences: false)
    guard parts.count == 3 else { throw .parts(parts.count) }
    guard let headerBytes = Base64URL.decode(String(parts[0])), case .object(let header)? = try? JSONParser.parse(headerBytes) else {
      throw .header
    }
    guard let claimBytes = Base64URL.decode(String(parts[1])), case .object(let claims)? = try? JSONParser.parse(claimBytes) else {
      throw .payload
    }
    guard let signature = Base64URL.decode(String(parts[2])) else { throw .signature }
    self.header = header
    self.claims = claims
    self.signingInput = Array(parts[0].utf8) + [UInt8(ascii: ".")] + Array(parts[1].utf8)
    self.signature = signature
  }

  /// The claims of a JWS whose signature was checked when it arrived (a stored ID token); nil
  /// when it does not split into three parts or its payload is not base64url JSON. The header
  /// and signature are not read.
  package static func unverifiedClaims(_ text: String) -> JSONObject? {
    let parts = text.split(separator: ".", omittingEmptySubsequences: false)
    guard parts.count == 3, let bytes = Base64URL.decode(String(parts[1])) else { return nil }
    return (try? JSONParser.parse(bytes))?.objectValue
  }

  /// The signing input of `header` and `claims`: each written by `JSONWriter.compact` (members
  /// in order, whole numbers as integers) and base64url-encoded.
  package static func signingInput(header: JSONObject, claims: JSONObject) -> [UInt8] {
    Array(
      (Base64URL.encode(Array(JSONWriter.compact(.object(header)).utf8)) + "."
        + Base64URL.encode(Array(JSONWriter.compact(.object(claims)).utf8))).utf8)
  }

  /// The compact JWS of a signing input and its signature.
  package static func serialized(signingInput: [UInt8], signature: [UInt8]) -> String {
    String(decoding: signingInput, as: UTF8.self) + "." + Base64URL.encode(signature)
  }
}

/// An EC P-256 public key as a JWK (RFC 7518 §6.2): `x` and `y`, base64url of 32 bytes each.
/// Over the raw X‖Y (64 bytes) that swift-crypto's `rawRepresentation` gives and takes, so
/// ProfileJSON needs no crypto.
package enum P256JWK {
  /// `x` and `y` of the raw X‖Y.
  package static func coordinates(raw: [UInt8]) -> (x: String, y: String) {
    precondition(raw.count == 64, "a raw P-256 public key has 64 bytes")
    return (Base64URL.encode(raw[0..<32]), Base64URL.encode(raw[32..<64]))
  }

  /// `kty`, `crv`, `x`, `y`: the members every JWK of the key has.
  package static func members(x: String, y: String) -> JSONObject {
    JSONObject([(key: "kty", value: "EC"), (key: "crv", value: "P-256"), (key: "x", value: .string(x)), (key: "y", value: .string(y))])
  }

  /// The raw X‖Y of a JWK whose `kty` is EC and `crv` P-256, with `x` and `y` of 32 bytes;
  /// nil for any other JWK.
  package static func raw(_ jwk: JSONObject) -> [UInt8]? {
    guard jwk["kty"]?.stringValue == "EC", jwk["crv"]?.stringValue == "P-256", let x = jwk["x"]?.stringValue.flatMap(Base64URL.decode),
      let y = jwk["y"]?.stringValue.flatMap(Base64URL.decode), x.count == 32, y.count == 32
    else { return nil }
    return x + y
  }
}
