import CFIDO2
import CSoftFIDO2Verify
import Crypto
import Foundation
import SoftFIDO2
import Synchronization
import TestSupport
import Testing

/// The software key driven by the real libfido2 1.12 through its device seam, each answer
/// checked by libfido2's own verifiers (and once by python3-fido2).
@Suite struct SoftKeyTests {
  @Test func opensAsAFIDO2DeviceWithoutPIN() throws {
    let fixture = try SoftKeyFixture()
    let dev = try fixture.open()
    defer { fixture.close(dev) }
    #expect(fixture.api.pointee.fido_dev_is_fido2!(dev))
    #expect(fixture.api.pointee.fido_dev_supports_pin!(dev))
    #expect(!fixture.api.pointee.fido_dev_has_pin!(dev))
    #expect(!fixture.api.pointee.fido_dev_has_uv!(dev))
  }

  @Test func packedSelfAttestationAndAssertionVerifyInLibfido2() throws {
    let fixture = try SoftKeyFixture()
    let dev = try fixture.open()
    defer { fixture.close(dev) }
    let registration = try fixture.makeCredential(dev)
    defer { fixture.free(cred: registration.cred) }
    #expect(registration.status == FIDO_OK)
    #expect(fixture.format(registration.cred) == "packed")
    #expect(sfv_cred_verify_self(UnsafeMutableRawPointer(registration.cred)) == FIDO_OK)
    #expect(sfv_cred_flags(UnsafeMutableRawPointer(registration.cred)) == 0x41)  // UP, AT
    var publicKey = [UInt8](repeating: 0, count: 64)
    #expect(sfv_cred_pubkey(UnsafeMutableRawPointer(registration.cred), &publicKey) == 0)

    let assertion = try fixture.getAssertion(dev, allow: [fixture.credentialId(registration.cred)])
    defer { fixture.free(assert: assertion.assert) }
    #expect(assertion.status == FIDO_OK)
    #expect(fixture.api.pointee.fido_assert_count!(assertion.assert) == 1)
    #expect(sfv_assert_verify_es256(UnsafeMutableRawPointer(assertion.assert), 0, publicKey, 64) == FIDO_OK)
    #expect(sfv_assert_flags(UnsafeMutableRawPointer(assertion.assert), 0) == 0x01)
    // A signature over other data fails: the verifier is not a yes-man.
    let other = Array(repeating: UInt8(0x25), count: 32)
    #expect(fixture.api.pointee.fido_assert_set_clientdata_hash!(assertion.assert, other, 32) == FIDO_OK)
    #expect(sfv_assert_verify_es256(UnsafeMutableRawPointer(assertion.assert), 0, publicKey, 64) == FIDO_ERR_INVALID_SIG)
  }

  @Test func noneAttestationHasAnEmptyStatement() throws {
    let fixture = try SoftKeyFixture(attestation: .none)
    let dev = try fixture.open()
    defer { fixture.close(dev) }
    let registration = try fixture.makeCredential(dev, resident: true)
    defer { fixture.free(cred: registration.cred) }
    #expect(registration.status == FIDO_OK)
    #expect(fixture.format(registration.cred) == "none")
    let statement = UnsafeBufferPointer(
      start: fixture.api.pointee.fido_cred_attstmt_ptr!(registration.cred),
      count: fixture.api.pointee.fido_cred_attstmt_len!(registration.cred))
    #expect(Array(statement) == [0xA0])
    #expect(sfv_cred_verify_self(UnsafeMutableRawPointer(registration.cred)) != FIDO_OK)
    let stored = try SoftKeyState.load(from: fixture.stateFile).credentials
    #expect(stored.map(\.id) == [fixture.credentialId(registration.cred)])
    #expect(stored.first?.resident == true)
  }

