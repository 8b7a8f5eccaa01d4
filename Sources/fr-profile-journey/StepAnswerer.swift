import Collectors
import Journey
import ProfileCLI
import ProfileJSON

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
  private lazy var terminal: Terminal? = Terminal()

  init(user: String?, password: String?, choices: [Int], settings: ProfileSettings) {
    self.user = user
    self.password = password
    self.choices = choices
    self.settings = settings
  }

  /// Exit code when a callback needs an answer fr-profile cannot give (unsupported type, no
  /// terminal to ask on).
  static let cannotAnswer: Int32 = 2

  func answer(_ step: inout AuthenticateStep) throws {
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
      case .deviceProfile(let profileRequest):
        try answerDeviceProfile(&step, index: index, request: profileRequest)
      case .deviceBinding(let bindingRequest):
        try answerBinding(&step, index: index, bind: bindingRequest)
      case .deviceSigning(let signingRequest):
        try answerBinding(&step, index: index, sign: signingRequest)
      }
    }
  }

  private func ask(_ prompt: String, echo: Bool, flag: String, what: String) throws -> String {
    guard let terminal else {
      throw Failure(code: Self.cannotAnswer, "the journey asks for \(what) and there is no terminal to ask on: pass \(flag).")
    }
    guard let line = terminal.readLine(prompt: Self.promptText(prompt), echo: echo) else {
      throw Failure(code: Self.cannotAnswer, "no answer for \(what): the terminal closed.")
    }
    return line
  }

  private func choose(_ prompt: String, options: [String], default defaultIndex: Int, kind: String) throws -> Int {
    let listing = options.enumerated().map { "\($0.offset)=\($0.element)" }.joined(separator: ", ")
    let label = prompt.isEmpty ? kind : "\(kind) \"\(prompt)\""
    if !choices.isEmpty {
      let picked = choices.removeFirst()
      guard options.indices.contains(picked) else {
        throw Failure(code: 64, "--choice \(picked) is not an option of \(label) (\(listing)).")
      }
      return picked
    }
    guard let terminal else {
      throw Failure(
        code: Self.cannotAnswer,
        "the journey asks \(label) and there is no terminal to ask on: pass --choice N (\(listing)).")
    }
    let fallback = options.indices.contains(defaultIndex) ? defaultIndex : 0
    terminal.write((prompt.isEmpty ? "" : prompt + "\n") + options.enumerated().map { "  \($0.offset)) \($0.element)\n" }.joined())
    while true {
      guard let line = terminal.readLine(prompt: "Choice [\(fallback)]: ") else {
        throw Failure(code: Self.cannotAnswer, "no answer for \(label): the terminal closed.")
      }
      let text = line.filter { $0 != " " }
      if text.isEmpty { return fallback }
      if let number = Int(text), options.indices.contains(number) { return number }
      if let named = options.firstIndex(where: { $0.lowercased() == text.lowercased() }) { return named }
      terminal.write("Pick one of \(listing).\n")
    }
  }

  private func show(_ message: String, messageType: Int) {
    switch messageType {
    case 4: if settings.verbose { detail("skipped a TextOutputCallback script (for browsers only).") }
    case 1: writeStandardError("fr-profile: warning: \(message)\n")
    case 2: writeStandardError("fr-profile: error: \(message)\n")
    default: writeStandardError("\(message)\n")
    }
  }

  private func answerDeviceProfile(_ step: inout AuthenticateStep, index: Int, request: DeviceProfileRequest) throws {
    if !request.message.isEmpty { writeStandardError("\(request.message)\n") }
    let system = try settings.systemSource()
    let identifier = try settings.identifier(system)
    let location = request.location ? try settings.configuredLocation() : nil
    let profiler = DeviceProfiler(
      collectors: DeviceProfile.defaultCollectors(userAgent: settings.userAgent), system: system,
      identifier: { identifier }, location: { location })
    let diagnostics = Diagnostics()
    let profile = try profiler.profile(for: request, diagnostics: diagnostics)
    settings.printDiagnostics(diagnostics)
    let text = JSONWriter.compact(profile)
    if text.utf8.count > DeviceProfile.defaultMaximumSize {
      writeStandardError(
        "fr-profile: warning: the profile is \(text.utf8.count) bytes, above AM's default Maximum Profile Size of \(DeviceProfile.defaultMaximumSize) bytes; the Device Profile Collector node may reject it.\n"
      )
    }
    if settings.verbose {
      detail("answered DeviceProfileCallback (metadata \(request.metadata), location \(request.location)): \(text.utf8.count) bytes.")
    }
    try step.setInput(callback: index, value: .string(text))
  }

  /// "User Name" becomes "User Name: "; a prompt that ends in ":" or "?" keeps its own.
  static func promptText(_ prompt: String) -> String {
    let trimmed = prompt.isEmpty ? "Answer" : prompt
    return trimmed.hasSuffix(":") || trimmed.hasSuffix("?") ? trimmed + " " : trimmed + ": "
  }
}
