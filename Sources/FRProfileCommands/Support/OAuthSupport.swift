import ArgumentParser
import Collectors
import DeviceIdentity
import JourneyHTTP
import Login
import OAuthTokens
import ProfileCLI
import ProfileJSON

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// `journey`'s OAuth 2.0 options: with --client-id, the journey's session is traded for tokens
/// that `token` hands out and `logout` ends.
struct OAuthOptions: ParsableArguments {
  @Option(
    name: .customLong("client-id"),
    help: ArgumentHelp(
      "After the journey, get OAuth 2.0 tokens for this public client (authorization code with PKCE) and store them for 'fr-profile token'.",
      valueName: "CLIENT"))
  var clientId: String?

  @Option(help: ArgumentHelp("The scopes asked for, space-separated.", valueName: "SCOPES"))
  var scope = OAuthClientSettings.defaultScope

  @Option(
    name: .customLong("redirect-uri"),
    help: ArgumentHelp(
      "The client's redirect URI as registered in AM (read from AM's redirect, never opened).", valueName: "URI"))
  var redirectURI = OAuthClientSettings.defaultRedirectURI

  func validate() throws {
    if let clientId { try Self.check(clientId: clientId) }
    guard !scope.isEmpty, scope.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") }) else {
      throw ValidationError("--scope takes scope names separated by spaces, e.g. \"openid profile\".")
    }
    guard redirectURI.contains(":"), !redirectURI.contains("#"), redirectURI.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
      throw ValidationError("--redirect-uri must be an absolute URI without a fragment, as registered on the client in AM.")
    }
  }

  static func check(clientId: String) throws {
    guard !clientId.isEmpty, clientId.utf8.count <= 256, clientId.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
      throw ValidationError("--client-id must be the OAuth 2.0 client's id: visible ASCII, at most 256 characters.")
    }
  }

  /// Trades the journey's SSO token for tokens and stores them (the 0600 token store).
  func logIn(
    session: String, tree: String?, server: String, realm: String, cookieName: String, transport: @escaping OAuthTransport,
    stateDirectory: String?, printable: (String) -> String
  ) throws -> StoredTokens {
    guard let clientId else { throw Failure(.usage, "--client-id is needed to get tokens.") }
    let settings = OAuthClientSettings(
      server: server, realm: realm, clientId: clientId, scope: scope, redirectURI: redirectURI, cookieName: cookieName)
    let client = OAuthClient(settings: settings, transport: transport)
    client.extraHeaders = ["User-Agent: fr-profile/\(frProfileVersion)"]
    let directory = try ProfileSettings(stateDirectory: stateDirectory).stateDirectoryPath()
    return try oauthFailures(printable) {
      let tokens = try client.login(sessionToken: session, tree: tree)
      let store = try tokenStore(directory, create: true)
      try TokenManager(store: store, client: client).save(tokens)
      return tokens
    }
  }
}

/// How to reach AM, for every command that talks to it (`journey`, `token`, `logout`,
/// `keys delete --server`): the CA file, the time each request may take, and the plain-http
/// opt-in. `--server` and `--realm` stay with each command: journey's --realm may be left out
/// with --resume, and keys delete's --server is optional with --realm root by default.
struct AMConnectionOptions: ParsableArguments {
  @Option(
    help: ArgumentHelp("Trust only the CA certificates in this PEM file (for private CAs).", valueName: "FILE"), completion: .file())
  var cacert: String?

  @Option(help: TimeLimitHelp.timeout)
  var timeout: Double = 30

  @Flag(
    name: .customLong("insecure-http"),
    help: "Allow a plain http:// --server that is not on this machine (what the command sends travels in clear).")
  var insecureHTTP = false

  func validate() throws {
    guard timeout > 0, timeout <= 3600 else { throw ValidationError("--timeout must be more than 0 and at most 3600 seconds.") }
  }

  /// The checked URL of `server` (its warning printed); an unreadable --cacert is exit 66.
  func url(_ server: String, credential: String) throws -> AMServerURL {
    let url = try AMServerURL(server, credential: credential, insecureHTTP: insecureHTTP)
    if let warning = url.warning { writeStandardError(warning) }
    if let cacert, access(cacert, R_OK) != 0 {
      throw Failure(.noInput, "cannot read the --cacert file \(cacert): \(String(cString: strerror(errno))).")
    }
    return url
  }

  /// The libcurl client of these options.
  func client(maximumResponseSize: Int = HTTPClient.defaultMaximumResponseSize) -> HTTPClient {
    HTTPClient(timeout: timeout, caFile: cacert, maximumResponseSize: maximumResponseSize)
  }
}

/// The help of the two time limits, said the same way by every command that has them. The pair
/// follows curl: --timeout bounds each request, --max-time the whole run.
enum TimeLimitHelp {
  static let timeout = ArgumentHelp(
    "Seconds each request may take, connecting included (--max-time, where a command has it, bounds the whole run).",
    valueName: "SECONDS")
  static let maxTime = ArgumentHelp(
    "Seconds the whole run may take, all it waits for included (a --timeout bounds one request).", valueName: "SECONDS")
}

