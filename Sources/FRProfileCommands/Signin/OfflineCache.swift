import Crypto
import CryptoExtras
import ProfileJSON
import StateStore
import TPMKeys
import TPMProtocol

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// The offline sign-in of each user: after an online success, the same password signs the user
/// in while AM cannot be reached, for `maxAgeSeconds` after that success, until `maxFailures`
/// wrong passwords in a row lock it (an online success unlocks it). One entry per user in
/// `<state directory>/offline/`, root's (0700, files 0600), holding no password nor a fast hash
/// of one: scrypt (memory-hard, salted) of the password, and where there is a TPM (the
/// configuration's `tcti`, else /dev/tpmrm0 when it exists) that hash keyed in it: HMAC-SHA256
/// with a key made inside the TPM for the entry, whose secret never leaves it. A copy of the
/// disk then holds nothing to test guesses against; without the TPM the entry cannot be used.
struct OfflineCache {
  let directory: StateDirectory
  let settings: SigninConfig.Offline
  /// The TPM that keys the entries; nil: scrypt alone (no TPM on this machine).
  let tcti: String?

  /// scrypt's cost: N = 2^15, r = 8, p = 1 — 32 MiB and about 0.1 s a guess on one core.
  static let rounds = 1 << 15
  static let blockSize = 8
  static let parallelism = 1

  static func open(stateDirectory: String, settings: SigninConfig.Offline, tcti: String?) throws -> OfflineCache {
    _ = try StateDirectory.open(stateDirectory, create: true)
    return OfflineCache(directory: try StateDirectory.open(stateDirectory + "/offline", create: true), settings: settings, tcti: tcti)
  }

  /// The TPM of a sign-in's offline entries: the configuration's tcti, else the kernel's resource
  /// manager when this machine has one, else none.
  static func tcti(configured: String?) -> String? {
    configured ?? (access("/dev/tpmrm0", F_OK) == 0 ? TPMConfiguration.defaultTCTI : nil)
  }

  struct Entry: Equatable {
    var user: String
    var salt: [UInt8]
    var hash: [UInt8]
    /// Wall-clock seconds of the online success that made it.
    var onlineAt: Double
    var failures: Int
    /// The TPM key `hash` is keyed with (HMAC of the scrypt hash); nil: `hash` is the scrypt hash.
    var tpmKey: TPMKeyBlob? = nil
  }

  /// The file of `user`'s entry: a digest of the name, so the directory lists no user names.
  static func fileName(_ user: String) -> String {
    Base64URL.encode(Array(SHA256.hash(data: Array("fr-profile offline sign-in\n\(user)".utf8))).prefix(18)) + ".json"
  }

  static func derive(_ password: String, salt: [UInt8]) throws -> [UInt8] {
    let key = try KDF.Scrypt.deriveKey(
      from: Array(password.utf8), salt: salt, outputByteCount: 32, rounds: rounds, blockSize: blockSize, parallelism: parallelism)
    return key.withUnsafeBytes { Array($0) }
  }

  func load(_ user: String) throws -> Entry? {
    guard let file = try directory.read(Self.fileName(user), requirement: .secret(maximumSize: 4096)) else { return nil }
    let json = try JSONParser.parse(file.bytes)
    guard json["v"] == 1, json["user"]?.stringValue == user, let salt = json["salt"]?.stringValue.flatMap(Base64URL.decode),
      let hash = json["hash"]?.stringValue.flatMap(Base64URL.decode), case .number(let at)? = json["onlineAt"],
      case .number(let failures)? = json["failures"], json["n"] == .number(Double(Self.rounds))
    else { return nil }
    var tpmKey: TPMKeyBlob?
    if let tpm = json["tpm"] {
      guard let parent = tpm["parent"]?.stringValue.flatMap(TPMKeyBlob.Parent.init(rawValue:)),
        let publicArea = tpm["public"]?.stringValue.flatMap(Base64URL.decode),
        let privateArea = tpm["private"]?.stringValue.flatMap(Base64URL.decode)
      else { return nil }
      tpmKey = TPMKeyBlob(parent: parent, publicArea: publicArea, privateArea: privateArea)
    }
    return Entry(user: user, salt: salt, hash: hash, onlineAt: at, failures: Int(failures), tpmKey: tpmKey)
  }

