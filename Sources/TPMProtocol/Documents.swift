import Crypto
import ProfileJSON

/// The documents of TPM attestation as fr-profile and a verifier exchange them — in a journey
/// as the values of two HiddenValueCallbacks and a claim of the binding and signing JWSs, and
/// offline as the files of `fr-profile attest` (docs/tpm.md "TPM attestation"). Byte strings are
/// base64url without padding; TPM structures are marshalled as the TPM marshals them.
///
///     request   (client → verifier)  {"v":1,"ekType":"eccP256"|"rsa2048","ekPublic":TPM2B_PUBLIC,
///                                     "ekCertificate":DER (absent when the TPM has none),
///                                     "akPublic":TPM2B_PUBLIC}
///     challenge (verifier → client)  {"v":1,"credentialBlob":…,"encryptedSecret":…}
///     answer    (client → verifier)  {"v":1,"secret":…}
///     evidence  (a JWS claim, `tpmEvidence`) {"v":1,"attest":TPMS_ATTEST,"signature":R‖S,
///                                     "akPublic":TPM2B_PUBLIC,"keyPublic":TPM2B_PUBLIC}
///
/// A client that cannot attest answers the request or the challenge with {"v":1,"error":"…"}.
public enum AttestationProtocol {
  public static let version = 1
  /// The HiddenValueCallback ids of the two rounds.
  public static let requestCallbackId = "frTpmAttestationRequest"
  public static let challengeCallbackId = "frTpmAttestationChallenge"
  /// The JWS claim that carries a key's evidence.
  public static let evidenceClaim = "tpmEvidence"

  /// The qualifying data a key's TPM2_Certify is made over: SHA-256 of the JWS's `challenge`
  /// claim (its UTF-8 text as AM sent it), so the certification answers this journey only.
  public static func nonce(challenge: String) -> [UInt8] { Array(SHA256.hash(data: Array(challenge.utf8))) }
}

/// The client's first message: its endorsement key (and certificate) and a new attestation key.
public struct AttestationRequest: Sendable, Equatable {
  public var endorsementKeyType: String
  public var endorsementKey: [UInt8]
  public var endorsementCertificate: [UInt8]?
  public var attestationKey: [UInt8]

  public init(endorsementKeyType: String, endorsementKey: [UInt8], endorsementCertificate: [UInt8]?, attestationKey: [UInt8]) {
    self.endorsementKeyType = endorsementKeyType
    self.endorsementKey = endorsementKey
    self.endorsementCertificate = endorsementCertificate
    self.attestationKey = attestationKey
  }

  public var json: JSON {
    var object: JSONObject = [
      "v": .number(Double(AttestationProtocol.version)), "ekType": .string(endorsementKeyType),
      "ekPublic": .string(Base64URL.encode(endorsementKey)), "akPublic": .string(Base64URL.encode(attestationKey)),
    ]
    if let endorsementCertificate { object["ekCertificate"] = .string(Base64URL.encode(endorsementCertificate)) }
    return .object(object)
  }

  /// Reads a request; a client's `error` becomes `.clientCannotAttest`.
  public init(json: JSON) throws(AttestationError) {
    let message = try Message(json, "request")
    endorsementKeyType = try message.text("ekType")
    guard ["eccP256", "rsa2048"].contains(endorsementKeyType) else {
      throw .malformed("the request's ekType \"\(PrintableText.line(endorsementKeyType, limit: 40))\" is neither eccP256 nor rsa2048")
    }
    endorsementKey = try message.bytes("ekPublic")
    endorsementCertificate = try message.optionalBytes("ekCertificate")
    attestationKey = try message.bytes("akPublic")
  }
}

/// The verifier's credential challenge: the contents of TPM2_MakeCredential's TPM2B_ID_OBJECT and
/// TPM2B_ENCRYPTED_SECRET.
public struct AttestationChallenge: Sendable, Equatable {
  public var credentialBlob: [UInt8]
  public var encryptedSecret: [UInt8]

