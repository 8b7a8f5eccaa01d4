import Foundation
import ProfileJSON
import TestSupport
import Testing

/// OAuth 2.0 after the journey (authorization code with PKCE), `token` with its
/// refresh, lock and formats, and `logout` — against an authorization server built on Authlib
/// (Support/oauth-am.py), so PKCE, refresh, revocation and the ID token's signature are judged
/// by an implementation this project did not write.
@Suite(.timeLimit(.minutes(10)))
struct TokenCommandTests {
  typealias AM = OAuthAM

  func withLogin(_ serverArguments: [String] = [], _ body: (AM, String) throws -> Void) throws {
    try withOAuthAM(serverArguments) { server in
      let directory = try makeTemporaryDirectory("fr-profile-tokens")
      defer { removeTemporaryDirectory(directory) }
      chmod(directory, 0o700)
      let login = try journey(server, directory)
      try #require(login.status == 0, "\(login.stderr)")
      try body(server, directory)
    }
  }

  func journey(_ server: AM, _ directory: String, _ extra: [String] = [], clientId: String = AM.clientId) throws -> RunResult {
    try run(
      [
        "journey", "--server", server.url, "--realm", "alpha", "--tree", "Login", "--user", AM.user, "--password-stdin",
        "--client-id", clientId, "--state-dir", directory + "/state", "--root", machineRoot("laptop"),
      ] + extra, stdin: AM.password + "\n")
  }

  func token(_ server: AM, _ directory: String, _ extra: [String] = [], environment: [String: String] = [:], prefix: [String] = [])
    throws -> RunResult
  {
    try run(
      ["token", "--server", server.url, "--realm", "alpha", "--client-id", AM.clientId, "--state-dir", directory + "/state"] + extra,
      environment: environment, prefix: prefix)
  }