  func save(_ entry: Entry) throws {
    var object = JSONObject()
    object["v"] = 1
    object["user"] = .string(entry.user)
    object["kdf"] = "scrypt"
    object["n"] = .number(Double(Self.rounds))
    object["r"] = .number(Double(Self.blockSize))
    object["p"] = .number(Double(Self.parallelism))
    object["salt"] = .string(Base64URL.encode(entry.salt))
    object["hash"] = .string(Base64URL.encode(entry.hash))
    object["onlineAt"] = .number(entry.onlineAt)
    object["failures"] = .number(Double(entry.failures))
    if let key = entry.tpmKey {
      object["tpm"] = [
        "mac": "HMAC-SHA256", "parent": .string(key.parent.rawValue), "public": .string(Base64URL.encode(key.publicArea)),
        "private": .string(Base64URL.encode(key.privateArea)),
      ]
    }
    _ = try directory.write(Self.fileName(entry.user), Array(JSONWriter.compact(.object(object)).utf8), mode: 0o600, replace: true)
    directory.syncDirectory()
  }

  /// After an online success with `password`: the entry made or replaced, unlocked.
  func remember(_ user: String, password: String, now: Double) throws {
    var salt = [UInt8](repeating: 0, count: 16)
    guard getentropy(&salt, salt.count) == 0 else { throw SigninConfig.Problem(description: "no entropy for the offline entry's salt") }
    let derived = try Self.derive(password, salt: salt)
    guard let tcti else {
      try save(Entry(user: user, salt: salt, hash: derived, onlineAt: now, failures: 0))
      return
    }
    // A key of its own for each entry: made, then used, in one session with the TPM.
    let (key, mac) = try Self.keyed(tcti) { context throws(TPMError) in
      let key = try context.createHMACKey()
      return (key, try context.hmac(derived, with: key))
    }
    try save(Entry(user: user, salt: salt, hash: mac, onlineAt: now, failures: 0, tpmKey: key))
  }

  /// `body` in a session with the TPM at `tcti`; its failure says which TPM and why.
  static func keyed<T: Sendable>(_ tcti: String, _ body: (TPMContext) throws(TPMError) -> T) throws -> T {
    do {
      return try TPMContext.session(tcti: tcti, body)
    } catch {
      throw SigninConfig.Problem(description: "the TPM at \(tcti) does not key the offline entry: \(error)")
    }
  }

  /// AM said the account is locked or inactive: no offline sign-in until the next online one.
  func forget(_ user: String) throws {
    let name = Self.fileName(user)
    if try directory.identity(of: name, requirement: .secret(maximumSize: 4096)) != nil {
      try directory.remove(name)
      directory.syncDirectory()
    }
  }

  /// Why `entry` cannot sign in offline now, or nil.
  func unusable(_ entry: Entry?, now: Double) -> String? {
    guard let entry else { return "no offline entry (no online sign-in with a password yet)" }
    if now - entry.onlineAt > settings.maximumAge || now < entry.onlineAt - 300 {
      return "the offline entry is older than offline.maxAgeSeconds"
    }
    if entry.failures >= settings.maximumFailures { return "the offline entry is locked after \(entry.failures) wrong passwords" }
    return nil
  }

  /// Checks `password` against the entry: a success resets the count of wrong ones, a failure
  /// adds one.
  func verify(_ entry: Entry, password: String) throws -> Bool {
    var derived = try Self.derive(password, salt: entry.salt)
    if let key = entry.tpmKey {
      // Keyed in a TPM: only that TPM can check it (a failure here is no wrong password).
      guard let tcti else { throw SigninConfig.Problem(description: "the offline entry is keyed in a TPM and no TPM is configured") }
      derived = try Self.keyed(tcti) { context throws(TPMError) in try context.hmac(derived, with: key) }
    }
    var difference: UInt8 = 0
    for (a, b) in zip(derived, entry.hash) { difference |= a ^ b }
    let matches = difference == 0 && derived.count == entry.hash.count
    var updated = entry
    updated.failures = matches ? 0 : entry.failures + 1
    if updated != entry { try save(updated) }
    return matches
  }
}
