import Synchronization

/// Where bound keys live (the SDKs' storage client). The default is `FileUserKeyStore` in the
/// state directory; embedders may supply their own (`InMemoryUserKeyStore` shows the
/// contract). At most one key per `userId`: `bind` replaces an existing one.
///
/// Every method is atomic with respect to the others, also across processes for stores that
/// are shared (the file store locks its directory).
package protocol UserKeyStore: Sendable {
  /// A short name recorded in each `UserKeyRecord.store` ("file", "memory").
  var name: String { get }
  /// All keys' public records, sorted by username then createdAt.
  func records() throws(KeyStoreError) -> [UserKeyRecord]
  /// The key with this `kid`, nil when there is none.
  func key(kid: String) throws(KeyStoreError) -> StoredUserKey?
  /// Stores `key`, deleting any other key of the same `userId` first. Returns the kids removed.
  @discardableResult
  func bind(_ key: StoredUserKey) throws(KeyStoreError) -> [String]
  /// Reads the key, lets `change` modify it, and writes it back, all under one lock, so that
  /// attempt counters of concurrent signings are never lost. Nil (and no change) when absent;
  /// nothing is written when `change` throws.
  func update<Result>(kid: String, _ change: (inout StoredUserKey) throws -> Result) throws -> Result?
  /// Removes the key; false when there was none. A damaged record can be deleted.
  @discardableResult
  func delete(kid: String) throws(KeyStoreError) -> Bool
  /// Stored keys that cannot be read, which `records()` skips; `delete(kid:)` removes them.
  func damagedKeys() throws(KeyStoreError) -> [DamagedKey]
}

/// A stored key `records()` skipped: its kid (the file's name) and why it cannot be used.
package struct DamagedKey: Sendable, Equatable {
  package var kid: String
  package var reason: String
}

/// Why a store could not do what was asked. The CLI maps each case to a message and exit code.
package enum KeyStoreError: Error, Sendable, Equatable, CustomStringConvertible {
  /// A stored key does not parse; nothing was changed.
  case corrupt(kid: String, reason: String)
  /// The store's directory or a file in it failed a safety check or an I/O call; `detail`
  /// says which and why (path, owner, mode, errno text).
  case unsafe(detail: String)
  case io(detail: String)

  package var description: String {
    switch self {
    case .corrupt(let kid, let reason): "the bound key \(kid) is corrupt (\(reason))"
    case .unsafe(let detail): detail
    case .io(let detail): detail
    }
  }
}

extension UserKeyStore {
  /// The key bound for `userId`, nil when none.
  package func key(userId: String) throws(KeyStoreError) -> StoredUserKey? {
    guard let record = try records().first(where: { $0.userId == userId }) else { return nil }
    return try key(kid: record.kid)
  }
}

/// A store in memory, for embedders that keep keys elsewhere and for tests.
package final class InMemoryUserKeyStore: UserKeyStore {
  private let keys = Mutex<[String: StoredUserKey]>([:])

  package init() {}

  package var name: String { "memory" }

  package func damagedKeys() throws(KeyStoreError) -> [DamagedKey] { [] }

  package func records() throws(KeyStoreError) -> [UserKeyRecord] {
    sortedRecords(keys.withLock { Array($0.values.map(\.record)) })
  }

  package func key(kid: String) throws(KeyStoreError) -> StoredUserKey? {
    keys.withLock { $0[kid] }
  }

  @discardableResult
  package func bind(_ key: StoredUserKey) throws(KeyStoreError) -> [String] {
    keys.withLock { keys in
      let replaced = keys.values.filter { $0.record.userId == key.record.userId }.map(\.record.kid)
      for kid in replaced { keys[kid] = nil }
      keys[key.record.kid] = key
      return replaced
    }
  }

  package func update<Result>(kid: String, _ change: (inout StoredUserKey) throws -> Result) throws -> Result? {
    try keys.withLock { keys in
      guard var key = keys[kid] else { return nil }
      let result = try change(&key)
      keys[kid] = key
      return result
    }
  }

  @discardableResult
  package func delete(kid: String) throws(KeyStoreError) -> Bool {
    keys.withLock { $0.removeValue(forKey: kid) != nil }
  }
}

/// Records sorted as the SDKs' key selector lists them: by username, then createdAt.
package func sortedRecords(_ records: [UserKeyRecord]) -> [UserKeyRecord] {
  records.sorted { ($0.username, $0.createdAt, $0.kid) < ($1.username, $1.createdAt, $1.kid) }
}
