import Collectors
import Crypto
import DeviceBinding
import Foundation
import Journey
import ProfileJSON
import SystemCalls

/// A binding request as AM's node sends it (reference/binding/authenticate-device-binding.json).
func bindingRequest(
  _ type: AuthenticationType = .none, userId: String = "id=demo,ou=user,o=alpha,ou=services,ou=am-config",
  username: String = "demo", timeout: Int = 60, attestation: Bool = false
) -> DeviceBindingRequest {
  DeviceBindingRequest(
    userId: userId, username: username, authenticationType: type.rawValue,
    challenge: "CS3+g40VkHXx+dN7rpnJKhrEAvwZaYgbaXoEcpO5twM=", timeout: timeout, attestation: attestation)
}

func signingRequest(userId: String = "id=demo,ou=user,o=alpha,ou=services,ou=am-config", timeout: Int = 60) -> DeviceSigningRequest {
  DeviceSigningRequest(userId: userId, challenge: "zYwKaKnqS2YzvhXSK+sFjC7FKBoprArqz6LpJ8qe9+g=", timeout: timeout)
}

/// A PIN source that hands out fixed PINs and counts how often it was asked.
final class FixedPINs: PINSource, @unchecked Sendable {
  private let lock = NSLock()
  private var pins: [String]
  init(_ pins: String...) { self.pins = pins }
  func next() -> String? {
    lock.withLock { pins.isEmpty ? nil : (pins.count == 1 ? pins[0] : pins.removeFirst()) }
  }
  func newPIN(prompt: String, policy: PINPolicy, deadline: Double) throws(BindingFailure) -> String? { next() }
  func existingPIN(prompt: String, deadline: Double) throws(BindingFailure) -> String? { next() }
}

/// A machine tree from the collector fixtures (cloud-vm has jailBreakScore 0.5, laptop 0).
func fixtureSystem(_ name: String) -> SystemSource {
  let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("CollectorsTests/Fixtures/machines/\(name)").path
  return SystemSource(root: root, environment: [:])
}

/// A binder over `store` with cheap scrypt (2^10) so PIN tests run fast; the CLI uses 2^17.
func makeBinder(
  store: any UserKeyStore = InMemoryUserKeyStore(), pins: (any PINSource)? = nil, lockPolicy: LockPolicy = .lock(attempts: 3),
  machine: String = "laptop", deviceId: String = "device-1", policies: JSONObject = JSONObject(),
  verifier: PAMUserVerifier? = nil, now: @escaping @Sendable () -> Double = { DeviceBinder.wallClock() }
) -> DeviceBinder {
  let system = fixtureSystem(machine)
  return DeviceBinder(
    store: store, deviceId: { deviceId }, deviceName: "Test box", pins: PINGate(source: pins, lockPolicy: lockPolicy, costLog2: 10),
    userVerifier: verifier, policies: policies,
    policyContext: PolicyContext(system: system, biometricAvailable: { verifier?.isConfigured(PAMUserVerifier.biometricService) ?? false }),
    now: now)
}

struct DecodedJWS {
  var header: JSON
  var claims: JSON
  var signingInput: String
  var signature: [UInt8]

  init(_ jws: String) throws {
    let parts = jws.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
    guard parts.count == 3, let header = Base64URL.decode(parts[0]), let claims = Base64URL.decode(parts[1]),
      let signature = Base64URL.decode(parts[2])
    else { throw CocoaError(.coderReadCorrupt) }
    self.header = try JSONParser.parse(header)
    self.claims = try JSONParser.parse(claims)
    signingInput = parts[0] + "." + parts[1]
    self.signature = signature
  }

  /// ES256 verification with swift-crypto alone (not our JWS encoder): raw R‖S over the input.
  func verifies(x: String, y: String) -> Bool {
    guard let xBytes = Base64URL.decode(x), let yBytes = Base64URL.decode(y),
      let key = try? P256.Signing.PublicKey(rawRepresentation: xBytes + yBytes),
      let signature = try? P256.Signing.ECDSASignature(rawRepresentation: self.signature)
    else { return false }
    return key.isValidSignature(signature, for: Array(signingInput.utf8))
  }
}

func makeTemporaryDirectory() throws -> String {
  var template = Array((NSTemporaryDirectory() + "/fr-profile-binding.XXXXXX").utf8CString)
  guard let made = mkdtemp(&template) else { throw CocoaError(.fileWriteUnknown) }
  return String(cString: made)
}

/// Tests/DeviceBindingTests/Fixtures/<name>: AM's payloads from the binding reference.
func fixture(_ name: String) -> URL {
  URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/\(name)")
}
