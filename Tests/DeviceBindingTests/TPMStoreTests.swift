import Collectors
import DeviceBinding
import Foundation
import Journey
import ProfileJSON
import TPMKeys
import TPMProtocol
import TestSupport
import Testing

/// Binding and signing with keys inside a TPM (swtpm, one per test), records in the file store.
@Suite(.timeLimit(.minutes(10))) struct TPMStoreTests {
  final class Fixture {
    let tpm: SWTPM
    let directory: String
    let store: TPMUserKeyStore
    init() throws {
      tpm = try SWTPM()
      var template = Array("/tmp/fr-profile-tpmstore.XXXXXX".utf8CString)
      directory = String(cString: mkdtemp(&template)!)
      store = TPMUserKeyStore(records: try FileUserKeyStore(stateDirectory: directory + "/state"), tcti: tpm.tcti)
    }
    deinit {
      tpm.stop()
      tpm.removeState()
      _ = try? FileManager.default.removeItem(atPath: directory)
    }
  }

  @Test func bindsAndSignsInTheTPMAndOnlyTheWrappedBlobIsStored() async throws {
    let fixture = try Fixture()
    let binder = makeBinder(store: fixture.store)
    let bound = try binder.bind(bindingRequest())
    let jwk = try #require(try DecodedJWS(bound.jws).header["jwk"])
    #expect(try DecodedJWS(bound.jws).verifies(x: jwk["x"]!.stringValue!, y: jwk["y"]!.stringValue!))
    let stored = try #require(try fixture.store.key(kid: bound.kid))
    #expect(stored.record.store == "tpm")
    guard case .hardware(let key) = stored.material else {
      Issue.record("the key is not in the TPM: \(stored.material)")
      return
    }
    #expect(key.store == "tpm" && !key.pinProtected && key.blob.starts(with: Array("FRPTPM1\n".utf8)))
    let signed = try binder.sign(signingRequest())
    let token = try DecodedJWS(signed.jws)
    #expect(token.header["jwk"] == nil && token.header["kid"]?.stringValue == bound.kid)
    #expect(token.verifies(x: jwk["x"]!.stringValue!, y: jwk["y"]!.stringValue!))
  }

  @Test func pinIsTheKeysAuthValueAndWrongPINsCountUnderTheLockPolicy() async throws {
    let fixture = try Fixture()
    let pins = FixedPINs("482916", "000000", "111111", "482916")
    let binder = makeBinder(store: fixture.store, pins: pins, lockPolicy: .lock(attempts: 3))
    let bound = try binder.bind(bindingRequest(.applicationPIN))
    let jwk = try #require(try DecodedJWS(bound.jws).header["jwk"])
    for _ in 0..<2 {
      guard case .failure(let failure) = try binder.signOrFail(signingRequest()) else {
        Issue.record("a wrong PIN signed")
        return
      }
      #expect(failure.clientError == .abort && failure.reason.contains("wrong PIN"))
    }
    #expect(try fixture.store.key(kid: bound.kid)?.lock.failures == 2)
    let signed = try binder.sign(signingRequest())
    #expect(try DecodedJWS(signed.jws).verifies(x: jwk["x"]!.stringValue!, y: jwk["y"]!.stringValue!))
    #expect(try fixture.store.key(kid: bound.kid)?.lock.failures == 0)
  }

  @Test func wrongPINsReachTheTPMsDictionaryAttackLockout() async throws {
    let fixture = try Fixture()
    // swtpm's DA settings: 2 tries, long recovery (lockout auth is empty on a fresh swtpm).
    try TPMContext.open(tcti: fixture.tpm.tcti).setDictionaryAttackParameters(
      maxTries: 2, recoverySeconds: 600, lockoutRecoverySeconds: 600)
    let pins = FixedPINs("482916", "000000", "111111", "482916")
    // No software lock: only the TPM limits the guesses.
    let binder = makeBinder(store: fixture.store, pins: pins, lockPolicy: .none)
    _ = try binder.bind(bindingRequest(.applicationPIN))
    for _ in 0..<2 {
      guard case .failure(let failure) = try binder.signOrFail(signingRequest()) else {
        Issue.record("a wrong PIN signed")
        return
      }
      #expect(failure.clientError == .abort && failure.reason.contains("wrong PIN"))
    }
    // The right PIN now: the TPM refuses while in lockout.
    guard case .failure(let failure) = try binder.signOrFail(signingRequest()) else {
      Issue.record("signed during the TPM's lockout")
      return
    }
    #expect(failure.clientError == .abort && failure.reason.contains("dictionary-attack lockout"))
    // Reported as a lockout, not as a wrong PIN, and not counted as one.
    #expect(failure.reason.contains("the PIN was not tried") && !failure.reason.contains("wrong PIN"))
    #expect(try fixture.store.records().first.flatMap { try fixture.store.key(kid: $0.kid) }?.lock.failures == 2)
    // A key without a PIN (another user's) is noDA: it binds and signs during the lockout.
    let other = "id=bjensen,ou=user,o=alpha,ou=services,ou=am-config"
    _ = try binder.bind(bindingRequest(.none, userId: other, username: "bjensen"))
    #expect(try binder.sign(signingRequest(userId: other)).jws.isEmpty == false)
  }

  @Test func keyCopiedToAnotherTPMFailsClearlyAndIsNotReplaced() async throws {
    let fixture = try Fixture()
    let binder = makeBinder(store: fixture.store)
    let bound = try binder.bind(bindingRequest())
    try withSWTPM { other in
      let moved = TPMUserKeyStore(records: fixture.store.backing, tcti: other.tcti)
      #expect(throws: HardwareKeyError.self) { try makeBinder(store: moved).sign(signingRequest()) }
      do {
        _ = try makeBinder(store: moved).sign(signingRequest())
      } catch let error as HardwareKeyError {
        guard case .foreignKey = error else {
          Issue.record("expected foreignKey, got \(error)")
          return
        }
      }
      // The record is still the TPM key: nothing was re-made.
      #expect(try moved.records().map(\.kid) == [bound.kid])
    }
  }

  @Test func tpmKeyIsNeverUsedAsAFileWhenTheTPMIsGone() async throws {
    let fixture = try Fixture()
    let binder = makeBinder(store: fixture.store)
    let bound = try binder.bind(bindingRequest())
    fixture.tpm.kill9()
    do {
      _ = try binder.sign(signingRequest())
      Issue.record("signed without the TPM")
    } catch let error as HardwareKeyError {
      guard case .unavailable = error else {
        Issue.record("expected unavailable, got \(error)")
        return
      }
    }
    // A plain file store cannot use it either, and says so.
    #expect(throws: HardwareKeyError.self) { try makeBinder(store: fixture.store.backing).sign(signingRequest()) }
    #expect(try fixture.store.key(kid: bound.kid)?.record.store == "tpm")
  }
}
