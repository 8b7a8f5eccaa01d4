import Collectors
import DeviceBinding
import Journey
import JourneyHTTP
import JourneyProfiler
import Login
import ProfileCLI
import ProfileJSON
import TPMKeys
import TPMProtocol

/// The command line's side of a login (library Login): where its texts go, the flags its
/// errors name, the exit status of each failure, and the device steps — this machine's
/// profile, its bound keys and its TPM.
enum CommandLogin {
  /// The terminal, with AM's messages, notes and details on stderr as every command writes
  /// them, and MFA registration links as a QR code and text.
  static func conversation(verbose: Bool, terminal: Terminal? = Terminal()) -> TerminalConversation {
    TerminalConversation(terminal: terminal) { text, kind in
      switch kind {
      case .prompting, .information: writeStandardError(text + "\n")
      case .warning: writeStandardError("fr-profile: warning: \(text)\n")
      case .error: writeStandardError("fr-profile: error: \(text)\n")
      case .note: note(text)
      case .detail: if verbose { detail(text) }
      case .registration: showRegistration(text, terminal: terminal, verbose: verbose)
      }
    }
  }

  /// An MFA registration URI (`otpauth://`, `pushauth://`), for an authenticator app to scan
  /// or take: a QR code when libqrencode is there, and the text.
  static func showRegistration(_ uri: String, terminal: Terminal?, verbose: Bool) {
    var shown = "Register this account in your authenticator app: scan the code or enter the link.\n"
    if let code = QRCode.render(uri) {
      shown += code
    } else if verbose {
      detail("no QR code: libqrencode.so.4 cannot be loaded (Debian package libqrencode4).")
    }
    shown += uri + "\n"
    if let terminal { terminal.write(shown) } else { writeStandardError(shown) }
  }

  /// The flag that answers a callback of `type` when no terminal is there.
  static func hint(_ type: CallbackType) -> String? {
    switch type {
    case .name: "--user NAME"
    case .password: "--password-stdin"
    case .choice, .confirmation: "--choice N"
    case .selectIdP: "--idp NAME"
    default: nil
    }
  }

  /// The exit status of a login's failure.
  static func status(_ error: LoginError) -> ExitStatus {
    switch error.code {
    case .badGivenAnswer: .usage
    case .badAnswersEntry: .dataError
    case .timeLimit: .timedOut
    default: .cannotAnswer
    }
  }
}

extension Failure {
  /// A login's failure as the command line says it.
  init(login error: LoginError) {
    let advice = error.code == .timeLimit ? ". Raise --max-time if the journey needs longer." : ""
    self.init(CommandLogin.status(error), error.message + advice)
  }
}

extension AnswersFile {
  /// Reads `path`: the caller's, mode 0600 or stricter (`readOwnFile` checks the directories
  /// on the way), at most 64 KiB, the shape of schemas/answers.schema.json.
  static func read(path: String) throws -> AnswersFile {
    let bytes = try readOwnFile(path, limit: 64 << 10, secret: true)
    do { return try AnswersFile(parsing: bytes, path: path) } catch { throw Failure(login: error) }
  }
}

/// This machine's answers to the device's callbacks: the profile as `collect` makes it, binding
/// and signing with the key store (in the TPM when there is one), and the TPM attestation rounds.
final class CommandDeviceSteps: DeviceSteps {
  let settings: ProfileSettings
  let binding: BindingOptions
  /// Whether PINs and key choices may be asked on the terminal (journey: yes; callback: no).
  let interactive: Bool
  /// TPM attestation of this walk, made at the first attestation round; the binder attaches
  /// evidence through it once it answered a credential challenge.
  var attester: TPMAttester?
  /// Where a bound key's PIN comes from when not the terminal (a sign-in: the PAM conversation).
  var pinSource: (any PINSource)?
  /// Whether keys bound with BIOMETRIC types may verify the user through the PAM service
  /// `fr-profile`. A sign-in's helper says no: that service could lead back into
  /// pam_frprofile.so.
  var userVerification = true

  init(settings: ProfileSettings, binding: BindingOptions, interactive: Bool) {
    self.settings = settings
    self.binding = binding
    self.interactive = interactive
  }

  /// Every DeviceProfileCallback of the step, answered by `DeviceProfiler` (one collection).
  func answerProfiles(_ step: inout AuthenticateStep, login: LoginAnswerer) throws {
    let system = try settings.systemSource()
    let settings = settings
    let profiler = DeviceProfiler(
      collectors: DeviceProfile.defaultCollectors(userAgent: settings.userAgent), system: system,
      identifier: { try settings.identifier(system) }, location: { try settings.configuredLocation() })
    for callback in step.callbacks ?? [] {
      if case .string(let message)? = callback.output("message"), callback.type == DeviceProfileRequest.callbackType,
        !message.isEmpty
      {
        login.conversation.show(login.printable(message), as: .information)
      }
    }
    let diagnostics = Diagnostics()
    let answers = try profiler.answers(&step, diagnostics: diagnostics)
    settings.printDiagnostics(diagnostics)
    for answer in answers {
      warnIfOversized(answer.size, subject: answers.count == 1 ? "the profile" : "the profile for callbacks[\(answer.index)]")
    }
    // One line for the step, however many callbacks asked (one collection answered them all).
    if let first = answers.first {
      let what = answers.count == 1 ? "DeviceProfileCallback" : "\(answers.count) DeviceProfileCallbacks"
      login.conversation.show(
        "answered \(what) (metadata \(first.request.metadata), location \(first.request.location)): \(first.size) bytes.", as: .detail)
    }
  }

  /// The DeviceBindingCallback or DeviceSigningVerifierCallback at `index`, through the
  /// binder's one answer path; a client error is sent to AM (its outcome decides) and reported.
  func answerBinding(_ step: inout AuthenticateStep, index: Int, login: LoginAnswerer) throws {
    let system = try settings.systemSource()
    let setup = BindingSetup(
      options: binding, settings: settings, interactive: interactive, serverHost: login.serverHost, deadline: login.deadline,
      pinSource: pinSource)
    var binder = try setup.binder(deviceName: { BindingSetup.profileDeviceName(system) })
    if let attester { binder.attester = attester }
    if !userVerification { binder.userVerifier = nil }
    do {
      if let outcome = try binder.answer(&step, callback: index) { BindingSetup.report(outcome, verbose: settings.verbose) }
    } catch {
      throw BindingExit.failure(forAny: error)
    }
  }

  func answerHiddenValue(_ step: inout AuthenticateStep, index: Int, id: String, value: String, login: LoginAnswerer) throws -> Bool {
    try answerAttestation(&step, index: index, id: id, value: value)
  }
}
