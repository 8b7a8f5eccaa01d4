import Crypto
import ProfileJSON
import StateStore
import SystemCalls
import TPMProtocol

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// The device's key pair on disk, in a `StateDirectory` (opened by descriptor, ancestors
/// checked; see docs/identity.md for the threat model):
///
/// - `device-key.pem`: the private key (PKCS#8 PEM), mode 0600, directory 0700.
/// - `device-key.pub`: its public key (PEM), a cache so the public key and a changed
///   machine-id need no P-256 scalar multiplication.
/// - `device-key.id`: the identifier, bound to what it was derived from — the machine-id
///   bytes and the identities (device, inode, size, mtime) of the key and the public key
///   files. `identifier(for:)` returns it with no cryptography at all when nothing changed; any
///   difference sends it through the full derivation, which parses the private key, rebuilds a
///   public key cache that does not match it and rewrites the binding.
///
/// Changes (first creation, reset, recovery) hold the directory's lock. A key is created once,
/// atomically (an unnamed file linked in under its final name); a reset writes the new key and
/// cache as `*.next`, then renames them into place, so a crash at any point leaves either the
/// old key or the new one, never none, and the next run finishes or rolls back the reset.
public struct DeviceKeyStore: Sendable {
  public let directory: String
  public var privateKeyPath: String { directory + "/" + Self.privateKeyName }
  public var publicKeyPath: String { directory + "/" + Self.publicKeyName }

  static let privateKeyName = "device-key.pem"
  static let publicKeyName = "device-key.pub"
  static let identifierName = "device-key.id"
  static let nextPrivateKeyName = "device-key.pem.next"
  static let nextPublicKeyName = "device-key.pub.next"
  /// The identity key kept in a TPM (`identifier --move-to-tpm`): only its TPM-wrapped blob.
  /// When present it is the identity, whatever PEM key or backup is beside it.
  static let tpmKeyName = "device-key.tpm"
  static let tpmKeyRequirement = FileRequirement.secret(maximumSize: 4096)
  public var tpmKeyPath: String { directory + "/" + Self.tpmKeyName }

  static let privateKeyRequirement = FileRequirement.secret(maximumSize: 8192)
  static let publicKeyRequirement = FileRequirement.ownerWritable(maximumSize: 4096)
  static let identifierRequirement = FileRequirement.ownerWritable(maximumSize: 1024)

