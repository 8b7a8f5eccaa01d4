import Collectors
import DeviceBinding
import Journey
import JourneyProfiler
import ProfileCLI
import ProfileJSON
import TPMKeys
import TPMProtocol

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// Answers the callbacks of each step of a journey, every type the SDKs answer
/// (docs/journey.md has the table): from the options given once (`--user`, `--password-stdin`,
/// `--choice`), the answers file (`--answers`), the terminal, or the machine (device profiles,
/// binding, attestation). Text outputs and collection messages go to stderr; stdout is kept for
/// the result.
///
/// An answer belongs to one prompt of one page: `--user` and the piped password answer the
/// first name and password callbacks and are then gone, and a page AM shows again (after a
/// wrong code, with its error) is asked again — never answered from memory, so a mistyped
/// password is not resent until the account locks.
final class StepAnswerer {
  /// `--user`, until a NameCallback took it.
  var user: String?
  /// `--password-stdin`'s password, until a PasswordCallback took it.
  var password: String?
  /// `--choice` values not used yet, in order.
  var choices: [Int]
  /// `--idp NAME`: the provider of each SelectIdPCallback.
  var idp: String?
  /// The social identity provider sent at the last SelectIdPCallback (nil for local
  /// authentication): named when AM then redirects to a browser.
  private(set) var identityProviderChosen: String?
  /// `--answers FILE`.
  var answers: AnswersFile?
  let settings: ProfileSettings
  /// Device binding and signing (`--app-id`, `--pin-file`, …); set by the journey command.
  var binding = BindingOptions()
  /// The AM host (`host[:port]`), shown at PIN and PAM prompts; set by the journey command.
  var serverHost: String?
  /// The journey's --max-time deadline (CLOCK_MONOTONIC seconds), which bounds every prompt.
  var deadline: Double?
  /// TPM attestation of this walk, made at the first attestation round; the binder attaches
  /// evidence through it once it answered a credential challenge.
  var attester: TPMAttester?
  /// Every secret given or typed in this walk, hidden wherever server text is printed.
  private(set) var secrets: [String] = []
  /// Registration URIs and messages shown already (a polling page repeats them).
  private var shown: Set<String> = []
  private lazy var terminal: Terminal? = Terminal()

  init(user: String?, password: String?, choices: [Int], answers: AnswersFile? = nil, settings: ProfileSettings) {
    self.user = user
    self.password = password
    self.choices = choices
    self.answers = answers
    self.settings = settings
    if let password { secrets.append(password) }
    secrets += answers?.secrets ?? []
  }

  /// Server text made safe for the terminal, with the secrets hidden.
  func printable(_ text: String, singleLine: Bool = false) -> String {
    ServerText.printable(text, hiding: secrets, singleLine: singleLine)
  }

