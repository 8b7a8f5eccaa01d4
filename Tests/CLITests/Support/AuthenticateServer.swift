import COpenSSL
import DeviceMatch
import Foundation
import ProfileJSON

/// A loopback PingAM for the journey tests: the `/authenticate` endpoint of one tree,
/// Username → Password → [Confirmation] → Device Profile Collector (metadata + location,
/// 3 KB limit) → Device Match (`DeviceMatcher`) against the user's stored profiles → success
/// or failure, over
/// HTTP or TLS (the system OpenSSL). It speaks AM's wire format: steps with `authId` and
/// `callbacks`, a success body with `tokenId`, a failure as 401 `{"code":401,…}`.
///
/// Blocking POSIX sockets, a thread per connection, one request per connection
/// (`Connection: close`): a few hundred lines with nothing to build, where a server library
/// with TLS would add minutes to every CI build (docs/journey.md).
final class AuthenticateServer: @unchecked Sendable {
  enum Behaviour {
    /// The tree above.
    case tree
    /// Reads each request and never answers (until the server stops).
    case hang
    /// Starts the tree with a step holding a callback of this type.
    case unsupportedCallback(String)
    /// A hostile server: answers the n-th request (0-based) with this status and raw body.
    case scripted(@Sendable (_ request: Record, _ index: Int) -> (status: Int, body: [UInt8]))
    /// Every request goes to this handler (BindingServer.swift: the device binding nodes).
    case custom(any CustomTree)
  }

  struct Configuration {
    var path = "/json/realms/root/realms/alpha/authenticate"
    var tree = "DeviceProfiling"
    var users = ["demo": "s3cret-Passw0rd"]
    /// Each user's enrolled device profiles, as a Device Match node reads them.
    var storedProfiles: [String: [JSON]] = [:]
    /// The Device Profile Collector node's Maximum Profile Size, in bytes.
    var maximumProfileSize = 3072
    /// Adds a ConfirmationCallback step ("Trust this device?", Yes/No) after the password.
    var confirmation = false
    /// Starts with the DeviceProfileCallback (AM's sample DeviceProfiling tree: a Device Profile
    /// Collector node, then Device Match against `storedProfiles[""]`), no login.
    var profileFirst = false
    var behaviour = Behaviour.tree
    /// PEM certificate chain and key file: serve HTTPS.
    var tls: (certificate: String, key: String)?
    /// The Device Match node's settings (the device-match script's defaults: every metadata
    /// leaf must match, locations within 100 m).
    var match = MatchConfig()
  }

  /// What the server saw and decided, for assertions.
  struct Record {
    var method: String
    var target: String
    var headers: [String: String]
    var body: String
  }

  let configuration: Configuration
  let port: UInt16
  let token = "AQIC5wM2LY4Sfcz-test-session-token.*AAJTSQACMDE.*"
  private let listener: Int32
  private let context: OpaquePointer?
  private let lock = NSLock()
  private var sessions: [String: Session] = [:]
  private var recorded: [Record] = []
  private var decisions: [String] = []
  private var profiles: [JSON] = []
  private var stopped = false
  /// Closed (its write end) by `stop()`: what handlers that hang on purpose wait for.
  private var stopEvent: [Int32] = [-1, -1]
  private let done = DispatchGroup()

  private struct Session {
    enum Stage { case username, password, confirmation, profile }
    var stage: Stage
    var user = ""
  }

  var url: String { "\(configuration.tls == nil ? "http" : "https")://127.0.0.1:\(port)" }
  var requests: [Record] { lock.withLock { recorded } }
  /// The tree's decisions in order, e.g. "wrong password", "profile too large (3300 bytes)",
  /// "device match: unknownDevice", "success".
  var outcomes: [String] { lock.withLock { decisions } }
  /// The device profiles received, parsed.
  var receivedProfiles: [JSON] { lock.withLock { profiles } }