  func tokenFiles(_ directory: String) -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: directory + "/state/tokens")) ?? []).filter { $0.hasSuffix(".json") }
      .map { directory + "/state/tokens/" + $0 }
  }

  func stored(_ directory: String) throws -> JSON {
    let files = tokenFiles(directory)
    try #require(files.count == 1, "\(files)")
    return try JSONParser.parse(Array(try String(contentsOfFile: files[0], encoding: .utf8).utf8))
  }

  /// Makes the stored access token look expired (as a later run would find it).
  func expireStoredToken(_ directory: String) throws {
    let path = tokenFiles(directory)[0]
    guard case .object(var object) = try stored(directory) else { throw OAuthAMError("not an object") }
    object["expiresAt"] = 0
    try (JSONWriter.pretty(.object(object)) + "\n").write(toFile: path, atomically: true, encoding: .utf8)
    chmod(path, 0o600)
  }

  // MARK: Login and token

  @Test("journey --client-id: the code flow with PKCE judged by Authlib, the tokens stored 0600, token prints one the API takes")
  func logInAndPrintAToken() throws {
    try withOAuthAM { server in
      let directory = try makeTemporaryDirectory("fr-profile-tokens")
      defer { removeTemporaryDirectory(directory) }
      chmod(directory, 0o700)
      let login = try journey(server, directory)
      #expect(login.status == 0, "\(login.stderr)")
      #expect(login.stdout.isEmpty, "the SSO token is stored, not printed: \(login.stdout)")
      #expect(login.stderr.contains("logged in"), "\(login.stderr)")
      let files = tokenFiles(directory)
      try #require(files.count == 1)
      #expect(fileMode(files[0]) == 0o600)
      #expect(fileMode(directory + "/state/tokens") == 0o700)
      let document = try stored(directory)
      expectValid(JSONWriter.compact(document), schema: "stored-tokens")
      let accessToken = try #require(document["accessToken"]?.stringValue)
      let refreshToken = try #require(document["refreshToken"]?.stringValue)
      #expect(document["tree"] == "Login" && document["clientId"] == "fr-cli" && document["sessionToken"] != nil)

      let bare = try token(server, directory)
      #expect(bare.status == 0, "\(bare.stderr)")
      #expect(bare.stdout == accessToken + "\n")
      #expect(try server.whoami(accessToken) == 200)

      let json = try token(server, directory, ["--format", "json"])
      #expect(json.status == 0, "\(json.stderr)")
      expectValid(json.stdout, schema: "token-output")
      let output = try JSONParser.parse(Array(json.stdout.utf8))
      #expect(output["id_token_claims"]?["sub"] == "demo" && output["id_token_claims"]?["aud"] == "fr-cli")
      #expect((output["expires_in"]?.numberValue ?? 0) > 3500)

      let stats = try server.stats()
      #expect(stats["token_authorization_code"] == 1 && stats["token_refresh_token"] == 0 && stats["authorize"] == 1, "\(stats)")
      for output in [login.stderr, bare.stderr, json.stderr] {
        for secret in [AM.password, refreshToken, accessToken, document["sessionToken"]?.stringValue ?? "-"] {
          #expect(!output.contains(secret), "a secret on stderr: \(output)")
        }
      }
    }
  }

  @Test(
    "the server's word is checked: a wrong state, forged or misaddressed ID tokens, consent pages and unknown clients are refused, nothing stored"
  )
  func forgedResponsesAreRefused() throws {
    try withOAuthAM { server in
      let directory = try makeTemporaryDirectory("fr-profile-tokens")
      defer { removeTemporaryDirectory(directory) }
      chmod(directory, 0o700)
      let cases: [(mode: String, expected: String)] = [
        ("bad-signature", "signature does not verify"), ("other-key", "signature does not verify"), ("wrong-aud", "aud claim"),
        ("wrong-iss", "iss claim"), ("expired", "exp claim"), ("wrong-nonce", "nonce claim"), ("alg-none", "algorithm none"),
      ]
      for (mode, expected) in cases {
        try server.control("id-token", "{\"mode\": \"\(mode)\"}")
        let refused = try journey(server, directory)
        #expect(
          refused.status == 76 && refused.stderr.contains("ID token is refused") && refused.stderr.contains(expected),
          "\(mode): \(refused.stderr)")
        #expect(tokenFiles(directory).isEmpty, "\(mode): tokens stored")
      }
      try server.control("id-token", "{\"mode\": \"normal\"}")

      try server.control("state", "{\"mode\": \"wrong\"}")
      let wrongState = try journey(server, directory)
      #expect(wrongState.status == 76 && wrongState.stderr.contains("state is not the one sent"), "\(wrongState.stderr)")
      try server.control("state", "{\"mode\": \"normal\"}")
      #expect(try server.count("token_authorization_code") == cases.count, "the forged state's code was exchanged")

      let consent = try journey(server, directory, clientId: "needs-consent")
      #expect(consent.status == 1 && consent.stderr.contains("Implied Consent"), "\(consent.stderr)")
      let unknown = try journey(server, directory, clientId: "no-such-client")
      #expect(
        unknown.status == 1 && unknown.stderr.contains("invalid_client") && unknown.stderr.contains("--redirect-uri"), "\(unknown.stderr)")
      #expect(tokenFiles(directory).isEmpty)
    }
  }

  @Test("Authlib's own checks hold (a wrong PKCE verifier, a reused code and a revoked refresh token are refused): oauth-am-selftest.sh")
  func theJudgeJudges() throws {
    let result = try run(
      [cliFixture("../Support/oauth-am-selftest.sh")], environment: ["PATH": "/usr/bin:/bin"], executable: "/bin/bash", timeout: 300)
    #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
    #expect(result.stdout.contains("token with a wrong code_verifier: 400 invalid_grant"), "\(result.stdout)")
  }

  // MARK: Refresh

  @Test("a token about to expire is refreshed (expires_in 1), a rotated refresh token kept; the API takes the new one")
  func refreshOnExpiry() throws {
    try withLogin(["--expires-in", "1", "--rotate-refresh"]) { server, directory in
      let before = try stored(directory)
      let refreshed = try token(server, directory)
      #expect(refreshed.status == 0, "\(refreshed.stderr)")
      let after = try stored(directory)
      #expect(refreshed.stdout == (after["accessToken"]?.stringValue ?? "") + "\n")
      #expect(after["accessToken"] != before["accessToken"] && after["refreshToken"] != before["refreshToken"])
      #expect(after["idToken"] != nil && after["sessionToken"] == before["sessionToken"] && after["tree"] == "Login")
      #expect(try server.count("token_refresh_token") == 1)
      #expect(try server.whoami(after["accessToken"]?.stringValue ?? "") == 200)
      expectValid(JSONWriter.compact(after), schema: "stored-tokens")
    }
  }

  @Test("ten programs asking at once for an expired token cause one refresh, and all get its token")
  func concurrentCallersRefreshOnce() throws {
    try withOAuthAM(["--refresh-delay-ms", "400", "--rotate-refresh"]) { server in
      let directory = try makeTemporaryDirectory("fr-profile-tokens")
      defer { removeTemporaryDirectory(directory) }
      chmod(directory, 0o700)
      let login = try journey(server, directory)
      try #require(login.status == 0, "\(login.stderr)")
      try expireStoredToken(directory)
      let lock = NSLock()
      nonisolated(unsafe) var results: [RunResult] = []
      let arguments = [
        "token", "--server", server.url, "--realm", "alpha", "--client-id", AM.clientId, "--state-dir", directory + "/state",
      ]
      DispatchQueue.concurrentPerform(iterations: 10) { _ in
        let result = (try? run(arguments)) ?? RunResult(status: -1, stdout: "", stderr: "could not run", timedOut: false)
        lock.withLock { results.append(result) }
      }
      #expect(results.allSatisfy { $0.status == 0 }, "\(results.map(\.stderr))")
      #expect(Set(results.map(\.stdout)).count == 1, "different tokens: \(Set(results.map(\.stdout)))")
      let stats = try server.stats()
      #expect(stats["token_refresh_token"] == 1 && stats["max_concurrent_refresh"] == 1, "\(stats)")
      #expect(results.first?.stdout == (try stored(directory)["accessToken"]?.stringValue ?? "") + "\n")
    }
  }

  @Test("a refresh token that no longer works: exit 5 and 'log in' without a terminal (or with --no-login); the stale tokens stay")
  func endedGrantWithoutATerminal() throws {
    try withLogin { server, directory in
      try server.control("revoke-refresh-tokens")
      try expireStoredToken(directory)
      // setsid: no controlling terminal, as under cron or a service.
      let detached = try token(server, directory, prefix: ["/usr/bin/setsid", "-w"])
      #expect(
        detached.status == 5 && detached.stderr.contains("invalid_grant") && detached.stderr.contains("log in again"), "\(detached.stderr)")
      #expect(detached.stdout.isEmpty)
      let noLogin = try token(server, directory, ["--no-login"])
      #expect(noLogin.status == 5 && noLogin.stderr.contains("fr-profile journey"), "\(noLogin.stderr)")
      #expect(tokenFiles(directory).count == 1)
      let never = try run(
        ["token", "--server", server.url, "--realm", "alpha", "--client-id", "other", "--state-dir", directory + "/state"])
      #expect(never.status == 5 && never.stderr.contains("no tokens are stored"), "\(never.stderr)")
    }
  }

  @Test("a refresh token that no longer works, at a terminal: the journey is walked again (its own prompts) and a new token printed")
  func endedGrantAtATerminal() throws {
    try withLogin { server, directory in
      try server.control("revoke-refresh-tokens")
      try expireStoredToken(directory)
      let steps: [JSON] = [
        ["expect": "User Name"], ["send": "demo\n"], ["expect": "Password"], ["echo": false], ["send": .string(AM.password + "\n")],
      ]
      let result = try run(
        [
          cliFixture("../Support/pty-drive.py"), JSONWriter.compact(.array(steps)), frProfilePath, "token", "--server", server.url,
          "--realm", "alpha", "--client-id", AM.clientId, "--state-dir", directory + "/state", "--root", machineRoot("laptop"),
        ], environment: ["TERM": "dumb", "PATH": "/usr/bin:/bin"], executable: "/usr/bin/python3")
      let screen = try JSONParser.parse(Array(result.stdout.utf8))
      let text = screen["screen"]?.stringValue ?? ""
      #expect(screen["failed"] == .null, "\(text)")
      #expect(screen["status"] == 0, "\(text)")
      let renewed = try stored(directory)["accessToken"]?.stringValue ?? "-"
      #expect(text.contains(renewed), "\(text)")
      #expect(!text.contains(AM.password))
      #expect(try server.count("token_authorization_code") == 2 && server.whoami(renewed) == 200)
    }
  }

  @Test("while another run holds the token store (logging in), token waits up to --max-time: then exit 75 at a terminal, 5 without")
  func waitForAnotherRunsLogin() throws {
    try withLogin { server, directory in
      // Another run's login, standing in: util-linux flock holds the store's lock.
      let holder = Process()
      holder.executableURL = URL(fileURLWithPath: "/usr/bin/flock")
      holder.arguments = ["--no-fork", directory + "/state/tokens/.lock", "sleep", "60"]
      try holder.run()
      defer {
        holder.terminate()
        holder.waitUntilExit()
      }
      var held = false
      for _ in 0..<200 where !held {
        let probe = try run(["-n", directory + "/state/tokens/.lock", "true"], executable: "/usr/bin/flock")
        held = probe.status != 0
        if !held { usleep(20_000) }  // the holder's start-up
      }
      try #require(held)
      let detached = try token(server, directory, ["--max-time", "0.5"], prefix: ["/usr/bin/setsid", "-w"])
      #expect(detached.status == 5 && detached.stderr.contains("holds the token store"), "\(detached.stderr)")
      #expect(detached.stdout.isEmpty)
      let atTerminal = try run(
        [
          cliFixture("../Support/pty-drive.py"), "[]", frProfilePath, "token", "--server", server.url, "--realm", "alpha", "--client-id",
          AM.clientId, "--state-dir", directory + "/state", "--max-time", "0.5",
        ], environment: ["TERM": "dumb", "PATH": "/usr/bin:/bin"], executable: "/usr/bin/python3")
      let screen = try JSONParser.parse(Array(atTerminal.stdout.utf8))
      #expect(screen["status"] == 75, "\(screen)")
      holder.terminate()
      holder.waitUntilExit()
      let after = try token(server, directory)
      let accessToken = try stored(directory)["accessToken"]?.stringValue ?? ""
      #expect(after.status == 0 && after.stdout == accessToken + "\n", "\(after.stderr)")
    }
  }

  // MARK: Logout

  @Test("logout revokes the refresh token and ends the session, deletes the file; twice is fine; token then says to log in")
  func logoutTwice() throws {
    try withLogin { server, directory in
      let document = try stored(directory)
      let accessToken = document["accessToken"]?.stringValue ?? ""
      let arguments = ["logout", "--server", server.url, "--realm", "alpha", "--state-dir", directory + "/state"]
      let first = try run(arguments)
      #expect(first.status == 0, "\(first.stderr)")
      #expect(first.stderr.contains("revoked the refresh token") && first.stderr.contains("ended the AM session"), "\(first.stderr)")
      // Nothing but the empty lock file stays (docs/tokens.md: a lock file is never deleted).
      let left = try FileManager.default.contentsOfDirectory(atPath: directory + "/state/tokens")
      #expect(left == [".lock"], "\(left)")
      #expect((try FileManager.default.attributesOfItem(atPath: directory + "/state/tokens/.lock")[.size] as? NSNumber)?.intValue == 0)
      #expect(try server.whoami(accessToken) == 401, "the access token outlived the revocation of its refresh token")
      let stats = try server.stats()
      #expect(stats["revoke"] == 1 && stats["logout"] == 1, "\(stats)")
      let second = try run(arguments)
      #expect(second.status == 0 && second.stderr.contains("nothing to log out"), "\(second.stderr)")
      let after = try token(server, directory)
      #expect(after.status == 5, "\(after.stderr)")
    }
  }

  @Test("logout without the server: the tokens are deleted anyway, the unreachable server is said, exit 68")
  func logoutUnreachable() throws {
    var directory = ""
    var url = ""
    try withLogin { server, tokensDirectory in
      // Copy the state so it outlives the server.
      directory = try makeTemporaryDirectory("fr-profile-tokens-copy")
      chmod(directory, 0o700)
      _ = try run(["-a", tokensDirectory + "/state", directory + "/state"], executable: "/bin/cp")
      url = server.url
    }
    defer { removeTemporaryDirectory(directory) }
    let result = try run(["logout", "--server", url, "--realm", "alpha", "--state-dir", directory + "/state", "--timeout", "5"])
    #expect(result.status == 68 && result.stderr.contains("could not revoke"), "\(result.stderr)")
    #expect(tokenFiles(directory).isEmpty)
  }

  // MARK: Formats for their consumers

  @Test("--format kubectl: an ExecCredential valid against the published shape, in the version kubectl asks for")
  func kubectlFormat() throws {
    try withLogin { server, directory in
      let v1 = try token(server, directory, ["--format", "kubectl"])
      #expect(v1.status == 0, "\(v1.stderr)")
      expectValid(v1.stdout, schema: "exec-credential")
      let credential = try JSONParser.parse(Array(v1.stdout.utf8))
      #expect(credential["apiVersion"] == "client.authentication.k8s.io/v1")
      #expect(credential["status"]?["token"]?.stringValue == (try stored(directory)["accessToken"]?.stringValue))
      let beta = try token(
        server, directory, ["--format", "kubectl"],
        environment: [
          "KUBERNETES_EXEC_INFO":
            #"{"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential","spec":{"interactive":false}}"#
        ])
      expectValid(beta.stdout, schema: "exec-credential")
      #expect(try JSONParser.parse(Array(beta.stdout.utf8))["apiVersion"] == "client.authentication.k8s.io/v1beta1")
    }
  }

  @Test(
    "kubectl itself runs fr-profile as its exec credential plugin and the API server gets the bearer token",
    .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/kubectl"), "kubectl is not installed (it is not in Debian)"))
  func kubectlUsesTheToken() throws {
    let directory = try makeTemporaryDirectory("fr-profile-kubectl")
    defer { removeTemporaryDirectory(directory) }
    chmod(directory, 0o700)
    // kubectl runs exec credential plugins only for servers it reaches over TLS.
    let tls = try makeSelfSignedCertificate(in: directory)
    try withOAuthAM(tls: tls) { server in
      let login = try journey(server, directory, ["--cacert", tls.certificate])
      try #require(login.status == 0, "\(login.stderr)")
      let kubeconfig = directory + "/kubeconfig"
      let arguments = [
        "token", "--server", server.url, "--realm", "alpha", "--client-id", AM.clientId, "--format", "kubectl", "--state-dir",
        directory + "/state", "--cacert", tls.certificate,
      ]
      let config: JSON = [
        "apiVersion": "v1", "kind": "Config", "current-context": "am",
        "clusters": [["name": "am", "cluster": ["server": .string(server.base), "certificate-authority": .string(tls.certificate)]]],
        "contexts": [["name": "am", "context": ["cluster": "am", "user": "fr-profile"]]],
        "users": [
          [
            "name": "fr-profile",
            "user": [
              "exec": [
                "apiVersion": "client.authentication.k8s.io/v1", "command": .string(frProfilePath),
                "args": .array(arguments.map(JSON.string)), "interactiveMode": "Never",
              ]
            ],
          ]
        ],
      ]
      try JSONWriter.pretty(config).write(toFile: kubeconfig, atomically: true, encoding: .utf8)
      let result = try run(
        ["--kubeconfig", kubeconfig, "get", "--raw", "/api/whoami"], environment: ["HOME": directory, "PATH": "/usr/bin:/bin"],
        executable: "/usr/bin/kubectl")
      #expect(result.status == 0, "\(result.stderr)")
      let answer = try? JSONParser.parse(Array(result.stdout.utf8))
      #expect(answer?["sub"] == "demo", "\(result.stdout)")
    }
  }

  @Test("--format git: git credential fill gets the token from fr-profile as its helper; reject makes the next fill refresh")
  func gitCredentialHelper() throws {
    try withLogin { server, directory in
      let helper =
        "!\(frProfilePath) token --server \(server.url) --realm alpha --client-id \(AM.clientId) --state-dir \(directory)/state --format git --git-host git.example.com"
      let git = { (action: String, input: String) in
        try run(
          ["-c", "credential.helper=", "-c", "credential.helper=\(helper)", "credential", action],
          environment: ["HOME": directory, "PATH": "/usr/bin:/bin", "GIT_TERMINAL_PROMPT": "0"], stdin: input,
          executable: "/usr/bin/git")
      }
      let request = "protocol=https\nhost=git.example.com\n\n"
      let fill = try git("fill", request)
      #expect(fill.status == 0, "\(fill.stderr)")
      let first = try stored(directory)["accessToken"]?.stringValue ?? "-"
      #expect(fill.stdout.contains("username=oauth2\n") && fill.stdout.contains("password=\(first)\n"), "\(fill.stdout)")
      let reject = try git("reject", "protocol=https\nhost=git.example.com\nusername=oauth2\npassword=\(first)\n\n")
      #expect(reject.status == 0, "\(reject.stderr)")
      let again = try git("fill", request)
      let second = try stored(directory)["accessToken"]?.stringValue ?? "-"
      #expect(second != first && again.stdout.contains("password=\(second)\n"), "\(again.stdout)")
      #expect(try server.count("token_refresh_token") == 1)
    }
  }

  /// The helper run as git runs it: `token --format git ACTION`, git's request on stdin.
  func gitHelper(_ server: AM, _ directory: String, _ action: String, _ request: String, _ extra: [String] = []) throws -> RunResult {
    try run(
      ["token", "--server", server.url, "--realm", "alpha", "--client-id", AM.clientId, "--state-dir", directory + "/state"]
        + ["--format", "git"] + extra + [action], stdin: request + "\n")
  }

  @Test(
    "--format git answers only the hosts the token is for: other hosts, ports, paths and plain http get nothing and exit 0; their erase changes nothing"
  )
  func gitHelperIsScoped() throws {
    try withLogin { server, directory in
      let token = try stored(directory)["accessToken"]?.stringValue ?? "-"
      let origin = String(server.url.dropFirst("http://".count).prefix { $0 != "/" })
      let scoped = ["--git-host", "git.example.com", "--git-host", "https://code.example.com:8443/team", "--git-host", "http://git.lan"]
      let cases: [(request: String, answered: Bool)] = [
        ("protocol=https\nhost=git.example.com", true),
        ("protocol=https\nhost=GIT.Example.COM:443", true),
        ("protocol=https\nhost=git.example.com\npath=any/repo.git", true),
        ("protocol=https\nhost=evil.example.net", false),
        ("protocol=https\nhost=git.example.com.evil.example.net", false),
        ("protocol=http\nhost=git.example.com", false),
        ("protocol=https\nhost=git.example.com:8443", false),
        ("protocol=ssh\nhost=git.example.com", false),
        ("host=git.example.com", false),
        ("protocol=https\nhost=git.example.com\nhost=evil.example.net", false),
        ("protocol=https\nhost=code.example.com:8443\npath=team/repo.git", true),
        ("protocol=https\nhost=code.example.com:8443\npath=team", true),
        ("protocol=https\nhost=code.example.com:8443\npath=teammates/repo.git", false),
        ("protocol=https\nhost=code.example.com:8443", false),
        ("protocol=http\nhost=git.lan", true),
        ("protocol=https\nhost=git.lan", false),
        ("protocol=http\nhost=\(origin)", false),
      ]
      for (request, answered) in cases {
        let result = try gitHelper(server, directory, "get", request, scoped)
        #expect(result.status == 0, "\(request): \(result.stderr)")
        if answered {
          #expect(result.stdout.contains("password=\(token)\n"), "\(request): \(result.stdout)")
        } else {
          #expect(result.stdout.isEmpty && result.stderr.isEmpty, "\(request) was answered: \(result.stdout)\(result.stderr)")
        }
      }
      // Kept with the tokens: a later run without --git-host answers the same hosts, and not the
      // server's origin.
      #expect(try stored(directory)["gitHosts"] == ["https://git.example.com", "https://code.example.com:8443/team", "http://git.lan"])
      let kept = try gitHelper(server, directory, "get", "protocol=http\nhost=git.lan")
      #expect(kept.stdout.contains("password=\(token)\n"), "\(kept.stdout)\(kept.stderr)")
      let notOrigin = try gitHelper(server, directory, "get", "protocol=http\nhost=\(origin)")
      #expect(notOrigin.status == 0 && notOrigin.stdout.isEmpty, "\(notOrigin.stdout)")
      // An erase for another host leaves the token alone.
      let before = try stored(directory)["expiresAt"]
      let erase = try gitHelper(server, directory, "erase", "protocol=https\nhost=evil.example.net\nusername=oauth2\npassword=\(token)")
      #expect(erase.status == 0 && erase.stdout.isEmpty, "\(erase.stderr)")
      #expect(try stored(directory)["expiresAt"] == before)
      #expect(try stored(directory)["accessToken"] == .string(token))
      // A refresh keeps the hosts.
      try expireStoredToken(directory)
      let refreshed = try gitHelper(server, directory, "get", "protocol=https\nhost=git.example.com")
      #expect(refreshed.status == 0 && !refreshed.stdout.contains("password=\(token)\n"), "\(refreshed.stderr)")
      #expect(try stored(directory)["gitHosts"]?.arrayValue?.count == 3)
      expectValid(JSONWriter.compact(try stored(directory)), schema: "stored-tokens")
      // A host that cannot scope anything is a usage error.
      for bad in [
        "user@git.example.com", "ftp://git.example.com", "git.example.com:99999", "git example.com", "https://git.example.com/?q",
      ] {
        let refused = try gitHelper(server, directory, "get", "protocol=https\nhost=git.example.com", ["--git-host", bad])
        #expect(refused.status == 64 && refused.stderr.contains("--git-host"), "\(bad): \(refused.stderr)")
      }
    }
  }

  @Test("--format git without --git-host answers the AM server's own origin only")
  func gitHelperDefaultsToTheServersOrigin() throws {
    try withLogin { server, directory in
      let token = try stored(directory)["accessToken"]?.stringValue ?? "-"
      let origin = String(server.url.dropFirst("http://".count).prefix { $0 != "/" })
      let own = try gitHelper(server, directory, "get", "protocol=http\nhost=\(origin)\npath=am/repo.git")
      #expect(own.status == 0 && own.stdout.contains("password=\(token)\n"), "\(own.stdout)\(own.stderr)")
      for request in ["protocol=https\nhost=\(origin)", "protocol=http\nhost=git.example.com", "protocol=http\nhost=127.0.0.2"] {
        let other = try gitHelper(server, directory, "get", request)
        #expect(other.status == 0 && other.stdout.isEmpty, "\(request): \(other.stdout)")
      }
      // With no tokens stored at all, another host is still no answer, not an error.
      let empty = try makeTemporaryDirectory("fr-profile-tokens")
      defer { removeTemporaryDirectory(empty) }
      let none = try gitHelper(server, empty, "get", "protocol=https\nhost=evil.example.net")
      #expect(none.status == 0 && none.stdout.isEmpty && none.stderr.isEmpty, "\(none.stderr)")
    }
  }

  @Test(
    "a token endpoint's expires_in of 1e300, 1e19 or 0 is refused naming the field (exit 76); a stored one is read as expired, never trapped on"
  )
  func hostileExpiresIn() throws {
    try withLogin { server, directory in
      for mode in ["expires-in-1e300", "expires-in-1e19", "expires-in-0"] {
        try server.control("token-response", "{\"mode\": \"\(mode)\"}")
        try expireStoredToken(directory)
        let refused = try token(server, directory)
        #expect(refused.status == 76 && refused.stderr.contains("expires_in"), "\(mode): \(refused.status) \(refused.stderr)")
        #expect(try stored(directory)["expiresAt"] == 0, "\(mode): stored")
      }
      try server.control("token-response", "{\"mode\": \"normal\"}")
      // A store written with such a value (by an older version, or by hand): refreshed, and
      // every format prints.
      for huge in [1e300, 1e19, 9.3e18] {
        let path = tokenFiles(directory)[0]
        guard case .object(var object) = try stored(directory) else { throw OAuthAMError("not an object") }
        let old = object["accessToken"]
        object["expiresAt"] = .number(huge)
        try (JSONWriter.pretty(.object(object)) + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        chmod(path, 0o600)
        for format in ["json", "kubectl"] {
          let result = try token(server, directory, ["--format", format])
          #expect(result.status == 0, "\(huge) \(format): \(result.status) \(result.stderr)")
        }
        let git = try gitHelper(
          server, directory, "get", "protocol=http\nhost=\(server.url.dropFirst("http://".count).prefix { $0 != "/" })")
        #expect(git.status == 0 && git.stdout.contains("password_expiry_utc="), "\(huge): \(git.status) \(git.stderr)")
        #expect(try stored(directory)["accessToken"] != old, "\(huge): not refreshed")
        let expiresAt = try stored(directory)["expiresAt"]?.numberValue ?? 0
        #expect(expiresAt < Date().timeIntervalSince1970 + 31_536_000, "\(huge): \(expiresAt)")
      }
    }
  }

  @Test("a token endpoint's error_description is one bounded line on stderr: no forged lines, no 200 KB, no escapes")
  func hostileErrorDescription() throws {
    try withLogin { server, directory in
      try server.control("token-response", "{\"mode\": \"hostile-error\"}")
      try expireStoredToken(directory)
      let refused = try token(server, directory)
      #expect(refused.status == 1, "\(refused.status) \(refused.stderr.prefix(300))")
      #expect(refused.stderr.contains("invalid_request") && refused.stderr.contains("refused"), "\(refused.stderr.prefix(300))")
      let lines = refused.stderr.split(separator: "\n")
      #expect(lines.count == 1, "\(lines.count) lines: \(refused.stderr.prefix(300))")
      #expect(!refused.stderr.contains("fr-profile: note: forged") || lines.count == 1)
      #expect(refused.stderr.utf8.count < 2000, "\(refused.stderr.utf8.count) bytes")
      #expect(!refused.stderr.contains("\u{1B}"))
    }
  }

  // MARK: The store is a secret

  @Test("a token file others may read, or another user's, is refused; a corrupt one is named")
  func storeIsChecked() throws {
    try withLogin { server, directory in
      let path = tokenFiles(directory)[0]
      chmod(path, 0o644)
      let loose = try token(server, directory)
      #expect(loose.status == 77 && loose.stderr.contains("mode 644") && loose.stdout.isEmpty, "\(loose.stderr)")
      chmod(path, 0o600)
      chown(path, 65534, 65534)
      let foreign = try token(server, directory)
      #expect(foreign.status == 77 && foreign.stderr.contains("uid 65534"), "\(foreign.stderr)")
      chown(path, 0, 0)
      try "{\"version\": 1}".write(toFile: path, atomically: false, encoding: .utf8)
      let corrupt = try token(server, directory)
      #expect(
        corrupt.status == 65 && corrupt.stderr.contains(URL(fileURLWithPath: path).lastPathComponent)
          && corrupt.stderr.contains("is missing"), "\(corrupt.stderr)")
    }
  }
}
