import Crypto
import Journey
import ProfileJSON
import StateStore

/// The tokens of each server, realm and client, in `tokens/` under the state directory: one
/// 0600 file per client (`<sha256 of server, realm and client, 32 hex>.json`) in a 0700
/// directory owned by the caller, opened relative to its descriptor, replaced atomically, and
/// changed only under the directory's lock — so concurrent `token` runs refresh one at a time.
public final class TokenStore {
  /// The directory's name under the state directory.
  public static let directoryName = "tokens"
  /// The largest token file read.
  public static let maximumSize = 256 << 10

  let directory: StateDirectory

  /// Opens `<stateDirectory>/tokens`; with `create`, makes both (mode 0700) when missing. A
  /// named factory, as `StateDirectory.open`: it may create directories.
  public static func open(stateDirectory: String, create: Bool) throws(StateDirectoryError) -> TokenStore {
    if create { _ = try StateDirectory.open(stateDirectory, create: true) }
    return TokenStore(directory: try StateDirectory.open(stateDirectory + "/" + Self.directoryName, create: create))
  }

  private init(directory: StateDirectory) { self.directory = directory }

  /// The directory's path, for messages.
  public var path: String { directory.path }

  /// The file name of a client's tokens.
  public static func fileName(server: String, realm: String, clientId: String) -> String {
    var base = server
    while base.hasSuffix("/") { base.removeLast() }
    let key = [base, AuthenticateEndpoint.realmNames(realm).joined(separator: "/"), clientId].joined(separator: "\n")
    let digest = SHA256.hash(data: Array(key.utf8))
    return Hex.encode(Array(digest).prefix(16)) + ".json"
  }

  /// Runs `body` holding the store's exclusive lock (a `flock` that goes with the process, so a
  /// killed holder never blocks the next run).
  public func locked<T>(_ body: () throws -> T) throws -> T {
    // Without a deadline the wait has no end, so the body always runs.
    try locked(until: nil, body)!
  }

  /// Runs `body` holding the store's exclusive lock, waited for until `deadline`
  /// (CLOCK_MONOTONIC seconds; nil: as long as it takes); nil, with `body` not run, when
  /// another process held the lock past the deadline.
  public func locked<T>(until deadline: Double?, _ body: () throws -> T) throws -> T? {
    let held: StateLock?
    do { held = try directory.lock(until: deadline) } catch { throw TokenStoreError.directory(error) }
    guard let held else { return nil }
    return try withExtendedLifetime(held) { try body() }
  }

  /// The tokens stored for the client, or nil.
  public func load(server: String, realm: String, clientId: String) throws(TokenStoreError) -> StoredTokens? {
    try read(Self.fileName(server: server, realm: realm, clientId: clientId))
  }

  /// Every stored client's tokens (for `logout` without a client).
  public func all() throws(TokenStoreError) -> [StoredTokens] {
    let names: [String]
    do { names = try directory.names() } catch { throw .directory(error) }
    var result: [StoredTokens] = []
    for name in names.sorted() where name.hasSuffix(".json") && !name.hasPrefix(".") {
      if let tokens = try read(name) { result.append(tokens) }
    }
    return result
  }

  /// Writes the tokens (mode 0600, atomically).
  public func save(_ tokens: StoredTokens) throws(TokenStoreError) {
    let name = Self.fileName(server: tokens.server, realm: tokens.realm, clientId: tokens.clientId)
    do {
      _ = try directory.write(name, Array((JSONWriter.pretty(tokens.json) + "\n").utf8), mode: 0o600, replace: true)
    } catch { throw .directory(error) }
  }

  /// Removes the client's tokens; false when there were none.
  @discardableResult
  public func remove(server: String, realm: String, clientId: String) throws(TokenStoreError) -> Bool {
    let name = Self.fileName(server: server, realm: realm, clientId: clientId)
    do {
      guard try directory.identity(of: name, requirement: .secret(maximumSize: Self.maximumSize)) != nil else { return false }
      try directory.remove(name)
      directory.syncDirectory()
      return true
    } catch { throw .directory(error) }
  }

  /// The path of the client's file, for messages.
  public func filePath(server: String, realm: String, clientId: String) -> String {
    directory.filePath(Self.fileName(server: server, realm: realm, clientId: clientId))
  }

  private func read(_ name: String) throws(TokenStoreError) -> StoredTokens? {
    let file: StateFile?
    do { file = try directory.read(name, requirement: .secret(maximumSize: Self.maximumSize)) } catch { throw .directory(error) }
    guard let file else { return nil }
    let json: JSON
    do { json = try JSONParser.parse(file.bytes) } catch {
      throw .corrupt(path: directory.filePath(name), reason: .notJSON("\(error)"))
    }
    do { return try StoredTokens(json: json) } catch { throw .corrupt(path: directory.filePath(name), reason: error) }
  }
}

/// Why the token store cannot be used.
///
/// A struct, not an enum, so that a release can add a failure without breaking an embedder's
/// `switch`: new codes may be added in any release. Match on ``code`` (`error.code ==
/// .corrupt`, or `switch error.code` with a `default:`); ``directoryError`` and ``reason`` carry
/// the underlying failure, ``description`` is the message.
public struct TokenStoreError: Error, Sendable, Hashable, CustomStringConvertible {
  /// What kind of failure it is. New codes may be added in any release: switch with a
  /// `default:`.
  public struct Code: Hashable, Sendable, CustomStringConvertible {
    private enum Backing: Hashable, Sendable { case directory, corrupt }

    private var backing: Backing
    private init(_ backing: Backing) { self.backing = backing }

    /// The directory or a file in it (owner, mode, type, I/O): ``directoryError`` says which.
    public static let directory = Code(.directory)
    /// A token file that does not parse: ``reason`` says why.
    public static let corrupt = Code(.corrupt)

    public var description: String { String(describing: backing) }
  }

  /// What kind of failure it is.
  public let code: Code
  /// The directory or file concerned.
  public let path: String
  /// What is wrong with the directory or a file in it (``Code/directory``).
  public let directoryError: StateDirectoryError?
  /// Why the token file does not parse (``Code/corrupt``).
  public let reason: StoredTokensError?
  /// One line saying what is wrong.
  public let description: String

  private init(
    _ code: Code, path: String, directoryError: StateDirectoryError? = nil, reason: StoredTokensError? = nil,
    _ description: String
  ) {
    self.code = code
    self.path = path
    self.directoryError = directoryError
    self.reason = reason
    self.description = description
  }

  /// The directory or a file in it (owner, mode, type, I/O).
  public static func directory(_ error: StateDirectoryError) -> Self {
    Self(.directory, path: error.path, directoryError: error, error.description)
  }

  /// A token file that does not parse.
  public static func corrupt(path: String, reason: StoredTokensError) -> Self {
    Self(.corrupt, path: path, reason: reason, "the token file \(path) cannot be read: \(reason)")
  }
}