  /// `directory` as given, made absolute against the current directory when relative.
  public init(directory: String) {
    self.directory = StateDirectory.absolutePath(directory)
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

  // MARK: - Reading

  /// The device identifier for `system`'s machine-id and this store's key (created on first
  /// use). When the key, its public key cache and the machine-id are those the cached
  /// identifier was derived from, no cryptography runs; otherwise the full derivation does.
  public func identifier(for system: SystemSource) throws(IdentityError) -> String {
    let machineID = DeviceIdentifier.machineID(system)
    let state = try openDirectory(create: false)
    if let state, let der = try tpmPublicKeyDER(state) { return DeviceIdentifier.make(machineID: machineID, publicKeyDER: der) }
    if let state, let cached = try cachedIdentifier(state, machineID: machineID) { return cached }
    if let state { clean(state) }
    let (der, state2) = try loadOrCreate(state)
    let identifier = DeviceIdentifier.make(machineID: machineID, publicKeyDER: der)
    try? writeBinding(state2, machineID: machineID, identifier: identifier)
    return identifier
  }

  /// The public key's DER (SubjectPublicKeyInfo), creating the key pair on first use. Always
  /// derived from the private key, which must parse.
  public func publicKeyDER(create: Bool = true) throws(IdentityError) -> [UInt8] {
    let state = try openDirectory(create: false)
    if !create {
      guard let state else { throw .keyUnreadable(path: privateKeyPath, errno: ENOENT) }
      let inTPM = try tpmPublicKeyDER(state) != nil
      let inFile = try key(state) != nil
      guard inTPM || inFile else { throw .keyUnreadable(path: privateKeyPath, errno: ENOENT) }
    }
    return try loadOrCreate(state).der
  }

  /// Whether a key exists (after the same checks a read makes).
  public func keyExists() throws(IdentityError) -> Bool {
    guard let state = try openDirectory(create: false) else { return false }
    return try key(state) != nil
  }

  // MARK: - A key in the TPM (the TPM itself is used by the CLI through TPMKeys, never here)

  /// The TPM key file's bytes, nil when the identity is not in a TPM.
  public func tpmKeyBlob() throws(IdentityError) -> [UInt8]? {
    guard let state = try openDirectory(create: false) else { return nil }
    return try mapped { () throws(StateDirectoryError) in try state.read(Self.tpmKeyName, requirement: Self.tpmKeyRequirement) }?.bytes
  }

  /// The P-256 key of a TPM key file (TPMKeys' `TPMKeyBlob` form), read by TPMProtocol's parser
  /// without tpm2-tss; nil when the file is not one.
  static func tpmSigningKey(_ file: [UInt8]) -> P256.Signing.PublicKey? {
    try? TPMKeyBlob(bytes: file).publicKey().signingKey()
  }

  /// The TPM key's public key DER (SubjectPublicKeyInfo) from its blob; nil without one.
  private func tpmPublicKeyDER(_ state: StateDirectory) throws(IdentityError) -> [UInt8]? {
    guard let file = try mapped({ () throws(StateDirectoryError) in try state.read(Self.tpmKeyName, requirement: Self.tpmKeyRequirement) })
    else { return nil }
    guard let key = Self.tpmSigningKey(file.bytes) else { throw .keyCorrupt(path: tpmKeyPath, reason: "not an fr-profile TPM key") }
    return Array(key.derRepresentation)
  }

  /// Makes the TPM key in `blob` (TPMKeys.TPMKeyBlob's file form, made by the caller in the
  /// TPM) the identity: writes it as `device-key.tpm` (0600), keeps the file key as
  /// `device-key.pem.<UTC time>.bak`, removes it and rewrites the public key cache. Under the
  /// lock; a run killed half-way leaves the TPM key as the identity (it wins from the moment
  /// it is written) and the old key in place or in its backup. Returns whether `blob` became
  /// the identity (false: a concurrent run's TPM key already is) and the backup's path.
  @discardableResult
  public func adoptTPMKey(_ blob: [UInt8]) throws(IdentityError) -> (adopted: Bool, backup: String?) {
    guard let key = Self.tpmSigningKey(blob) else { throw .keyCorrupt(path: tpmKeyPath, reason: "not an fr-profile TPM key") }
    let state = try openDirectory(create: true)!
    return try creating { () throws(StateDirectoryError) -> (adopted: Bool, backup: String?) in
      let lock = try state.lock()
      defer { withExtendedLifetime(lock) {} }
      if try state.identity(of: Self.tpmKeyName, requirement: Self.tpmKeyRequirement) != nil { return (false, nil) }
      _ = try state.write(Self.tpmKeyName, blob, mode: 0o600, replace: false)
      var backup: String?
      if try state.identity(of: Self.privateKeyName, requirement: Self.privateKeyRequirement) != nil {
        let name = try Self.backUp(Self.privateKeyName, in: state)
        try state.remove(Self.privateKeyName)
        backup = state.filePath(name)
      }
      try? state.remove(Self.identifierName)
      _ = try? state.write(Self.publicKeyName, Array(key.pemRepresentation.utf8), mode: 0o644, replace: true)
      state.syncDirectory()
      return (true, backup)
    }
  }

  /// Replaces the identity key in the TPM with the TPM key in `blob` (made by the caller in the
  /// TPM, as for `adoptTPMKey`): the reset of an identity that is in a TPM, which stays there.
  /// Under the lock, the current blob is kept as `device-key.tpm.<UTC time>.bak` (a link: a
  /// backup is never overwritten), then `blob` replaces it in one rename, so a run killed at
  /// any point leaves the old key or the new one as the identity, never none. Returns the
  /// backup's path. Throws `keyUnreadable` (ENOENT) when the identity is not in a TPM.
  public func resetTPMKey(_ blob: [UInt8]) throws(IdentityError) -> String {
    guard let key = Self.tpmSigningKey(blob) else { throw .keyCorrupt(path: tpmKeyPath, reason: "not an fr-profile TPM key") }
    guard let state = try openDirectory(create: false) else { throw .keyUnreadable(path: tpmKeyPath, errno: ENOENT) }
    let backup = try creating { () throws(StateDirectoryError) -> String? in
      let lock = try state.lock()
      defer { withExtendedLifetime(lock) {} }
      guard try state.identity(of: Self.tpmKeyName, requirement: Self.tpmKeyRequirement) != nil else { return nil }
      let name = try Self.backUp(Self.tpmKeyName, in: state)
      // The commit point: the rename of the new blob over the old one.
      try state.write(Self.tpmKeyName, blob, mode: 0o600, replace: true)
      try? state.remove(Self.identifierName)
      _ = try? state.write(Self.publicKeyName, Array(key.pemRepresentation.utf8), mode: 0o644, replace: true)
      state.syncDirectory()
      return state.filePath(name)
    }
    guard let backup else { throw .keyUnreadable(path: tpmKeyPath, errno: ENOENT) }
    return backup
  }

  /// Links `name` as `<name>.<UTC time>.bak` (`-2`, `-3`, … when that exists: a backup is
  /// never overwritten) and returns the backup's name. Under the lock.
  private static func backUp(_ name: String, in state: StateDirectory) throws(StateDirectoryError) -> String {
    let stamp = name + "." + utcStamp()
    var backup = stamp + ".bak"
    var attempt = 1
    while true {
      do throws(StateDirectoryError) {
        try state.link(name, to: backup)
        return backup
      } catch {
        guard error.code == .exists, attempt < 100 else { throw error }
        attempt += 1
        backup = stamp + "-\(attempt).bak"
      }
    }
  }

  /// The public key as PEM ("-----BEGIN PUBLIC KEY-----"), creating the key pair on first use.
  public func publicKeyPEM() throws(IdentityError) -> String {
    publicPEM(try publicKeyDER())
  }

  /// The full check: derives the public key from the private key
  /// (which must parse) and rebuilds a public key cache that is missing or does not belong to
  /// it. Returns whether the cache had to be rebuilt.
  @discardableResult
  public func verify() throws(IdentityError) -> Bool {
    guard let state = try openDirectory(create: false), try key(state) != nil else {
      throw .keyUnreadable(path: privateKeyPath, errno: ENOENT)
    }
    return try derive(state).rebuilt
  }

  /// Removes temporaries of runs killed half-way (this version's and the private keys older
  /// versions left as `device-key.pem.tmp.*`): ours, older than `age` seconds.
  package func removeStaleTemporaries(olderThan age: Int = 60) throws(IdentityError) {
    guard let state = try openDirectory(create: false) else { return }
    clean(state, olderThan: age)
  }

  private func clean(_ state: StateDirectory, olderThan age: Int = 60) {
    state.removeStaleTemporaries(olderThan: age, alsoPrefixed: [Self.privateKeyName + ".tmp.", Self.publicKeyName + ".tmp."])
  }

  // MARK: - The identifier binding

  /// The cached identifier when its binding holds, else nil.
  private func cachedIdentifier(_ state: StateDirectory, machineID: [UInt8]?) throws(IdentityError) -> String? {
    guard let keyIdentity = try key(state) else { return nil }
    guard
      let publicIdentity = try mapped({ () throws(StateDirectoryError) in
        try state.identity(of: Self.publicKeyName, requirement: Self.publicKeyRequirement)
      })
    else { return nil }
    guard
      let text = try mapped({ () throws(StateDirectoryError) in
        try state.readBytes(Self.identifierName, requirement: Self.identifierRequirement)
      })
    else { return nil }
    let binding = Self.bindingBytes(machineID: machineID, key: keyIdentity, publicKey: publicIdentity)
    // "<binding>\n<identifier>\n"
    guard text.count > binding.count + 2, text.starts(with: binding), text.last == UInt8(ascii: "\n") else { return nil }
    let identifier = text[(binding.count)..<(text.count - 1)]
    guard identifier.allSatisfy({ $0 == UInt8(ascii: "-") || ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }),
      identifier.count == 40 || identifier.count == 57
    else { return nil }
    return String(decoding: identifier, as: UTF8.self)
  }

  /// The first lines of the identifier cache: what the identifier was derived from.
  package static func binding(machineID: [UInt8]?, key: FileIdentity, publicKey: FileIdentity) -> String {
    String(decoding: bindingBytes(machineID: machineID, key: key, publicKey: publicKey), as: UTF8.self)
  }

  /// `binding` as bytes, built without string interpolation (the cache check runs at every
  /// collect): "fr-profile identifier cache 1\nmachine-id <hex or none>\nkey <identity>\npub <identity>\n".
  static func bindingBytes(machineID: [UInt8]?, key: FileIdentity, publicKey: FileIdentity) -> [UInt8] {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(160)
    bytes.append(contentsOf: "fr-profile identifier cache 1\nmachine-id ".utf8)
    if let machineID {
      Hex.append(machineID, to: &bytes)
    } else {
      bytes.append(contentsOf: "none".utf8)
    }
    bytes.append(contentsOf: "\nkey ".utf8)
    key.append(to: &bytes)
    bytes.append(contentsOf: "\npub ".utf8)
    publicKey.append(to: &bytes)
    bytes.append(UInt8(ascii: "\n"))
    return bytes
  }

  private func writeBinding(_ state: StateDirectory, machineID: [UInt8]?, identifier: String) throws(IdentityError) {
    guard let keyIdentity = try key(state),
      let publicIdentity = try mapped({ () throws(StateDirectoryError) in
        try state.identity(of: Self.publicKeyName, requirement: Self.publicKeyRequirement)
      })
    else { return }
    let text = Self.binding(machineID: machineID, key: keyIdentity, publicKey: publicIdentity) + identifier + "\n"
    _ = try mapped { () throws(StateDirectoryError) in try state.write(Self.identifierName, Array(text.utf8), mode: 0o644, replace: true) }
  }

  // MARK: - Loading, deriving, creating

  /// The verified public key DER; creates the key (and the directory) when there is none.
  private func loadOrCreate(_ existing: StateDirectory?) throws(IdentityError) -> (der: [UInt8], state: StateDirectory) {
    if let existing, let der = try tpmPublicKeyDER(existing) { return (der, existing) }
    if let existing {
      if try pendingReset(existing) { try? recover(existing) }
      if try key(existing) != nil { return (try derive(existing).der, existing) }
    }
    let state: StateDirectory
    if let existing { state = existing } else { state = try openDirectory(create: true)! }
    return (try create(state), state)
  }

  /// The key file's identity after its checks; nil when there is none.
  private func key(_ state: StateDirectory) throws(IdentityError) -> FileIdentity? {
    try mapped { () throws(StateDirectoryError) in try state.identity(of: Self.privateKeyName, requirement: Self.privateKeyRequirement) }
  }

  /// Parses the private key and derives its public key; rewrites a public key cache that is
  /// missing or another key's. A failure to write the cache (a read-only directory) is not
  /// fatal: the identifier comes from the private key either way.
  private func derive(_ state: StateDirectory) throws(IdentityError) -> (der: [UInt8], rebuilt: Bool) {
    guard
      let file = try mapped({ () throws(StateDirectoryError) in try state.read(Self.privateKeyName, requirement: Self.privateKeyRequirement)
      })
    else {
      throw .keyUnreadable(path: privateKeyPath, errno: ENOENT)
    }
    let der = try Self.publicKeyDER(privateKeyPEM: file.bytes, path: privateKeyPath)
    let cached = try mapped { () throws(StateDirectoryError) in try state.read(Self.publicKeyName, requirement: Self.publicKeyRequirement) }
    if let cached, let key = try? P256.Signing.PublicKey(pemRepresentation: String(decoding: cached.bytes, as: UTF8.self)),
      Array(key.derRepresentation) == der
    {
      return (der, false)
    }
    _ = try? state.write(Self.publicKeyName, Array(publicPEM(der).utf8), mode: 0o644, replace: true)
    return (der, true)
  }

  static func publicKeyDER(privateKeyPEM bytes: [UInt8], path: String) throws(IdentityError) -> [UInt8] {
    guard let pem = String(validating: bytes, as: UTF8.self) else { throw .keyCorrupt(path: path, reason: "not text") }
    guard looksLikePEM(pem) else { throw .keyCorrupt(path: path, reason: "not a PEM private key") }
    do {
      return Array(try P256.Signing.PrivateKey(pemRepresentation: pem).publicKey.derRepresentation)
    } catch {
      throw .keyCorrupt(path: path, reason: "not a P-256 private key")
    }
  }

  /// First creation, under the lock: an unnamed file linked in as `device-key.pem` (never a
  /// partial key under that name, and nothing left behind by a crash), then the cache. A
  /// concurrent run that won the race is used instead. With backups but no key (a reset of
  /// an older version, killed half-way), nothing is created: the identity is not replaced
  /// silently.
  private func create(_ state: StateDirectory) throws(IdentityError) -> [UInt8] {
    let lock = try creating { () throws(StateDirectoryError) in try state.lock() }
    defer { withExtendedLifetime(lock) {} }
    clean(state)
    if try key(state) != nil { return try derive(state).der }
    let backups = ((try? state.names()) ?? []).filter { $0.hasPrefix(Self.privateKeyName + ".") && $0.hasSuffix(".bak") }
    if !backups.isEmpty { throw .keyMissing(path: privateKeyPath, backups: backups.map { state.filePath($0) }) }
    let key = P256.Signing.PrivateKey()
    let der = Array(key.publicKey.derRepresentation)
    _ = try creating { () throws(StateDirectoryError) in
      try state.write(Self.privateKeyName, Array(key.pemRepresentation.utf8), mode: 0o600, replace: false)
    }
    _ = try? state.write(Self.publicKeyName, Array(publicPEM(der).utf8), mode: 0o644, replace: true)
    return der
  }

  /// Moves the current key aside as `device-key.pem.<UTC time>.bak` and makes a new one.
  /// Returns the backup's path (nil when there was no key). Atomic: the new key and cache are
  /// written as `*.next` and renamed into place; a crash leaves the old key or the new one.
  /// An identity in a TPM is not reset here (a file key would not replace it): that throws
  /// `keyInTPM`; make a new TPM key and pass it to `resetTPMKey`.
  @discardableResult
  public func reset() throws(IdentityError) -> String? {
    let state = try openDirectory(create: true)!
    let outcome = try creating { () throws(StateDirectoryError) -> (inTPM: Bool, backup: String?) in
      let lock = try state.lock()
      defer { withExtendedLifetime(lock) {} }
      if try state.identity(of: Self.tpmKeyName, requirement: Self.tpmKeyRequirement) != nil { return (true, nil) }
      clean(state)
      try? recoverLocked(state)
      let key = P256.Signing.PrivateKey()
      let der = Array(key.publicKey.derRepresentation)
      let pem = Array(key.pemRepresentation.utf8)
      guard try state.identity(of: Self.privateKeyName, requirement: Self.privateKeyRequirement) != nil else {
        try state.write(Self.privateKeyName, pem, mode: 0o600, replace: false)
        _ = try? state.write(Self.publicKeyName, Array(publicPEM(der).utf8), mode: 0o644, replace: true)
        return (false, nil)
      }
      // The backup first (a link: an existing backup is never overwritten).
      let backup = try Self.backUp(Self.privateKeyName, in: state)
      try state.write(Self.nextPrivateKeyName, pem, mode: 0o600, replace: true)
      try state.write(Self.nextPublicKeyName, Array(publicPEM(der).utf8), mode: 0o644, replace: true)
      // The commit point: once the key is renamed, recovery rolls forward.
      try state.rename(Self.nextPrivateKeyName, to: Self.privateKeyName)
      try state.rename(Self.nextPublicKeyName, to: Self.publicKeyName)
      return (false, state.filePath(backup))
    }
    if outcome.inTPM { throw .keyInTPM(path: tpmKeyPath) }
    return outcome.backup
  }

  /// Whether a reset was interrupted (`*.next` files are present).
  private func pendingReset(_ state: StateDirectory) throws(IdentityError) -> Bool {
    var info = stat()
    return fstatat(state.descriptor, Self.nextPrivateKeyName, &info, AT_SYMLINK_NOFOLLOW) == 0
      || fstatat(state.descriptor, Self.nextPublicKeyName, &info, AT_SYMLINK_NOFOLLOW) == 0
  }

  /// Finishes or rolls back an interrupted reset, under the lock.
  private func recover(_ state: StateDirectory) throws(StateDirectoryError) {
    let lock = try state.lock()
    defer { withExtendedLifetime(lock) {} }
    try recoverLocked(state)
  }

  /// A new key not yet renamed into place: the reset did not happen, remove its files. A new
  /// key in place but its cache not: rename the cache too.
  private func recoverLocked(_ state: StateDirectory) throws(StateDirectoryError) {
    var info = stat()
    if fstatat(state.descriptor, Self.nextPrivateKeyName, &info, AT_SYMLINK_NOFOLLOW) == 0 {
      try state.remove(Self.nextPrivateKeyName)
      try state.remove(Self.nextPublicKeyName)
      state.syncDirectory()
    } else if fstatat(state.descriptor, Self.nextPublicKeyName, &info, AT_SYMLINK_NOFOLLOW) == 0 {
      try state.rename(Self.nextPublicKeyName, to: Self.publicKeyName)
    }
  }

  // MARK: - Errors

  /// The state directory, or nil when it does not exist and `create` is false.
  private func openDirectory(create: Bool) throws(IdentityError) -> StateDirectory? {
    do {
      return try StateDirectory.open(directory, create: create)
    } catch {
      if error.code == .missing, !create { return nil }
      throw identityError(error)
    }
  }

  private func mapped<T>(_ body: () throws(StateDirectoryError) -> T) throws(IdentityError) -> T {
    do { return try body() } catch { throw identityError(error) }
  }

  /// Runs a change; a failure to write or lock is "cannot create the key".
  private func creating<T>(_ body: () throws(StateDirectoryError) -> T) throws(IdentityError) -> T {
    do { return try body() } catch {
      if error.code == .cannotWrite || error.code == .cannotLock {
        throw .cannotWriteKey(path: directory, errno: error.errno ?? 0)
      }
      throw identityError(error)
    }
  }

  func identityError(_ error: StateDirectoryError) -> IdentityError { Self.identityError(error, directory: directory) }

  /// A state-directory failure as the identity reports it (`directory`: the state directory).
  package static func identityError(_ error: StateDirectoryError, directory: String) -> IdentityError {
    let path = error.path
    let code = error.errno ?? 0
    return switch error.code {
    case .missing: .cannotCreateStateDirectory(path: path, errno: ENOENT)
    case .notSecure: .stateDirectoryUnsafe(path: directory, ancestor: path, reason: error.unsafe ?? .rootDirectory)
    case .notADirectory: .stateDirectoryNotADirectory(path: path)
    case .foreignOwner: .stateDirectoryForeignOwner(path: path, owner: error.owner ?? 0)
    case .insecureMode: .stateDirectoryInsecure(path: path, mode: error.mode ?? 0)
    case .cannotCreate: .cannotCreateStateDirectory(path: path, errno: code)
    case .cannotOpen: .stateDirectoryUnreadable(path: path, errno: code)
    case .notARegularFile: .keyNotARegularFile(path: path)
    case .fileForeignOwner: .keyForeignOwner(path: path, owner: error.owner ?? 0)
    case .fileInsecureMode: .keyInsecureMode(path: path, mode: error.mode ?? 0)
    case .tooLarge: .keyCorrupt(path: path, reason: "larger than any key")
    case .cannotWrite, .cannotLock: .cannotWriteKey(path: directory, errno: code)
    case .exists: .cannotWriteKey(path: path, errno: EEXIST)
    default: .keyUnreadable(path: path, errno: code)  // .unreadable, and what a later release adds
    }
  }
}

func publicPEM(_ der: [UInt8]) -> String {
  (try? P256.Signing.PublicKey(derRepresentation: der).pemRepresentation) ?? ""
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
  return
    "\(parts.tm_year + 1900)\(two(parts.tm_mon + 1))\(two(parts.tm_mday))T\(two(parts.tm_hour))\(two(parts.tm_min))\(two(parts.tm_sec))Z"
}
