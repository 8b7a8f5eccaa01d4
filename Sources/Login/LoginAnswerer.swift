import Journey
import ProfileJSON
import SystemCalls

/// Answers the callbacks of each step of a journey — every type the ForgeRock/Ping SDKs answer
/// (docs/journey.md has the table): from its answer sources in order (values given up front,
/// an answers file, a program's callbacks), else by asking the person through the
/// conversation, and the device's callbacks through its device steps. Server text reaches the
/// conversation printable, with every secret of the walk hidden.
public final class LoginAnswerer {
  /// Asked in order; the first that answers a prompt wins.
  public var sources: [any AnswerSource]
  public let conversation: any Conversation
  /// The device's part (profile, binding, signing, attestation); nil refuses those callbacks.
  public var device: (any DeviceSteps)?
  /// The authenticators of AM's WebAuthn nodes; nil refuses those nodes by name.
  public var securityKeys: (any SecurityKeys)?
  /// The web origin WebAuthn's client data names (`https://host[:port]`): AM checks it against
  /// its node's origins, and its host is the relying party when the node names none.
  public var webAuthnOrigin: String?
  /// Appended to a registration's outcome as the SDKs' `deviceName` (AM 7.1+ names the
  /// registered device with it).
  public var webAuthnDeviceName: String?
  /// The walk's deadline (CLOCK_MONOTONIC seconds), which bounds every question and wait.
  public var deadline: Double?
  /// The AM host (`host[:port]`), shown where the device asks for a PIN, so a person sees whom
  /// they are answering.
  public var serverHost: String?
  /// What to tell the caller when nothing answers a callback of this type (e.g. the command
  /// line's flag for it); the answers file and the conversation are named anyway.
  public var hint: (CallbackType) -> String? = { _ in nil }
  /// The social identity provider sent at the last SelectIdPCallback (nil for local
  /// authentication): named when AM then redirects to a browser.
  public private(set) var identityProviderChosen: String?
  /// Every secret given or typed in this walk, hidden wherever server text is shown.
  public private(set) var secrets: [String] = []
  /// The answer to the walk's first PasswordCallback (a sign-in hands it on as PAM_AUTHTOK).
  public private(set) var firstPassword: String?
  /// Registration URIs and messages shown already (a polling page repeats them).
  private var shown: Set<String> = []

  public init(sources: [any AnswerSource], conversation: any Conversation, device: (any DeviceSteps)? = nil) {
    self.sources = sources
    self.conversation = conversation
    self.device = device
    secrets = sources.flatMap(\.secrets)
  }

  /// Server text made safe to show, with the secrets hidden.
  public func printable(_ text: String, singleLine: Bool = false) -> String {
    ServerText.printable(text, hiding: secrets, singleLine: singleLine)
  }

  /// Adds a secret to hide from now on (a PIN the device steps asked for).
  public func hide(_ secret: String) {
    if !secret.isEmpty { secrets.append(secret) }
  }

