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

/// `fr-profile signin`: signing in to Linux through a PingAM journey (pam_frprofile.so).
extension FRProfile {
  struct Signin: ParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "signin",
      abstract: "Sign in to Linux (console, sudo, SSH) through a PingAM journey: the PAM module's side.",
      discussion: """
        pam_frprofile.so (docs/signin.md) asks AM at every sign-in of the users it handles: it \
        starts 'fr-profile signin pam-helper' as root with a clean environment and relays the \
        PAM conversation to it; the helper reads /etc/fr-profile/signin.json (or the module's \
        config=PATH), walks the journey with this machine's profile and keys, and returns \
        PAM's answer. The helper is run by the module only.
        """,
      subcommands: [Enroll.self, PAMHelper.self]
    )

    struct Enroll: ParsableCommand {
      static let configuration = CommandConfiguration(
        abstract: "Bind this machine's sign-in key to a user: walk AM's binding tree with the user's own answers.",
        discussion: """
          Run as root, with the user at the terminal: walks the journey --tree (a tree with AM's \
          Device Binding node) for USER on the sign-in configuration's server, the user typing \
          their own password and codes (the name is USER, never asked). The key is made and \
          kept in the sign-in state directory (the configuration's stateDirectory, in the TPM \
          when there is one), so that the journey of each later sign-in can sign AM's \
          DeviceSigningVerifierCallback with it. Nothing is read from argv or the environment \
          but USER and the options below.

          \(ExitStatus.helpSection(
            [.success, .negative, .cannotAnswer, .usage, .dataError, .noInput, .untrustedServer, .cannotConnect, .libraryMissing, .timedOut,
             .badResponse, .permission, .configuration] + ExitStatus.tpm,
            [
              .success: "the journey succeeded: the key is bound to USER",
              .negative: "AM refused the login; AM's message is on stderr",
              .cannotAnswer: "the journey asks for what fr-profile cannot answer (a callback type, or no terminal)",
              .permission: "not run as root, or the configuration is not root's alone",
              .configuration: "the sign-in configuration cannot be read or used",
            ]))

          For example, as root: fr-profile signin enroll alice --tree LinuxBind
          """)

      @Argument(help: ArgumentHelp("The local user (and AM user) to bind the key to.", valueName: "USER"))
      var user: String

      @Option(help: ArgumentHelp("The binding tree to walk.", valueName: "NAME"))
      var tree: String

      @Option(
        help: ArgumentHelp("The sign-in configuration (root's; schemas/signin.schema.json).", valueName: "PATH"),
        completion: .file())
      var config: String = SigninConfig.defaultPath

      @Option(
        name: .customLong("max-time"), help: TimeLimitHelp.maxTime)
      var maxTime: Double = 300

      func validate() throws {
        guard !user.isEmpty, !tree.isEmpty else { throw ValidationError("USER and --tree NAME must not be empty.") }
        guard maxTime > 0, maxTime <= 86400 else { throw ValidationError("--max-time must be more than 0 and at most 86400 seconds.") }
      }

      func run() throws {
        try reportingFailures {
          guard geteuid() == 0 else {
            throw Failure(.permission, "'signin enroll' keeps the key in root's sign-in state directory: run it as root.")
          }
          let settings: SigninConfig
          do { settings = try SigninConfig.read(config) } catch { throw Failure(.configuration, "\(error).") }
          guard getpwnam(user) != nil else { throw Failure(.usage, "\(user) is not a user of this machine.") }
          let login: Login
          do {
            login = try settings.login(
              tree: tree, maximumTime: maxTime, requestTimeout: min(30, maxTime), userAgent: "fr-profile/\(frProfileVersion)")
          } catch { throw Failure(.noInput, "\(error).") }
          let server = try AMServerURL(settings.server, credential: "the password", insecureHTTP: false)
          let binding = try BindingOptions.parse(settings.tcti.map { ["--tcti", $0] } ?? [])
          _ = try FRProfile.Journey.walk(
            login, sources: [GivenAnswers(user: user)], settings: ProfileSettings(stateDirectory: settings.stateDirectory),
            binding: binding, serverHost: server.host)
          note("bound: \(user)'s sign-ins on this machine can sign with the key kept in \(settings.stateDirectory).")
        }
      }
    }

    struct PAMHelper: ParsableCommand {
      static let configuration = CommandConfiguration(
        commandName: "pam-helper", abstract: "The sign-in helper pam_frprofile.so runs (descriptor 3 is its socket).",
        shouldDisplay: false)

      func run() throws {
        var info = stat()
        guard fstat(PAMSignin.socketDescriptor, &info) == 0, info.st_mode & S_IFMT == S_IFSOCK else {
          throw Failure(.usage, "'signin pam-helper' is run by pam_frprofile.so, with its socket as descriptor 3.")
        }
        Glibc.exit(PAMSignin(channel: PAMHelperChannel(fd: PAMSignin.socketDescriptor)).run().rawValue)
      }
    }
  }
}

