/// Hands out a valid access token for one client, refreshing it when it expires within
/// `margin` seconds — one refresh at a time however many processes ask at once: the store's
/// lock is held from reading the tokens to saving the refreshed ones, so the processes that
/// waited find the new token and send nothing (`gcloud auth print-access-token`, kubelogin).
public final class TokenManager {
  public let store: TokenStore
  public let client: OAuthClient

  public init(store: TokenStore, client: OAuthClient) {
    self.store = store
    self.client = client
  }

  /// The outcome of asking for a token.
  public enum Result: Sendable {
    /// Valid for at least the margin; `refreshed` when this call refreshed it.
    case valid(StoredTokens, refreshed: Bool)
    /// Nothing is stored for the client: log in.
    case notLoggedIn
    /// The stored grant ended (the refresh token was refused, or there is none and the access
    /// token expired): log in again. The old tokens stay until the login replaces them.
    case loginRequired(StoredTokens, reason: OAuthError?)
    /// Another process held the store's lock past the deadline (logging in, most likely).
    case busy
    /// The grant had ended and `logIn` logged in again; the new tokens are stored.
    case loggedIn(StoredTokens)
  }

  public func validTokens(margin: Double) throws -> Result {
    try validTokens(margin: margin, until: nil, logIn: { _, _ in nil })
  }

  /// A valid token as `validTokens(margin:)` gives it; when the grant ended, `logIn` is called
  /// with the old tokens and the reason and may log in again (nil: it does not, and the result
  /// is `.loginRequired`). The lock is held throughout, the login included, so concurrent
  /// callers wait for the one login and then find its tokens instead of each asking the person
  /// again; they wait until `deadline` (CLOCK_MONOTONIC seconds; nil: as long as it takes),
  /// then get `.busy`.
  public func validTokens(
    margin: Double, until deadline: Double?, logIn: (_ stale: StoredTokens, _ reason: OAuthError?) throws -> StoredTokens?
  ) throws -> Result {
    let settings = client.settings
    let outcome = try store.locked(until: deadline) { () throws -> Result in
      guard let tokens = try store.load(server: settings.server, realm: settings.realm, clientId: settings.clientId) else {
        return .notLoggedIn
      }
      if tokens.isValid(at: client.now(), margin: margin) { return .valid(tokens, refreshed: false) }
      var reason: OAuthError?
      if tokens.refreshToken != nil {
        do {
          let refreshed = try client.refresh(tokens)
          try store.save(refreshed)
          return .valid(refreshed, refreshed: true)
        } catch let error as OAuthError where error.needsLogin {
          reason = error
        }
      }
      guard let fresh = try logIn(tokens, reason) else { return .loginRequired(tokens, reason: reason) }
      try store.save(fresh)
      return .loggedIn(fresh)
    }
    return outcome ?? .busy
  }

  /// Marks the stored access token expired (git's `erase`: the server refused it), so the next
  /// call refreshes. Nothing stored is not an error.
  public func expire() throws {
    let settings = client.settings
    try store.locked {
      guard var tokens = try store.load(server: settings.server, realm: settings.realm, clientId: settings.clientId) else { return }
      tokens.expiresAt = min(tokens.expiresAt, client.now())
      try store.save(tokens)
    }
  }

  /// Changes the stored tokens under the lock (e.g. the git hosts they are for); nil when
  /// nothing is stored.
  @discardableResult
  public func update(_ change: (inout StoredTokens) -> Void) throws -> StoredTokens? {
    let settings = client.settings
    return try store.locked { () throws -> StoredTokens? in
      guard var tokens = try store.load(server: settings.server, realm: settings.realm, clientId: settings.clientId) else { return nil }
      let before = tokens
      change(&tokens)
      if tokens != before { try store.save(tokens) }
      return tokens
    }
  }

  /// Saves the tokens of a login.
  public func save(_ tokens: StoredTokens) throws {
    try store.locked { try store.save(tokens) }
  }
}
