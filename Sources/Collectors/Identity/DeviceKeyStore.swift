#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Crypto

/// The device's key pair on disk: the private key in `<directory>/device-key.pem` (PKCS#8 PEM,
/// mode 0600, directory 0700) and its public key cached in `device-key.pub`, so a normal run
/// reads two small files and hashes 91 bytes instead of deriving the public key (a P-256 scalar
/// multiplication) every time.
///
/// The key is created once, atomically: concurrent first runs each write a temporary file and
/// `link(2)` it into place; exactly one link wins and every loser reads the winner's key.
public struct DeviceKeyStore: Sendable {
  public let directory: String
  public var privateKeyPath: String { directory + "/device-key.pem" }
  public var publicKeyPath: String { directory + "/device-key.pub" }

  public init(directory: String) {
    self.directory = directory.count > 1 && directory.hasSuffix("/") ? String(directory.dropLast()) : directory
  }

  /// The default state directory: `$FR_PROFILE_HOME`; for root `/var/lib/fr-profile`; else
  /// `$XDG_STATE_HOME/fr-profile`, else `~/.local/state/fr-profile`.
  public static func defaultDirectory(environment: [String: String], isRoot: Bool = geteuid() == 0) -> String? {
    defaultDirectory(variable: { environment[$0] }, isRoot: isRoot)
  }

  /// The same, looking variables up with `variable` (e.g. `SystemSource.variable`, which reads
  /// this process's environment without building a dictionary of it).
  public static func defaultDirectory(variable: (String) -> String?, isRoot: Bool = geteuid() == 0) -> String? {
    if let home = variable("FR_PROFILE_HOME"), !home.isEmpty { return home }
    if isRoot { return "/var/lib/fr-profile" }
    if let state = variable("XDG_STATE_HOME"), state.hasPrefix("/") { return state + "/fr-profile" }
    if let home = variable("HOME"), home.hasPrefix("/") { return home + "/.local/state/fr-profile" }
    return nil
  }

  /// The public key's DER (SubjectPublicKeyInfo), creating the key pair on first use.
  public func publicKeyDER(create: Bool = true) throws(IdentityError) -> [UInt8] {
    if try checkedKeyStatus() != nil {
      return try loadPublicKeyDER()
    }
    guard create else { throw IdentityError.keyUnreadable(path: privateKeyPath, errno: ENOENT) }
    try prepareDirectory()
    return try createKey()
  }

  /// The device identifier for `system`'s machine-id and this store's key (created on first use).
  public func identifier(for system: SystemSource) throws(IdentityError) -> String {
    DeviceIdentifier.make(machineID: DeviceIdentifier.machineID(system), publicKeyDER: try publicKeyDER())
  }

  /// Whether a key exists (after the same checks a read makes).
  public func keyExists() throws(IdentityError) -> Bool {
    try checkedKeyStatus() != nil
  }

  /// The public key as PEM ("-----BEGIN PUBLIC KEY-----"), creating the key pair on first use.
  public func publicKeyPEM() throws(IdentityError) -> String {
    let der = try publicKeyDER()
    do {
      return try P256.Signing.PublicKey(derRepresentation: der).pemRepresentation
    } catch {
      throw .keyCorrupt(path: publicKeyPath, reason: "the cached public key does not parse")
    }
  }

  /// Derives the public key from the private key and checks the cache against it; rewrites a
  /// missing cache. The full check `fr-profile identifier` makes.
  public func verify() throws(IdentityError) {
    guard try checkedKeyStatus() != nil else { throw .keyUnreadable(path: privateKeyPath, errno: ENOENT) }
    let derived = try derivePublicKeyDER()
    if let cached = try? readCachedPublicKeyDER(), cached != derived { throw .keyMismatch(path: privateKeyPath) }
  }

