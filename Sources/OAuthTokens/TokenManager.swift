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
  }

  public func validTokens(margin: Double) throws -> Result {
    let settings = client.settings
    return try store.locked { () throws -> Result in
      guard let tokens = try store.load(server: settings.server, realm: settings.realm, clientId: settings.clientId) else {
        return .notLoggedIn
      }
      if tokens.isValid(at: client.now(), margin: margin) { return .valid(tokens, refreshed: false) }
      guard tokens.refreshToken != nil else { return .loginRequired(tokens, reason: nil) }
      let refreshed: StoredTokens
      do { refreshed = try client.refresh(tokens) } catch let error as OAuthError where error.needsLogin {
        return .loginRequired(tokens, reason: error)
      }
      try store.save(refreshed)
      return .valid(refreshed, refreshed: true)
    }
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