  @Test func residentCredentialsAreFoundWithoutAnAllowList() throws {
    let fixture = try SoftKeyFixture()
    let dev = try fixture.open()
    defer { fixture.close(dev) }
    var keys: [[UInt8]: [UInt8]] = [:]
    for (userId, resident) in [([UInt8]([1]), true), ([2], true), ([3], false)] {
      let registration = try fixture.makeCredential(dev, userId: userId, resident: resident)
      defer { fixture.free(cred: registration.cred) }
      #expect(registration.status == FIDO_OK)
      var publicKey = [UInt8](repeating: 0, count: 64)
      #expect(sfv_cred_pubkey(UnsafeMutableRawPointer(registration.cred), &publicKey) == 0)
      keys[userId] = publicKey
    }
    let assertion = try fixture.getAssertion(dev)
    defer { fixture.free(assert: assertion.assert) }
    #expect(assertion.status == FIDO_OK)
    #expect(fixture.api.pointee.fido_assert_count!(assertion.assert) == 2)
    #expect((0..<2).map { fixture.userId(assertion.assert, $0) } == [[2], [1]])  // most recent first
    for index in 0..<2 {
      let key = try #require(keys[fixture.userId(assertion.assert, index)])
      #expect(sfv_assert_verify_es256(UnsafeMutableRawPointer(assertion.assert), index, key, 64) == FIDO_OK)
      // No user verification, so no names (CTAP 2.0 §5.2).
      #expect(fixture.api.pointee.fido_assert_user_name!(assertion.assert, index) == nil)
    }

    let elsewhere = try fixture.getAssertion(dev, rp: "other.example")
    defer { fixture.free(assert: elsewhere.assert) }
    #expect(elsewhere.status == FIDO_ERR_NO_CREDENTIALS)
    let unknown = try fixture.getAssertion(dev, allow: [[9, 9, 9]])
    defer { fixture.free(assert: unknown.assert) }
    #expect(unknown.status == FIDO_ERR_NO_CREDENTIALS)
  }

  @Test func wrongPINCostsARetryAndTheRightOneVerifies() throws {
    let fixture = try SoftKeyFixture(pin: "1234")
    let dev = try fixture.open()
    defer { fixture.close(dev) }
    #expect(fixture.api.pointee.fido_dev_has_pin!(dev))
    #expect(fixture.retries(dev) == 8)

    let withoutPIN = try fixture.makeCredential(dev)
    fixture.free(cred: withoutPIN.cred)
    #expect(withoutPIN.status == FIDO_ERR_PIN_REQUIRED)
    let wrong = try fixture.makeCredential(dev, pin: "0000")
    fixture.free(cred: wrong.cred)
    #expect(wrong.status == FIDO_ERR_PIN_INVALID)
    #expect(fixture.retries(dev) == 7)
    let wrongAgain = try fixture.makeCredential(dev, pin: "9999")
    fixture.free(cred: wrongAgain.cred)
    #expect(wrongAgain.status == FIDO_ERR_PIN_INVALID)
    #expect(fixture.retries(dev) == 6)
    #expect(try SoftKeyState.load(from: fixture.stateFile).pinRetries == 6)

    var credentials: [[UInt8]] = []
    for userId in [[UInt8]([1]), [2]] {
      let right = try fixture.makeCredential(dev, userId: userId, userName: "user\(userId[0])", resident: true, pin: "1234")
      defer { fixture.free(cred: right.cred) }
      #expect(right.status == FIDO_OK)
      #expect(sfv_cred_flags(UnsafeMutableRawPointer(right.cred)) == 0x45)  // UP, UV, AT
      #expect(sfv_cred_verify_self(UnsafeMutableRawPointer(right.cred)) == FIDO_OK)
      credentials.append(fixture.credentialId(right.cred))
    }
    #expect(fixture.retries(dev) == 8)

    let verified = try fixture.getAssertion(dev, pin: "1234")
    defer { fixture.free(assert: verified.assert) }
    #expect(verified.status == FIDO_OK)
    #expect(sfv_assert_flags(UnsafeMutableRawPointer(verified.assert), 0) == 0x05)  // UP, UV
    // Verified and two accounts: the names come back, to choose from.
    let names = (0..<2).map { index in
      fixture.api.pointee.fido_assert_user_name!(verified.assert, index).map { String(cString: $0) }
    }
    #expect(names == ["user2", "user1"])
    // Without the PIN an assertion is still allowed, without UV.
    let unverified = try fixture.getAssertion(dev, allow: [credentials[0]])
    defer { fixture.free(assert: unverified.assert) }
    #expect(unverified.status == FIDO_OK)
    #expect(sfv_assert_flags(UnsafeMutableRawPointer(unverified.assert), 0) == 0x01)
  }