/// PAM's return values the helper sends (Linux-PAM's `_pam_types.h`; the module passes on only
/// these).
enum PAMStatus: Int32 {
  case success = 0
  case authenticationError = 7
  case unavailable = 9
  case userUnknown = 10
  case ignore = 25
}

/// One sign-in, from the module's start record to its verdict.
struct PAMSignin {
  static let socketDescriptor: Int32 = 3
  /// What the sign-in's requests call themselves: AM's logs tell them from `journey`'s.
  static let userAgent = "fr-profile/\(frProfileVersion) (pam)"
  let channel: PAMHelperChannel

  /// Runs the sign-in and sends the verdict ('D'); returns it.
  func run() -> PAMStatus {
    SigninLog.channel = channel
    guard let start = channel.receive(deadline: monotonicSeconds() + 10), start.type == UInt8(ascii: "S") else {
      SigninLog.error("the PAM module sent no start record")
      return .authenticationError
    }
    let fields = PAMHelperChannel.fields(start.payload)
    var held: HeldTokens?
    let (status, token) = decide(fields, held: &held)
    var payload = Array(String(status.rawValue).utf8) + [0]
    if status == .success, let token { payload += Array(token.utf8) }
    if status == .success, held != nil { payload += [0] + Array("held".utf8) }
    channel.send(UInt8(ascii: "D"), payload)
    for index in payload.indices { payload[index] = 0 }
    if status == .success, let held { hold(held) }
    return status
  }

  /// OAuth 2.0 tokens of a sign-in, for the user's token store once the session opens.
  struct HeldTokens {
    var tokens: StoredTokens
    var user: String
    var uid: uid_t
    var gid: gid_t
    var home: String
    var deadline: Double
  }

  /// Waits for the module's session record ('O'), then writes the tokens into the user's own
  /// token store as the user (this process gives up root for good first: it ends after), and
  /// answers 'D' with the outcome. The module closing the socket instead discards them.
  private func hold(_ held: HeldTokens) {
    guard let record = channel.receive(deadline: held.deadline), record.type == UInt8(ascii: "O") else { return }
    var ok = false
    if initgroups(held.user, held.gid) == 0, setgid(held.gid) == 0, setuid(held.uid) == 0, getuid() == held.uid {
      let directory = held.home + "/.local/state/fr-profile"
      do {
        let store = try TokenStore.open(stateDirectory: directory, create: true)
        try store.locked { try store.save(held.tokens) }
        ok = true
        SigninLog.notice("the OAuth 2.0 tokens of \(held.user) are in \(store.path)")
      } catch {
        SigninLog.error("the OAuth 2.0 tokens of \(held.user) were not written to \(directory): \(error)")
      }
    } else {
      SigninLog.error("cannot become \(held.user) to write their OAuth 2.0 tokens")
    }
    channel.send(UInt8(ascii: "D"), ok ? "0" : "1")
  }

