import Crypto
import CryptoExtras
import ProfileJSON
import StateStore

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// The offline sign-in of each user: after an online success, the same password signs the user
/// in while AM cannot be reached, for `maxAgeSeconds` after that success, until `maxFailures`
/// wrong passwords in a row lock it (an online success unlocks it). One entry per user in
/// `<state directory>/offline/`, root's (0700, files 0600), holding no password nor a fast hash
/// of one: scrypt (memory-hard, salted) of the password.
///
/// Weak point, said in docs/signin.md: the entry is not sealed in the TPM yet, so a copy of the
/// disk can be attacked offline at scrypt's cost per guess.
struct OfflineCache {
  let directory: StateDirectory
  let settings: SigninConfig.Offline

  /// scrypt's cost: N = 2^15, r = 8, p = 1 — 32 MiB and about 0.1 s a guess on one core.
  static let rounds = 1 << 15
  static let blockSize = 8
  static let parallelism = 1

  static func open(stateDirectory: String, settings: SigninConfig.Offline) throws -> OfflineCache {
    _ = try StateDirectory.open(stateDirectory, create: true)
    return OfflineCache(directory: try StateDirectory.open(stateDirectory + "/offline", create: true), settings: settings)
  }

  struct Entry: Equatable {
    var user: String
    var salt: [UInt8]
    var hash: [UInt8]
    /// Wall-clock seconds of the online success that made it.
    var onlineAt: Double
    var failures: Int
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
    return Entry(user: user, salt: salt, hash: hash, onlineAt: at, failures: Int(failures))
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
    _ = try directory.write(Self.fileName(entry.user), Array(JSONWriter.compact(.object(object)).utf8), mode: 0o600, replace: true)
    directory.syncDirectory()
  }

  /// After an online success with `password`: the entry made or replaced, unlocked.
  func remember(_ user: String, password: String, now: Double) throws {
    var salt = [UInt8](repeating: 0, count: 16)
    guard getentropy(&salt, salt.count) == 0 else { throw SigninConfig.Problem(description: "no entropy for the offline entry's salt") }
    try save(Entry(user: user, salt: salt, hash: try Self.derive(password, salt: salt), onlineAt: now, failures: 0))
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
    let derived = try Self.derive(password, salt: entry.salt)
    var difference: UInt8 = 0
    for (a, b) in zip(derived, entry.hash) { difference |= a ^ b }
    let matches = difference == 0 && derived.count == entry.hash.count
    var updated = entry
    updated.failures = matches ? 0 : entry.failures + 1
    if updated != entry { try save(updated) }
    return matches
  }
}