  /// Moves the current key aside as `device-key.pem.<UTC time>.bak` and creates a new one.
  /// Returns the backup's path (nil when there was no key).
  @discardableResult
  public func reset() throws(IdentityError) -> String? {
    var backup: String?
    if try checkedKeyStatus() != nil {
      // link + unlink rather than rename: an existing backup is never overwritten.
      let stamp = privateKeyPath + "." + utcStamp()
      var path = stamp + ".bak"
      var attempt = 1
      while link(privateKeyPath, path) != 0 {
        guard errno == EEXIST, attempt < 100 else { throw .cannotWriteKey(path: directory, errno: errno) }
        attempt += 1
        path = stamp + "-\(attempt).bak"
      }
      guard unlink(privateKeyPath) == 0 else { throw .cannotWriteKey(path: directory, errno: errno) }
      unlink(publicKeyPath)
      backup = path
    } else {
      try prepareDirectory()
    }
    _ = try createKey()
    return backup
  }

  // MARK: - Checks

  /// lstat of the private key with the security checks; nil when it does not exist.
  private func checkedKeyStatus() throws(IdentityError) -> stat? {
    var info = stat()
    if lstat(privateKeyPath, &info) != 0 {
      let code = errno
      if code == ENOENT {
        try checkDirectoryIfPresent()
        return nil
      }
      throw .keyUnreadable(path: privateKeyPath, errno: code)
    }
    try checkDirectoryIfPresent()
    guard info.st_mode & S_IFMT == S_IFREG else { throw .keyNotARegularFile(path: privateKeyPath) }
    guard info.st_uid == geteuid() else { throw .keyForeignOwner(path: privateKeyPath, owner: info.st_uid) }
    guard info.st_mode & 0o077 == 0 else { throw .keyInsecureMode(path: privateKeyPath, mode: info.st_mode & 0o7777) }
    guard info.st_mode & 0o400 != 0 else { throw .keyUnreadable(path: privateKeyPath, errno: EACCES) }
    return info
  }

  private func checkDirectoryIfPresent() throws(IdentityError) {
    var info = stat()
    guard stat(directory, &info) == 0 else { return }
    guard info.st_mode & S_IFMT == S_IFDIR else { throw .stateDirectoryNotADirectory(path: directory) }
    guard info.st_uid == geteuid() else { throw .stateDirectoryForeignOwner(path: directory, owner: info.st_uid) }
    guard info.st_mode & 0o077 == 0 else { throw .stateDirectoryInsecure(path: directory, mode: info.st_mode & 0o7777) }
  }

  /// Creates the directory (and missing parents) with mode 0700.
  private func prepareDirectory() throws(IdentityError) {
    var prefix = ""
    for component in directory.split(separator: "/", omittingEmptySubsequences: true) {
      prefix += "/" + component
      if mkdir(prefix, 0o700) != 0 && errno != EEXIST {
        throw .cannotCreateStateDirectory(path: directory, errno: errno)
      }
    }
    try checkDirectoryIfPresent()
  }

  // MARK: - Reading

  private func loadPublicKeyDER() throws(IdentityError) -> [UInt8] {
    let pem = try readPrivateKeyText()
    guard looksLikePEM(pem) else { throw .keyCorrupt(path: privateKeyPath, reason: "not a PEM private key") }
    if let cached = try? readCachedPublicKeyDER() { return cached }
    // No usable cache (first run of a loser in a creation race, or a deleted .pub): derive
    // it once and cache it again; a failure to write the cache is not fatal.
    let der = try derivePublicKeyDER()
    try? writeAtomically(publicKeyPath, publicPEM(der), mode: 0o644)
    return der
  }

