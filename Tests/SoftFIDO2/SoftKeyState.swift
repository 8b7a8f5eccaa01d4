import Glibc
import ProfileJSON
import SystemCalls

/// A software security key's whole state, kept in one JSON file that every change rewrites
/// atomically (a temporary file renamed over it), so successive `fr-profile` processes (a
/// registration, then an authentication) see one key:
///
/// ```json
/// {
///   "product": "SoftKey 2",              // the product string a WebAuthn node shows
///   "path": "softkey:0",                 // what fido_dev_open is given
///   "aaguid": "<32 hex digits>",
///   "attestation": "packed",             // "packed" (self attestation) or "none"
///   "pin": null,                         // or the PIN, e.g. "1234"
///   "pinRetries": 8,                     // left before the PIN is blocked; 8 again after a right PIN
///   "touch": "immediate",                // or "never": a key nobody touches
///   "userActionTimeoutMs": 30000,        // how long "never" waits before CTAP2_ERR_USER_ACTION_TIMEOUT
///   "counter": 0,                        // the one signature counter, +1 per registration and assertion
///   "failWith": null,                    // or a CTAP status (e.g. 127): a broken key, answering every
///                                        // makeCredential and getAssertion with it
///   "credentials": [{
///     "id": "<base64url>", "rpId": "example.com", "userId": "<base64url>",
///     "userName": "bjensen", "displayName": "Babs Jensen",   // null when not given
///     "privateKey": "<64 hex digits: the raw P-256 scalar>",
///     "resident": true                   // discoverable (rk) or not
///   }]
/// }
/// ```
/// Credentials are listed oldest first.
public struct SoftKeyState: Sendable, Equatable {
  public enum Attestation: String, Sendable { case packed, none }
  public enum Touch: String, Sendable { case immediate, never }

  public struct Credential: Sendable, Equatable {
    public var id: [UInt8]
    public var rpId: String
    public var userId: [UInt8]
    public var userName: String?
    public var displayName: String?
    public var privateKey: [UInt8]
    public var resident: Bool
  }

  public var product = "SoftKey 2"
  public var path = "softkey:0"
  public var aaguid: [UInt8] = Array(repeating: 0, count: 16)
  public var attestation = Attestation.packed
  public var pin: String?
  public var pinRetries = SoftKeyState.maxPINRetries
  public var touch = Touch.immediate
  public var userActionTimeoutMs = 30_000
  public var counter: UInt32 = 0
  /// A CTAP status every makeCredential and getAssertion answers with (a broken key); nil: none.
  public var failWith: UInt8?
  public var credentials: [Credential] = []

  public static let maxPINRetries = 8

  public init(
    product: String = "SoftKey 2", path: String = "softkey:0", aaguid: [UInt8]? = nil, attestation: Attestation = .packed,
    pin: String? = nil, touch: Touch = .immediate
  ) {
    self.product = product
    self.path = path
    self.aaguid = aaguid ?? randomBytes(16)
    self.attestation = attestation
    self.pin = pin
    self.touch = touch
  }

  /// Writes a fresh key (no credentials, counter 0, full PIN retries) to `file` and returns it.
  @discardableResult
  public static func create(
    at file: String, product: String = "SoftKey 2", path: String = "softkey:0", attestation: Attestation = .packed,
    pin: String? = nil, touch: Touch = .immediate
  ) throws -> SoftKeyState {
    let state = SoftKeyState(product: product, path: path, attestation: attestation, pin: pin, touch: touch)
    try state.save(to: file)
    return state
  }

  public static func load(from file: String) throws -> SoftKeyState {
    try SoftKeyState(json: JSONParser.parse(try readFile(file)), file: file)
  }