  /// The verdict and the PAM_AUTHTOK to set.
  private func decide(_ fields: [String: String], held: inout HeldTokens?) -> (PAMStatus, String?) {
    let user = fields["user"] ?? ""
    let service = fields["service"] ?? ""
    guard geteuid() == 0 else {
      SigninLog.error("sign-in of \(user): the helper does not run as root (a PAM stack of an unprivileged program?)")
      return (.unavailable, nil)
    }
    let config: SigninConfig
    do { config = try SigninConfig.read(fields["config"] ?? SigninConfig.defaultPath) } catch {
      SigninLog.error("sign-in of \(user) refused: \(error)")
      channel.send(UInt8(ascii: "W"), "The sign-in service is not configured correctly; see the system log.")
      return (.authenticationError, nil)
    }
    guard let entry = getpwnam(user) else { return (.userUnknown, nil) }
    guard config.handles(user: user, uid: entry.pointee.pw_uid) else { return (.ignore, nil) }
    channel.send(UInt8(ascii: "T"), String(Int(config.timeoutSeconds.rounded(.up))))
    let tty = fields["tty"] ?? ""
    let remote = tty.isEmpty || tty.hasPrefix("ssh") || !(fields["rhost"] ?? "").isEmpty
    let given = (fields["authtok"] ?? "").isEmpty ? nil : fields["authtok"]
    let firstPass = fields["firstpass"] ?? ""
    if firstPass == "use" && given == nil {
      SigninLog.error("sign-in of \(user): use_first_pass and no earlier module set a password")
      return (.authenticationError, nil)
    }
    let conversation = PAMConversation(channel: channel, remote: remote)
    let started = Double(time(nil))
    var result = walk(config, user: user, service: service, password: given, conversation: conversation)
    if case .refused = result, firstPass == "try", given != nil {
      result = walk(config, user: user, service: service, password: nil, conversation: conversation)
    }
    switch result {
    case .success(let firstPassword, let body):
      if let clientId = config.clientId {
        held = trade(body, config: config, clientId: clientId, service: service, account: entry.pointee)
      }
      if let offline = config.offline, let firstPassword {
        do {
          let cache = try OfflineCache.open(
            stateDirectory: config.stateDirectory, settings: offline, tcti: OfflineCache.tcti(configured: config.tcti))
          try cache.remember(user, password: firstPassword, now: started)
        } catch { SigninLog.error("sign-in of \(user): the offline entry was not written: \(error)") }
      }
      SigninLog.notice("\(user) signed in through the journey \(config.tree(service: service)) (\(service))")
      return (.success, firstPassword)
    case .refused(let message):
      SigninLog.notice("sign-in of \(user) refused by AM: \(message)")
      if let offline = config.offline, Self.isLockedOrInactive(message) {
        try? OfflineCache.open(stateDirectory: config.stateDirectory, settings: offline, tcti: OfflineCache.tcti(configured: config.tcti))
          .forget(user)
      }
      return (.authenticationError, nil)
    case .failed(let why):
      SigninLog.error("sign-in of \(user) failed: \(why)")
      return (.authenticationError, nil)
    case .unreachable(let why):
      SigninLog.notice("sign-in of \(user): AM cannot be reached (\(why))")
      return offline(config, user: user, given: given, conversation: conversation)
    }
  }

  enum WalkResult {
    case success(firstPassword: String?, body: JSONObject)
    /// AM said no (its message).
    case refused(String)
    /// Anything else that is not a connection failure: fails closed, never offline.
    case failed(String)
    /// A connection or DNS failure, or a timeout.
    case unreachable(String)
  }