  public init(credentialBlob: [UInt8], encryptedSecret: [UInt8]) {
    self.credentialBlob = credentialBlob
    self.encryptedSecret = encryptedSecret
  }

  public var json: JSON {
    [
      "v": .number(Double(AttestationProtocol.version)), "credentialBlob": .string(Base64URL.encode(credentialBlob)),
      "encryptedSecret": .string(Base64URL.encode(encryptedSecret)),
    ]
  }

  public init(json: JSON) throws(AttestationError) {
    let message = try Message(json, "challenge")
    credentialBlob = try message.bytes("credentialBlob")
    encryptedSecret = try message.bytes("encryptedSecret")
  }
}

/// The client's answer to a challenge: the credential its TPM released.
public struct AttestationAnswer: Sendable, Equatable {
  public var secret: [UInt8]

  public init(secret: [UInt8]) { self.secret = secret }

  public var json: JSON { ["v": .number(Double(AttestationProtocol.version)), "secret": .string(Base64URL.encode(secret))] }

  public init(json: JSON) throws(AttestationError) {
    secret = try Message(json, "answer").bytes("secret")
  }
}

/// What a client presents for one key: TPM2_Certify of the key by its attestation key, over
/// the server's nonce, with both keys' public areas.
public struct KeyCertification: Sendable, Equatable {
  /// The marshalled TPMS_ATTEST the TPM signed.
  public var attestation: [UInt8]
  /// The attestation key's ECDSA signature over SHA-256(attestation), raw R ‖ S.
  public var signature: [UInt8]
  /// The attestation key's TPM2B_PUBLIC.
  public var attestationKey: [UInt8]
  /// The certified key's TPM2B_PUBLIC.
  public var key: [UInt8]

  public init(attestation: [UInt8], signature: [UInt8], attestationKey: [UInt8], key: [UInt8]) {
    self.attestation = attestation
    self.signature = signature
    self.attestationKey = attestationKey
    self.key = key
  }

  /// The evidence document (`AttestationProtocol`: the `tpmEvidence` claim).
  public var json: JSON {
    [
      "v": .number(Double(AttestationProtocol.version)), "attest": .string(Base64URL.encode(attestation)),
      "signature": .string(Base64URL.encode(signature)), "akPublic": .string(Base64URL.encode(attestationKey)),
      "keyPublic": .string(Base64URL.encode(key)),
    ]
  }

  public init(json: JSON) throws(AttestationError) {
    let message = try Message(json, "evidence")
    self.init(
      attestation: try message.bytes("attest"), signature: try message.bytes("signature"),
      attestationKey: try message.bytes("akPublic"), key: try message.bytes("keyPublic"))
  }
}

/// The members of one protocol message, each refusal naming the member.
package struct Message {
  let object: JSONObject
  let what: String

  package init(_ json: JSON, _ what: String) throws(AttestationError) {
    guard case .object(let object) = json else { throw .malformed("the \(what) is not a JSON object") }
    if let error = object["error"]?.stringValue { throw .clientCannotAttest(PrintableText.line(error)) }
    guard object["v"]?.numberValue == Double(AttestationProtocol.version) else {
      throw .unsupported("the \(what) is not version \(AttestationProtocol.version)")
    }
    self.object = object
    self.what = what
  }

  package func text(_ name: String) throws(AttestationError) -> String {
    guard let value = object[name]?.stringValue else { throw .malformed("the \(what) has no string \(name)") }
    return value
  }

  package func bytes(_ name: String) throws(AttestationError) -> [UInt8] {
    guard let bytes = Base64URL.decode(try text(name)) else { throw .malformed("the \(what)'s \(name) is not base64url") }
    return bytes
  }

  package func optionalBytes(_ name: String) throws(AttestationError) -> [UInt8]? {
    object[name] == nil ? nil : try bytes(name)
  }
}
