import ArgumentParser
import Collectors
import DeviceIdentity
import Journey
import JourneyHTTP
import OAuthTokens
import ProfileCLI
import StateStore

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// `fr-profile logout`: the tokens revoked, AM's session ended, the token file deleted.
extension FRProfile {
  struct Logout: ParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "logout",
      abstract: "Revoke the stored OAuth 2.0 tokens, end the AM session, and delete them.",
      discussion: """
        For each client logged in at this server and realm (or only --client-id): revokes \
        the refresh token at the realm's revocation endpoint (which ends the access tokens \
        issued with it), ends AM's session (POST …/sessions?_action=logout), and deletes the \
        token file. Running it again finds nothing and succeeds (exit 0).

        The token file is deleted even when AM cannot be reached: nothing usable stays on \
        this machine. What could not be told to AM is said on stderr, and the exit code is \
        then the network error's (67, 68, 75, 76), so a script knows the server side is \
        not confirmed.

        \(ExitStatus.helpSection(
        [
          .success, .usage, .dataError, .untrustedServer, .cannotConnect, .libraryMissing, .cannotCreate, .ioError,
          .timedOut, .badResponse, .permission, .configuration,
        ],
        [
          .success: "logged out (or nothing was stored)",
          .badResponse: "AM answered the revocation or the logout with an error; the local tokens are deleted",
        ]))

        EXAMPLES:
          fr-profile logout --server https://am.example.com/am --realm alpha
          fr-profile logout --server https://am.example.com/am --realm alpha --client-id fr-cli
        """
    )

    @OptionGroup var identity: IdentityOptions

    @OptionGroup(title: "Server") var connection: TokenServerOptions

    @Option(
      name: .customLong("client-id"),
      help: ArgumentHelp("Only this OAuth 2.0 client's tokens (default: every client of this server and realm).", valueName: "CLIENT"))
    var clientId: String?

    func validate() throws {
      if let clientId { try OAuthOptions.check(clientId: clientId) }
    }

    func run() throws {
      try reportingFailures {
        let (server, http) = try connection.connect()
        let realm = connection.realm
        let directory = try identity.settings.stateDirectoryPath()
        let store: TokenStore
        do throws(StateDirectoryError) { store = try TokenStore.open(stateDirectory: directory, create: false) } catch {
          if error.code == .missing {
            note("nothing to log out: no tokens are stored in \(directory).")
            return
          }
          throw Failure(tokens: .directory(error))
        }
        var firstFailure: Failure? = nil
        var found = false
        try store.locked {
          let all = try oauthFailures({ $0 }) { try store.all() }
          for tokens in all where Self.same(tokens.server, server.text) && Self.sameRealm(tokens.realm, realm) {
            guard clientId == nil || tokens.clientId == clientId else { continue }
            found = true
            let client = OAuthClient(
              settings: OAuthClientSettings(
                server: tokens.server, realm: tokens.realm, clientId: tokens.clientId, scope: tokens.scope,
                redirectURI: tokens.redirectURI, cookieName: tokens.cookieName),
              transport: curlTransport(http, verbose: identity.verbose))
            client.extraHeaders = ["User-Agent: fr-profile/\(frProfileVersion)"]
            do {
              let revoked = try oauthFailures({ $0 }) { try client.revoke(tokens) }
              note(
                revoked
                  ? "revoked the \(tokens.refreshToken == nil ? "access" : "refresh") token of client \(tokens.clientId)."
                  : "the realm has no revocation endpoint: the tokens of client \(tokens.clientId) stay valid until they expire.")
            } catch let failure as Failure {
              writeStandardError("fr-profile: warning: could not revoke the tokens of client \(tokens.clientId): \(failure.description)\n")
              firstFailure = firstFailure ?? failure
            }
            if let session = tokens.sessionToken {
              do {
                let ended = try oauthFailures({ $0 }) { try client.endSession(session, cookieName: tokens.cookieName) }
                note(ended ? "ended the AM session." : "the AM session had already ended.")
              } catch let failure as Failure {
                writeStandardError("fr-profile: warning: could not end the AM session: \(failure.description)\n")
                firstFailure = firstFailure ?? failure
              }
            }
            try oauthFailures({ $0 }) { try store.remove(server: tokens.server, realm: tokens.realm, clientId: tokens.clientId) }
            note("deleted \(store.filePath(server: tokens.server, realm: tokens.realm, clientId: tokens.clientId)).")
          }
        }
        if !found {
          note("nothing to log out: no tokens are stored for \(clientId.map { "client \($0) at " } ?? "")\(server.text) (realm \(realm)).")
        }
        if let firstFailure { throw firstFailure }
      }
    }

    static func same(_ stored: String, _ given: String) -> Bool {
      var a = stored
      var b = given
      while a.hasSuffix("/") { a.removeLast() }
      while b.hasSuffix("/") { b.removeLast() }
      return a == b
    }

    static func sameRealm(_ a: String, _ b: String) -> Bool {
      AuthenticateEndpoint.realmPath(a) == AuthenticateEndpoint.realmPath(b)
    }
  }
}
