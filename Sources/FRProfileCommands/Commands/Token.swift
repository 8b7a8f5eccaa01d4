import ArgumentParser
import Collectors
import Journey
import JourneyHTTP
import Login
import OAuthTokens
import ProfileCLI
import ProfileJSON
import SystemCalls

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// `fr-profile token`: a valid access token for programs, as `gcloud auth print-access-token`,
/// `az account get-access-token` and kubelogin hand them out.
extension FRProfile {
  struct Token: ParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "token",
      abstract: "Print a valid OAuth 2.0 access token, refreshed when it is about to expire.",
      discussion: """
        Prints the access token that 'fr-profile journey … --client-id CLIENT' stored for this \
        server, realm and client. When it expires within --min-validity seconds (default 60) \
        it is refreshed first — one refresh at a time however many programs ask at once. When \
        the refresh token no longer works (it expired or was revoked), the journey is walked \
        again on the terminal (the tree that logged in, or --tree); without a terminal, or \
        with --no-login, the command ends with exit 5 and says to log in. --max-time bounds \
        a new login and the wait for another run's login (then exit 75; 5 without a terminal).

        FORMATS (--format):
          bare      the access token alone (default): curl -H "Authorization: Bearer $(…)"
          json      access_token, token_type, expires_at (RFC 3339), expires_in, scope, and the
                    claims of the ID token (verified against the realm's JWKS when it arrived)
          kubectl   a client.authentication.k8s.io ExecCredential, for a kubeconfig user's exec
                    entry (the apiVersion kubectl asks for in KUBERNETES_EXEC_INFO, else v1)
          git       the git credential-helper protocol: 'get' prints username= (--git-username)
                    and password=<access token>; 'erase' (git's reaction to a refused token)
                    makes the next 'get' refresh; 'store' does nothing. Only for the hosts the
                    token is for: the --server's origin, or each --git-host (kept with the
                    tokens); for any other protocol, host, port or path nothing is printed and
                    the exit is 0, so git asks its next helper. Plain http only for a host given
                    as http://HOST

        The token is a credential: it goes to stdout (or -o FILE, mode 0600), never to stderr \
        or a log. The stored tokens are a 0600 file under the state directory's tokens/ \
        (docs/tokens.md).

        \(ExitStatus.helpSection(
        [
          .success, .negative, .loginRequired, .usage, .dataError, .untrustedServer, .cannotConnect, .libraryMissing,
          .cannotCreate, .ioError, .timedOut, .badResponse, .permission, .configuration,
        ],
        [
          .negative: "AM refused the token request or the new login",
          .badResponse: "the server's answer is not a usable OAuth 2.0 response, or the ID token failed verification",
        ]))

        EXAMPLES:
          fr-profile token --server https://am.example.com/am --realm alpha \\
              --client-id fr-cli
          curl -H "Authorization: Bearer $(fr-profile token --server \\
              https://am.example.com/am --realm alpha --client-id fr-cli)" \\
              https://am.example.com/am/oauth2/realms/root/realms/alpha/userinfo
          git config --global credential.https://git.example.com.helper \\
              "!fr-profile token --format git --git-host git.example.com \\
              --server https://am.example.com/am --realm alpha --client-id fr-cli"
          fr-profile token --server https://am.example.com/am --realm alpha \\
              --client-id fr-cli --format json | jq .id_token_claims.sub
        """
    )

    enum Format: String, ExpressibleByArgument, CaseIterable {
      case bare, json, kubectl, git
    }

    @OptionGroup var options: ProfileOptions

    @OptionGroup(title: "Server") var connection: TokenServerOptions

    @Option(name: .customLong("client-id"), help: ArgumentHelp("The OAuth 2.0 client that logged in.", valueName: "CLIENT"))
    var clientId: String

    @Option(help: ArgumentHelp("bare, json, kubectl or git.", valueName: "FORMAT"))
    var format: Format = .bare

    @Option(
      name: .customLong("min-validity"),
      help: ArgumentHelp("Refresh when the token expires within this many seconds.", valueName: "SECONDS"))
    var minValidity: Double = 60

    @Option(help: ArgumentHelp("The tree to walk when logging in again (default: the one that logged in).", valueName: "NAME"))
    var tree: String?

    @Flag(name: .customLong("no-login"), help: "Never walk a journey: when the tokens cannot be refreshed, exit 5.")
    var noLogin = false

    @Option(name: .customLong("max-time"), help: TimeLimitHelp.maxTime)
    var maxTime: Double = 300

    @Option(name: .customLong("git-username"), help: ArgumentHelp("The username --format git gives.", valueName: "NAME"))
    var gitUsername = "oauth2"

    @Option(
      name: .customLong("git-host"),
      help: ArgumentHelp(
        "With --format git: a host the token is for, HOST[:PORT][/PATH] (https) or http://HOST… (plain http allowed there); repeat for more. Kept with the tokens. Default: the --server's origin.",
        valueName: "HOST"))
    var gitHost: [String] = []

    @OptionGroup var output: CredentialOutputFileOption

    @Argument(help: ArgumentHelp("With --format git: the action git passes (get, store, erase).", valueName: "ACTION"))
    var gitAction: String?

    func validate() throws {
      try OAuthOptions.check(clientId: clientId)
      guard maxTime > 0, maxTime <= 86400 else { throw ValidationError("--max-time must be more than 0 and at most 86400 seconds.") }
      guard minValidity >= 0, minValidity <= 86400 else { throw ValidationError("--min-validity must be between 0 and 86400 seconds.") }
      if format == .git {
        guard let gitAction, ["get", "store", "erase"].contains(gitAction) else {
          throw ValidationError("--format git is run by git with an action: get, store or erase.")
        }
      } else if let gitAction {
        throw ValidationError("unexpected argument '\(gitAction)': only --format git takes an action.")
      }
      guard gitHost.isEmpty || format == .git else { throw ValidationError("--git-host is for --format git.") }
      for host in gitHost {
        do throws(GitHostError) { _ = try GitHost(parsing: host) } catch { throw ValidationError("--git-host: \(error.description).") }
      }
    }

    /// The hosts git may get the token for: --git-host, else those kept with the tokens, else the
    /// server's own origin. Read before anything is sent: a request for another host ends here.
    func gitScope(server: AMServerURL, directory: String) -> [GitHost] {
      if !gitHost.isEmpty { return gitHost.compactMap { try? GitHost(parsing: $0) } }
      // A store that cannot be read (or is not safe) keeps nothing: the default holds, and the
      // token path below says what is wrong with it.
      let stored = (try? TokenStore.open(stateDirectory: directory, create: false)).flatMap {
        try? $0.load(server: server.text, realm: connection.realm, clientId: clientId)
      }
      if let hosts = stored?.gitHosts, !hosts.isEmpty { return hosts.compactMap { try? GitHost(parsing: $0) } }
      return GitHost.origin(of: server.text).map { [$0] } ?? []
    }

    func run() throws {
      try reportingFailures {
        let directory = try options.settings.stateDirectoryPath()
        if format == .git {
          // git writes the request (protocol=…, host=…) on stdin and waits for it to be read.
          let request = GitCredentialRequest(parsing: readStandardInput())
          if gitAction == "store" { return }
          let scope = gitScope(
            server: try AMServerURL(connection.server, credential: TokenServerOptions.credential, insecureHTTP: connection.insecureHTTP),
            directory: directory)
          guard scope.contains(where: { $0.matches(request) }) else {
            if options.settings.verbose {
              let asked = PrintableText.line("\(request.protocol ?? "?")://\(request.host ?? "?")/\(request.path ?? "")")
              detail("git asked for \(asked): the token is for \(scope.map(\.description).joined(separator: ", ")); no answer.")
            }
            return
          }
        }
        let (server, http) = try connection.connect()
        let realm = connection.realm
        let store = try tokenStore(directory, create: false)
        let settings = OAuthClientSettings(
          server: server.text, realm: realm, clientId: clientId, scope: OAuthClientSettings.defaultScope,
          redirectURI: OAuthClientSettings.defaultRedirectURI, cookieName: "iPlanetDirectoryPro")
        let client = OAuthClient(
          settings: settings, transport: curlTransport(http, verbose: options.settings.verbose))
        client.extraHeaders = ["User-Agent: fr-profile/\(frProfileVersion)"]
        let manager = TokenManager(store: store, client: client)

        if gitAction == "erase" {
          try oauthFailures({ $0 }) { try manager.expire() }
          return
        }
        // The lock is waited for up to --max-time: another run may be logging in (at its
        // terminal), and this one then takes the tokens that login stores.
        let deadline = monotonicSeconds() + maxTime
        let result = try oauthFailures({ $0 }) {
          try manager.validTokens(margin: minValidity, until: deadline) { stale, reason in
            try logInAgain(stale, reason: reason, client: client, http: http, serverHost: server.host)
          }
        }
        let tokens: StoredTokens
        switch result {
        case .valid(let valid, let refreshed):
          if refreshed && options.settings.verbose { detail("refreshed the access token") }
          tokens = valid
        case .loggedIn(let fresh):
          tokens = fresh
        case .notLoggedIn:
          throw Failure(
            .loginRequired,
            "no tokens are stored for client \(clientId) at \(server.text) (realm \(realm)): log in with 'fr-profile journey --server \(server.text) --realm \(realm) --tree … --client-id \(clientId)'."
          )
        case .loginRequired(let stale, let reason):
          throw Failure(
            .loginRequired, Self.loginAdvice(stale, reason: reason, tree: tree ?? stale.tree, clientId: clientId, noLogin: noLogin))
        case .busy:
          let terminal = Terminal() != nil
          throw Failure(
            terminal ? .timedOut : .loginRequired,
            "another fr-profile holds the token store \(store.path) (logging in?) and did not finish within --max-time (\(JSONWriter.formatNumber(maxTime)) s)"
              + (terminal
                ? ": try again when it has, or raise --max-time." : ": log in with 'fr-profile journey … --client-id \(clientId)'.")
          )
        }
        let hosts = gitHost.isEmpty ? nil : gitHost.compactMap { try? GitHost(parsing: $0).description }
        if let hosts, hosts != tokens.gitHosts { try keep(gitHosts: hosts, manager: manager) }
        try emit(tokens)
      }
    }

    /// Why the stored grant ended, in words.
    static func endedGrant(_ reason: OAuthError?) -> String {
      reason.map { "the refresh token no longer works (\($0))" } ?? "the access token expired and no refresh token was issued"
    }

    /// What to run when the grant ended and no login happens here.
    static func loginAdvice(_ stale: StoredTokens, reason: OAuthError?, tree: String?, clientId: String, noLogin: Bool) -> String {
      let why = Self.endedGrant(reason)
      return
        "\(why): log in again with 'fr-profile journey --server \(stale.server) --realm \(stale.realm) --tree \(tree ?? "…") --client-id \(clientId)'"
        + (noLogin ? "." : " on a terminal.")
    }

    /// The journey again, on the terminal, with the settings of the login that stored `stale`,
    /// run while the token store is locked; nil (no login) without a terminal, with --no-login,
    /// or when no tree is known. The new tokens keep the git hosts the old ones were for.
    func logInAgain(_ stale: StoredTokens, reason: OAuthError?, client: OAuthClient, http: HTTPClient, serverHost: String?) throws
      -> StoredTokens?
    {
      guard !noLogin, Terminal() != nil, let tree = tree ?? stale.tree else { return nil }
      let why = Self.endedGrant(reason)
      note("\(why): logging in again with the journey \(tree).")
      var login = Login(
        endpoint: AuthenticateEndpoint(server: stale.server, realm: stale.realm, tree: tree), transport: Login.transport(http))
      login.cookieName = stale.cookieName
      login.requestTimeout = connection.timeout
      login.maximumTime = maxTime
      login.userAgent = "fr-profile/\(frProfileVersion)"
      if options.settings.verbose { login.trace = { detail($0) } }
      // A WebAuthn node in the tree: a security key, with the defaults of `journey` (the
      // origin is the server's).
      let webAuthn = try WebAuthnOptions.parse([])
      let (body, answerer, _) = try FRProfile.Journey.walk(
        login, sources: [], settings: options.settings, binding: try BindingOptions.parse([]), serverHost: serverHost,
        webAuthn: { webAuthn.configure($0, server: stale.server) })
      let trade = OAuthClient(
        settings: OAuthClientSettings(
          server: stale.server, realm: stale.realm, clientId: clientId, scope: stale.scope, redirectURI: stale.redirectURI,
          cookieName: stale.cookieName), transport: curlTransport(http, verbose: options.settings.verbose))
      trade.extraHeaders = client.extraHeaders
      guard
        var tokens = try oauthFailures(
          { answerer.printable($0, singleLine: true) }, { try Login.tokens(for: body, client: trade, tree: tree) })
      else {
        throw Failure(.badResponse, "the journey ended without a session (tokenId): no tokens can be had from it.")
      }
      tokens.gitHosts = stale.gitHosts
      return tokens
    }

    /// Keeps `hosts` with the stored tokens.
    @discardableResult
    func keep(gitHosts hosts: [String], manager: TokenManager) throws -> StoredTokens? {
      let change = { (tokens: inout StoredTokens) in tokens.gitHosts = hosts }
      let identity = { (text: String) in text }
      return try oauthFailures(identity) { try manager.update(change) }
    }

    func emit(_ tokens: StoredTokens) throws {
      let now = OAuthClient.realTime()
      let text: String
      switch format {
      case .bare:
        text = tokens.accessToken + "\n"
      case .git:
        text = "username=\(gitUsername)\npassword=\(tokens.accessToken)\npassword_expiry_utc=\(tokens.expiresAtSeconds)\n"
      case .kubectl:
        var status = JSONObject()
        status["token"] = .string(tokens.accessToken)
        status["expirationTimestamp"] = .string(Self.rfc3339(tokens.expiresAtSeconds))
        var credential = JSONObject()
        credential["apiVersion"] = .string(Self.execCredentialVersion())
        credential["kind"] = "ExecCredential"
        credential["status"] = .object(status)
        text = JSONWriter.compact(.object(credential)) + "\n"
      case .json:
        var object = JSONObject()
        object["access_token"] = .string(tokens.accessToken)
        object["token_type"] = .string(tokens.tokenType)
        object["expires_at"] = .string(Self.rfc3339(tokens.expiresAtSeconds))
        object["expires_in"] = .number(max(0, (tokens.expiresAt - now).rounded(.down)))
        object["scope"] = .string(tokens.grantedScope ?? tokens.scope)
        if let claims = tokens.idToken.flatMap(Self.claims) { object["id_token_claims"] = .object(claims) }
        text =
          (standardOutputIsTerminal && output.output == nil ? JSONWriter.pretty(.object(object)) : JSONWriter.compact(.object(object)))
          + "\n"
      }
      try output.emit(text: text)
    }

    /// The claims of an ID token the token store holds (verified when it arrived).
    static func claims(_ token: String) -> JSONObject? { CompactJWS.unverifiedClaims(token) }

    /// The ExecCredential version kubectl asks for (KUBERNETES_EXEC_INFO), v1 or v1beta1.
    static func execCredentialVersion() -> String {
      let v1 = "client.authentication.k8s.io/v1"
      guard let info = getenv("KUBERNETES_EXEC_INFO").map({ String(cString: $0) }),
        let asked = (try? JSONParser.parse(Array(info.utf8)))?["apiVersion"]?.stringValue,
        [v1, "client.authentication.k8s.io/v1beta1"].contains(asked)
      else { return v1 }
      return asked
    }

    /// `2026-11-27T05:00:00Z`.
    static func rfc3339(_ seconds: Int) -> String {
      var time = time_t(seconds)
      var parts = tm()
      gmtime_r(&time, &parts)
      func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
      return
        "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))Z"
    }
  }
}