  /// The journey, its first NameCallback answered with the PAM user.
  private func walk(_ config: SigninConfig, user: String, service: String, password: String?, conversation: PAMConversation) -> WalkResult {
    let tree = config.tree(service: service)
    let login: Login
    do {
      login = try config.login(
        tree: tree, maximumTime: config.timeoutSeconds, requestTimeout: config.requestTimeout, userAgent: Self.userAgent)
    } catch { return .failed(error.description) }
    // Parsed, not made with init(): an option group's values exist only once parsed.
    let binding: BindingOptions
    do { binding = try BindingOptions.parse(config.tcti.map { ["--tcti", $0] } ?? []) } catch {
      return .failed("the configuration's tcti is refused: \(BindingOptions.message(for: error))")
    }
    let device = CommandDeviceSteps(settings: ProfileSettings(stateDirectory: config.stateDirectory), binding: binding, interactive: false)
    // A key bound with APPLICATION_PIN: its PIN is asked through PAM, as every other secret of
    // the sign-in is.
    device.pinSource = PAMPINSource(conversation: conversation, deadline: monotonicSeconds() + config.timeoutSeconds)
    device.userVerification = false
    let answerer = LoginAnswerer(sources: [GivenAnswers(user: user, password: password)], conversation: conversation, device: device)
    do {
      switch try login.walk(answerer: answerer) {
      case .success(let body): return .success(firstPassword: answerer.firstPassword, body: body)
      case .failure(let message, _): return .refused(answerer.printable(message, singleLine: true))
      case .suspended: return .failed("the journey \(tree) suspended (an email link): a sign-in cannot wait for it")
      case .redirect(let url): return .failed("the journey \(tree) continues in a browser (\(answerer.printable(url, singleLine: true)))")
      }
    } catch let error as HTTPError {
      switch error.code {
      case .cannotConnect, .timedOut: return .unreachable(error.description)
      default: return .failed(error.description)
      }
    } catch {
      return .failed(answerer.printable("\(error)", singleLine: true))
    }
  }

  /// The session of a successful sign-in traded for OAuth 2.0 tokens of the configuration's
  /// client; nil (logged) when the trade fails: the sign-in stands, without tokens.
  private func trade(_ body: JSONObject, config: SigninConfig, clientId: String, service: String, account: passwd) -> HeldTokens? {
    let settings = OAuthClientSettings(
      server: config.server, realm: config.realm, clientId: clientId, scope: config.scope ?? OAuthClientSettings.defaultScope,
      redirectURI: config.redirectURI ?? OAuthClientSettings.defaultRedirectURI, cookieName: "iPlanetDirectoryPro")
    let client = OAuthClient(settings: settings, transport: config.transport(timeout: config.requestTimeout))
    client.extraHeaders = ["User-Agent: " + Self.userAgent]
    do {
      guard let tokens = try Login.tokens(for: body, client: client, tree: config.tree(service: service)) else {
        SigninLog.error("the journey ended without a session: no OAuth 2.0 tokens for \(clientId)")
        return nil
      }
      return HeldTokens(
        tokens: tokens, user: String(cString: account.pw_name), uid: account.pw_uid, gid: account.pw_gid,
        home: String(cString: account.pw_dir), deadline: monotonicSeconds() + config.timeoutSeconds)
    } catch {
      SigninLog.error("no OAuth 2.0 tokens for \(clientId): \(error)")
      return nil
    }
  }

  /// AM's failure message for an account it locked or made inactive.
  static func isLockedOrInactive(_ message: String) -> Bool {
    let text = message.lowercased()
    return text.contains("locked") || text.contains("inactive")
  }

  /// The offline sign-in: the password of the last online one, within its age, unless locked.
  private func offline(_ config: SigninConfig, user: String, given: String?, conversation: PAMConversation) -> (PAMStatus, String?) {
    guard let settings = config.offline else {
      channel.send(UInt8(ascii: "W"), "The sign-in server cannot be reached.")
      return (.unavailable, nil)
    }
    do {
      let cache = try OfflineCache.open(
        stateDirectory: config.stateDirectory, settings: settings, tcti: OfflineCache.tcti(configured: config.tcti))
      let entry = try cache.load(user)
      if let why = cache.unusable(entry, now: Double(time(nil))) {
        SigninLog.notice("offline sign-in of \(user) not possible: \(why)")
        channel.send(UInt8(ascii: "W"), "The sign-in server cannot be reached.")
        return (.unavailable, nil)
      }
      guard let entry,
        let password = given
          ?? conversation.ask("Password: ", echo: false, deadline: monotonicSeconds() + config.timeoutSeconds)
      else { return (.authenticationError, nil) }
      guard try cache.verify(entry, password: password) else {
        SigninLog.notice("offline sign-in of \(user) refused: a wrong password")
        return (.authenticationError, nil)
      }
      SigninLog.notice("\(user) signed in offline (AM cannot be reached)")
      return (.success, password)
    } catch {
      SigninLog.error("offline sign-in of \(user) failed: \(error)")
      return (.unavailable, nil)
    }
  }
}