  /// Fills in every callback of `step`.
  public func answer(_ step: inout AuthenticateStep) throws {
    var profileRequested = false
    let requests = try step.requests()
    let protectAction = Self.marketplaceProtectAction(requests.map(\.request))
    let webAuthn: WebAuthnStep?
    do {
      webAuthn = try WebAuthnStep.read(requests)
    } catch {
      throw LoginError(
        .cannotAnswer, "AM's WebAuthn node sent data fr-profile cannot read: \(printable(error.description, singleLine: true)).")
    }
    if let webAuthn { try answer(webAuthn, in: &step) }
    for (index, request) in requests {
      if let webAuthn {
        // The node's own callbacks are answered by its outcome. A ConfirmationCallback beside it
        // (AM's "Use Recovery Code") is left as AM sent it, as the SDKs' WebAuthn helpers do: the
        // key has answered.
        if webAuthn.nodeCallbacks.contains(index) { continue }
        if case .confirmation = request { continue }
      }
      switch request {
      case .name(let prompt):
        try step.answer(index, with: try text(.name, prompt: prompt, echo: true))
      case .password(let prompt):
        let password = try text(.password, prompt: prompt, echo: false)
        if firstPassword == nil { firstPassword = password }
        try step.answer(index, with: password)
      case .textInput(let prompt, let defaultText):
        let typed = try text(.textInput, prompt: prompt, echo: true, defaultText: defaultText)
        try step.answer(index, with: typed.isEmpty ? defaultText : typed)
      case .textOutput(let message, let messageType):
        try show(message, messageType: messageType)
      case .suspendedTextOutput, .redirect:
        break  // the walk ends at such a step (JourneyOutcome.suspended, .redirect)
      case .metadata:
        break  // data for the client: a WebAuthn node's is read above
      case .pollingWait(let waitTime, let message):
        wait(milliseconds: waitTime, message: message)
      case .choice(let prompt, let options, let defaultChoice), .confirmation(let prompt, let options, let defaultChoice):
        try step.answer(index, choosing: try choose(request.type, prompt: prompt, options: options, default: defaultChoice))
      case .attributeInput(let attribute):
        try step.answerValidated(index, value: try attributeValue(attribute, type: request.type))
      case .validatedCreateUsername(let input):
        try step.answerValidated(index, value: .string(try validatedText(input, type: .validatedCreateUsername, secret: false)))
      case .validatedCreatePassword(let input):
        try step.answerValidated(index, value: .string(try validatedText(input, type: .validatedCreatePassword, secret: true)))
      case .kbaCreate(let prompt, let questions, let allowOwn):
        let (question, answer) = try securityQuestion(prompt: prompt, questions: questions, allowOwn: allowOwn)
        try step.answer(index, question: question, answer: answer)
      case .termsAndConditions(let terms, let version, _):
        let question = "Accept the terms\(version.isEmpty ? "" : " (version \(version))")?"
        try step.answer(index, accepting: try accept(.termsAndConditions, prompt: "", text: terms, question: question))
      case .consentMapping(let consent):
        let text = [
          consent.message, consent.fields.isEmpty ? "" : "Shared: " + consent.fields.joined(separator: ", "), consent.accessLevel,
        ]
        .filter { !$0.isEmpty }.joined(separator: "\n")
        let question = "Consent to share with \(consent.displayName.isEmpty ? consent.name : consent.displayName)?"
        try step.answer(index, accepting: try accept(.consentMapping, prompt: consent.name, text: text, question: question))
      case .selectIdP(let providers):
        try step.answer(index, with: try identityProvider(providers))
      case .pingOneProtect(let evaluation):
        conversation.show(Self.protectNote, as: .note)
        try step.answer(index, clientError: Self.protectClientError(evaluation: evaluation))
      case .reCaptchaEnterprise:
        conversation.show(
          "the journey asks for reCAPTCHA Enterprise (a browser); answering with its client error for the tree to branch on.", as: .note)
        try step.answer(index, clientError: "fr-profile: reCAPTCHA needs a browser, which this command-line client is not")
      case .deviceProfile:
        profileRequested = true
      case .deviceBinding, .deviceSigning:
        guard let device else { throw noDevice(request.type) }
        try device.answerBinding(&step, index: index, login: self)
      case .hiddenValue(let id, let value):
        if id == "clientError", let protectAction {
          // The marketplace PingOne Protect nodes: a MetadataCallback says what the Protect SDK
          // is to do, and the SDKs report that it could not in this hidden value (JS
          // ping-protect.ts setNodeClientError); the same reason as the native callbacks'.
          conversation.show(Self.protectNote, as: .note)
          try step.answer(index, with: Self.protectClientError(evaluation: protectAction == "protect_risk_evaluation"))
        } else if value.hasPrefix("otpauth://") || value.hasPrefix("pushauth://") {
          if shown.insert(value).inserted { conversation.show(printable(value, singleLine: true), as: .registration) }
        } else if try device?.answerHiddenValue(&step, index: index, id: id, value: value, login: self) != true {
          conversation.show("left HiddenValueCallback \"\(printable(id, singleLine: true))\" unanswered.", as: .detail)
        }
      }
    }
    if profileRequested {
      guard let device else { throw noDevice(.deviceProfile) }
      try device.answerProfiles(&step, login: self)
    }
  }

  // MARK: - Sources

