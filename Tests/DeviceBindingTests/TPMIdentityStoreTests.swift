import Collectors
import DeviceIdentity
import Foundation
import SystemCalls
import TPMKeys
import TPMProtocol
import TestSupport
import Testing

/// `DeviceKeyStore`'s TPM identity (blobs made by swtpm): a reset keeps the identity in the TPM.
@Suite(.timeLimit(.minutes(10))) struct TPMIdentityStoreTests {
  final class Fixture {
    let tpm: SWTPM
    let directory: String
    let store: DeviceKeyStore
    let system = SystemSource(root: "/")
    init() throws {
      tpm = try SWTPM()
      var template = Array("/tmp/fr-profile-tpmidentity.XXXXXX".utf8CString)
      directory = String(cString: mkdtemp(&template)!)
      store = DeviceKeyStore(directory: directory + "/state")
    }
    deinit {
      tpm.stop()
      tpm.removeState()
      _ = try? FileManager.default.removeItem(atPath: directory)
    }
    func newBlob() throws -> [UInt8] { try TPMContext.open(tcti: tpm.tcti).createSigningKey().bytes }
    func names() throws -> [String] { try FileManager.default.contentsOfDirectory(atPath: store.directory).sorted() }
  }

  @Test func fileResetOfATPMIdentityThrowsKeyInTPMAndChangesNothing() throws {
    let fixture = try Fixture()
    let store = fixture.store
    _ = try store.identifier(for: fixture.system)
    try store.adoptTPMKey(try fixture.newBlob())
    let identifier = try store.identifier(for: fixture.system)
    let names = try fixture.names()
    #expect(throws: IdentityError.keyInTPM(path: store.tpmKeyPath)) { try store.reset() }
    #expect(try fixture.names() == names)
    #expect(try store.identifier(for: fixture.system) == identifier)
  }

  @Test func resetTPMKeyReplacesTheBlobAndKeepsTheOldOneAsABackup() throws {
    let fixture = try Fixture()
    let store = fixture.store
    let old = try fixture.newBlob()
    try store.adoptTPMKey(old)
    let before = try store.identifier(for: fixture.system)
    let new = try fixture.newBlob()
    let backup = try store.resetTPMKey(new)
    #expect(backup.hasPrefix(store.tpmKeyPath + ".") && backup.hasSuffix(".bak"))
    #expect(FileManager.default.contents(atPath: backup).map { Array($0) } == old)
    #expect(try store.tpmKeyBlob() == new)
    let after = try store.identifier(for: fixture.system)
    #expect(after != before)
    #expect(try store.publicKeyDER(create: false) == Array(try TPMContext.publicKey(of: TPMKeyBlob(bytes: new)).derRepresentation))
    // Two resets in the same second keep both backups.
    let second = try store.resetTPMKey(try fixture.newBlob())
    #expect(second != backup && FileManager.default.contents(atPath: second).map { Array($0) } == new)
    let attributes = try FileManager.default.attributesOfItem(atPath: store.tpmKeyPath)
    #expect((attributes[.posixPermissions] as? Int) == 0o600)
  }

  @Test func resetTPMKeyOfAFileIdentityThrowsAndChangesNothing() throws {
    let fixture = try Fixture()
    let store = fixture.store
    let identifier = try store.identifier(for: fixture.system)
    let names = try fixture.names()
    #expect(throws: IdentityError.keyUnreadable(path: store.tpmKeyPath, errno: ENOENT)) { try store.resetTPMKey(try fixture.newBlob()) }
    #expect(try fixture.names() == names)
    #expect(try store.identifier(for: fixture.system) == identifier)
  }
}
