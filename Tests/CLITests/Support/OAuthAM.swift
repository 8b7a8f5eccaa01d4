import Foundation
import ProfileJSON
import TestSupport

#if canImport(Glibc)
  import Glibc
#endif

/// The OAuth 2.0 test AM (Support/oauth-am.py): AM's authenticate, session and OAuth 2.0
/// endpoints on 127.0.0.1, with PKCE, the grants, the ID token and revocation done by Authlib
/// (Debian's python3-authlib) — an implementation this project did not write judges the client.
final class OAuthAM {
  let port: Int
  let scheme: String
  private let pid: pid_t
  private var input: Int32
  private let logPath: String

  var url: String { "\(scheme)://127.0.0.1:\(port)/am" }
  var base: String { "\(scheme)://127.0.0.1:\(port)" }
  /// The server's certificate (PEM) when it speaks HTTPS.
  let certificate: String?
  static let script = cliFixture("../Support/oauth-am.py")
  static let user = "demo"
  static let password = "Secret123!"
  static let clientId = "fr-cli"

  /// Starts the server with `arguments` (--expires-in N, --rotate-refresh, --refresh-delay-ms N)
  /// and waits for its "PORT n" line (at most 60 s). With `tls` (a certificate and its key,
  /// makeSelfSignedCertificate), it speaks HTTPS.
  /// Another test AM of the same shape (`script`: a "PORT n" line, stdin's EOF ends it) runs
  /// the same way: webauthn-am.py (WebAuthnJourneyTests).
  init(_ arguments: [String] = [], tls: (certificate: String, key: String)? = nil, script: String = OAuthAM.script) throws {
    scheme = tls == nil ? "http" : "https"
    certificate = tls?.certificate
    let arguments = arguments + (tls.map { ["--tls", $0.certificate, $0.key] } ?? [])
    var stdinPipe: [Int32] = [0, 0]
    var stdoutPipe: [Int32] = [0, 0]
    guard pipe(&stdinPipe) == 0, pipe(&stdoutPipe) == 0 else { throw OAuthAMError("pipe failed") }
    for fd in [stdinPipe[1], stdoutPipe[0]] { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
    logPath = NSTemporaryDirectory() + "/oauth-am-\(getpid())-\(UInt32.random(in: 0 ... .max)).log"
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_adddup2(&actions, stdinPipe[0], 0)
    posix_spawn_file_actions_adddup2(&actions, stdoutPipe[1], 1)
    posix_spawn_file_actions_addopen(&actions, 2, logPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    TestProcess.closeInherited(&actions, from: 3)
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    posix_spawnattr_setpgroup(&attributes, 0)
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP))
    let argv = ["/usr/bin/python3", script] + arguments
    let argvC = argv.map { strdup($0) } + [nil]
    let envC: [UnsafeMutablePointer<CChar>?] = [strdup("PATH=/usr/bin:/bin"), nil]
    defer { for pointer in argvC + envC { free(pointer) } }
    var child: pid_t = 0
    guard posix_spawn(&child, argv[0], &actions, &attributes, argvC, envC) == 0 else { throw OAuthAMError("cannot start oauth-am.py") }
    close(stdinPipe[0])
    close(stdoutPipe[1])
    pid = child
    input = stdinPipe[1]
    defer { close(stdoutPipe[0]) }
    var line: [UInt8] = []
    let deadline = Date().addingTimeInterval(60)
    var byte: UInt8 = 0
    while line.last != 10 {
      var poller = pollfd(fd: stdoutPipe[0], events: Int16(POLLIN), revents: 0)
      let left = Int32(max(0, deadline.timeIntervalSinceNow * 1000))
      guard left > 0, poll(&poller, 1, left) > 0, read(stdoutPipe[0], &byte, 1) == 1 else {
        let log = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
        kill(-child, SIGKILL)
        waitpid(child, nil, 0)
        throw OAuthAMError("oauth-am.py did not start: \(log)")
      }
      line.append(byte)
    }
    let text = String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    guard text.hasPrefix("PORT "), let port = Int(text.dropFirst(5)) else { throw OAuthAMError("oauth-am.py said \(text)") }
    self.port = port
  }

  /// Ends the server (its stdin closed; killed when it has not ended within 10 s) and returns
  /// its request log.
  @discardableResult
  func stop() -> String {
    if input >= 0 {
      close(input)
      input = -1
      // A timer kills the process group if it has not ended within 10 s of its EOF.
      let ended = DispatchSemaphore(value: 0)
      let group = pid
      DispatchQueue.global().async { if ended.wait(timeout: .now() + 10) == .timedOut { kill(-group, SIGKILL) } }
      var status: Int32 = 0
      while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
      ended.signal()
    }
    let log = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
    unlink(logPath)
    return log
  }

  deinit { stop() }

  /// A request to the server with curl (the test's own client, not fr-profile's).
  func curl(_ method: String, _ path: String, body: String? = nil, headers: [String] = []) throws -> (status: Int, body: String) {
    var arguments = ["/usr/bin/curl", "-sS", "-o", "-", "-w", "\n%{http_code}", "-X", method, base + path]
    if let certificate { arguments += ["--cacert", certificate] }
    for header in headers { arguments += ["-H", header] }
    if let body { arguments += ["-H", "Content-Type: application/json", "--data-binary", body] }
    let result = try TestProcess.run(arguments, environment: [:], stdin: [], timeout: 60)
    let text = result.stdout
    guard let newline = text.lastIndex(of: "\n"), let status = Int(text[text.index(after: newline)...]) else {
      throw OAuthAMError("curl \(path): \(result.stderr)")
    }
    return (status, String(text[..<newline]))
  }

  func control(_ path: String, _ body: String = "{}") throws {
    let result = try curl("POST", "/control/" + path, body: body)
    guard result.status == 200 else { throw OAuthAMError("/control/\(path): HTTP \(result.status) \(result.body)") }
  }

  func stats() throws -> JSON {
    try JSONParser.parse(Array(try curl("GET", "/control/stats").body.utf8))
  }

  func count(_ name: String) throws -> Int { Int(try stats()[name]?.numberValue ?? -1) }

  /// GET /api/whoami with the access token: 200 when the server takes it.
  func whoami(_ accessToken: String) throws -> Int {
    try curl("GET", "/api/whoami", headers: ["Authorization: Bearer \(accessToken)"]).status
  }
}

struct OAuthAMError: Error, CustomStringConvertible {
  let description: String
  init(_ description: String) { self.description = description }
}

func withOAuthAM<T>(_ arguments: [String] = [], tls: (certificate: String, key: String)? = nil, _ body: (OAuthAM) throws -> T)
  throws -> T
{
  let server = try OAuthAM(arguments, tls: tls)
  defer { server.stop() }
  return try body(server)
}
