import DeviceBinding
import Foundation
import Testing

@Suite(.timeLimit(.minutes(10))) struct FileStoreTests {
  func withStore(_ body: (FileUserKeyStore, String) async throws -> Void) async throws {
    let directory = try makeTemporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    try await body(try FileUserKeyStore(stateDirectory: directory + "/state"), directory + "/state/bound-keys")
  }

  func mode(_ path: String) -> mode_t {
    var info = stat()
    return lstat(path, &info) == 0 ? info.st_mode & 0o7777 : 0
  }

  @Test func keysAre0600InA0700Directory() async throws {
    try await withStore { store, directory in
      let bound = try makeBinder(store: store).bind(bindingRequest())
      #expect(mode(directory) == 0o700)
      #expect(mode(directory + "/\(bound.kid).json") == 0o600)
      #expect(try store.records().map(\.kid) == [bound.kid])
      #expect(try store.records().first?.store == "file")
    }
  }

  @Test func theInMemoryAndFileStoresKeepTheSameDocument() async throws {
    try await withStore { store, _ in
      let memory = InMemoryUserKeyStore()
      let bound = try makeBinder(store: memory, pins: FixedPINs("271828")).bind(bindingRequest(.applicationPIN))
      let key = try #require(try memory.key(kid: bound.kid))
      try store.bind(key)
      #expect(try store.key(kid: bound.kid) == key)
    }
  }

  @Test func aKeyFileOthersCanReadIsRefused() async throws {
    try await withStore { store, directory in
      let bound = try makeBinder(store: store).bind(bindingRequest())
      chmod(directory + "/\(bound.kid).json", 0o644)
      // Never used, and named; the store as a whole still answers.
      #expect(try store.records().isEmpty)
      #expect(try store.damagedKeys().map(\.kid) == [bound.kid])
      #expect(try store.damagedKeys().first?.reason.contains("0644") == true)
      #expect(throws: KeyStoreError.self) { try store.key(kid: bound.kid) }
      guard case .failure(let failure) = try makeBinder(store: store).signOrFail(signingRequest()) else {
        Issue.record("a key file others can read signed")
        return
      }
      #expect(failure.clientError == .clientNotRegistered && failure.reason.contains("damaged and skipped (\(bound.kid))"))
    }
  }

  @Test func aSymbolicLinkInPlaceOfAKeyIsRefused() async throws {
    try await withStore { store, directory in
      let bound = try makeBinder(store: store).bind(bindingRequest())
      let path = directory + "/\(bound.kid).json"
      try FileManager.default.moveItem(atPath: path, toPath: directory + "/../elsewhere.json")
      symlink(directory + "/../elsewhere.json", path)
      #expect(throws: KeyStoreError.self) { try store.key(kid: bound.kid) }
    }
  }

  @Test func aSymbolicLinkInPlaceOfTheDirectoryIsRefused() async throws {
    let directory = try makeTemporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    try FileManager.default.createDirectory(
      atPath: directory + "/state", withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
    try FileManager.default.createDirectory(
      atPath: directory + "/other", withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
    symlink(directory + "/other", directory + "/state/bound-keys")
    #expect(throws: KeyStoreError.self) { try FileUserKeyStore(stateDirectory: directory + "/state") }
  }

  @Test(.enabled(if: geteuid() == 0, "only root can give a file away"))
  func aKeyOwnedBySomeoneElseIsRefused() async throws {
    try await withStore { store, directory in
      let bound = try makeBinder(store: store).bind(bindingRequest())
      chown(directory + "/\(bound.kid).json", 65534, 65534)
      #expect(throws: KeyStoreError.self) { try store.key(kid: bound.kid) }
    }
  }

  @Test func kidsCannotNameOtherFiles() async throws {
    try await withStore { (store, _) throws in
      #expect(try store.key(kid: "../../device-key") == nil)
      #expect(try store.delete(kid: "../state") == false)
    }
  }

  @Test("20 concurrent updates through separate openings lose none")
  func concurrentUpdatesAreSerialised() async throws {
    try await withStore { store, _ in
      let bound = try makeBinder(store: store).bind(bindingRequest())
      let path = store.path
      DispatchQueue.concurrentPerform(iterations: 20) { _ in
        let other = try! FileUserKeyStore(stateDirectory: String(path.dropLast("/bound-keys".count)), create: false)
        _ = try! other.update(kid: bound.kid) { key in key.lock.failures += 1 }
      }
      #expect(try store.key(kid: bound.kid)?.lock.failures == 20)
    }
  }

  @Test func deletingRemovesTheFile() async throws {
    try await withStore { store, directory in
      let bound = try makeBinder(store: store).bind(bindingRequest())
      #expect(try store.delete(kid: bound.kid))
      #expect(!FileManager.default.fileExists(atPath: directory + "/\(bound.kid).json"))
      #expect(try store.delete(kid: bound.kid) == false)
    }
  }

  @Test func aCorruptKeyIsReportedByKid() async throws {
    try await withStore { store, directory in
      let bound = try makeBinder(store: store).bind(bindingRequest())
      let path = directory + "/\(bound.kid).json"
      try "{\"version\":1}".write(toFile: path, atomically: false, encoding: .utf8)
      chmod(path, 0o600)
      #expect(try store.records().isEmpty)
      #expect(try store.damagedKeys().map(\.kid) == [bound.kid])
      #expect(throws: KeyStoreError.self) { try store.key(kid: bound.kid) }
      #expect(try store.delete(kid: bound.kid))
      #expect(try store.damagedKeys().isEmpty)
    }
  }
}