/// The server options of `token` and `logout`: where the tokens were issued, and how to reach it.
struct TokenServerOptions: ParsableArguments {
  @Option(help: ArgumentHelp("AM's base URL, e.g. https://am.example.com/am.", valueName: "URL"))
  var server: String

  @Option(help: ArgumentHelp("The realm: root, alpha, or a sub-realm path such as alpha/staff.", valueName: "REALM"))
  var realm: String

  @OptionGroup var connection: AMConnectionOptions

  static let credential = "the refresh token and the SSO token"

  var insecureHTTP: Bool { connection.insecureHTTP }
  var timeout: Double { connection.timeout }

  func validate() throws {
    _ = try AMServerURL(server, credential: Self.credential, insecureHTTP: insecureHTTP)
  }

  /// The checked URL (its warning printed) and the HTTP client; an unreadable --cacert is exit 66.
  func connect() throws -> (AMServerURL, HTTPClient) {
    (try connection.url(server, credential: Self.credential), connection.client())
  }
}

/// The HTTP client as the OAuth 2.0 client's transport.
func curlTransport(_ client: HTTPClient, verbose: Bool) -> OAuthTransport {
  let transport = Login.transport(client)
  guard verbose else { return transport }
  return { request in
    detail("\(request.method) \(OAuthClient.base(of: request.url))")
    let response = try transport(request)
    detail("HTTP \(response.status), \(response.body.count) bytes")
    return response
  }
}

/// The token store under the state directory, its errors said as the command line says them.
func tokenStore(_ stateDirectory: String, create: Bool) throws -> TokenStore {
  do { return try TokenStore.open(stateDirectory: stateDirectory, create: create) } catch {
    throw Failure(tokens: .directory(error))
  }
}

/// Runs an OAuth step, its errors said as one line with the exit status they mean.
func oauthFailures<T>(_ printable: (String) -> String, _ body: () throws -> T) throws -> T {
  do { return try body() } catch let error as OAuthError {
    let status: ExitStatus =
      switch error.code {
      case .sessionNotAccepted, .tokenRefused, .authorizationRefused, .consentRequired: .negative
      case .foreignEndpoint: .untrustedServer
      default: .badResponse  // badResponse, stateMismatch, badRedirect, httpStatus, idToken
      }
    let advice =
      switch (error.code, error.oauthError ?? "") {
      case (.sessionNotAccepted, _): " Log in again (fr-profile journey … --client-id)."
      case (.tokenRefused, "invalid_client"), (.authorizationRefused, "invalid_client"), (.authorizationRefused, "invalid_request"),
        (.authorizationRefused, "unauthorized_client"):
        " Check --client-id and that --redirect-uri is registered on the client in AM."
      default: ""
      }
    throw Failure(status, printable(error.description + "." + advice))
  } catch let error as HTTPError {
    throw Failure(FRProfile.Journey.exitStatus(error), printable(error.description))
  } catch let error as TokenStoreError {
    throw Failure(tokens: error)
  }
}

extension Failure {
  /// A token store error as the command line says it.
  init(tokens error: TokenStoreError) {
    let text = { (code: Int32) in String(cString: strerror(code)) }
    guard let error = error.directoryError else {
      if error.code == .corrupt {
        self.init(
          .dataError, "the token file \(error.path) cannot be read: \(error.reason?.description ?? ""). Delete it and log in again.")
      } else {
        self.init(.dataError, error.description + ".")
      }
      return
    }
    let path = error.path
    let owner = error.owner ?? 0
    let mode = error.mode ?? 0
    let code = error.errno ?? 0
    switch error.code {
    case .missing:
      self.init(.loginRequired, "no tokens are stored (\(path) does not exist): log in with 'fr-profile journey … --client-id'.")
    case .notSecure:
      switch error.unsafe {
      case .ancestorOwner(let uid):
        self.init(.permission, "refusing the token store: the directory \(path) above it belongs to uid \(uid), neither root nor you.")
      case .ancestorWritable(let mode):
        self.init(
          .permission, "refusing the token store: others may write the directory \(path) above it (mode \(String(mode, radix: 8))).")
      case .rootDirectory, nil: self.init(.permission, "refusing the token store under \(path).")
      }
    case .foreignOwner, .fileForeignOwner:
      self.init(.permission, "refusing \(path): it belongs to uid \(owner), not to you (uid \(geteuid())).")
    case .insecureMode, .fileInsecureMode:
      self.init(
        .permission,
        "refusing \(path): others may read or write it (mode \(String(mode, radix: 8))); it holds tokens. Delete it and log in again.")
    case .notADirectory, .notARegularFile:
      self.init(.permission, "refusing \(path): it is not a regular file or directory (a link?).")
    case .cannotCreate, .cannotWrite, .cannotLock:
      self.init(code == EACCES ? .permission : .cannotCreate, "cannot write the token store \(path): \(text(code)).")
    case .cannotOpen, .unreadable:
      self.init(code == EACCES ? .permission : .ioError, "cannot read the token store \(path): \(text(code)).")
    case .tooLarge: self.init(.dataError, "the token file \(path) is larger than \(error.limit ?? 0) bytes.")
    case .exists: self.init(.cannotCreate, "\(path) exists.")
    default: self.init(.ioError, "the token store cannot be used: \(error.description).")
    }
  }
}
