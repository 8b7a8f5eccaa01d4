import ArgumentParser
import Collectors
import Journey
import JourneyHTTP
import Login
import ProfileCLI
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
      subcommands: [PAMHelper.self]
    )

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
  let channel: PAMHelperChannel

  /// Runs the sign-in and sends the verdict ('D'); returns it.
  func run() -> PAMStatus {
    SigninLog.channel = channel
    guard let start = channel.receive(deadline: monotonicSeconds() + 10), start.type == UInt8(ascii: "S") else {
      SigninLog.error("the PAM module sent no start record")
      return .authenticationError
    }
    let fields = PAMHelperChannel.fields(start.payload)
    var password: String?
    let (status, token) = decide(fields, password: &password)
    var payload = Array(String(status.rawValue).utf8) + [0]
    if status == .success, let token { payload += Array(token.utf8) }
    channel.send(UInt8(ascii: "D"), payload)
    for index in payload.indices { payload[index] = 0 }
    return status
  }

  /// The verdict and the PAM_AUTHTOK to set.
  private func decide(_ fields: [String: String], password: inout String?) -> (PAMStatus, String?) {
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
    case .success(let firstPassword):
      if let offline = config.offline, let firstPassword {
        do {
          try OfflineCache.open(stateDirectory: config.stateDirectory, settings: offline).remember(
            user, password: firstPassword, now: started)
        } catch { SigninLog.error("sign-in of \(user): the offline entry was not written: \(error)") }
      }
      SigninLog.notice("\(user) signed in through the journey \(config.tree(service: service)) (\(service))")
      return (.success, firstPassword)
    case .refused(let message):
      SigninLog.notice("sign-in of \(user) refused by AM: \(message)")
      if let offline = config.offline, Self.isLockedOrInactive(message) {
        try? OfflineCache.open(stateDirectory: config.stateDirectory, settings: offline).forget(user)
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
    case success(firstPassword: String?)
    /// AM said no (its message).
    case refused(String)
    /// Anything else that is not a connection failure: fails closed, never offline.
    case failed(String)
    /// A connection or DNS failure, or a timeout.
    case unreachable(String)
  }

  /// The journey, its first NameCallback answered with the PAM user.
  private func walk(_ config: SigninConfig, user: String, service: String, password: String?, conversation: PAMConversation) -> WalkResult {
    if let cacert = config.cacert, access(cacert, R_OK) != 0 { return .failed("cannot read the cacert \(cacert)") }
    let tree = config.tree(service: service)
    // Each request gets a third of the whole at most: a server that does not answer one is
    // "unreachable" (the offline path), with time left for it.
    let requestTimeout = min(30, config.timeoutSeconds / 3)
    var login = Login(
      endpoint: AuthenticateEndpoint(server: config.server, realm: config.realm, tree: tree),
      transport: Login.transport(HTTPClient(timeout: requestTimeout, caFile: config.cacert)))
    login.requestTimeout = requestTimeout
    login.maximumTime = config.timeoutSeconds
    login.userAgent = "fr-profile/\(frProfileVersion) (pam)"
    // Parsed, not made with init(): an option group's values exist only once parsed.
    let binding: BindingOptions
    do { binding = try BindingOptions.parse(config.tcti.map { ["--tcti", $0] } ?? []) } catch {
      return .failed("the configuration's tcti is refused: \(BindingOptions.message(for: error))")
    }
    let answerer = LoginAnswerer(
      sources: [GivenAnswers(user: user, password: password)], conversation: conversation,
      device: CommandDeviceSteps(settings: ProfileSettings(stateDirectory: config.stateDirectory), binding: binding, interactive: false))
    do {
      switch try login.walk(answerer: answerer) {
      case .success: return .success(firstPassword: answerer.firstPassword)
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
      let cache = try OfflineCache.open(stateDirectory: config.stateDirectory, settings: settings)
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
