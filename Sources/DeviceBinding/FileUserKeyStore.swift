import DeviceIdentity
import ProfileJSON
import StateStore
import SystemCalls

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// The default `UserKeyStore`: one JSON document per key, `<state-dir>/bound-keys/<kid>.json`,
/// mode 0600 in a 0700 directory, with the device key's safety (`StateDirectory`): the
/// directory is held by a descriptor reached without following links and checked on the way,
/// files are opened relative to it with `O_NOFOLLOW` and checked with `fstat` (owner, mode,
/// regular file), written atomically (temporary, fsync, rename) and changed under an
/// exclusive `flock`, so concurrent processes never lose an update.
package final class FileUserKeyStore: UserKeyStore {
  package static let directoryName = "bound-keys"
  static let maximumFileSize = 64 << 10
  /// `<state-dir>/bound-keys`, absolute; reopened (and checked) by every operation, which
  /// then works relative to that descriptor only.
  package let path: String

  /// With `create`, makes `<stateDirectory>/bound-keys` (0700) now. Without, a missing
  /// directory is an empty store (`records()` is empty) until the first `bind`.
  package init(stateDirectory: String, create: Bool = true) throws(KeyStoreError) {
    let trimmed = stateDirectory.count > 1 && stateDirectory.hasSuffix("/") ? String(stateDirectory.dropLast()) : stateDirectory
    path = StateDirectory.absolutePath(trimmed + "/" + Self.directoryName)
    if create { _ = try open(create: true) }
  }

  package var name: String { "file" }

  /// The state directory the store is in.
  package var stateDirectory: String { String(path.dropLast(Self.directoryName.count + 1)) }

  /// The directory, checked on the way (nil when it does not exist and `create` is false).
  private func open(create: Bool) throws(KeyStoreError) -> StateDirectory? {
    do {
      if create { _ = try StateDirectory.open(String(path.dropLast(Self.directoryName.count + 1)), create: true) }
      return try StateDirectory.open(path, create: create)
    } catch let error where error.code == .missing {
      return nil
    } catch {
      throw Self.mapped(error)
    }
  }

  /// The readable records; a damaged file is skipped (`damagedKeys()` names it), so one bad
  /// record never takes the other users' keys down.
  package func records() throws(KeyStoreError) -> [UserKeyRecord] {
    guard let directory = try open(create: false) else { return [] }
    return try Self.scan(directory).records
  }

  package func damagedKeys() throws(KeyStoreError) -> [DamagedKey] {
    guard let directory = try open(create: false) else { return [] }
    return try Self.scan(directory).damaged
  }

  /// Every `<kid>.json`, read and checked: the good records, sorted, and the files that fail
  /// (not a regular file, another owner, a loose mode, too large, not a key, a kid that is
  /// not its name). A failure of the directory itself is still thrown.
  private static func scan(_ directory: StateDirectory) throws(KeyStoreError) -> (records: [UserKeyRecord], damaged: [DamagedKey]) {
    var found: [UserKeyRecord] = []
    var damaged: [DamagedKey] = []
    let names: [String]
    do { names = try directory.names() } catch { throw mapped(error) }
    for name in names where name.hasSuffix(".json") && !name.hasPrefix(".") {
      do {
        if let key = try read(name, in: directory) { found.append(key.record) }
      } catch {
        damaged.append(DamagedKey(kid: String(name.dropLast(5)), reason: error.description))
      }
    }
    return (sortedRecords(found), damaged)
  }

  package func key(kid: String) throws(KeyStoreError) -> StoredUserKey? {
    guard Self.isValidKid(kid), let directory = try open(create: false) else { return nil }
    return try Self.read(kid + ".json", in: directory)
  }

  @discardableResult
  package func bind(_ key: StoredUserKey) throws(KeyStoreError) -> [String] {
    guard Self.isValidKid(key.record.kid) else { throw .corrupt(kid: key.record.kid, reason: "a kid is a UUID") }
    let directory = try open(create: true)!
    return try Self.locked(directory) { () throws(KeyStoreError) -> [String] in
      let replaced = try Self.scan(directory).records.filter { $0.userId == key.record.userId && $0.kid != key.record.kid }
        .map(\.kid)
      try Self.write(key, in: directory)
      for kid in replaced { try Self.remove(kid, in: directory) }
      return replaced
    }
  }

  package func update<Result>(kid: String, _ change: (inout StoredUserKey) throws -> Result) throws -> Result? {
    guard Self.isValidKid(kid), let directory = try open(create: false) else { return nil }
    var outcome: Swift.Result<Result?, any Error> = .success(nil)
    try Self.locked(directory) { () throws(KeyStoreError) in
      guard var key = try Self.read(kid + ".json", in: directory) else { return }
      do {
        let result = try change(&key)
        try Self.write(key, in: directory)
        outcome = .success(result)
      } catch {
        outcome = .failure(error)
      }
    }
    return try outcome.get()
  }

  /// Removes the key's file by name, unread: a damaged record (too large, corrupt, a link)
  /// goes as a good one does.
  @discardableResult
  package func delete(kid: String) throws(KeyStoreError) -> Bool {
    guard Self.isValidKid(kid), let directory = try open(create: false) else { return false }
    return try Self.locked(directory) { () throws(KeyStoreError) -> Bool in
      let names: [String]
      do throws(StateDirectoryError) { names = try directory.names() } catch { throw Self.mapped(error) }
      guard names.contains(kid + ".json") else { return false }
      try Self.remove(kid, in: directory)
      return true
    }
  }

  // MARK: - Files

  /// A kid names a file: only UUID characters, so no path can be smuggled in.
  static func isValidKid(_ kid: String) -> Bool {
    !kid.isEmpty && kid.count <= 64
      && kid.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) || ($0 >= 0x41 && $0 <= 0x46) || $0 == 0x2D }
  }

  private static func read(_ name: String, in directory: StateDirectory) throws(KeyStoreError) -> StoredUserKey? {
    let file: StateFile?
    do { file = try directory.read(name, requirement: .secret(maximumSize: maximumFileSize)) } catch { throw mapped(error) }
    guard let file else { return nil }
    let kid = String(name.dropLast(5))
    guard let json = try? JSONParser.parse(file.bytes) else { throw .corrupt(kid: kid, reason: "not JSON") }
    let key = try StoredUserKey(json: json)
    guard key.record.kid == kid else { throw .corrupt(kid: kid, reason: "the file name and its kid differ") }
    return key
  }

  private static func write(_ key: StoredUserKey, in directory: StateDirectory) throws(KeyStoreError) {
    let bytes = Array(JSONWriter.compact(key.json).utf8)
    // What is written must read back: a record above the read limit would be refused by every
    // later list, sign and delete.
    guard bytes.count <= maximumFileSize else {
      throw .io(detail: "the key record would be \(bytes.count) bytes, above the \(maximumFileSize) a bound key file may hold")
    }
    do {
      try directory.write(key.record.kid + ".json", bytes, mode: 0o600, replace: true)
    } catch {
      throw mapped(error)
    }
  }

  private static func remove(_ kid: String, in directory: StateDirectory) throws(KeyStoreError) {
    do {
      try directory.remove(kid + ".json")
      directory.syncDirectory()
    } catch {
      throw mapped(error)
    }
  }

  /// Runs `body` holding the directory's exclusive lock (released when `held` goes).
  private static func locked<T>(_ directory: StateDirectory, _ body: () throws(KeyStoreError) -> T) throws(KeyStoreError) -> T {
    let held: StateLock
    do { held = try directory.lock() } catch { throw mapped(error) }
    return try withExtendedLifetime(held) { () throws(KeyStoreError) -> T in try body() }
  }

  static func mapped(_ error: StateDirectoryError) -> KeyStoreError {
    let text = errorText
    let path = error.path
    let owner = error.owner ?? 0
    let mode = error.mode ?? 0
    let code = error.errno ?? 0
    switch error.code {
    case .missing: return .io(detail: "the bound-key directory \(path) does not exist")
    case .notSecure:
      let why: String
      switch error.unsafe {
      case .ancestorOwner(let uid): why = "it belongs to uid \(uid), neither root nor you"
      case .ancestorWritable(let mode): why = "others may write it (mode \(octal(mode)))"
      case .rootDirectory, nil: why = "/ cannot be a state directory"
      }
      return .unsafe(detail: "the directory \(path) above the bound keys is not safe: \(why)")
    case .notADirectory: return .unsafe(detail: "\(path) is not a directory (or is a symbolic link)")
    case .foreignOwner: return .unsafe(detail: "\(path) belongs to uid \(owner), not to you (uid \(geteuid()))")
    case .insecureMode: return .unsafe(detail: "\(path) has mode \(octal(mode)); run 'chmod 700 \(path)'")
    case .cannotCreate: return .io(detail: "cannot create \(path): \(text(code))")
    case .cannotOpen: return .io(detail: "cannot open \(path): \(text(code))")
    case .notARegularFile: return .unsafe(detail: "the bound key \(path) is not a regular file (a link?)")
    case .fileForeignOwner: return .unsafe(detail: "the bound key \(path) belongs to uid \(owner), not to you")
    case .fileInsecureMode:
      return .unsafe(detail: "the bound key \(path) has mode \(octal(mode)): others may have read it; delete it and bind again")
    case .tooLarge: return .unsafe(detail: "\(path) is larger than \(error.limit ?? 0) bytes: not a bound key")
    case .unreadable: return .io(detail: "cannot read \(path): \(text(code))")
    case .cannotWrite: return .io(detail: "cannot write \(path): \(text(code))")
    case .exists: return .io(detail: "\(path) exists")
    case .cannotLock: return .io(detail: "cannot lock \(path): \(text(code))")
    default: return .io(detail: error.description)
    }
  }
}