  /// The first source's answer for `prompt`, with the source (for messages); nil when none has one.
  private func fromSources(_ prompt: AnswerPrompt) -> (Answer, any AnswerSource)? {
    for index in sources.indices {
      if let answer = sources[index].answer(prompt) { return (answer, sources[index]) }
    }
    return nil
  }

  /// An answer of `source` that does not fit: the caller's usage error for values given up
  /// front, bad data for a file or a program.
  private func misfit(_ source: any AnswerSource, _ prompt: AnswerPrompt, _ why: String) -> LoginError {
    let what = "\(prompt.type.rawValue)\(prompt.prompt.isEmpty ? "" : " \"\(printable(prompt.prompt, singleLine: true))\"")"
    return source.givenUpFront
      ? LoginError(.badGivenAnswer, "\(why) (\(what)).")
      : LoginError(.badAnswersEntry, "\(source.name): the entry for \(what): \(why).")
  }

  private func noAnswer(_ type: CallbackType, _ prompt: String) -> LoginError {
    let files = sources.compactMap { $0 as? AnswersFile }.map(\.path)
    let situation = files.isEmpty ? "there is no terminal to ask on" : "no unused entry of \(files.joined(separator: ", ")) answers it"
    let advice = [
      hint(type).map { "pass \($0)" }, "add {\"type\": \"\(type.rawValue)\", \"prompt\": …} to an --answers FILE", "run on a terminal",
    ]
    .compactMap { $0 }.joined(separator: ", or ")
    return LoginError(
      .cannotAnswer, "the journey asks \(type.rawValue) \"\(printable(prompt, singleLine: true))\" and \(situation): \(advice).")
  }

  private func noDevice(_ type: CallbackType) -> LoginError {
    LoginError(.cannotAnswer, "the journey asks \(type.rawValue) and this login has no device steps to answer it.")
  }

  private func unanswered(_ what: String) -> LoginError {
    LoginError(.cannotAnswer, "no answer for \(what): the input closed or the time limit passed.")
  }

  // MARK: - Text

  /// The text for a callback: its sources', else the person's (echo off for secrets), else an
  /// error naming what to pass.
  private func text(_ type: CallbackType, prompt: String, echo: Bool, defaultText: String = "") throws -> String {
    let asked = AnswerPrompt(type: type, prompt: prompt)
    if let (answer, source) = fromSources(asked) {
      guard let value = answer.value?.stringValue else { throw misfit(source, asked, "its \"value\" is not text") }
      return value
    }
    guard conversation.canAsk else { throw noAnswer(type, prompt) }
    let label = defaultText.isEmpty ? prompt : "\(prompt) [\(defaultText)]"
    guard let typed = conversation.ask(Self.promptText(printable(label, singleLine: true)), echo: echo, deadline: deadline) else {
      throw unanswered("\(type.rawValue) \"\(printable(prompt, singleLine: true))\"")
    }
    if !echo { hide(typed) }
    return typed
  }

  /// One line from the person, or the error that says none came.
  private func line(_ prompt: String, echo: Bool = true, for what: String) throws -> String {
    guard let line = conversation.ask(prompt, echo: echo, deadline: deadline) else { throw unanswered(what) }
    return line
  }

  // MARK: - Validated values (registration)

  /// A new username or password the server checks: what the last one broke is said first; a
  /// required value is asked until it is not empty; a new password typed twice must agree.
  private func validatedText(_ input: ValidatedInput, type: CallbackType, secret: Bool) throws -> String {
    reportFailures(input)
    let asked = AnswerPrompt(type: type, prompt: input.prompt)
    if let (answer, source) = fromSources(asked) {
      guard let value = answer.value?.stringValue else { throw misfit(source, asked, "its \"value\" is not text") }
      guard !value.isEmpty || !input.required else {
        throw LoginError(.cannotAnswer, "\(type.rawValue) \"\(printable(input.prompt))\" is required and was left empty.")
      }
      return value
    }
    guard conversation.canAsk else { throw noAnswer(type, input.prompt) }
    let echo = !secret || input.echoOn
    while true {
      let value = try line(Self.promptText(printable(input.prompt, singleLine: true)), echo: echo, for: type.rawValue)
      if !echo { hide(value) }
      if value.isEmpty && input.required {
        conversation.show("A value is required.", as: .prompting)
        continue
      }
      if secret {
        let again = try line("Again: ", echo: echo, for: type.rawValue)
        if !echo { hide(again) }
        if again != value {
          conversation.show("The two do not agree; try again.", as: .prompting)
          continue
        }
      }
      return value
    }
  }

  private func attributeValue(_ attribute: AttributeInput, type: CallbackType) throws -> JSON {
    let input = attribute.input
    reportFailures(input)
    let asked = AnswerPrompt(type: type, prompt: input.prompt)
    if let (answer, source) = fromSources(asked) {
      guard let value = answer.value else { throw misfit(source, asked, "it has no \"value\"") }
      switch (attribute.kind, value) {
      case (.string, .string), (.boolean, .bool), (.number, .number): return value
      default: throw misfit(source, asked, "its \"value\" is not a \(attribute.kind.rawValue)")
      }
    }
    guard conversation.canAsk else { throw noAnswer(type, input.prompt) }
    let current = input.value.map { JSONWriter.compact($0) }.map { " [\($0)]" } ?? ""
    let prompt = printable(input.prompt.isEmpty ? input.name : input.prompt, singleLine: true)
    while true {
      switch attribute.kind {
      case .boolean:
        return .bool(try yesNo("\(prompt)\(current)", default: input.value?.boolValue ?? false))
      case .number:
        let typed = try line(Self.promptText(prompt + current), for: "\(type.rawValue) \"\(prompt)\"")
        if typed.isEmpty, let value = input.value { return value }
        if let number = Double(typed.filter { $0 != " " }), number.isFinite { return .number(number) }
        conversation.show("A number, please.", as: .prompting)
      case .string:
        let typed = try line(Self.promptText(prompt + current), for: "\(type.rawValue) \"\(prompt)\"")
        if typed.isEmpty, let value = input.value, value.stringValue?.isEmpty == false { return value }
        if typed.isEmpty && input.required {
          conversation.show("A value is required.", as: .prompting)
          continue
        }
        return .string(typed)
      }
    }
  }

  /// What the server said the last value broke, in words.
  private func reportFailures(_ input: ValidatedInput) {
    guard !input.failedPolicies.isEmpty else { return }
    let what = input.prompt.isEmpty ? input.name : input.prompt
    let rules = input.failures.map { printable($0, singleLine: true) }.joined(separator: "; ")
    conversation.show("\(printable(what, singleLine: true)) was refused: it must be \(rules).", as: .warning)
  }

  // MARK: - Registration: questions, terms, consent, providers

  private func securityQuestion(prompt: String, questions: [String], allowOwn: Bool) throws -> (String, String) {
    let asked = AnswerPrompt(type: .kbaCreate, prompt: prompt, options: questions)
    if let (entry, source) = fromSources(asked) {
      guard let question = entry.question, let answer = entry.answer, !answer.isEmpty else {
        throw misfit(source, asked, "it needs \"question\" and \"answer\"")
      }
      guard questions.contains(question) || allowOwn else {
        throw misfit(source, asked, "the question is not one of the server's, and it allows no others")
      }
      hide(answer)
      return (question, answer)
    }
    guard conversation.canAsk else { throw noAnswer(.kbaCreate, prompt) }
    conversation.show(
      printable(prompt) + "\n"
        + questions.enumerated().map { "  \($0.offset)) \(printable($0.element, singleLine: true))" }
        .joined(separator: "\n"), as: .prompting)
    let question: String
    while true {
      let typed = try line(allowOwn ? "Question (number, or your own): " : "Question (number): ", for: CallbackType.kbaCreate.rawValue)
      if let number = Int(typed), questions.indices.contains(number) {
        question = questions[number]
        break
      }
      if allowOwn, !typed.isEmpty, Int(typed) == nil {
        question = typed
        break
      }
      conversation.show(
        "Pick one of 0–\(max(0, questions.count - 1))\(allowOwn ? ", or type a question of your own" : "").", as: .prompting)
    }
    let answer = try line("Answer: ", echo: false, for: "the security question")
    guard !answer.isEmpty else { throw LoginError(.cannotAnswer, "no answer to the security question.") }
    hide(answer)
    return (question, answer)
  }

  private func accept(_ type: CallbackType, prompt: String, text: String, question: String) throws -> Bool {
    let asked = AnswerPrompt(type: type, prompt: prompt)
    if let (answer, source) = fromSources(asked) {
      guard let value = answer.value?.boolValue else { throw misfit(source, asked, "its \"value\" is not true or false") }
      return value
    }
    guard conversation.canAsk else { throw noAnswer(type, prompt) }
    if !text.isEmpty { conversation.show(printable(text), as: .prompting) }
    return try yesNo(printable(question, singleLine: true), default: false)
  }

  private func yesNo(_ question: String, default fallback: Bool) throws -> Bool {
    while true {
      let typed = try line("\(question) [\(fallback ? "Y/n" : "y/N")] ", for: "\"\(question)\"")
      switch typed.lowercased().filter({ $0 != " " }) {
      case "": return fallback
      case "y", "yes": return true
      case "n", "no": return false
      default: conversation.show("y or n, please.", as: .prompting)
      }
    }
  }

  /// The provider of a SelectIdPCallback: the sources' (`--idp NAME`, an answers file's entry),
  /// else the numbered question (Enter: local authentication when offered), else local
  /// authentication when offered. A social provider is sent as chosen: AM then answers with its
  /// RedirectCallback and the walk stops there, naming the provider (a browser is needed).
  private func identityProvider(_ providers: [String]) throws -> String {
    let local = "localAuthentication"
    let listing = providers.enumerated().map { "\($0.offset)=\(printable($0.element, singleLine: true))" }.joined(separator: ", ")
    let asked = AnswerPrompt(type: .selectIdP, prompt: "", options: providers)
    var chosen: String
    if let (answer, source) = fromSources(asked) {
      guard case .string(let name)? = answer.value else {
        throw misfit(source, asked, "its \"value\" is not a provider's name (\(listing))")
      }
      guard let match = providers.first(where: { $0 == name }) ?? providers.first(where: { $0.lowercased() == name.lowercased() }) else {
        throw LoginError(
          .badGivenAnswer,
          "\(source.givenUpFront ? "--idp" : source.name): \(printable(name, singleLine: true)) is not a provider the journey offers (\(listing))."
        )
      }
      chosen = match
    } else if conversation.canAsk, providers.count > 1 {
      let index = try pick(
        heading: "Sign in with:", options: providers.map { printable($0, singleLine: true) },
        fallback: providers.firstIndex(of: local), word: "Provider", label: CallbackType.selectIdP.rawValue)
      chosen = providers[index]
    } else if providers.contains(local) {
      chosen = local
    } else if providers.count == 1, let only = providers.first {
      chosen = only
    } else {
      throw LoginError(
        .cannotAnswer,
        "the journey offers only social sign-in (\(providers.map { printable($0, singleLine: true) }.joined(separator: ", "))), which needs a browser: use a tree with local authentication, or choose one with --idp NAME to be shown its redirect."
      )
    }
    if chosen != local { identityProviderChosen = chosen }
    conversation.show("chose the identity provider \(printable(chosen, singleLine: true)) of \(listing).", as: .detail)
    return chosen
  }

  // MARK: - Outputs

  private func show(_ serverMessage: String, messageType: Int) throws {
    let message = printable(serverMessage)
    switch messageType {
    case 4:
      switch ScriptMessage(script: serverMessage) {
      case .webAuthn: conversation.show("skipped a WebAuthn script (for browsers).", as: .detail)
      case .recoveryCodes(let codes):
        conversation.show(
          "Your recovery codes (keep them safe; each works once, and they cannot be shown again):\n"
            + codes.map { "  \(printable($0, singleLine: true))" }.joined(separator: "\n"), as: .information)
      case .other:
        conversation.show("skipped a TextOutputCallback script (for browsers only).", as: .detail)
      }
    case 1: conversation.show(message, as: .warning)
    case 2: conversation.show(message, as: .error)
    default: conversation.show(message, as: .information)
    }
  }

  static let protectNote =
    "the journey asks for PingOne Protect (a browser SDK); answering with its client error for the tree to branch on."

  /// The clientError fr-profile sends PingOne Protect's nodes, native or marketplace.
  public static func protectClientError(evaluation: Bool) -> String {
    "fr-profile: PingOne Protect's \(evaluation ? "signals are" : "SDK is") not available on Linux"
  }

  /// `protect_initialize` or `protect_risk_evaluation` when the step is one of the marketplace
  /// PingOne Protect nodes (a MetadataCallback whose data has `_type` PingOneProtect, as the
  /// SDKs' recorded pages have it); nil otherwise.
  public static func marketplaceProtectAction(_ requests: [CallbackRequest]) -> String? {
    for case .metadata(let data) in requests where data["_type"]?.stringValue == "PingOneProtect" {
      return data["_action"]?.stringValue ?? "protect_initialize"
    }
    return nil
  }

  public static let webAuthnRefusal = LoginError(
    .cannotAnswer,
    "the journey asks for WebAuthn and this login has no security keys to answer it (fr-profile journey answers it with a FIDO2 security key)."
  )

  // MARK: - WebAuthn

  /// AM's WebAuthn node: the client data a browser would make for `webAuthnOrigin`, the key's
  /// credential or assertion, and the outcome in the SDKs' form. A refusal in the browser's
  /// words (`WebAuthnRefusal`) is posted for the node's Error outcome; anything else ends the
  /// login with nothing posted.
  private func answer(_ node: WebAuthnStep, in step: inout AuthenticateStep) throws {
    guard let securityKeys else { throw Self.webAuthnRefusal }
    guard let origin = webAuthnOrigin, let host = Self.originHost(origin) else {
      throw LoginError(.cannotAnswer, "the journey asks for WebAuthn and this login has no web origin (https://host) to name in it.")
    }
    let named = node.ceremony.relyingPartyID
    if named.isEmpty && Self.isIPAddress(host) {
      throw LoginError(
        .cannotAnswer,
        "AM's WebAuthn node leaves the relying party to the origin, \(origin), whose host is an IP address, which cannot be a relying party ID: give the origin with the name AM's node expects (fr-profile journey --webauthn-origin https://NAME)."
      )
    }
    let relyingParty = named.isEmpty ? host : named
    var outcome: String
    var refused = false
    do {
      guard host == relyingParty || host.hasSuffix("." + relyingParty) else {
        throw WebAuthnRefusal(
          name: "SecurityError", message: "The relying party ID is not a registrable domain suffix of, nor equal to the current domain.")
      }
      switch node.ceremony {
      case .registration(var options):
        options.relyingPartyID = relyingParty
        if options.authenticatorAttachment == "platform" {
          throw LoginError(
            .cannotAnswer,
            "AM's WebAuthn Registration node accepts only a platform authenticator (one built into the device), and Linux has none that a journey can reach: set the node's authenticator attachment to Unspecified or Cross-platform to register a security key."
          )
        }
        let clientData = WebAuthnOutcome.clientData(create: true, challenge: options.challenge, origin: origin)
        let credential = try securityKeys.register(options, clientData: clientData, login: self)
        outcome = WebAuthnOutcome.registration(
          clientData: clientData, credential: credential, attestation: options.attestation, deviceName: webAuthnDeviceName)
      case .authentication(var options):
        options.relyingPartyID = relyingParty
        let clientData = WebAuthnOutcome.clientData(create: false, challenge: options.challenge, origin: origin)
        let assertion = try securityKeys.authenticate(options, clientData: clientData, login: self)
        outcome = WebAuthnOutcome.authentication(clientData: clientData, assertion: assertion)
      }
    } catch let refusal as WebAuthnRefusal {
      conversation.show("the security key gave no answer (\(printable(refusal.description, singleLine: true))); telling AM.", as: .warning)
      outcome = WebAuthnOutcome.error(refusal)
      refused = true
    }
    try step.answer(node.outcomeIndex, with: node.supportsJSONResponse && !refused ? WebAuthnOutcome.json(outcome) : outcome)
  }

  /// The host of `scheme://host[:port]` (brackets kept off an IPv6 literal); nil when it has none.
  static func originHost(_ origin: String) -> String? {
    guard let schemeEnd = origin.firstRange(of: "://") else { return nil }
    var rest = origin[schemeEnd.upperBound...]
    if let slash = rest.firstIndex(of: "/") { rest = rest[..<slash] }
    if rest.hasPrefix("["), let close = rest.firstIndex(of: "]") { return String(rest[rest.index(after: rest.startIndex)..<close]) }
    if let colon = rest.lastIndex(of: ":") { rest = rest[..<colon] }
    return rest.isEmpty ? nil : rest.lowercased()
  }

  /// An IPv4 or IPv6 literal (no relying party ID can be one).
  static func isIPAddress(_ host: String) -> Bool {
    host.contains(":")
      || host.split(separator: ".", omittingEmptySubsequences: false).count == 4 && host.allSatisfy { $0.isNumber || $0 == "." }
  }

  /// A PollingWaitCallback: its message once, then the conversation's wait (`milliseconds`,
  /// cut at the deadline), after which the step goes back as it is.
  private func wait(milliseconds: Int, message: String) {
    let firstTime = shown.insert("wait:" + message).inserted
    conversation.pollingWait(printable(message), firstTime: firstTime, milliseconds: milliseconds, deadline: deadline)
  }

  // MARK: - Choices

  private func choose(_ type: CallbackType, prompt serverPrompt: String, options serverOptions: [String], default defaultIndex: Int) throws
    -> Int
  {
    let prompt = printable(serverPrompt, singleLine: true)
    let options = serverOptions.map { printable($0, singleLine: true) }
    let listing = options.enumerated().map { "\($0.offset)=\($0.element)" }.joined(separator: ", ")
    let label = prompt.isEmpty ? type.rawValue : "\(type.rawValue) \"\(prompt)\""
    let asked = AnswerPrompt(type: type, prompt: serverPrompt, options: serverOptions)
    if let (answer, source) = fromSources(asked) {
      switch answer.value {
      case .number(let number)? where options.indices.contains(Int(exactly: number) ?? -1): return Int(number)
      case .string(let name)?:
        if let index = serverOptions.firstIndex(where: { $0.lowercased() == name.lowercased() }) { return index }
        fallthrough
      default:
        if source.givenUpFront {
          let given = answer.value.map { JSONWriter.compact($0) } ?? "?"
          throw LoginError(.badGivenAnswer, "--choice \(given) is not an option of \(label) (\(listing)).")
        }
        throw misfit(source, asked, "its \"value\" is neither an option's index nor its text (\(listing))")
      }
    }
    guard conversation.canAsk else {
      throw LoginError(
        .cannotAnswer,
        "the journey asks \(label) and there is no terminal to ask on: pass\(hint(type).map { " \($0)" } ?? " an option") (\(listing)) or an --answers FILE."
      )
    }
    let fallback = options.indices.contains(defaultIndex) ? defaultIndex : 0
    return try pick(heading: prompt, options: options, fallback: fallback, word: "Choice", label: label)
  }

  /// One of `options` (printable already) asked by number or by name, listed under `heading`;
  /// Enter takes `fallback` when there is one. Asked again until one fits.
  private func pick(heading: String, options: [String], fallback: Int?, word: String, label: String) throws -> Int {
    let listing = options.enumerated().map { "\($0.offset)=\($0.element)" }.joined(separator: ", ")
    conversation.show(
      ((heading.isEmpty ? [] : [heading]) + options.enumerated().map { "  \($0.offset)) \($0.element)" }).joined(separator: "\n"),
      as: .prompting)
    while true {
      let typed = try line(fallback.map { "\(word) [\($0)]: " } ?? "\(word): ", for: label)
      let text = typed.filter { $0 != " " }
      if text.isEmpty, let fallback { return fallback }
      if let number = Int(text), options.indices.contains(number) { return number }
      if let named = options.firstIndex(where: { $0.lowercased() == text.lowercased() }) { return named }
      conversation.show("Pick one of \(listing).", as: .prompting)
    }
  }

  /// "User Name" becomes "User Name: "; a prompt that ends in ":" or "?" keeps its own.
  public static func promptText(_ prompt: String) -> String {
    let trimmed = prompt.isEmpty ? "Answer" : prompt
    return trimmed.hasSuffix(":") || trimmed.hasSuffix("?") ? trimmed + " " : trimmed + ": "
  }
}
