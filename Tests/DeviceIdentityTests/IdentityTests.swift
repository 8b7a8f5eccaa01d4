import DeviceIdentity
import Foundation
import SystemCalls
import TestSupport
import Testing

@Suite(.timeLimit(.minutes(10))) struct DeviceIdentifierTests {
  // A P-256 public key (SubjectPublicKeyInfo DER); expected digests computed independently with
  // Python's hashlib/hmac: sha1(der) and hmac_sha256(machine_id_bytes, label)[:16 hex].
  static let der: [UInt8] = hexBytes(
    "3059301306072a8648ce3d020106082a8648ce3d0301070342000440ba18af9a3bb5552d4e2b895119437b87733e00a7fcd550b0c9dd15ae0688ba6c07146fa7e941dcb19a231f82e9790da11731e609fbc63977230ff45789dd04"
  )

  @Test func identifierIsHostPartDashSHA1OfPublicKey() {
    let machineID = DeviceIdentifier.parseMachineID("4f7c2a9e1b3d4c5e8f6a7b8c9d0e1f2a")
    #expect(
      DeviceIdentifier.make(machineID: machineID, publicKeyDER: Self.der) == "ea49abb54a828ba4-0b3a6659d7ad8f0977cd3c97e0c58b8a616e3d7a")
  }

  @Test func withoutMachineIDOnlyTheKeyPart() {
    #expect(DeviceIdentifier.make(machineID: nil, publicKeyDER: Self.der) == "0b3a6659d7ad8f0977cd3c97e0c58b8a616e3d7a")
  }

  @Test(
    "machine-id must be 32 hex digits",
    arguments: [
      "", "uninitialized", "4f7c2a9e1b3d4c5e8f6a7b8c9d0e1f2", "4f7c2a9e1b3d4c5e8f6a7b8c9d0e1f2g", String(repeating: "0", count: 32),
    ])
  func rejectsBadMachineID(text: String) {
    #expect(DeviceIdentifier.parseMachineID(text) == nil)
  }

  @Test func fixtureMachineIDIsRead() {
    #expect(DeviceIdentifier.machineID(SystemSource(root: FixtureMachine.laptop.root, environment: [:]))?.count == 16)
    #expect(DeviceIdentifier.machineID(SystemSource(root: FixtureMachine.container.root, environment: [:])) == nil)
  }

  @Test func defaultStateDirectoryOrder() {
    #expect(DeviceKeyStore.defaultDirectory(environment: ["FR_PROFILE_HOME": "/x", "HOME": "/h"], isRoot: true) == "/x")
    #expect(DeviceKeyStore.defaultDirectory(environment: ["HOME": "/root"], isRoot: true) == "/var/lib/fr-profile")
    #expect(DeviceKeyStore.defaultDirectory(environment: ["XDG_STATE_HOME": "/s", "HOME": "/h"], isRoot: false) == "/s/fr-profile")
    #expect(DeviceKeyStore.defaultDirectory(environment: ["HOME": "/h"], isRoot: false) == "/h/.local/state/fr-profile")
    #expect(DeviceKeyStore.defaultDirectory(environment: [:], isRoot: false) == nil)
  }
}