  func answer(_ step: inout AuthenticateStep) throws {
    var profileRequested = false
    let requests = try step.requests()
    let protectAction = Self.marketplaceProtectAction(requests.map(\.request))
    for (index, request) in requests {
      switch request {
      case .name(let prompt):
        try step.answer(index, with: try text(for: "NameCallback", prompt: prompt, echo: true, oneShot: &user, flag: "--user NAME"))
      case .password(let prompt):
        try step.answer(
          index, with: try text(for: "PasswordCallback", prompt: prompt, echo: false, oneShot: &password, flag: "--password-stdin"))
      case .textInput(let prompt, let defaultText):
        var none: String?
        let typed = try text(for: "TextInputCallback", prompt: prompt, echo: true, oneShot: &none, flag: nil, defaultText: defaultText)
        try step.answer(index, with: typed.isEmpty ? defaultText : typed)
      case .textOutput(let message, let messageType):
        try show(message, messageType: messageType)
      case .suspendedTextOutput, .redirect:
        break  // the walk ends at such a step (JourneyOutcome.suspended, .redirect)
      case .metadata(let data):
        if Self.isWebAuthn(data) { throw Self.webAuthnRefusal }
      case .pollingWait(let waitTime, let message):
        try wait(milliseconds: waitTime, message: message)
      case .choice(let prompt, let options, let defaultChoice), .confirmation(let prompt, let options, let defaultChoice):
        let kind = if case .choice = request { "ChoiceCallback" } else { "ConfirmationCallback" }
        try step.answer(index, choosing: try choose(prompt, options: options, default: defaultChoice, kind: kind))
      case .attributeInput(let attribute):
        try step.answerValidated(index, value: try attributeValue(attribute))
      case .validatedCreateUsername(let input):
        try step.answerValidated(index, value: .string(try validatedText(input, type: "ValidatedCreateUsernameCallback", secret: false)))
      case .validatedCreatePassword(let input):
        try step.answerValidated(index, value: .string(try validatedText(input, type: "ValidatedCreatePasswordCallback", secret: true)))
      case .kbaCreate(let prompt, let questions, let allowOwn):
        let (question, answer) = try securityQuestion(prompt: prompt, questions: questions, allowOwn: allowOwn)
        try step.answer(index, question: question, answer: answer)
      case .termsAndConditions(let terms, let version, _):
        try step.answer(
          index,
          accepting: try accept(
            type: "TermsAndConditionsCallback", prompt: "", text: terms,
            question: "Accept the terms\(version.isEmpty ? "" : " (version \(version))")?"))
      case .consentMapping(let consent):
        let text = [
          consent.message, consent.fields.isEmpty ? "" : "Shared: " + consent.fields.joined(separator: ", "), consent.accessLevel,
        ]
        .filter { !$0.isEmpty }.joined(separator: "\n")
        try step.answer(
          index,
          accepting: try accept(
            type: "ConsentMappingCallback", prompt: consent.name, text: text,
            question: "Consent to share with \(consent.displayName.isEmpty ? consent.name : consent.displayName)?"))
      case .selectIdP(let providers):
        try step.answer(index, with: try identityProvider(providers))
      case .pingOneProtect(let evaluation):
        note("the journey asks for PingOne Protect (a browser SDK); answering with its client error for the tree to branch on.")
        try step.answer(index, clientError: Self.protectClientError(evaluation: evaluation))
      case .reCaptchaEnterprise:
        note("the journey asks for reCAPTCHA Enterprise (a browser); answering with its client error for the tree to branch on.")
        try step.answer(index, clientError: "fr-profile: reCAPTCHA needs a browser, which this command-line client is not")
      case .deviceProfile:
        profileRequested = true
      case .deviceBinding, .deviceSigning:
        try answerBinding(&step, index: index)
      case .hiddenValue(let id, let value):
        if id == "clientError", let protectAction {
          // The marketplace PingOne Protect nodes: a MetadataCallback says what the Protect SDK
          // is to do, and the SDKs report that it could not in this hidden value (JS
          // ping-protect.ts setNodeClientError); the same reason as the native callbacks'.
          let evaluation = protectAction == "protect_risk_evaluation"
          note("the journey asks for PingOne Protect (a browser SDK); answering with its client error for the tree to branch on.")
          try step.answer(index, with: Self.protectClientError(evaluation: evaluation))
        } else if value.hasPrefix("otpauth://") || value.hasPrefix("pushauth://") {
          showRegistration(value)
        } else {
          try answerAttestation(&step, index: index, id: id, value: value)
        }
      }
    }
    if profileRequested { try answerDeviceProfiles(&step) }
  }

  // MARK: - Text

  /// The text for a callback: the one-shot option (then gone), else the answers file, else the
  /// terminal (echo off for secrets), else an error naming what to pass.
  private func text(
    for type: String, prompt: String, echo: Bool, oneShot: inout String?, flag: String?, defaultText: String = ""
  ) throws -> String {
    if let value = oneShot {
      oneShot = nil
      return value
    }
    if let entry = answers?.take(type: type, prompt: prompt) {
      guard let value = entry.value?.stringValue else { throw answersFailure(type, prompt, "its \"value\" is not text") }
      return value
    }
    let label = defaultText.isEmpty ? prompt : "\(prompt) [\(defaultText)]"
    let typed = try ask(label, echo: echo, type: type, flag: flag)
    if !echo { secrets.append(typed) }
    return typed
  }

  private func ask(_ prompt: String, echo: Bool, type: String, flag: String?) throws -> String {
    guard let terminal else { throw noAnswer(type, prompt, flag: flag) }
    guard let line = terminal.readLine(prompt: Self.promptText(printable(prompt, singleLine: true)), echo: echo, deadline: deadline)
    else {
      throw Failure(
        .cannotAnswer, "no answer for \(type) \"\(printable(prompt, singleLine: true))\": the terminal closed or --max-time passed.")
    }
    return line
  }