  private func readPrivateKeyText() throws(IdentityError) -> String {
    let fd = open(privateKeyPath, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
    guard fd >= 0 else { throw .keyUnreadable(path: privateKeyPath, errno: errno) }
    defer { close(fd) }
    guard let bytes = readAll(fd, limit: 8192) else { throw .keyUnreadable(path: privateKeyPath, errno: errno) }
    guard bytes.count < 8192 else { throw .keyCorrupt(path: privateKeyPath, reason: "larger than any key") }
    guard let text = String(validating: bytes, as: UTF8.self) else {
      throw .keyCorrupt(path: privateKeyPath, reason: "not text")
    }
    return text
  }

  private func readCachedPublicKeyDER() throws -> [UInt8] {
    guard let bytes = SystemSource(root: "/", environment: [:]).readBytes(publicKeyPath, limit: 4096) else {
      throw IdentityError.keyUnreadable(path: publicKeyPath, errno: errno)
    }
    let key = try P256.Signing.PublicKey(pemRepresentation: String(decoding: bytes, as: UTF8.self))
    return Array(key.derRepresentation)
  }

  private func derivePublicKeyDER() throws(IdentityError) -> [UInt8] {
    let pem = try readPrivateKeyText()
    do {
      return Array(try P256.Signing.PrivateKey(pemRepresentation: pem).publicKey.derRepresentation)
    } catch {
      throw .keyCorrupt(path: privateKeyPath, reason: "not a P-256 private key")
    }
  }

  // MARK: - Creating

  private func createKey() throws(IdentityError) -> [UInt8] {
    let key = P256.Signing.PrivateKey()
    let der = Array(key.publicKey.derRepresentation)
    let temporary = privateKeyPath + ".tmp." + String(getpid()) + "." + String(UInt32.random(in: 0...UInt32.max), radix: 16)
    do {
      try writeFile(temporary, key.pemRepresentation, mode: 0o600)
    } catch {
      unlink(temporary)
      throw error
    }
    defer { unlink(temporary) }
    if link(temporary, privateKeyPath) != 0 {
      let code = errno
      guard code == EEXIST else { throw .cannotWriteKey(path: directory, errno: code) }
      // Another process created the key first: use theirs.
      guard try checkedKeyStatus() != nil else { throw .keyUnreadable(path: privateKeyPath, errno: ENOENT) }
      return try loadPublicKeyDER()
    }
    try? writeAtomically(publicKeyPath, publicPEM(der), mode: 0o644)
    syncDirectory()
    return der
  }

  private func publicPEM(_ der: [UInt8]) -> String {
    (try? P256.Signing.PublicKey(derRepresentation: der).pemRepresentation) ?? ""
  }

  /// Writes `text` to a new file (O_EXCL) with `mode` and fsyncs it.
  private func writeFile(_ path: String, _ text: String, mode: mode_t) throws(IdentityError) {
    let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode)
    guard fd >= 0 else { throw .cannotWriteKey(path: directory, errno: errno) }
    defer { close(fd) }
    fchmod(fd, mode)  // the umask must not widen or narrow it
    guard writeAll(fd, Array(text.utf8)) else { throw .cannotWriteKey(path: directory, errno: errno) }
    guard fsync(fd) == 0 else { throw .cannotWriteKey(path: directory, errno: errno) }
  }

  private func writeAtomically(_ path: String, _ text: String, mode: mode_t) throws(IdentityError) {
    guard !text.isEmpty else { return }
    let temporary = path + ".tmp." + String(getpid()) + "." + String(UInt32.random(in: 0...UInt32.max), radix: 16)
    do {
      try writeFile(temporary, text, mode: mode)
    } catch {
      unlink(temporary)
      throw error
    }
    guard rename(temporary, path) == 0 else {
      let code = errno
      unlink(temporary)
      throw .cannotWriteKey(path: directory, errno: code)
    }
  }

  private func syncDirectory() {
    let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    if fd >= 0 {
      fsync(fd)
      close(fd)
    }
  }
}

/// Cheap framing check run on every read: PEM armour of a private key around base64 text.
func looksLikePEM(_ text: String) -> Bool {
  let lines = text.split(whereSeparator: { $0 == "\n" || $0 == "\r" })
  guard let first = lines.first, let last = lines.last, lines.count >= 3,
    first == "-----BEGIN PRIVATE KEY-----" || first == "-----BEGIN EC PRIVATE KEY-----",
    last == "-----END PRIVATE KEY-----" || last == "-----END EC PRIVATE KEY-----"
  else { return false }
  return lines.dropFirst().dropLast().allSatisfy { line in
    line.utf8.allSatisfy { byte in
      (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x30 && byte <= 0x39)
        || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "/") || byte == UInt8(ascii: "=")
    }
  }
}

/// "20261122T120501Z", for backup names.
func utcStamp() -> String {
  var now = time(nil)
  var parts = tm()
  gmtime_r(&now, &parts)
  func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
  return "\(parts.tm_year + 1900)\(two(parts.tm_mon + 1))\(two(parts.tm_mday))T\(two(parts.tm_hour))\(two(parts.tm_min))\(two(parts.tm_sec))Z"
}