  @Test func pinBlocksAfterTheLastRetry() throws {
    let fixture = try SoftKeyFixture(pin: "1234")
    var state = try SoftKeyState.load(from: fixture.stateFile)
    state.pinRetries = 1
    try state.save(to: fixture.stateFile)
    let dev = try fixture.open()
    defer { fixture.close(dev) }
    let last = try fixture.makeCredential(dev, pin: "0000")
    fixture.free(cred: last.cred)
    #expect(last.status == FIDO_ERR_PIN_BLOCKED)
    let right = try fixture.makeCredential(dev, pin: "1234")
    fixture.free(cred: right.cred)
    #expect(right.status == FIDO_ERR_PIN_BLOCKED)
    #expect(fixture.retries(dev) == 0)
  }

  @Test func counterRisesAcrossAssertionsAndReloads() throws {
    let fixture = try SoftKeyFixture()
    var dev = try fixture.open()
    let registration = try fixture.makeCredential(dev)
    let id = fixture.credentialId(registration.cred)
    #expect(sfv_cred_sigcount(UnsafeMutableRawPointer(registration.cred)) == 1)
    fixture.free(cred: registration.cred)
    var counts: [UInt32] = []
    for _ in 0..<2 {
      let assertion = try fixture.getAssertion(dev, allow: [id])
      #expect(assertion.status == FIDO_OK)
      counts.append(sfv_assert_sigcount(UnsafeMutableRawPointer(assertion.assert), 0))
      fixture.free(assert: assertion.assert)
    }
    fixture.close(dev)
    // Another process's key: read from the state file alone (a path of its own in this process).
    var state = try SoftKeyState.load(from: fixture.stateFile)
    state.path += "-again"
    try state.save(to: fixture.stateFile)
    let reloaded = try SoftAuthenticator(stateFile: fixture.stateFile)
    dev = try fixture.open(reloaded)
    defer { fixture.close(dev) }
    let assertion = try fixture.getAssertion(dev, allow: [id])
    defer { fixture.free(assert: assertion.assert) }
    #expect(assertion.status == FIDO_OK)
    counts.append(sfv_assert_sigcount(UnsafeMutableRawPointer(assertion.assert), 0))
    #expect(counts == [2, 3, 4])
    #expect(try SoftKeyState.load(from: fixture.stateFile).counter == 4)
  }

  @Test func excludedCredentialIsRefused() throws {
    let fixture = try SoftKeyFixture()
    let dev = try fixture.open()
    defer { fixture.close(dev) }
    let first = try fixture.makeCredential(dev)
    let id = fixture.credentialId(first.cred)
    fixture.free(cred: first.cred)
    let second = try fixture.makeCredential(dev, exclude: [[7, 7], id])
    fixture.free(cred: second.cred)
    #expect(second.status == FIDO_ERR_CREDENTIAL_EXCLUDED)
    let elsewhere = try fixture.makeCredential(dev, rp: "other.example", exclude: [id])
    fixture.free(cred: elsewhere.cred)
    #expect(elsewhere.status == FIDO_OK)
    #expect(try SoftKeyState.load(from: fixture.stateFile).credentials.count == 2)
  }