  private func noAnswer(_ type: String, _ prompt: String, flag: String?) -> Failure {
    let situation = answers.map { "no unused entry of \($0.path) answers it" } ?? "there is no terminal to ask on"
    let advice = [flag.map { "pass \($0)" }, "add {\"type\": \"\(type)\", \"prompt\": …} to an --answers FILE", "run on a terminal"]
      .compactMap { $0 }.joined(separator: ", or ")
    return Failure(.cannotAnswer, "the journey asks \(type) \"\(printable(prompt, singleLine: true))\" and \(situation): \(advice).")
  }

  private func answersFailure(_ type: String, _ prompt: String, _ why: String) -> Failure {
    Failure(.dataError, "--answers \(answers?.path ?? ""): the entry for \(type) \"\(printable(prompt, singleLine: true))\": \(why).")
  }

  // MARK: - Validated values (registration)

  /// A new username or password the server checks: what the last one broke is said first; a
  /// required value is asked until it is not empty; a new password typed twice must agree.
  private func validatedText(_ input: ValidatedInput, type: String, secret: Bool) throws -> String {
    reportFailures(input)
    while true {
      var none: String?
      let echo = !secret || input.echoOn
      let value = try text(for: type, prompt: input.prompt, echo: echo, oneShot: &none, flag: nil)
      if value.isEmpty && input.required {
        guard terminal != nil, answers == nil else {
          throw Failure(.cannotAnswer, "\(type) \"\(printable(input.prompt))\" is required and was left empty.")
        }
        terminal?.write("A value is required.\n")
        continue
      }
      if secret, answers == nil, let terminal {
        guard let again = terminal.readLine(prompt: "Again: ", echo: echo, deadline: deadline) else {
          throw Failure(.cannotAnswer, "no answer for \(type): the terminal closed or --max-time passed.")
        }
        secrets.append(again)
        if again != value {
          terminal.write("The two do not agree; try again.\n")
          continue
        }
      }
      return value
    }
  }

  private func attributeValue(_ attribute: AttributeInput) throws -> JSON {
    let input = attribute.input
    reportFailures(input)
    let type = "\(attribute.kind.rawValue.prefix(1).uppercased())\(attribute.kind.rawValue.dropFirst())AttributeInputCallback"
    if let entry = answers?.take(type: type, prompt: input.prompt) {
      guard let value = entry.value else { throw answersFailure(type, input.prompt, "it has no \"value\"") }
      switch (attribute.kind, value) {
      case (.string, .string), (.boolean, .bool), (.number, .number): return value
      default: throw answersFailure(type, input.prompt, "its \"value\" is not a \(attribute.kind.rawValue)")
      }
    }
    guard let terminal else { throw noAnswer(type, input.prompt, flag: nil) }
    while true {
      let current = input.value.map { JSONWriter.compact($0) }.map { " [\($0)]" } ?? ""
      let prompt = printable(input.prompt.isEmpty ? input.name : input.prompt, singleLine: true)
      switch attribute.kind {
      case .boolean:
        return .bool(try yesNo("\(prompt)\(current)", default: input.value?.boolValue ?? false))
      case .number:
        guard let line = terminal.readLine(prompt: Self.promptText(prompt + current), deadline: deadline) else {
          throw Failure(.cannotAnswer, "no answer for \(type) \"\(prompt)\": the terminal closed or --max-time passed.")
        }
        if line.isEmpty, let value = input.value { return value }
        if let number = Double(line.filter { $0 != " " }), number.isFinite { return .number(number) }
        terminal.write("A number, please.\n")
      case .string:
        guard let line = terminal.readLine(prompt: Self.promptText(prompt + current), deadline: deadline) else {
          throw Failure(.cannotAnswer, "no answer for \(type) \"\(prompt)\": the terminal closed or --max-time passed.")
        }
        if line.isEmpty, let value = input.value, value.stringValue?.isEmpty == false { return value }
        if line.isEmpty && input.required {
          terminal.write("A value is required.\n")
          continue
        }
        return .string(line)
      }
    }
  }

  /// What the server said the last value broke, in words, on stderr.
  private func reportFailures(_ input: ValidatedInput) {
    guard !input.failedPolicies.isEmpty else { return }
    let what = input.prompt.isEmpty ? input.name : input.prompt
    writeStandardError(
      "fr-profile: \(printable(what, singleLine: true)) was refused: it must be \(input.failures.map { printable($0, singleLine: true) }.joined(separator: "; ")).\n"
    )
  }

  // MARK: - Registration: questions, terms, consent, providers