  public func save(to file: String) throws {
    let slash = file.lastIndex(of: "/")
    let directory = slash.map { String(file[..<$0]) } ?? "."
    let name = slash.map { String(file[file.index(after: $0)...]) } ?? file
    let fd = open(directory.isEmpty ? "/" : directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    guard fd >= 0 else { throw SoftKeyError("cannot open the directory of \(file): errno \(errno)") }
    defer { close(fd) }
    try writeAtomically(
      Array((JSONWriter.pretty(json) + "\n").utf8), as: name, in: fd, mode: 0o600, replace: true, temporaryPrefix: ".softkey-")
  }

  public var json: JSON {
    func optional(_ text: String?) -> JSON { text.map { .string($0) } ?? .null }
    let credentials: [JSON] = credentials.map { credential in
      [
        "id": .string(Base64URL.encode(credential.id)), "rpId": .string(credential.rpId),
        "userId": .string(Base64URL.encode(credential.userId)), "userName": optional(credential.userName),
        "displayName": optional(credential.displayName), "privateKey": .string(Hex.encode(credential.privateKey)),
        "resident": .bool(credential.resident),
      ]
    }
    return [
      "product": .string(product), "path": .string(path), "aaguid": .string(Hex.encode(aaguid)),
      "attestation": .string(attestation.rawValue), "pin": optional(pin), "pinRetries": .number(Double(pinRetries)),
      "touch": .string(touch.rawValue), "userActionTimeoutMs": .number(Double(userActionTimeoutMs)),
      "counter": .number(Double(counter)), "credentials": .array(credentials),
      "failWith": failWith.map { .number(Double($0)) } ?? .null,
    ]
  }

  init(json: JSON, file: String) throws {
    func fail(_ what: String) -> SoftKeyError { SoftKeyError("\(file): \(what)") }
    guard let object = json.objectValue else { throw fail("not a JSON object") }
    func text(_ key: String, in object: JSONObject) throws -> String? {
      switch object[key] {
      case nil, .null?: return nil
      case .string(let value)?: return value
      default: throw fail("\(key) is not a string")
      }
    }
    func number(_ key: String) throws -> Int? {
      guard let value = object[key], value != .null else { return nil }
      guard let number = value.numberValue, number >= 0, number <= Double(UInt32.max), number.rounded() == number else {
        throw fail("\(key) is not a whole number")
      }
      return Int(number)
    }
    product = try text("product", in: object) ?? product
    path = try text("path", in: object) ?? path
    if let hex = try text("aaguid", in: object) {
      guard let bytes = Hex.decode(hex), bytes.count == 16 else { throw fail("aaguid is not 32 hex digits") }
      aaguid = bytes
    }
    if let name = try text("attestation", in: object) {
      guard let value = Attestation(rawValue: name) else { throw fail("attestation is neither packed nor none") }
      attestation = value
    }
    pin = try text("pin", in: object)
    pinRetries = try number("pinRetries") ?? pinRetries
    if let name = try text("touch", in: object) {
      guard let value = Touch(rawValue: name) else { throw fail("touch is neither immediate nor never") }
      touch = value
    }
    userActionTimeoutMs = try number("userActionTimeoutMs") ?? userActionTimeoutMs
    counter = UInt32(try number("counter") ?? 0)
    if let status = try number("failWith") {
      guard status > 0, status < 256 else { throw fail("failWith is not a CTAP status (1-255)") }
      failWith = UInt8(status)
    }
    for entry in object["credentials"]?.arrayValue ?? [] {
      guard let member = entry.objectValue,
        let id = try text("id", in: member).flatMap(Base64URL.decode), !id.isEmpty,
        let rpId = try text("rpId", in: member),
        let userId = try text("userId", in: member).flatMap(Base64URL.decode),
        let privateKey = try text("privateKey", in: member).flatMap(Hex.decode), privateKey.count == 32
      else { throw fail("a credential lacks id, rpId, userId or a 32-byte privateKey") }
      credentials.append(
        Credential(
          id: id, rpId: rpId, userId: userId, userName: try text("userName", in: member),
          displayName: try text("displayName", in: member), privateKey: privateKey,
          resident: member["resident"]?.boolValue ?? false))
    }
  }
}

public struct SoftKeyError: Error, Sendable, CustomStringConvertible {
  public var description: String
  public init(_ description: String) { self.description = description }
}

func randomBytes(_ count: Int) -> [UInt8] {
  var generator = SystemRandomNumberGenerator()
  return (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
}

func readFile(_ file: String) throws -> [UInt8] {
  let fd = open(file, O_RDONLY | O_CLOEXEC)
  guard fd >= 0 else { throw SoftKeyError("cannot open \(file): errno \(errno)") }
  defer { close(fd) }
  return try readAll(fd, limit: 1 << 24)
}
