import CFIDO2
import Foundation
import Glibc
import SoftFIDO2
import Testing

/// The real libfido2 (through Sources/CFIDO2's table) driving a software key in a directory of
/// its own: each key has a unique path, as the seam's registry of keys requires. The directory
/// goes with the fixture.
final class SoftKeyFixture {
  let api: UnsafePointer<frp_fido2_api>
  let directory: String
  let stateFile: String
  let key: SoftAuthenticator

  init(pin: String? = nil, attestation: SoftKeyState.Attestation = .packed, touch: SoftKeyState.Touch = .immediate) throws {
    var reason: UnsafePointer<CChar>?
    let loaded = frp_fido2_load(&reason)
    let why = reason.map { String(cString: $0) } ?? ""
    api = try #require(loaded, "libfido2: \(why)")
    var template = Array("/tmp/softfido2-XXXXXX".utf8CString)
    directory = String(cString: try #require(mkdtemp(&template)))
    stateFile = directory + "/key.json"
    try SoftKeyState.create(at: stateFile, path: "softkey:" + directory, attestation: attestation, pin: pin, touch: touch)
    key = try SoftAuthenticator(stateFile: stateFile)
  }

  deinit { try? FileManager.default.removeItem(atPath: directory) }

  /// A new `fido_dev_t` attached to `key` and opened by its path.
  func open(_ key: SoftAuthenticator? = nil, timeoutMs: Int32 = -1) throws -> OpaquePointer {
    let key = key ?? self.key
    let dev = try #require(api.pointee.fido_dev_new!())
    #expect(key.attach(dev) == FIDO_OK)
    #expect(api.pointee.fido_dev_set_timeout!(dev, timeoutMs) == FIDO_OK)
    let status = api.pointee.fido_dev_open!(dev, key.path)
    try #require(status == FIDO_OK, "fido_dev_open: \(status)")
    return dev
  }

  func close(_ dev: OpaquePointer) {
    _ = api.pointee.fido_dev_close!(dev)
    var dev: OpaquePointer? = dev
    api.pointee.fido_dev_free!(&dev)
  }

  struct Registration {
    var status: Int32
    var cred: OpaquePointer
  }

  /// fido_dev_make_cred for ES256; the caller frees `cred` with ``free(cred:)``.
  func makeCredential(
    _ dev: OpaquePointer, rp: String = "example.com", userId: [UInt8] = [1, 2, 3], userName: String = "bjensen",
    displayName: String = "Babs Jensen", resident: Bool = false, pin: String? = nil, exclude: [[UInt8]] = [],
    clientDataHash: [UInt8] = Array(repeating: 0x42, count: 32)
  ) throws -> Registration {
    let f = api.pointee
    let cred = try #require(f.fido_cred_new!())
    #expect(f.fido_cred_set_type!(cred, COSE_ES256) == FIDO_OK)
    #expect(f.fido_cred_set_clientdata_hash!(cred, clientDataHash, clientDataHash.count) == FIDO_OK)
    #expect(f.fido_cred_set_rp!(cred, rp, "Example") == FIDO_OK)
    #expect(f.fido_cred_set_user!(cred, userId, userId.count, userName, displayName, nil) == FIDO_OK)
    #expect(f.fido_cred_set_rk!(cred, resident ? FIDO_OPT_TRUE : FIDO_OPT_OMIT) == FIDO_OK)
    for id in exclude { #expect(f.fido_cred_exclude!(cred, id, id.count) == FIDO_OK) }
    return Registration(status: f.fido_dev_make_cred!(dev, cred, pin), cred: cred)
  }

  func free(cred: OpaquePointer) {
    var cred: OpaquePointer? = cred
    api.pointee.fido_cred_free!(&cred)
  }

  struct Assertion {
    var status: Int32
    var assert: OpaquePointer
  }

  /// fido_dev_get_assert; the caller frees `assert` with ``free(assert:)``.
  func getAssertion(
    _ dev: OpaquePointer, rp: String = "example.com", allow: [[UInt8]] = [], pin: String? = nil,
    clientDataHash: [UInt8] = Array(repeating: 0x24, count: 32)
  ) throws -> Assertion {
    let f = api.pointee
    let assert = try #require(f.fido_assert_new!())
    #expect(f.fido_assert_set_clientdata_hash!(assert, clientDataHash, clientDataHash.count) == FIDO_OK)
    #expect(f.fido_assert_set_rp!(assert, rp) == FIDO_OK)
    for id in allow { #expect(f.fido_assert_allow_cred!(assert, id, id.count) == FIDO_OK) }
    return Assertion(status: f.fido_dev_get_assert!(dev, assert, pin), assert: assert)
  }

  func free(assert: OpaquePointer) {
    var assert: OpaquePointer? = assert
    api.pointee.fido_assert_free!(&assert)
  }

  func format(_ cred: OpaquePointer) -> String? {
    api.pointee.fido_cred_fmt!(cred).map { String(cString: $0) }
  }

  func credentialId(_ cred: OpaquePointer) -> [UInt8] {
    Array(UnsafeBufferPointer(start: api.pointee.fido_cred_id_ptr!(cred), count: api.pointee.fido_cred_id_len!(cred)))
  }

  func userId(_ assert: OpaquePointer, _ index: Int) -> [UInt8] {
    let f = api.pointee
    return Array(UnsafeBufferPointer(start: f.fido_assert_user_id_ptr!(assert, index), count: f.fido_assert_user_id_len!(assert, index)))
  }

  func retries(_ dev: OpaquePointer) -> Int32 {
    var retries: Int32 = -1
    #expect(api.pointee.fido_dev_get_retry_count!(dev, &retries) == FIDO_OK)
    return retries
  }
}