  private func securityQuestion(prompt: String, questions: [String], allowOwn: Bool) throws -> (String, String) {
    if let entry = answers?.take(type: "KbaCreateCallback", prompt: prompt) {
      guard let question = entry.question, let answer = entry.answer, !answer.isEmpty else {
        throw answersFailure("KbaCreateCallback", prompt, "it needs \"question\" and \"answer\"")
      }
      guard questions.contains(question) || allowOwn else {
        throw answersFailure("KbaCreateCallback", prompt, "the question is not one of the server's, and it allows no others")
      }
      return (question, answer)
    }
    guard let terminal else { throw noAnswer("KbaCreateCallback", prompt, flag: nil) }
    terminal.write(
      printable(prompt) + "\n" + questions.enumerated().map { "  \($0.offset)) \(printable($0.element, singleLine: true))\n" }.joined())
    let question: String
    while true {
      guard let line = terminal.readLine(prompt: allowOwn ? "Question (number, or your own): " : "Question (number): ", deadline: deadline)
      else {
        throw Failure(.cannotAnswer, "no answer for KbaCreateCallback: the terminal closed or --max-time passed.")
      }
      if let number = Int(line), questions.indices.contains(number) {
        question = questions[number]
        break
      }
      if allowOwn, !line.isEmpty, Int(line) == nil {
        question = line
        break
      }
      terminal.write("Pick one of 0–\(max(0, questions.count - 1))\(allowOwn ? ", or type a question of your own" : "").\n")
    }
    guard let answer = terminal.readLine(prompt: "Answer: ", echo: false, deadline: deadline), !answer.isEmpty else {
      throw Failure(.cannotAnswer, "no answer to the security question.")
    }
    secrets.append(answer)
    return (question, answer)
  }

  private func accept(type: String, prompt: String, text: String, question: String) throws -> Bool {
    if let entry = answers?.take(type: type, prompt: prompt) {
      guard let value = entry.value?.boolValue else { throw answersFailure(type, prompt, "its \"value\" is not true or false") }
      return value
    }
    guard let terminal else { throw noAnswer(type, prompt, flag: nil) }
    if !text.isEmpty { terminal.write(printable(text) + "\n") }
    return try yesNo(printable(question, singleLine: true), default: false)
  }

  private func yesNo(_ question: String, default fallback: Bool) throws -> Bool {
    guard let terminal else { throw Failure(.cannotAnswer, "the journey asks \"\(question)\" and there is no terminal to ask on.") }
    while true {
      guard let line = terminal.readLine(prompt: "\(question) [\(fallback ? "Y/n" : "y/N")] ", deadline: deadline) else {
        throw Failure(.cannotAnswer, "no answer to \"\(question)\": the terminal closed or --max-time passed.")
      }
      switch line.lowercased().filter({ $0 != " " }) {
      case "": return fallback
      case "y", "yes": return true
      case "n", "no": return false
      default: terminal.write("y or n, please.\n")
      }
    }
  }

  /// The provider of a SelectIdPCallback: `--idp NAME`, else the answers file's entry, else the
  /// numbered prompt (Enter: local authentication when offered), else local authentication when
  /// offered. A social provider is sent as chosen: AM then answers with its RedirectCallback and
  /// the walk stops there, naming the provider (a browser is needed to go on).
  private func identityProvider(_ providers: [String]) throws -> String {
    let local = "localAuthentication"
    let listing = providers.enumerated().map { "\($0.offset)=\(printable($0.element, singleLine: true))" }.joined(separator: ", ")
    func offered(_ name: String, _ source: String) throws -> String {
      guard let match = providers.first(where: { $0 == name }) ?? providers.first(where: { $0.lowercased() == name.lowercased() }) else {
        throw Failure(.usage, "\(source): \(printable(name, singleLine: true)) is not a provider the journey offers (\(listing)).")
      }
      return match
    }
    var chosen: String
    if let idp {
      chosen = try offered(idp, "--idp")
    } else if let entry = answers?.take(type: "SelectIdPCallback", prompt: "") {
      guard case .string(let name)? = entry.value else {
        throw answersFailure("SelectIdPCallback", "", "its \"value\" is not a provider's name (\(listing))")
      }
      chosen = try offered(name, "--answers \(answers?.path ?? "")")
    } else if let terminal, providers.count > 1 {
      let index = try pick(
        on: terminal, heading: "Sign in with:", options: providers.map { printable($0, singleLine: true) },
        fallback: providers.firstIndex(of: local), word: "Provider", label: "SelectIdPCallback")
      chosen = providers[index]
    } else if providers.contains(local) {
      chosen = local
    } else if providers.count == 1, let only = providers.first {
      chosen = only
    } else {
      throw Failure(
        .cannotAnswer,
        "the journey offers only social sign-in (\(providers.map { printable($0, singleLine: true) }.joined(separator: ", "))), which needs a browser: use a tree with local authentication, or choose one with --idp NAME to be shown its redirect."
      )
    }
    if chosen != local { identityProviderChosen = chosen }
    if settings.verbose { detail("chose the identity provider \(printable(chosen, singleLine: true)) of \(listing).") }
    return chosen
  }

