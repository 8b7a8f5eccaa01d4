import Dispatch
import OAuthTokens
import ProfileJSON
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// A login again happens inside the token store's lock: a second caller waits for it and takes
/// its tokens instead of asking the person again, or gives up at its deadline.
@Suite(.timeLimit(.minutes(10))) struct TokenLockTests {
  static func tokens(_ accessToken: String, expiresAt: Double) -> StoredTokens {
    StoredTokens(
      server: "https://am.example.com/am", realm: "alpha", clientId: "cli", scope: "openid", redirectURI: "urn:x",
      provider: ProviderConfiguration(
        issuer: "https://am.example.com/am/oauth2/realms/root/realms/alpha", authorizationEndpoint: "https://am.example.com/a",
        tokenEndpoint: "https://am.example.com/t", revocationEndpoint: nil, jwksURI: "https://am.example.com/j"),
      accessToken: accessToken, tokenType: "Bearer", expiresAt: expiresAt, refreshToken: nil, idToken: nil, grantedScope: nil,
      sessionToken: nil, cookieName: "iPlanetDirectoryPro", tree: "Login", obtainedAt: 0)
  }

  static func manager(_ directory: String) throws -> TokenManager {
    let client = OAuthClient(
      settings: OAuthClientSettings(
        server: "https://am.example.com/am", realm: "alpha", clientId: "cli", scope: "openid", redirectURI: "urn:x",
        cookieName: "iPlanetDirectoryPro"),
      transport: { _ in throw OAuthLockTestError() })
    return TokenManager(store: try TokenStore.open(stateDirectory: directory, create: true), client: client)
  }

  struct OAuthLockTestError: Error {}
  /// A second login started while the first one ran.
  struct SecondLogin: Error {}

  static func now() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
  }

  @Test("the second caller waits for the first one's login and takes its tokens; a short deadline gives busy")
  func oneLoginForConcurrentCallers() throws {
    let tree = try TemporaryTree()
    defer { tree.remove() }
    let directory = tree.root + "/state"
    try Self.manager(directory).save(Self.tokens("stale", expiresAt: 0))
    // Signalled once for each of the two callers that start once the login runs.
    let loginStarted = DispatchSemaphore(value: 0)
    let results = onThreads(3) { index -> String in
      do {
        let manager = try Self.manager(directory)
        switch index {
        case 0:
          let result = try manager.validTokens(margin: 60, until: nil) { stale, _ in
            loginStarted.signal()
            loginStarted.signal()
            usleep(600_000)  // a person typing at the login's prompts
            return Self.tokens("fresh", expiresAt: Double(time(nil)) + 3600)
          }
          if case .loggedIn(let tokens) = result { return "logged in \(tokens.accessToken)" }
          return "\(result)"
        case 1:
          _ = loginStarted.wait(timeout: .now() + 60)
          let result = try manager.validTokens(margin: 60, until: Self.now() + 30) { _, _ in
            throw SecondLogin()
          }
          if case .valid(let tokens, false) = result { return "found \(tokens.accessToken)" }
          return "\(result)"
        default:
          _ = loginStarted.wait(timeout: .now() + 60)
          let result = try manager.validTokens(margin: 60, until: Self.now() + 0.1) { _, _ in nil }
          if case .busy = result { return "busy" }
          return "\(result)"
        }
      } catch {
        return "error \(error)"
      }
    }
    #expect(results == ["logged in fresh", "found fresh", "busy"])
  }

  @Test("without a login the ended grant is reported with the stale tokens, which stay")
  func noLoginLeavesTheStaleTokens() throws {
    let tree = try TemporaryTree()
    defer { tree.remove() }
    let directory = tree.root + "/state"
    let manager = try Self.manager(directory)
    try manager.save(Self.tokens("stale", expiresAt: 0))
    guard case .loginRequired(let stale, nil) = try manager.validTokens(margin: 60) else {
      Issue.record("not loginRequired")
      return
    }
    #expect(stale.accessToken == "stale")
  }
}
