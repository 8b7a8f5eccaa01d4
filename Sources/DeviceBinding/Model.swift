import ProfileJSON

/// How a bound key is protected: the `authenticationType` of AM's Device Binding node.
package enum AuthenticationType: String, Sendable, CaseIterable, Equatable {
  /// Usable without user interaction (stored like the device key: 0600 in a 0700 directory).
  case none = "NONE"
  /// Encrypted under a key derived from an application PIN (`PINProtection`).
  case applicationPIN = "APPLICATION_PIN"
  /// PAM service `fr-profile-biometric` (an admin points it at pam_fprintd) must verify the user.
  case biometricOnly = "BIOMETRIC_ONLY"
  /// PAM service `fr-profile` must verify the user (fingerprint or password, as configured).
  case biometricAllowFallback = "BIOMETRIC_ALLOW_FALLBACK"
}

/// The client-error outcome names AM's nodes route on (`IDToken<N>clientError`).
package enum BindingClientError: String, Sendable, Equatable {
  case unsupported = "Unsupported"
  case timeout = "Timeout"
  case abort = "Abort"
  case clientNotRegistered = "ClientNotRegistered"
}

/// Why binding or signing did not produce a JWS: the client error sent to AM, and the reason
/// in words for the person at the terminal (never a PIN or key material).
package struct BindingFailure: Error, Sendable, Equatable, CustomStringConvertible {
  package var clientError: BindingClientError
  package var reason: String

  package init(_ clientError: BindingClientError, _ reason: String) {
    self.clientError = clientError
    self.reason = reason
  }

  package var description: String { "\(clientError.rawValue): \(reason)" }
}

/// The public record of a bound key, as `fr-profile keys list --json` prints it.
package struct UserKeyRecord: Sendable, Equatable {
  /// The JWS `kid`: a random UUID, AM's record id for the binding.
  package var kid: String
  /// AM's universal id of the user (`id=demo,ou=user,…`): the JWS `sub`.
  package var userId: String
  package var username: String
  package var authType: AuthenticationType
  /// ISO 8601, UTC, seconds: "2026-11-22T17:19:36Z".
  package var createdAt: String
  /// The name of the `UserKeyStore` that holds it ("file", "memory", an embedder's).
  package var store: String
  /// A breached app policy locked the key: it refuses to sign until `keys unlock`.
  package var locked: Bool
  /// The policy that locked it (nil when unlocked).
  package var lockingPolicy: String?
  /// The app policies evaluated before each signing, in AM's JSON form (`{}` for none).
  package var policies: JSONObject

  package init(
    kid: String, userId: String, username: String, authType: AuthenticationType, createdAt: String, store: String,
    locked: Bool = false, lockingPolicy: String? = nil, policies: JSONObject = JSONObject()
  ) {
    self.kid = kid
    self.userId = userId
    self.username = username
    self.authType = authType
    self.createdAt = createdAt
    self.store = store
    self.locked = locked
    self.lockingPolicy = lockingPolicy
    self.policies = policies
  }

  package var json: JSON {
    .object([
      "kid": .string(kid), "userId": .string(userId), "username": .string(username), "authType": .string(authType.rawValue),
      "createdAt": .string(createdAt), "store": .string(store), "locked": .bool(locked),
      "lockingPolicy": lockingPolicy.map { .string($0) } ?? .null, "policies": .object(policies),
    ])
  }

  package init(json: JSON) throws(KeyStoreError) {
    func text(_ name: String) throws(KeyStoreError) -> String {
      guard let value = json[name]?.stringValue else {
        throw .corrupt(kid: json["kid"]?.stringValue ?? "?", reason: "record has no \"\(name)\"")
      }
      return value
    }
    kid = try text("kid")
    userId = try text("userId")
    username = try text("username")
    guard let type = AuthenticationType(rawValue: try text("authType")) else {
      throw .corrupt(kid: kid, reason: "unknown authType")
    }
    authType = type
    createdAt = try text("createdAt")
    store = try text("store")
    locked = json["locked"]?.boolValue ?? false
    lockingPolicy = json["lockingPolicy"]?.stringValue
    policies = json["policies"]?.objectValue ?? JSONObject()
  }
}