  init(_ configuration: Configuration = Configuration()) throws {
    // A client that hangs up mid-answer (a refused certificate, a timeout) must not kill or
    // interrupt the test process with SIGPIPE.
    signal(SIGPIPE, SIG_IGN)
    self.configuration = configuration
    if let tls = configuration.tls {
      guard let context = SSL_CTX_new(TLS_server_method()),
        SSL_CTX_use_certificate_chain_file(context, tls.certificate) == 1,
        SSL_CTX_use_PrivateKey_file(context, tls.key, SSL_FILETYPE_PEM) == 1
      else { throw ServerError("cannot load the TLS certificate \(tls.certificate)") }
      self.context = context
    } else {
      context = nil
    }
    let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard listener >= 0 else { throw ServerError("socket: \(errno)") }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    let bound = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard bound == 0, listen(listener, 16) == 0 else { throw ServerError("bind/listen: \(errno)") }
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
    }
    self.listener = listener
    port = UInt16(bigEndian: address.sin_port)
    guard pipe2(&stopEvent, O_CLOEXEC) == 0 else { throw ServerError("pipe2: \(errno)") }
    done.enter()
    Thread.detachNewThread { [self] in acceptLoop() }
  }

  /// Stops accepting, releases hanging handlers and waits for the accept loop to end.
  func stop() {
    lock.withLock { stopped = true }
    close(stopEvent[1])  // the event hanging handlers wait on: their poll sees the hang-up
    shutdown(listener, Int32(SHUT_RDWR))
    done.wait()
    close(listener)
    close(stopEvent[0])
    if let context { SSL_CTX_free(context) }
  }

  private var isStopped: Bool { lock.withLock { stopped } }

  /// Server threads take no signals (a test's SIGCHLD would interrupt their reads).
  private static func blockSignals() {
    var all = sigset_t()
    sigfillset(&all)
    pthread_sigmask(SIG_BLOCK, &all, nil)
  }

  private func acceptLoop() {
    defer { done.leave() }
    Self.blockSignals()
    while !isStopped {
      let client = accept4(listener, nil, nil, Int32(SOCK_CLOEXEC.rawValue))
      if client < 0 {
        if errno == EINTR { continue }
        return
      }
      Thread.detachNewThread { [self] in serve(client) }
    }
  }

  // MARK: Connections

  /// Plain or TLS byte stream over an accepted socket.
  private final class Stream {
    let fd: Int32
    let ssl: OpaquePointer?
    /// False when the TLS handshake failed (the client refused the certificate).
    private(set) var ready = true
    init(fd: Int32, context: OpaquePointer?) {
      self.fd = fd
      ssl = context.flatMap { SSL_new($0) }
      if context != nil {
        guard let ssl else {
          ready = false
          return
        }
        SSL_set_fd(ssl, fd)
        ready = SSL_accept(ssl) == 1
      }
    }
    deinit {
      if let ssl {
        SSL_shutdown(ssl)
        SSL_free(ssl)
      }
      close(fd)
    }
    func read(_ buffer: UnsafeMutableRawBufferPointer) -> Int {
      if let ssl { return Int(SSL_read(ssl, buffer.baseAddress, Int32(buffer.count))) }
      return Glibc.read(fd, buffer.baseAddress, buffer.count)
    }
    func write(_ bytes: [UInt8]) {
      var offset = 0
      while offset < bytes.count {
        let count = bytes.withUnsafeBytes { raw -> Int in
          let start = raw.baseAddress! + offset
          if let ssl { return Int(SSL_write(ssl, start, Int32(raw.count - offset))) }
          return send(fd, start, raw.count - offset, Int32(MSG_NOSIGNAL))
        }
        if count <= 0 { return }
        offset += count
      }
    }
  }

  private func serve(_ fd: Int32) {
    Self.blockSignals()
    var timeout = timeval(tv_sec: 10, tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    let stream = Stream(fd: fd, context: context)
    guard stream.ready else { return }
    guard let request = readRequest(stream) else { return }
    lock.withLock { recorded.append(request) }
    if case .hang = configuration.behaviour {
      // Until the server stops: the stop event's write end closes.
      var event = pollfd(fd: stopEvent[0], events: Int16(POLLIN), revents: 0)
      while poll(&event, 1, -1) < 0 && errno == EINTR {}
      return
    }
    let status: Int
    let bytes: [UInt8]
    if case .scripted(let script) = configuration.behaviour {
      (status, bytes) = script(request, lock.withLock { recorded.count } - 1)
    } else {
      let (code, body) = respond(to: request)
      (status, bytes) = (code, Array(body.utf8))
    }
    let reason = [200: "OK", 400: "Bad Request", 401: "Unauthorized"][status] ?? "Error"
    let head =
      "HTTP/1.1 \(status) \(reason)\r\nContent-Type: application/json\r\nContent-Length: \(bytes.count)\r\nConnection: close\r\n\r\n"
    stream.write(Array(head.utf8) + bytes)
  }

  private func readRequest(_ stream: Stream) -> Record? {
    var data: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 8192)
    func fill() -> Bool {
      let count = buffer.withUnsafeMutableBytes { stream.read($0) }
      guard count > 0 else { return false }
      data.append(contentsOf: buffer[0..<count])
      return true
    }
    let separator: [UInt8] = Array("\r\n\r\n".utf8)
    var headerEnd: Int?
    while headerEnd == nil {
      guard fill() else { return nil }
      if data.count >= 4 {
        headerEnd = (0...(data.count - 4)).first { Array(data[$0..<$0 + 4]) == separator }
      }
    }
    let head = String(decoding: data[0..<headerEnd!], as: UTF8.self).components(separatedBy: "\r\n")
    let requestLine = head[0].split(separator: " ").map(String.init)
    guard requestLine.count == 3 else { return nil }
    var headers: [String: String] = [:]
    for line in head.dropFirst() {
      guard let colon = line.firstIndex(of: ":") else { continue }
      headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
    }
    if headers["expect"]?.lowercased() == "100-continue" { stream.write(Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)) }
    let length = Int(headers["content-length"] ?? "0") ?? 0
    while data.count < headerEnd! + 4 + length {
      guard fill() else { return nil }
    }
    let body = String(decoding: data[(headerEnd! + 4)..<(headerEnd! + 4 + length)], as: UTF8.self)
    return Record(method: requestLine[0], target: requestLine[1], headers: headers, body: body)
  }

  // MARK: The tree

  private func decide(_ text: String) { lock.withLock { decisions.append(text) } }

  private static let failure = #"{"code":401,"reason":"Unauthorized","message":"Login failure"}"#

  private static func badRequest(_ message: String) -> (Int, String) {
    (400, JSONWriter.compact(["code": 400, "reason": "Bad Request", "message": .string(message)]))
  }

  private func respond(to request: Record) -> (Int, String) {
    if case .custom(let tree) = configuration.behaviour { return tree.respond(to: request) }
    let expectedTarget = configuration.path + "?authIndexType=service&authIndexValue=" + configuration.tree
    // The options a journey may add (ForceAuth, noSession), and a resumed journey (suspendedId),
    // start the same tree here.
    var target = request.target
    for option in ["&ForceAuth=true", "&noSession=true"] where target.hasSuffix(option) { target.removeLast(option.count) }
    let resumed = target.hasPrefix(configuration.path + "?suspendedId=")
    guard request.method == "POST", target == expectedTarget || resumed else {
      return Self.badRequest("No configuration found for \(request.method) \(request.target)")
    }
    guard Self.acceptsAuthenticateVersion(request.headers["accept-api-version"]) else {
      return Self.badRequest("Accept-API-Version must be resource=2.1, protocol=1.0")
    }
    guard request.headers["content-type"]?.hasPrefix("application/json") == true,
      case .object(let body)? = try? JSONParser.parse(Array(request.body.utf8))
    else { return Self.badRequest("The body must be a JSON object") }

    guard case .string(let authId)? = body["authId"] else {
      if case .unsupportedCallback(let type) = configuration.behaviour {
        return (200, step("unsupported", [callback(type, output: [("prompt", "Question")], input: true)]))
      }
      let id = UUID().uuidString
      if configuration.profileFirst {
        lock.withLock { sessions[id] = Session(stage: .profile) }
        return (200, step(id, [profileCallback()]))
      }
      lock.withLock { sessions[id] = Session(stage: .username) }
      return (200, step(id, [callback("NameCallback", output: [("prompt", "User Name")], input: true)]))
    }
    guard var session = lock.withLock({ sessions.removeValue(forKey: authId) }) else {
      decide("unknown authId")
      return (401, Self.failure)
    }
    let callbacks = body["callbacks"]?.arrayValue ?? []
    func answer(_ type: String) -> JSON? {
      callbacks.first { $0["type"]?.stringValue == type }?["input"]?.arrayValue?.first?["value"]
    }
    let next: [JSON]
    switch session.stage {
    case .username:
      session.user = answer("NameCallback")?.stringValue ?? ""
      session.stage = .password
      next = [callback("PasswordCallback", output: [("prompt", "Password")], input: true)]
    case .password:
      guard let password = answer("PasswordCallback")?.stringValue, configuration.users[session.user] == password else {
        decide("wrong password")
        return (401, Self.failure)
      }
      if configuration.confirmation {
        session.stage = .confirmation
        next = [
          callback("TextOutputCallback", output: [("message", "New sign-in from this device."), ("messageType", "0")]),
          callback(
            "ConfirmationCallback",
            output: [
              ("prompt", "Trust this device?"), ("messageType", 0), ("options", ["Yes", "No"]), ("optionType", -1),
              ("defaultOption", 1),
            ], input: true),
        ]
      } else {
        session.stage = .profile
        next = [profileCallback()]
      }
    case .confirmation:
      guard answer("ConfirmationCallback")?.numberValue == 0 else {
        decide("not confirmed")
        return (401, Self.failure)
      }
      session.stage = .profile
      next = [profileCallback()]
    case .profile:
      guard case .string(let text)? = answer("DeviceProfileCallback") else {
        decide("no profile")
        return (401, Self.failure)
      }
      guard text.utf8.count <= configuration.maximumProfileSize else {
        decide("profile too large (\(text.utf8.count) bytes)")
        return (401, Self.failure)
      }
      guard let profile = try? JSONParser.parse(Array(text.utf8)) else {
        decide("profile not JSON")
        return (401, Self.failure)
      }
      lock.withLock { profiles.append(profile) }
      let result = DeviceMatcher(config: configuration.match)
        .match(incoming: profile, storedProfiles: configuration.storedProfiles[session.user] ?? [])
      decide("device match: \(result.outcome.rawValue)")
      guard result.outcome == Outcome.`true` else { return (401, Self.failure) }
      decide("success")
      return (200, JSONWriter.compact(["tokenId": .string(token), "successUrl": "/am/console", "realm": "/alpha"]))
    }
    lock.withLock { sessions[authId] = session }
    return (200, step(authId, next))
  }

  /// Reads `Accept-API-Version` as AM does: comma-separated `key=value` pairs, blanks around
  /// them ignored, in any order — the SDKs spell it three ways (JS `protocol=1.0,resource=2.1`,
  /// Android `resource=2.1, protocol=1.0`, iOS `resource=2.1,protocol=1.0`). The authenticate
  /// endpoint of the trees here takes resource 2.1 and protocol 1.0.
  static func acceptsAuthenticateVersion(_ header: String?) -> Bool {
    guard let header else { return false }
    var pairs: [String: String] = [:]
    for part in header.split(separator: ",") {
      let pair = part.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
      guard pair.count == 2, pairs.updateValue(pair[1], forKey: pair[0]) == nil else { return false }
    }
    return pairs == ["resource": "2.1", "protocol": "1.0"]
  }

  private func step(_ authId: String, _ callbacks: [JSON]) -> String {
    JSONWriter.compact([
      "authId": .string(authId), "callbacks": .array(callbacks), "header": "Sign in", "stage": "DeviceProfiling1",
    ])
  }

  private func callback(_ type: String, output: [(String, JSON)], input: Bool = false) -> JSON {
    var object: JSONObject = ["type": .string(type)]
    object["output"] = .array(output.map { ["name": .string($0.0), "value": $0.1] })
    if input { object["input"] = [["name": "IDToken1", "value": ""]] }
    return .object(object)
  }

  /// As AM's Device Profile Collector node sends it (reference/callbacks/…-All.json).
  private func profileCallback() -> JSON {
    callback(
      "DeviceProfileCallback",
      output: [("metadata", true), ("location", true), ("message", "Collecting profile ...")], input: true)
  }
}

struct ServerError: Error, CustomStringConvertible {
  var description: String
  init(_ description: String) { self.description = description }
}

/// A self-signed certificate for 127.0.0.1, made with the openssl command in `directory`.
func makeSelfSignedCertificate(in directory: String) throws -> (certificate: String, key: String) {
  let certificate = directory + "/server-cert.pem"
  let key = directory + "/server-key.pem"
  let result = try run(
    [
      "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", key, "-out",
      certificate, "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
    ], executable: "/usr/bin/openssl")
  guard result.status == 0 else { throw ServerError("openssl req failed: \(result.stderr)") }
  return (certificate, key)
}

/// glibc's accept4 (a GNU extension the Glibc module does not import): the connection is
/// close-on-exec from the start, never inherited by a child a test spawns meanwhile.
/// glibc's pipe2, for the same reason.
@_silgen_name("pipe2") private func pipe2(_ fds: UnsafeMutablePointer<Int32>, _ flags: Int32) -> Int32

@_silgen_name("accept4") private func accept4(
  _ fd: Int32, _ address: UnsafeMutablePointer<sockaddr>?, _ length: UnsafeMutablePointer<socklen_t>?, _ flags: Int32
) -> Int32
