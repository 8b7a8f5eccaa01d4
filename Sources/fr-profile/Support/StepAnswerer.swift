import Collectors
import DeviceBinding
import Journey
import JourneyProfiler
import ProfileCLI
import ProfileJSON
import TPMKeys
import TPMProtocol

/// Answers the callbacks of each step: the user name and password from the options or the
/// terminal, choices from `--choice` or the terminal, device profiles from the collectors.
/// Text outputs and collection messages go to stderr; stdout is kept for the result.
final class StepAnswerer {
  var user: String?
  /// From `--password-stdin`, read before the journey starts; else asked on the terminal once
  /// and reused for later password callbacks of the same walk.
  var password: String?
  /// `--choice` values not used yet, in order.
  var choices: [Int]
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
  private lazy var terminal: Terminal? = Terminal()

  init(user: String?, password: String?, choices: [Int], settings: ProfileSettings) {
    self.user = user
    self.password = password
    self.choices = choices
    self.settings = settings
  }

  /// The secrets of this walk (the password), never printed: `printable` hides them.
  var secrets: [String] { [password ?? ""] }

  /// Server text made safe for the terminal, with the secrets hidden.
  func printable(_ text: String, singleLine: Bool = false) -> String {
    ServerText.printable(text, hiding: secrets, singleLine: singleLine)
  }

  func answer(_ step: inout AuthenticateStep) throws {
    var profileRequested = false
    for (index, request) in try step.requests() {
      switch request {
      case .name(let prompt):
        if user == nil { user = try ask(prompt, echo: true, flag: "--user NAME", what: "a user name (NameCallback)") }
        try step.answer(index, with: user!)
      case .password(let prompt):
        if password == nil {
          password = try ask(prompt, echo: false, flag: "--password-stdin", what: "a password (PasswordCallback)")
        }
        try step.answer(index, with: password!)
      case .textOutput(let message, let messageType):
        show(message, messageType: messageType)
      case .choice(let prompt, let options, let defaultChoice), .confirmation(let prompt, let options, let defaultChoice):
        let kind = if case .choice = request { "ChoiceCallback" } else { "ConfirmationCallback" }
        try step.answer(index, choosing: try choose(prompt, options: options, default: defaultChoice, kind: kind))
      case .deviceProfile:
        profileRequested = true
      case .deviceBinding, .deviceSigning:
        try answerBinding(&step, index: index)
      case .hiddenValue(let id, let value):
        try answerAttestation(&step, index: index, id: id, value: value)
      }
    }
    if profileRequested { try answerDeviceProfiles(&step) }
  }

  private func ask(_ prompt: String, echo: Bool, flag: String, what: String) throws -> String {
    guard let terminal else {
      throw Failure(.cannotAnswer, "the journey asks for \(what) and there is no terminal to ask on: pass \(flag).")
    }
    guard let line = terminal.readLine(prompt: Self.promptText(printable(prompt, singleLine: true)), echo: echo) else {
      throw Failure(.cannotAnswer, "no answer for \(what): the terminal closed.")
    }
    return line
  }

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
    guard let terminal else {
      throw Failure(
        .cannotAnswer,
        "the journey asks \(label) and there is no terminal to ask on: pass --choice N (\(listing)).")
    }
    let fallback = options.indices.contains(defaultIndex) ? defaultIndex : 0
    terminal.write((prompt.isEmpty ? "" : prompt + "\n") + options.enumerated().map { "  \($0.offset)) \($0.element)\n" }.joined())
    while true {
      guard let line = terminal.readLine(prompt: "Choice [\(fallback)]: ") else {
        throw Failure(.cannotAnswer, "no answer for \(label): the terminal closed.")
      }
      let text = line.filter { $0 != " " }
      if text.isEmpty { return fallback }
      if let number = Int(text), options.indices.contains(number) { return number }
      if let named = options.firstIndex(where: { $0.lowercased() == text.lowercased() }) { return named }
      terminal.write("Pick one of \(listing).\n")
    }
  }

  private func show(_ serverMessage: String, messageType: Int) {
    let message = printable(serverMessage)
    switch messageType {
    case 4: if settings.verbose { detail("skipped a TextOutputCallback script (for browsers only).") }
    case 1: writeStandardError("fr-profile: warning: \(message)\n")
    case 2: writeStandardError("fr-profile: error: \(message)\n")
    default: writeStandardError("\(message)\n")
    }
  }

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
