import Foundation
import Testing

/// One transport rule for every command that sends a credential to AM: https://, or
/// plain http:// only to this machine (localhost, 127.0.0.0/8, ::1) or with --insecure-http.
/// `journey` sends the password, `keys delete --server` the SSO token.
@Suite(.timeLimit(.minutes(10))) struct TransportRuleTests {
  /// The rule, word for word, in the help of each command it governs.
  static let rule = "Plain http:// is refused except to a loopback address (localhost, 127.0.0.0/8, ::1)"

  func withState(_ body: (String) throws -> Void) throws {
    let directory = try makeTemporaryDirectory("fr-profile-transport")
    defer { removeTemporaryDirectory(directory) }
    try body(directory + "/state")
  }

  /// `keys delete` of a kid that does not exist: past validation it would answer 1 (no such key)
  /// before reading stdin; reading the (empty) stdin would be 65, connecting 68 or 75.
  func keysDelete(_ server: String, state: String, _ extra: [String] = []) throws -> RunResult {
    try run(
      ["keys", "delete", "2ed8f1a6-0e55-4d8b-9a43-5f0c7c3d9b21", "--state-dir", state, "--server", server, "--token-stdin"] + extra,
      stdin: "")
  }

  @Test(arguments: [
    "http://192.0.2.1/am", "http://am.example.com:8080/am", "http://127.0.0.1@192.0.2.1/am", "http://localhost.example.com/am",
    "http://127.0.0.1.example.com/am", "http://[::ffff:192.0.2.1]/am",
  ])
  func keysDeleteRefusesPlainHTTPToAnotherMachineBeforeReadingTheToken(server: String) throws {
    try withState { state in
      let result = try keysDelete(server, state: state)
      #expect(result.status == 64, "\(result.stderr)")
      #expect(result.stderr.contains("--insecure-http"), "\(result.stderr)")
      #expect(result.stderr.contains("the SSO token would travel in clear"), "\(result.stderr)")
      #expect(result.stdout.isEmpty)
    }
  }

  @Test(arguments: ["http://127.0.0.1:9/am", "http://127.10.0.3:9/am", "http://localhost:9/am", "http://[::1]:9/am"])
  func keysDeleteAllowsPlainHTTPToThisMachine(server: String) throws {
    try withState { state in
      let result = try keysDelete(server, state: state)
      #expect(result.status == 1, "\(result.stderr)")
      #expect(result.stderr.contains("no bound key"), "\(result.stderr)")
      #expect(!result.stderr.contains("warning"), "\(result.stderr)")
    }
  }

  @Test func keysDeleteWithInsecureHTTPAllowsAnotherMachineAndWarns() throws {
    try withState { state in
      let result = try keysDelete("http://192.0.2.1/am", state: state, ["--insecure-http"])
      #expect(result.status == 1, "\(result.stderr)")
      #expect(result.stderr.contains("warning: --insecure-http"), "\(result.stderr)")
      #expect(result.stderr.contains("the SSO token travels in clear"), "\(result.stderr)")
    }
  }

  @Test func insecureHTTPGoesWithServer() throws {
    try withState { state in
      let result = try run(["keys", "delete", "2ed8f1a6", "--state-dir", state, "--insecure-http"])
      #expect(result.status == 64, "\(result.stderr)")
      #expect(result.stderr.contains("--insecure-http"), "\(result.stderr)")
    }
  }

  @Test func journeyRefusesPlainHTTPToAnotherMachineWithTheSameRule() throws {
    try withState { state in
      let result = try run(
        [
          "journey", "--server", "http://127.0.0.1@192.0.2.1/am", "--realm", "root", "--tree", "Login", "--user", "demo",
          "--password-stdin", "--state-dir", state,
        ], stdin: "")
      #expect(result.status == 64, "\(result.stderr)")
      #expect(result.stderr.contains("the password and the session token would travel in clear"), "\(result.stderr)")
      #expect(result.stderr.contains("--insecure-http"), "\(result.stderr)")
    }
  }

  @Test(arguments: [["journey", "--help"], ["keys", "delete", "--help"]])
  func helpStatesTheRule(arguments: [String]) throws {
    let help = try run(arguments)
    #expect(help.status == 0)
    let text = help.stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
    #expect(text.contains(Self.rule), "\(help.stdout)")
    #expect(text.contains("--insecure-http"), "\(help.stdout)")
  }
}