  @Test func untouchedKeyTimesOutAsAFailedRead() throws {
    let fixture = try SoftKeyFixture(touch: .never)
    let dev = try fixture.open(timeoutMs: 300)
    defer { fixture.close(dev) }
    let start = monotonic()
    let registration = try fixture.makeCredential(dev)
    fixture.free(cred: registration.cred)
    // libfido2 reports a read that ran out of time as FIDO_ERR_RX, as with a HID key.
    #expect(registration.status == FIDO_ERR_RX)
    #expect(monotonic() - start >= 0.25)
    #expect(try SoftKeyState.load(from: fixture.stateFile).credentials.isEmpty)
  }

  @Test func untouchedKeyGivesUpAfterItsUserActionTimeout() throws {
    let fixture = try SoftKeyFixture(touch: .never)
    var state = try SoftKeyState.load(from: fixture.stateFile)
    state.userActionTimeoutMs = 200
    try state.save(to: fixture.stateFile)
    let dev = try fixture.open()
    defer { fixture.close(dev) }
    let registration = try fixture.makeCredential(dev)
    fixture.free(cred: registration.cred)
    #expect(registration.status == FIDO_ERR_USER_ACTION_TIMEOUT)
  }

  /// Both sides on threads of their own (the request on a Thread, the cancels on the test's),
  /// never on the cooperative pool: a loaded suite can keep the pool busy for longer than the
  /// key's 30-second timeout, and the cancels would then come too late.
  @Test func cancelFromAnotherThreadEndsTheWait() throws {
    let fixture = try SoftKeyFixture(touch: .never)
    let dev = try fixture.open()
    defer { fixture.close(dev) }
    let address = UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(dev)))
    let result = Mutex<Int32?>(nil)
    let done = DispatchSemaphore(value: 0)
    Thread {
      let api = frp_fido2_load(nil)!
      let dev = OpaquePointer(bitPattern: address)!
      let cred = api.pointee.fido_cred_new!()!
      var owned: OpaquePointer? = cred
      let hash = [UInt8](repeating: 1, count: 32)
      _ = api.pointee.fido_cred_set_type!(cred, COSE_ES256)
      _ = api.pointee.fido_cred_set_clientdata_hash!(cred, hash, 32)
      _ = api.pointee.fido_cred_set_rp!(cred, "example.com", nil)
      _ = api.pointee.fido_cred_set_user!(cred, [1], 1, "u", nil, nil)
      let status = api.pointee.fido_dev_make_cred!(dev, cred, nil)
      api.pointee.fido_cred_free!(&owned)
      result.withLock { $0 = status }
      done.signal()
    }.start()
    // A cancel before the request reaches the key is ignored, as by a real key: cancel until
    // the request ends (well before the key's own 30-second user action timeout).
    var cancels = 0
    while done.wait(timeout: .now() + .milliseconds(100)) == .timedOut && cancels < 100 {
      #expect(fixture.api.pointee.fido_dev_cancel!(dev) == FIDO_OK)
      cancels += 1
    }
    if cancels == 100 { done.wait() }
    #expect(result.withLock { $0 } == FIDO_ERR_KEEPALIVE_CANCEL)
    #expect(cancels < 100)
  }

  @Test func touchStatusReportsATouchOnlyFromATouchedKey() throws {
    for (touch, expected) in [(SoftKeyState.Touch.immediate, Int32(1)), (.never, 0)] {
      let fixture = try SoftKeyFixture(pin: "1234", touch: touch)
      let dev = try fixture.open()
      defer { fixture.close(dev) }
      #expect(fixture.api.pointee.fido_dev_get_touch_begin!(dev) == FIDO_OK)
      var touched: Int32 = -1
      #expect(fixture.api.pointee.fido_dev_get_touch_status!(dev, &touched, 100) == FIDO_OK)
      #expect(touched == expected, "touch \(touch)")
      // The touch probe's PIN_INVALID costs no retry.
      #expect(fixture.retries(dev) == 8)
    }
  }

  @Test func python3Fido2AcceptsTheRegistrationAndAssertion() throws {
    let fixture = try SoftKeyFixture()
    let dev = try fixture.open()
    defer { fixture.close(dev) }
    let clientData = Array(#"{"type":"webauthn.create","challenge":"c29mdGtleQ","origin":"https://example.com"}"#.utf8)
    let registration = try fixture.makeCredential(dev, clientDataHash: Array(SHA256.hash(data: clientData)))
    defer { fixture.free(cred: registration.cred) }
    try #require(registration.status == FIDO_OK)
    let f = fixture.api.pointee
    let cred = registration.cred
    let authData = Array(UnsafeBufferPointer(start: f.fido_cred_authdata_raw_ptr!(cred), count: f.fido_cred_authdata_raw_len!(cred)))
    let statement = Array(UnsafeBufferPointer(start: f.fido_cred_attstmt_ptr!(cred), count: f.fido_cred_attstmt_len!(cred)))
    let getData = Array(#"{"type":"webauthn.get","challenge":"YWdhaW4","origin":"https://example.com"}"#.utf8)
    let assertion = try fixture.getAssertion(
      dev, allow: [fixture.credentialId(cred)], clientDataHash: Array(SHA256.hash(data: getData)))
    defer { fixture.free(assert: assertion.assert) }
    try #require(assertion.status == FIDO_OK)
    // fido_assert_authdata_ptr is the CBOR byte string; python3-fido2 takes the bytes inside.
    let wrapped = Array(
      UnsafeBufferPointer(start: f.fido_assert_authdata_ptr!(assertion.assert, 0), count: f.fido_assert_authdata_len!(assertion.assert, 0)))
    let assertionData = try #require(CBOR.decode(wrapped).bytesValue)
    let signature = Array(
      UnsafeBufferPointer(start: f.fido_assert_sig_ptr!(assertion.assert, 0), count: f.fido_assert_sig_len!(assertion.assert, 0)))
    let files: [(String, [UInt8])] = [
      ("fmt", Array((fixture.format(cred) ?? "").utf8)), ("authData", authData), ("attStmt", statement),
      ("clientDataJSON", clientData), ("assertionAuthData", assertionData), ("signature", signature),
      ("getClientDataJSON", getData),
    ]
    for (name, bytes) in files { try Data(bytes).write(to: URL(fileURLWithPath: fixture.directory + "/" + name)) }
    let script = """
      import hashlib, sys
      from fido2 import cbor
      from fido2.attestation import Attestation, AttestationType
      from fido2.ctap2 import AuthenticatorData
      d = sys.argv[1]
      read = lambda name: open(d + "/" + name, "rb").read()
      fmt = read("fmt").decode()
      auth = AuthenticatorData(read("authData"))
      result = Attestation.for_type(fmt)().verify(cbor.decode(read("attStmt")), auth, hashlib.sha256(read("clientDataJSON")).digest())
      assert result.attestation_type == AttestationType.SELF, result
      assert auth.rp_id_hash == hashlib.sha256(b"example.com").digest()
      key = auth.credential_data.public_key
      got = AuthenticatorData(read("assertionAuthData"))
      key.verify(bytes(got) + hashlib.sha256(read("getClientDataJSON")).digest(), read("signature"))
      assert got.counter > auth.counter and got.is_user_present()
      print("accepted", fmt, got.counter)
      """
    let result = try TestProcess.run(["/usr/bin/python3", "-c", script, fixture.directory], environment: [:])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stdout == "accepted packed 2\n")
  }

  @Test func environmentListNamesTheKeys() throws {
    #expect(try SoftAuthenticator.keys(fromList: "").isEmpty)
    let first = try SoftKeyFixture()
    let second = try SoftKeyFixture()
    let keys = try SoftAuthenticator.keys(fromList: first.stateFile + ":" + second.stateFile)
    #expect(keys.map(\.path) == [first.key.path, second.key.path])
    #expect(keys.map(\.product) == ["SoftKey 2", "SoftKey 2"])
    #expect(throws: SoftKeyError.self) { try SoftAuthenticator.keys(fromList: first.directory + "/missing.json") }
  }
}

func monotonic() -> Double {
  var now = timespec()
  clock_gettime(CLOCK_MONOTONIC, &now)
  return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}