  // MARK: - Outputs

  private func show(_ serverMessage: String, messageType: Int) throws {
    let message = printable(serverMessage)
    switch messageType {
    case 4:
      switch ScriptMessage(script: serverMessage) {
      case .webAuthn: throw Self.webAuthnRefusal
      case .recoveryCodes(let codes):
        writeStandardError(
          "Your recovery codes (keep them safe; each works once, and they cannot be shown again):\n"
            + codes.map { "  \(printable($0, singleLine: true))\n" }.joined())
      case .other:
        if settings.verbose { detail("skipped a TextOutputCallback script (for browsers only).") }
      }
    case 1: writeStandardError("fr-profile: warning: \(message)\n")
    case 2: writeStandardError("fr-profile: error: \(message)\n")
    default: writeStandardError("\(message)\n")
    }
  }

  /// The clientError fr-profile sends PingOne Protect's nodes, native or marketplace.
  static func protectClientError(evaluation: Bool) -> String {
    "fr-profile: PingOne Protect's \(evaluation ? "signals are" : "SDK is") not available on Linux"
  }

  /// `protect_initialize` or `protect_risk_evaluation` when the step is one of the marketplace
  /// PingOne Protect nodes (a MetadataCallback whose data has `_type` PingOneProtect, as the
  /// SDKs' recorded pages have it); nil otherwise.
  static func marketplaceProtectAction(_ requests: [CallbackRequest]) -> String? {
    for case .metadata(let data) in requests where data["_type"]?.stringValue == "PingOneProtect" {
      return data["_action"]?.stringValue ?? "protect_initialize"
    }
    return nil
  }

  static let webAuthnRefusal = Failure(
    .cannotAnswer,
    "the journey asks for WebAuthn (a passkey or a platform authenticator), which fr-profile cannot do on Linux: there is no platform authenticator API to reach; a USB security key is a later step. Use a tree without WebAuthn for this device."
  )

  /// Whether a MetadataCallback carries AM's WebAuthn parameters.
  static func isWebAuthn(_ data: JSON) -> Bool {
    guard case .object(let object) = data else { return false }
    if let action = object["_action"]?.stringValue, action.lowercased().contains("webauthn") { return true }
    return object["_type"]?.stringValue == "WebAuthn" || object["challenge"] != nil && object["relyingPartyId"] != nil
  }

  /// A PollingWaitCallback: its message once, then a wait of `milliseconds` (cut at
  /// --max-time), after which the step goes back as it is.
  private func wait(milliseconds: Int, message: String) throws {
    if !message.isEmpty, shown.insert("wait:" + message).inserted { writeStandardError(printable(message) + "\n") }
    var seconds = Double(min(milliseconds, 600_000)) / 1000
    if let deadline { seconds = min(seconds, max(0, deadline - DeviceBinder.monotonicNow())) }
    var left = timespec(tv_sec: Int(seconds), tv_nsec: Int((seconds - seconds.rounded(.down)) * 1e9))
    var rest = timespec()
    while nanosleep(&left, &rest) != 0 && errno == EINTR { left = rest }
  }

  /// An MFA registration URI (`otpauth://`, `pushauth://`): shown once, as a QR code when
  /// libqrencode is there and as text, for an authenticator app to scan or take.
  private func showRegistration(_ uri: String) {
    guard shown.insert(uri).inserted else { return }
    let text = printable(uri, singleLine: true)
    var shownText = "Register this account in your authenticator app: scan the code or enter the link.\n"
    if let code = QRCode.render(uri) {
      shownText += code
    } else if settings.verbose {
      detail("no QR code: libqrencode.so.4 cannot be loaded (Debian package libqrencode4).")
    }
    shownText += text + "\n"
    if let terminal { terminal.write(shownText) } else { writeStandardError(shownText) }
  }