/// How the private key is kept in the store.
package enum KeyMaterial: Sendable, Equatable {
  /// The raw 32-byte P-256 scalar (NONE and BIOMETRIC_* keys; the file mode protects it).
  case plain([UInt8])
  /// Sealed under a PIN-derived key (APPLICATION_PIN).
  case pinProtected(PINProtectedKey)
  /// Created inside a hardware key store (a TPM): only its wrapped blob is kept.
  case hardware(HardwareKey)
}

/// One bound key as a store keeps it: record, key material, and for PIN keys the policies
/// and the persisted attempt counters.
package struct StoredUserKey: Sendable, Equatable {
  package var record: UserKeyRecord
  package var material: KeyMaterial
  /// The public key's JWK members `x`, `y` (base64url); nil for `silent` PIN keys, which keep
  /// no public key so that a stolen file cannot confirm a guessed PIN.
  package var publicKey: (x: String, y: String)?
  package var lock: PINLockState
  /// The device identifier at binding; signing refuses (`ClientNotRegistered`) on a device
  /// whose identifier differs, e.g. from a copied state directory.
  package var boundDeviceId: String?

  package init(record: UserKeyRecord, material: KeyMaterial, publicKey: (x: String, y: String)?, lock: PINLockState = PINLockState()) {
    self.record = record
    self.material = material
    self.publicKey = publicKey
    self.lock = lock
  }

  package static func == (lhs: Self, rhs: Self) -> Bool {
    lhs.record == rhs.record && lhs.material == rhs.material && lhs.publicKey?.x == rhs.publicKey?.x
      && lhs.publicKey?.y == rhs.publicKey?.y && lhs.lock == rhs.lock && lhs.boundDeviceId == rhs.boundDeviceId
  }

  /// The document the file store writes.
  package var json: JSON {
    var object: JSONObject = ["version": 1, "record": record.json]
    switch material {
    case .plain(let scalar):
      object["key"] = ["protection": "none", "d": .string(Base64URL.encode(scalar))]
    case .pinProtected(let sealed):
      object["key"] = sealed.json
    case .hardware(let key):
      object["key"] = key.json
    }
    if let publicKey { object["public"] = ["x": .string(publicKey.x), "y": .string(publicKey.y)] }
    object["attempts"] = lock.json
    if let boundDeviceId { object["deviceId"] = .string(boundDeviceId) }
    return .object(object)
  }

  package init(json: JSON) throws(KeyStoreError) {
    record = try UserKeyRecord(json: json["record"] ?? .null)
    let kid = record.kid
    guard let key = json["key"] else { throw .corrupt(kid: kid, reason: "no key") }
    switch key["protection"]?.stringValue {
    case "none":
      guard let d = key["d"]?.stringValue.flatMap(Base64URL.decode), d.count == 32 else {
        throw .corrupt(kid: kid, reason: "key \"d\" is not 32 base64url bytes")
      }
      material = .plain(d)
    case "pin":
      guard let sealed = PINProtectedKey(json: key) else { throw .corrupt(kid: kid, reason: "PIN-protected key is malformed") }
      material = .pinProtected(sealed)
    case "hardware":
      guard let key = HardwareKey(json: key) else { throw .corrupt(kid: kid, reason: "hardware key is malformed") }
      material = .hardware(key)
    default: throw .corrupt(kid: kid, reason: "unknown key protection")
    }
    if let x = json["public"]?["x"]?.stringValue, let y = json["public"]?["y"]?.stringValue {
      publicKey = (x, y)
    } else {
      publicKey = nil
    }
    lock = PINLockState(json: json["attempts"]) ?? PINLockState()
    boundDeviceId = json["deviceId"]?.stringValue
  }
}
