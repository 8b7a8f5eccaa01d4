import ArgumentParser
import Collectors
import Dispatch
import Journey
import JourneyHTTP
import JourneyProfiler
import Login
import OAuthTokens
import ProfileCLI
import ProfileJSON

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// `fr-profile journey`: walks a journey over libcurl, which is loaded only when this runs.
extension FRProfile {
  struct Journey: ParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "journey",
      abstract: "Walk a PingAM / Advanced Identity Cloud authentication journey from this machine.",
      discussion: """
        Starts the tree (POST <server>/json/realms/root[/realms/<realm>]/authenticate \
        ?authIndexType=service&authIndexValue=<tree>, with the ForgeRock SDKs' headers: \
        Accept-API-Version: protocol=1.0,resource=2.1, X-Requested-With: forgerock-sdk) and answers each step until AM ends the journey — \
        every callback the ForgeRock/Ping SDKs answer (docs/journey.md has the table):
          NameCallback, PasswordCallback, TextInputCallback
                                 --user and --password-stdin for the first name and
                                 password; then the --answers FILE, else asked on the
                                 terminal (no echo for secrets). A page AM shows again
                                 (a wrong code) is asked again, never answered from memory.
          ChoiceCallback, ConfirmationCallback
                                 the next --choice, the --answers FILE, or the terminal
          registration           ValidatedCreateUsername/-Password (the failed policies
                                 said in words, asked again), String/Boolean/Number
                                 AttributeInput, KbaCreate, TermsAndConditions,
                                 ConsentMapping: --answers FILE or the terminal
          PollingWaitCallback    waits and polls again (Push, "check your email")
          SuspendedTextOutputCallback
                                 stops with exit 4; continue with --resume LINK
          TextOutputCallback     shown; recovery codes shown
          WebAuthn (Registration and Authentication nodes)
                                 a FIDO2 security key through libfido2: "Insert your
                                 security key", "Touch your security key", its PIN
                                 asked without echo when needed (--key-pin-stdin);
                                 the origin is --server's (--webauthn-origin)
          HiddenValueCallback    TPM attestation rounds; an otpauth:// or pushauth://
                                 registration shown as a QR code and as text
          SelectIdPCallback      --idp NAME, the --answers FILE or the numbered prompt;
                                 else local authentication (a social provider stops at
                                 its redirect: it needs a browser)
          RedirectCallback       its URL is shown (exit 2: it needs a browser)
          PingOneProtect*, ReCaptchaEnterpriseCallback
                                 their clientError, for the tree to branch on
          MetadataCallback       passed through
          DeviceProfileCallback  this machine's profile, as collect makes it
          DeviceBindingCallback, DeviceSigningVerifierCallback
                                 bind a key for the user / sign the challenge
        On success prints the session token (tokenId), or with --json AM's whole \
        success JSON (indented on a terminal or with --pretty, compact when piped or \
        with --compact). -o FILE writes it atomically to FILE instead ('-o -' is \
        stdout); the token is a credential, so FILE gets mode 0600, and nothing is \
        written unless the journey succeeds. --session-file FILE sends that token back \
        (session upgrade, step-up with --force-auth or --advice). Prompts use /dev/tty, \
        never stdin or stdout. Passwords, codes and the device key are never printed.

        TLS is always verified: against the system CAs, or with --cacert only \
        against the CAs in that file. \(AMServerURL.helpParagraph(credential: Journey.credential))

        The server is not trusted with this machine: a response larger than \
        --max-response-size (1 MiB) is refused, a step with more than 256 \
        callbacks is refused, the journey ends after 100 steps or --max-time \
        seconds, and everything the server says is printed with control \
        characters replaced and the password hidden.

        \(ExitStatus.helpSection(
        [
          .success, .negative, .cannotAnswer, .suspended, .usage, .dataError, .noInput, .untrustedServer, .cannotConnect,
          .libraryMissing, .cannotCreate, .ioError, .timedOut, .badResponse, .permission, .configuration, .interrupted,
        ] + ExitStatus.tpm,
        [
          .success: "success: the token (or the --json body) is on stdout or in -o FILE",
          .negative: "AM refused the login (HTTP 401); AM's message is on stderr",
          .suspended: "the journey is suspended (an email link continues it: --resume LINK)",
          .cannotAnswer:
            "the journey asks for what fr-profile cannot answer: an unsupported callback type, a prompt with no terminal and no option for it, a WebAuthn node with no security key plugged in or one that accepts only a platform authenticator",
          .dataError: "bad data (empty password on stdin, corrupt key, invalid location)",
          .noInput:
            "an input file (--cacert, --location-file) is missing or unreadable; the device key is missing but backups of it exist (see 'identifier')",
          .timedOut: "timed out: no response within --timeout, or the journey took longer than --max-time",
          .badResponse:
            "the server's answer is not an AM authenticate response, is larger than --max-response-size, has too many callbacks, or the journey did not end within 100 steps",
        ]))

        EXAMPLES:
          fr-profile journey --server https://am.example.com/am \\
              --realm alpha --tree DeviceProfiling --user demo
          pass show am/demo | fr-profile journey --json \\
              --server https://am.example.com/am --realm alpha --tree Login \\
              --user demo --password-stdin
          pass show am/demo | fr-profile journey --server https://am.example.com/am \\
              --realm alpha --tree Login --user demo --password-stdin -o ~/.am-token
          fr-profile journey --server https://am.internal:8443/am --realm root \\
              --tree Login --cacert /etc/ssl/private-ca.pem --choice 0 \\
              --latitude 52.52 --longitude 13.405
          fr-profile journey --server https://am.example.com/am --realm alpha \\
              --tree Kiosk --answers ~/.config/fr-profile/kiosk-answers.json
          echo "$LINK" | fr-profile journey --server https://am.example.com/am \\
              --resume -
          fr-profile journey --server https://am.example.com/am --realm alpha \\
              --tree StepUp --session-file ~/.am-token --force-auth -o ~/.am-token
          fr-profile journey --server https://am.example.com/am --realm alpha \\
              --tree WebAuthnLogin --user demo --webauthn-device-name "work key"
        """
    )

    @OptionGroup var options: ProfileOptions
    @OptionGroup(title: "Device binding") var binding: BindingOptions

    @Option(help: ArgumentHelp("AM's base URL, e.g. https://am.example.com/am.", valueName: "URL"))
    var server: String

    @Option(
      help: ArgumentHelp(
        "The realm: root, alpha, or a sub-realm path such as alpha/staff (with --resume, the link's realm when it names one).",
        valueName: "REALM"))
    var realm: String?

    @Option(
      help: ArgumentHelp(
        "The tree (journey) to start (not with --advice; with --resume, the link's tree when it names none).", valueName: "NAME"))
    var tree: String?

    @Option(
      help: ArgumentHelp(
        "Answers for callbacks when no terminal is there (a 0600 JSON file; schemas/answers.schema.json).", valueName: "FILE"),
      completion: .file())
    var answers: String?

    @Option(
      help: ArgumentHelp(
        "Continue a suspended journey from its email link ('-': read the link from stdin, away from ps).", valueName: "LINK"))
    var resume: String?

    @Option(
      help: ArgumentHelp(
        "The identity provider to send at a SelectIdPCallback (e.g. localAuthentication, or a social provider's name).",
        valueName: "NAME"))
    var idp: String?

    @Option(
      name: .customLong("advice"),
      help: ArgumentHelp("Step up for an authorization advice (AM's composite advice XML) instead of a tree.", valueName: "ADVICE"))
    var advice: String?

    @Option(
      name: .customLong("session-file"),
      help: ArgumentHelp("Send the SSO token in FILE (0600, as -o writes it) with the journey: session upgrade.", valueName: "FILE"),
      completion: .file())
    var sessionFile: String?

    @Option(name: .customLong("cookie-name"), help: ArgumentHelp("AM's session cookie name.", valueName: "NAME"))
    var cookieName = "iPlanetDirectoryPro"

    @Flag(name: .customLong("force-auth"), help: "Authenticate again although the session sent is valid (ForceAuth=true).")
    var forceAuth = false

    @Flag(name: .customLong("no-session"), help: "End the journey without creating a session (noSession=true).")
    var noSession = false

    @Option(help: ArgumentHelp("The user name for NameCallback (else asked on the terminal).", valueName: "NAME"))
    var user: String?

    @Flag(name: .customLong("password-stdin"), help: "Read the password for PasswordCallback from stdin (one trailing newline is dropped).")
    var passwordStdin = false

    @Option(
      name: .customLong("choice"),
      help: ArgumentHelp(
        "Answer the next ChoiceCallback or ConfirmationCallback with option N (0-based); repeat for several.", valueName: "N"))
    var choices: [Int] = []

    @OptionGroup var connection: AMConnectionOptions

    @OptionGroup(title: "WebAuthn (security keys)") var webAuthn: WebAuthnOptions

    @Option(name: .customLong("max-time"), help: TimeLimitHelp.maxTime)
    var maxTime: Double = 300

    @Option(
      name: .customLong("max-response-size"),
      help: ArgumentHelp("The largest response body accepted, in bytes (default 1 MiB).", valueName: "BYTES"))
    var maxResponseSize: Int = HTTPClient.defaultMaximumResponseSize

    /// What this command sends over --server, for the transport rule's messages.
    static let credential = "the password and the session token"

    @OptionGroup(title: "OAuth 2.0 tokens") var oauth: OAuthOptions

    @OptionGroup(title: "Output Options") var format: OutputOptions

    @Flag(help: "Print AM's whole success JSON instead of the token alone.")
    var json = false

    func validate() throws {
      _ = try AMServerURL(server, credential: Self.credential, insecureHTTP: connection.insecureHTTP)
      let starts = [tree != nil || resume != nil, advice != nil].filter { $0 }.count
      guard starts == 1 else { throw ValidationError("give one of --tree NAME, --resume LINK and --advice ADVICE.") }
      if advice != nil && tree != nil { throw ValidationError("--advice picks the journey: give it without --tree.") }
      if realm == nil && resume == nil { throw ValidationError("--realm is required (root, alpha, …).") }
      if let tree, tree.isEmpty { throw ValidationError("--tree needs a tree name.") }
      if passwordStdin && resume == "-" {
        throw ValidationError("--password-stdin and --resume - both read stdin: give the link as --resume LINK.")
      }
      if webAuthn.pinFromStandardInput && (passwordStdin || resume == "-") {
        throw ValidationError(
          "--key-pin-stdin and \(passwordStdin ? "--password-stdin" : "--resume -") both read stdin: give one of them another way.")
      }
      guard
        cookieName.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && ![UInt8(ascii: "="), UInt8(ascii: ";"), UInt8(ascii: ",")].contains($0) }),
        !cookieName.isEmpty
      else { throw ValidationError("--cookie-name must be a cookie name: visible ASCII without = ; or ,.") }
      guard maxTime > 0, maxTime <= 86400 else { throw ValidationError("--max-time must be more than 0 and at most 86400 seconds.") }
      guard maxResponseSize >= 1024, maxResponseSize <= 1 << 30 else {
        throw ValidationError("--max-response-size must be between 1024 and 1073741824 bytes.")
      }
      if choices.contains(where: { $0 < 0 }) { throw ValidationError("--choice takes an option index: 0, 1, 2, …") }
      if !json && (format.pretty || format.compact) { throw ValidationError("--pretty and --compact format JSON: add --json.") }
    }

    func run() throws {
      try reportingFailures {
        let (body, answerer, started) = try walk()
        let realm = started.realm
        var loggedIn: StoredTokens? = nil
        if let clientId = oauth.clientId, let session = body["tokenId"]?.stringValue {
          loggedIn = try oauth.logIn(
            session: session, tree: started.tree, server: server, realm: realm, cookieName: cookieName, transport: transport(),
            stateDirectory: options.settings.stateDirectory, printable: { answerer.printable($0, singleLine: true) })
          note(
            "logged in: the tokens of OAuth 2.0 client \(clientId) are stored; 'fr-profile token --server \(server) --realm \(realm) --client-id \(clientId)' prints a valid access token."
          )
        } else if let clientId = oauth.clientId {
          throw Failure(
            .badResponse, "the journey ended without a session (tokenId), which OAuth 2.0 client \(clientId) needs; drop --no-session.")
        }
        if json {
          let shown = ServerText.hiding(answerer.secrets, in: .object(body))
          let text = format.usePretty ? JSONWriter.pretty(shown) : JSONWriter.compact(shown)
          try format.emit(text: ServerText.escapingControls(inJSON: text) + "\n", mode: 0o600)
        } else if loggedIn != nil && format.output == nil {
          // The SSO token stays in the token store; `token` prints what programs use.
        } else if let token = body["tokenId"]?.stringValue {
          // The token is a credential: -o FILE is created (or replaced) with mode 0600.
          try format.emit(text: answerer.printable(token, singleLine: true) + "\n", mode: 0o600)
        } else {
          note("the journey succeeded without a session (tokenId); --json prints AM's whole answer.")
        }
      }
    }

    /// The HTTP client of this run, as the OAuth 2.0 client's transport.
    func transport() -> OAuthTransport {
      curlTransport(connection.client(maximumResponseSize: maxResponseSize), verbose: options.settings.verbose)
    }

    /// Walks the journey to AM's success body; every other end is thrown as the Failure the
    /// command exits with.
    func walk() throws -> (body: JSONObject, answerer: LoginAnswerer, endpoint: AuthenticateEndpoint) {
      let settings = options.settings
      _ = try settings.systemSource()
      let server = try connection.url(server, credential: Self.credential)
      let password = passwordStdin ? try Self.passwordFromStandardInput() : nil
      var sources: [any AnswerSource] = [GivenAnswers(user: user, password: password, choices: choices, identityProvider: idp)]
      if let answers { sources.append(try AnswersFile.read(path: answers)) }
      var endpoint = try endpoint(server: server.text)
      endpoint.forceAuth = forceAuth
      endpoint.noSession = noSession
      var login = Login(
        endpoint: endpoint,
        transport: Login.transport(connection.client(maximumResponseSize: maxResponseSize)))
      login.session = try sessionFile.map(Self.sessionToken)
      login.cookieName = cookieName
      login.requestTimeout = connection.timeout
      login.maximumTime = maxTime
      login.userAgent = "fr-profile/\(frProfileVersion)"
      if settings.verbose { login.trace = { detail($0) } }
      return try Self.walk(
        login, sources: sources, settings: settings, binding: binding, serverHost: server.host,
        webAuthn: { webAuthn.configure($0, server: server.text) },
        sessionHint: sessionFile.map {
          " AM refused the session in \($0), or the journey: log in without --session-file to make a new one."
        })
    }

    /// Walks `login` on the terminal with `sources` and this machine's device steps, to AM's
    /// success body; every other end is thrown as the Failure the command exits with. `token`
    /// logs in again through it.
    static func walk(
      _ login: Login, sources: [any AnswerSource], settings: ProfileSettings, binding: BindingOptions, serverHost: String?,
      webAuthn: ((LoginAnswerer) -> Void)? = nil, sessionHint: String? = nil
    ) throws -> (body: JSONObject, answerer: LoginAnswerer, endpoint: AuthenticateEndpoint) {
      let answerer = LoginAnswerer(
        sources: sources, conversation: CommandLogin.conversation(verbose: settings.verbose),
        device: CommandDeviceSteps(settings: settings, binding: binding, interactive: true))
      answerer.hint = CommandLogin.hint
      answerer.serverHost = serverHost
      webAuthn?(answerer)
      armWatchdog(after: login.maximumTime + watchdogGrace)
      let endpoint = login.endpoint
      let outcome: JourneyOutcome
      do {
        outcome = try login.walk(answerer: answerer)
      } catch let error as HTTPError {
        throw Failure(exitStatus(error), answerer.printable(error.description, singleLine: true))
      } catch let error as LoginError {
        throw Failure(login: LoginError(error.code, answerer.printable(error.message, singleLine: true)))
      } catch let error as JourneyError {
        let message = answerer.printable(error.description + ".", singleLine: true)
        if error.code == .unsupportedCallback { throw Failure(.cannotAnswer, message) }
        throw Failure(.badResponse, message)
      } catch let failure as Failure {
        throw Failure(failure.status, answerer.printable(failure.description, singleLine: true))
      }
      switch outcome {
      case .success(let body):
        return (body, answerer, endpoint)
      case .failure(let message, _):
        throw Failure(
          .negative, "authentication failed: \(PrintableText.line(answerer.printable(message, singleLine: true))).\(sessionHint ?? "")")
      case .suspended(let message):
        if !message.isEmpty { writeStandardError(answerer.printable(message) + "\n") }
        throw Failure(
          .suspended,
          "the journey is suspended: follow the link it sent (e.g. by email), or give it to 'fr-profile journey --server … --realm \(endpoint.realm) --resume -' on stdin."
        )
      case .redirect(let url):
        let provider = answerer.identityProviderChosen.map { " (the identity provider \(answerer.printable($0, singleLine: true)))" } ?? ""
        throw Failure(
          .cannotAnswer,
          "the journey continues in a browser at \(answerer.printable(url, singleLine: true))\(provider), which this command-line client cannot follow."
        )
      }
    }

    static func exitStatus(_ error: HTTPError) -> ExitStatus {
      switch error.code {
      case .timedOut: .timedOut
      case .cannotConnect, .failed: .cannotConnect
      case .tls: .untrustedServer
      case .badCAFile: .noInput
      case .responseTooLarge: .badResponse
      case .libraryUnavailable: .libraryMissing
      default: .cannotConnect  // a later code: no response, as .failed
      }
    }

    /// Seconds past --max-time after which the watchdog ends the process: the walk's own checks
    /// (the HTTP timeouts, the prompts' deadlines) end it at --max-time with their messages first.
    static let watchdogGrace = 2.0

    static func armWatchdog(after seconds: Double) {
      ProfileCLI.armWatchdog(
        after: seconds,
        "the journey did not end within --max-time (\(JSONWriter.formatNumber(seconds - watchdogGrace)) s): "
          + "a wait did not end (a TPM or PAM module that stopped answering?). Raise --max-time if the journey needs longer.")
    }

    /// The endpoint of the journey: the tree, the advice, or the suspended journey of the link
    /// (from stdin for '-', so it stays out of ps), with the link's realm and tree. A --realm or
    /// --tree that differs from the link's is an error naming both: the link's decide where AM
    /// looks for the suspended journey, and a silent choice would resume the wrong one or none.
    func endpoint(server: String) throws -> AuthenticateEndpoint {
      guard var link = resume else {
        // validate() holds: without --resume, --realm and one of --tree and --advice are given.
        guard let realm, let start = advice.map(AuthenticateEndpoint.Start.compositeAdvice) ?? tree.map(AuthenticateEndpoint.Start.tree)
        else {
          throw Failure(.usage, "give --realm with --tree NAME or --advice ADVICE.")
        }
        return AuthenticateEndpoint(server: server, realm: realm, start: start)
      }
      if link == "-" {
        link = String(decoding: readStandardInput(), as: UTF8.self).trimmingNewlines
      }
      let parsed: ResumeLink
      do { parsed = try ResumeLink(parsing: link) } catch { throw Failure(.dataError, "--resume: \(error).") }
      if let linked = parsed.realm, let realm, AuthenticateEndpoint.realmPath(linked) != AuthenticateEndpoint.realmPath(realm) {
        throw Failure(
          .usage,
          "--realm \(PrintableText.line(realm, limit: 60)) differs from the link's realm \(PrintableText.line(linked, limit: 60)): drop --realm, or use the link of this realm."
        )
      }
      if let linked = parsed.tree, let tree, linked != tree {
        throw Failure(
          .usage,
          "--tree \(PrintableText.line(tree, limit: 60)) differs from the link's tree \(PrintableText.line(linked, limit: 60)): drop --tree to continue the linked journey."
        )
      }
      guard let realm = parsed.realm ?? realm else {
        throw Failure(.usage, "--resume: the link names no realm: give --realm (root, alpha, …).")
      }
      return AuthenticateEndpoint(server: server, realm: realm, start: .resume(suspendedId: parsed.suspendedId, tree: parsed.tree ?? tree))
    }

    /// The SSO token in `path`: the caller's 0600 file, as `-o` writes it (the token on its
    /// first line, or `--json`'s body with its tokenId). The token goes in a header: only
    /// visible ASCII without separators is accepted.
    static func sessionToken(_ path: String) throws -> String {
      let bytes = try readOwnFile(path, limit: 64 << 10, secret: true)
      let text = String(decoding: bytes, as: UTF8.self)
      var token = text.split(separator: "\n").first.map(String.init) ?? ""
      if token.hasPrefix("{"), let body = try? JSONParser.parse(text), let id = body["tokenId"]?.stringValue { token = id }
      token = token.trimmingNewlines
      guard !token.isEmpty, token.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: ";") && $0 != UInt8(ascii: ",") }) else {
        throw Failure(.dataError, "--session-file \(path): no SSO token on its first line (as 'journey -o' writes it).")
      }
      return token
    }

    /// The password piped on stdin, without one trailing newline; empty is an error.
    static func passwordFromStandardInput() throws -> String {
      try secretFromStandardInput("--password-stdin", what: "password")
    }
  }
}

extension String {
  /// Without leading and trailing newlines, carriage returns and blanks.
  fileprivate var trimmingNewlines: String {
    var text = Substring(self)
    while let first = text.first, first.isNewline || first == " " { text.removeFirst() }
    while let last = text.last, last.isNewline || last == " " { text.removeLast() }
    return String(text)
  }
}