@Suite(.timeLimit(.minutes(10))) struct DeviceKeyStoreTests {
  func withStore(_ body: (DeviceKeyStore, String) throws -> Void) throws {
    let tree = try TemporaryTree()
    defer { tree.remove() }
    try body(DeviceKeyStore(directory: tree.root + "/state/fr-profile"), tree.root)
  }

  func mode(_ path: String) -> mode_t {
    var info = stat()
    stat(path, &info)
    return info.st_mode & 0o7777
  }

  func contents(_ path: String) -> Data? { FileManager.default.contents(atPath: path) }

  @Test func createsKeyWith0600In0700AndPersists() throws {
    try withStore { store, _ in
      let first = try store.publicKeyDER()
      #expect(mode(store.privateKeyPath) == 0o600)
      #expect(mode(store.directory) == 0o700)
      #expect(try store.publicKeyDER() == first)
      try store.verify()
      #expect(first.count == 91)
    }
  }

  @Test func rebuildsAMissingPublicKeyCacheFromThePrivateKey() throws {
    try withStore { store, _ in
      let first = try store.publicKeyDER()
      unlink(store.publicKeyPath)
      #expect(try store.publicKeyDER() == first)
      #expect(FileManager.default.fileExists(atPath: store.publicKeyPath))
    }
  }

  @Test func groupReadableKeyIsAnErrorAndUntouched() throws {
    try withStore { store, _ in
      _ = try store.publicKeyDER()
      chmod(store.privateKeyPath, 0o644)
      let before = contents(store.privateKeyPath)
      #expect(throws: IdentityError.keyInsecureMode(path: store.privateKeyPath, mode: 0o644)) { try store.publicKeyDER() }
      #expect(contents(store.privateKeyPath) == before)
      #expect(mode(store.privateKeyPath) == 0o644)
    }
  }

  @Test func corruptKeyIsAnErrorAndUntouched() throws {
    try withStore { store, _ in
      _ = try store.publicKeyDER()
      try Data("-----BEGIN PRIVATE KEY-----\nnot base64 !!\n-----END PRIVATE KEY-----\n".utf8).write(
        to: URL(fileURLWithPath: store.privateKeyPath))
      let before = contents(store.privateKeyPath)
      #expect(throws: IdentityError.self) { try store.publicKeyDER() }
      #expect(contents(store.privateKeyPath) == before)
    }
  }

  @Test func wellFramedButWrongKeyFailsVerification() throws {
    try withStore { store, _ in
      _ = try store.publicKeyDER()
      try Data("-----BEGIN PRIVATE KEY-----\nQUJDRA==\n-----END PRIVATE KEY-----\n".utf8).write(
        to: URL(fileURLWithPath: store.privateKeyPath))
      #expect(throws: IdentityError.keyCorrupt(path: store.privateKeyPath, reason: "not a P-256 private key")) { try store.verify() }
    }
  }

  @Test(.enabled(if: geteuid() == 0, "only root can give a file away; sessions and CI run as root"))
  func foreignOwnerIsAnError() throws {
    try withStore { store, _ in
      _ = try store.publicKeyDER()
      chown(store.privateKeyPath, 65534, 65534)
      #expect(throws: IdentityError.keyForeignOwner(path: store.privateKeyPath, owner: 65534)) { try store.publicKeyDER() }
    }
  }

  @Test func insecureStateDirectoryIsAnError() throws {
    try withStore { store, _ in
      _ = try store.publicKeyDER()
      chmod(store.directory, 0o755)
      #expect(throws: IdentityError.stateDirectoryInsecure(path: store.directory, mode: 0o755)) { try store.publicKeyDER() }
    }
  }

  @Test func resetKeepsTheOldKeyAsBackupAndMakesANewOne() throws {
    try withStore { store, _ in
      let first = try store.publicKeyDER()
      let oldKey = contents(store.privateKeyPath)
      let backup = try #require(try store.reset())
      #expect(contents(backup) == oldKey)
      let second = try store.publicKeyDER()
      #expect(second != first)
      let backup2 = try #require(try store.reset())
      #expect(backup2 != backup)
      #expect(FileManager.default.fileExists(atPath: backup))
    }
  }

  @Test func keyIsNeverCreatedWhenNotAsked() throws {
    try withStore { store, _ in
      #expect(throws: IdentityError.self) { try store.publicKeyDER(create: false) }
      #expect(!FileManager.default.fileExists(atPath: store.privateKeyPath))
    }
  }
}

func hexBytes(_ text: String) -> [UInt8] {
  var bytes: [UInt8] = []
  var index = text.startIndex
  while index < text.endIndex {
    let next = text.index(index, offsetBy: 2)
    bytes.append(UInt8(text[index..<next], radix: 16)!)
    index = next
  }
  return bytes
}