  // MARK: - Choices

  private func choose(_ serverPrompt: String, options serverOptions: [String], default defaultIndex: Int, kind: String) throws -> Int {
    let prompt = printable(serverPrompt, singleLine: true)
    let options = serverOptions.map { printable($0, singleLine: true) }
    let listing = options.enumerated().map { "\($0.offset)=\($0.element)" }.joined(separator: ", ")
    let label = prompt.isEmpty ? kind : "\(kind) \"\(prompt)\""
    if !choices.isEmpty {
      let picked = choices.removeFirst()
      guard options.indices.contains(picked) else {
        throw Failure(.usage, "--choice \(picked) is not an option of \(label) (\(listing)).")
      }
      return picked
    }
    if let entry = answers?.take(type: kind, prompt: serverPrompt) {
      switch entry.value {
      case .number(let number)? where options.indices.contains(Int(exactly: number) ?? -1): return Int(number)
      case .string(let name)?:
        if let index = serverOptions.firstIndex(where: { $0.lowercased() == name.lowercased() }) { return index }
        fallthrough
      default: throw answersFailure(kind, serverPrompt, "its \"value\" is neither an option's index nor its text (\(listing))")
      }
    }
    guard let terminal else {
      throw Failure(
        .cannotAnswer,
        "the journey asks \(label) and there is no terminal to ask on: pass --choice N (\(listing)) or an --answers FILE.")
    }
    let fallback = options.indices.contains(defaultIndex) ? defaultIndex : 0
    return try pick(on: terminal, heading: prompt, options: options, fallback: fallback, word: "Choice", label: label)
  }

  /// One of `options` (printable already) asked on the terminal by number or by name, listed
  /// under `heading`; Enter takes `fallback` when there is one. Asked again until one fits.
  private func pick(on terminal: Terminal, heading: String, options: [String], fallback: Int?, word: String, label: String) throws -> Int {
    let listing = options.enumerated().map { "\($0.offset)=\($0.element)" }.joined(separator: ", ")
    terminal.write((heading.isEmpty ? "" : heading + "\n") + options.enumerated().map { "  \($0.offset)) \($0.element)\n" }.joined())
    while true {
      guard let line = terminal.readLine(prompt: fallback.map { "\(word) [\($0)]: " } ?? "\(word): ", deadline: deadline) else {
        throw Failure(.cannotAnswer, "no answer for \(label): the terminal closed or --max-time passed.")
      }
      let text = line.filter { $0 != " " }
      if text.isEmpty, let fallback { return fallback }
      if let number = Int(text), options.indices.contains(number) { return number }
      if let named = options.firstIndex(where: { $0.lowercased() == text.lowercased() }) { return named }
      terminal.write("Pick one of \(listing).\n")
    }
  }

  // MARK: - Device profiles

  /// Every DeviceProfileCallback of the step, answered by `DeviceProfiler` (one collection).
  private func answerDeviceProfiles(_ step: inout AuthenticateStep) throws {
    let system = try settings.systemSource()
    let settings = settings
    let profiler = DeviceProfiler(
      collectors: DeviceProfile.defaultCollectors(userAgent: settings.userAgent), system: system,
      identifier: { try settings.identifier(system) }, location: { try settings.configuredLocation() })
    for callback in step.callbacks ?? [] {
      if case .string(let message)? = callback.output("message"), callback.type == DeviceProfileRequest.callbackType,
        !message.isEmpty
      {
        writeStandardError(printable(message) + "\n")
      }
    }
    let diagnostics = Diagnostics()
    let answers = try profiler.answers(&step, diagnostics: diagnostics)
    settings.printDiagnostics(diagnostics)
    for answer in answers {
      warnIfOversized(answer.size, subject: answers.count == 1 ? "the profile" : "the profile for callbacks[\(answer.index)]")
      if settings.verbose {
        detail(
          "answered DeviceProfileCallback (metadata \(answer.request.metadata), location \(answer.request.location)): \(answer.size) bytes."
        )
      }
    }
  }

  /// "User Name" becomes "User Name: "; a prompt that ends in ":" or "?" keeps its own.
  static func promptText(_ prompt: String) -> String {
    let trimmed = prompt.isEmpty ? "Answer" : prompt
    return trimmed.hasSuffix(":") || trimmed.hasSuffix("?") ? trimmed + " " : trimmed + ": "
  }
}
