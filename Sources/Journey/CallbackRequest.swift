import ProfileJSON

/// The callback types AM sends that a client answers, by the name in a step's `type`: the one
/// list of them (`CallbackRequest` reads each; an answers file names them).
public enum CallbackType: String, CaseIterable, Sendable {
  case name = "NameCallback"
  case password = "PasswordCallback"
  case textInput = "TextInputCallback"
  case textOutput = "TextOutputCallback"
  case suspendedTextOutput = "SuspendedTextOutputCallback"
  case metadata = "MetadataCallback"
  case pollingWait = "PollingWaitCallback"
  case choice = "ChoiceCallback"
  case confirmation = "ConfirmationCallback"
  case stringAttributeInput = "StringAttributeInputCallback"
  case booleanAttributeInput = "BooleanAttributeInputCallback"
  case numberAttributeInput = "NumberAttributeInputCallback"
  case validatedCreateUsername = "ValidatedCreateUsernameCallback"
  case validatedCreatePassword = "ValidatedCreatePasswordCallback"
  case kbaCreate = "KbaCreateCallback"
  case termsAndConditions = "TermsAndConditionsCallback"
  case consentMapping = "ConsentMappingCallback"
  case selectIdP = "SelectIdPCallback"
  case redirect = "RedirectCallback"
  case pingOneProtectInitialize = "PingOneProtectInitializeCallback"
  case pingOneProtectEvaluation = "PingOneProtectEvaluationCallback"
  case reCaptchaEnterprise = "ReCaptchaEnterpriseCallback"
  case deviceProfile = "DeviceProfileCallback"
  case deviceBinding = "DeviceBindingCallback"
  case deviceSigning = "DeviceSigningVerifierCallback"
  case hiddenValue = "HiddenValueCallback"

  /// Whether the journey stops at a callback of this type: nothing of its step is answered or
  /// posted (`SuspendedTextOutputCallback`: an email link continues it; `RedirectCallback`: a
  /// browser does).
  public var endsJourney: Bool { self == .suspendedTextOutput || self == .redirect }
}

/// What one callback of a step asks for — every callback type the ForgeRock/Ping SDKs answer
/// (their callback model: a step, its typed callbacks, set values, next). A journey client
/// reads each callback into this, gets the answer from the user, a file or the machine, and
/// writes it with the `AuthenticateStep.answer` methods.
public enum CallbackRequest: Sendable, Equatable {
  /// `NameCallback`: text (a user name; AM's OATH and HOTP nodes ask their codes with it too).
  case name(prompt: String)
  /// `PasswordCallback`: a secret (a password; the OTP Collector asks its code with it too).
  case password(prompt: String)
  /// `TextInputCallback`: text, with a default.
  case textInput(prompt: String, defaultText: String)
  /// `TextOutputCallback`: a message to show; nothing to answer. `messageType` 0 information,
  /// 1 warning, 2 error, 4 a script for browsers (`ScriptMessage` reads what it carries).
  case textOutput(message: String, messageType: Int)
  /// `SuspendedTextOutputCallback`: the journey is suspended (an email link continues it);
  /// nothing to answer, and nothing to post.
  case suspendedTextOutput(message: String, messageType: Int)
  /// `MetadataCallback`: data for the client (output only); passed through unanswered.
  case metadata(JSON)
  /// `PollingWaitCallback`: wait `waitTime` milliseconds, showing `message`, then post the step
  /// as it is (Push notifications, "check your email").
  case pollingWait(waitTime: Int, message: String)
  /// `ChoiceCallback`: pick one of `choices` by index.
  case choice(prompt: String, choices: [String], defaultChoice: Int)
  /// `ConfirmationCallback`: pick one of `options` by index.
  case confirmation(prompt: String, options: [String], defaultOption: Int)
  /// `StringAttributeInputCallback`, `BooleanAttributeInputCallback`,
  /// `NumberAttributeInputCallback`: a profile attribute, checked by the server's policies.
  case attributeInput(AttributeInput)
  /// `ValidatedCreateUsernameCallback`: a new user name, checked by the server's policies.
  case validatedCreateUsername(ValidatedInput)
  /// `ValidatedCreatePasswordCallback`: a new password, checked by the server's policies.
  case validatedCreatePassword(ValidatedInput)
  /// `KbaCreateCallback`: a security question (one of `questions`, or one of the user's own
  /// when allowed) and its answer.
  case kbaCreate(prompt: String, questions: [String], allowUserDefinedQuestions: Bool)
  /// `TermsAndConditionsCallback`: accept the terms (`true`) or not.
  case termsAndConditions(terms: String, version: String, createDate: String)
  /// `ConsentMappingCallback`: consent to share `fields` with `displayName`.
  case consentMapping(ConsentMapping)
  /// `SelectIdPCallback`: a social identity provider's name, or `localAuthentication`.
  case selectIdP(providers: [String])
  /// `RedirectCallback`: the journey continues in a browser at `url`; nothing to post.
  case redirect(url: String, method: String)
  /// `PingOneProtectInitializeCallback` and `PingOneProtectEvaluationCallback`: PingOne
  /// Protect's browser SDK; a client without it answers its `clientError` input.
  case pingOneProtect(evaluation: Bool)
  /// `ReCaptchaEnterpriseCallback`: a browser's reCAPTCHA token; a client without a browser
  /// answers its `clientError` input.
  case reCaptchaEnterprise(siteKey: String)
  /// `DeviceProfileCallback`: a device profile (answered by `DeviceProfiler`).
  case deviceProfile(DeviceProfileRequest)
  /// `DeviceBindingCallback`: bind a key (answered by `DeviceBinder`, library DeviceBinding).
  case deviceBinding(DeviceBindingRequest)
  /// `DeviceSigningVerifierCallback`: sign with a bound key (answered by `DeviceBinder`).
  case deviceSigning(DeviceSigningRequest)
  /// `HiddenValueCallback`: a value a script sends without showing it, answered (or left as
  /// it is) by what knows its `id` — fr-profile answers the TPM attestation rounds
  /// (`frTpmAttestationRequest`, `frTpmAttestationChallenge`), shows an MFA registration URI
  /// (`otpauth://`, `pushauth://`) and leaves other ids unchanged, as the SDKs do.
  case hiddenValue(id: String, value: String)

  /// The callback types this enum reads, by name (`CallbackType`'s raw values).
  public static var supportedTypes: [String] { CallbackType.allCases.map(\.rawValue) }

  /// The callback type of this request; `.attributeInput` is one of three, told apart by its kind.
  public var type: CallbackType {
    switch self {
    case .name: .name
    case .password: .password
    case .textInput: .textInput
    case .textOutput: .textOutput
    case .suspendedTextOutput: .suspendedTextOutput
    case .metadata: .metadata
    case .pollingWait: .pollingWait
    case .choice: .choice
    case .confirmation: .confirmation
    case .attributeInput(let input):
      switch input.kind {
      case .string: .stringAttributeInput
      case .boolean: .booleanAttributeInput
      case .number: .numberAttributeInput
      }
    case .validatedCreateUsername: .validatedCreateUsername
    case .validatedCreatePassword: .validatedCreatePassword
    case .kbaCreate: .kbaCreate
    case .termsAndConditions: .termsAndConditions
    case .consentMapping: .consentMapping
    case .selectIdP: .selectIdP
    case .redirect: .redirect
    case .pingOneProtect(let evaluation): evaluation ? .pingOneProtectEvaluation : .pingOneProtectInitialize
    case .reCaptchaEnterprise: .reCaptchaEnterprise
    case .deviceProfile: .deviceProfile
    case .deviceBinding: .deviceBinding
    case .deviceSigning: .deviceSigning
    case .hiddenValue: .hiddenValue
    }
  }

  /// Reads `callback`. A type not in `supportedTypes` is `JourneyError.unsupportedCallback`
  /// naming the type; a supported type with missing or mistyped outputs, or without the inputs
  /// its answer goes in, is `JourneyError.malformedCallback` naming the output or input.
  public init(_ callback: Callback) throws(JourneyError) {
    let reader = CallbackOutputs(callback: callback)
    guard let type = callback.type.flatMap(CallbackType.init(rawValue:)) else {
      throw .unsupportedCallback(index: callback.index, type: callback.type)
    }
    switch type {
    case .name:
      self = .name(prompt: try reader.text("prompt", default: "User Name"))
      try reader.needsInput()
    case .password:
      self = .password(prompt: try reader.text("prompt", default: "Password"))
      try reader.needsInput()
    case .textInput:
      self = .textInput(prompt: try reader.text("prompt", default: ""), defaultText: try reader.text("defaultText", default: ""))
      try reader.needsInput()
    case .textOutput:
      self = .textOutput(message: try reader.text("message", default: ""), messageType: try reader.integer("messageType", default: 0))
    case .suspendedTextOutput:
      self = .suspendedTextOutput(
        message: try reader.text("message", default: ""), messageType: try reader.integer("messageType", default: 0))
    case .metadata:
      self = .metadata(callback.output("data") ?? .null)
    case .pollingWait:
      self = .pollingWait(waitTime: try reader.integer("waitTime", default: 8000), message: try reader.text("message", default: ""))
    case .choice:
      self = .choice(
        prompt: try reader.text("prompt", default: ""), choices: try reader.texts("choices"),
        defaultChoice: try reader.integer("defaultChoice", default: 0))
      try reader.needsInput()
    case .confirmation:
      self = .confirmation(
        prompt: try reader.text("prompt", default: ""), options: try reader.texts("options"),
        defaultOption: try reader.integer("defaultOption", default: 0))
      try reader.needsInput()
    case .stringAttributeInput, .booleanAttributeInput, .numberAttributeInput:
      let kind: AttributeInput.Kind =
        switch type {
        case .booleanAttributeInput: .boolean
        case .numberAttributeInput: .number
        default: .string
        }
      self = .attributeInput(AttributeInput(kind: kind, input: try ValidatedInput(reader, defaultPrompt: "")))
      try reader.needsInput()
    case .validatedCreateUsername:
      self = .validatedCreateUsername(try ValidatedInput(reader, defaultPrompt: "Username"))
      try reader.needsInput()
    case .validatedCreatePassword:
      self = .validatedCreatePassword(try ValidatedInput(reader, defaultPrompt: "Password"))
      try reader.needsInput()
    case .kbaCreate:
      self = .kbaCreate(
        prompt: try reader.text("prompt", default: "Security question"),
        questions: try reader.texts("predefinedQuestions", allowEmpty: true),
        // Absent (AM 6.5 and 7.0 send no such output) means allowed: AM's KBA Definition node
        // takes a user's own question unless configured otherwise, the JavaScript SDK never
        // reads the output, and the SDKs' registration tests answer with a question of their own.
        allowUserDefinedQuestions: try reader.flag("allowUserDefinedQuestions", default: true))
      try reader.requireInputs(["question", "answer"])
    case .termsAndConditions:
      self = .termsAndConditions(
        terms: try reader.text("terms", default: ""), version: try reader.text("version", default: ""),
        createDate: try reader.text("createDate", default: ""))
      try reader.needsInput()
    case .consentMapping:
      self = .consentMapping(
        ConsentMapping(
          name: try reader.text("name", default: ""), displayName: try reader.text("displayName", default: ""),
          accessLevel: try reader.text("accessLevel", default: ""), isRequired: try reader.flag("isRequired", default: false),
          message: try reader.text("message", default: ""), fields: try reader.texts("fields", allowEmpty: true, droppingNulls: true)))
      try reader.needsInput()
    case .selectIdP:
      guard case .array(let items)? = callback.output("providers") else {
        throw .malformedCallback(index: callback.index, reason: "SelectIdPCallback output \"providers\" is not an array")
      }
      let names = items.compactMap { $0["provider"]?.stringValue }
      guard names.count == items.count, !names.isEmpty else {
        throw .malformedCallback(
          index: callback.index, reason: "SelectIdPCallback output \"providers\" holds an entry without a provider name")
      }
      self = .selectIdP(providers: names)
      try reader.needsInput()
    case .redirect:
      self = .redirect(url: try reader.text("redirectUrl"), method: try reader.text("redirectMethod", default: "GET"))
    case .pingOneProtectInitialize, .pingOneProtectEvaluation:
      self = .pingOneProtect(evaluation: type == .pingOneProtectEvaluation)
      try reader.requireInputs(["clientError"])
    case .reCaptchaEnterprise:
      self = .reCaptchaEnterprise(siteKey: try reader.text("recaptchaSiteKey", default: ""))
      try reader.requireInputs(["clientError"])
    case .deviceProfile:
      self = .deviceProfile(try DeviceProfileRequest(callback)!)
    case .deviceBinding:
      self = .deviceBinding(try DeviceBindingRequest(callback)!)
    case .deviceSigning:
      self = .deviceSigning(try DeviceSigningRequest(callback)!)
    case .hiddenValue:
      self = .hiddenValue(id: try reader.text("id"), value: try reader.text("value", default: ""))
      try reader.needsInput()
    }
  }

  /// The choices of a choice or confirmation callback; nil for the others.
  public var options: [String]? {
    switch self {
    case .choice(_, let choices, _): choices
    case .confirmation(_, let options, _): options
    default: nil
    }
  }
}

/// A value the server checks against policies (IDM's policy service): the validated username,
/// password and attribute callbacks. `failedPolicies` is what the last value broke.
public struct ValidatedInput: Sendable, Equatable {
  public var prompt: String
  /// The attribute's name (`mail`, `givenName`; empty for the username and password callbacks).
  public var name: String
  public var required: Bool
  /// The policy requirements the value must meet (`policies.policyRequirements`).
  public var requirements: [String]
  /// What the value sent last broke, each `{"policyRequirement": NAME, "params": {…}}`.
  public var failedPolicies: [JSON]
  /// The value the server holds now (attribute callbacks), nil when it sent none.
  public var value: JSON?
  /// Whether typing may be shown (the password callback's `echoOn`).
  public var echoOn: Bool

  public init(
    prompt: String, name: String = "", required: Bool = false, requirements: [String] = [], failedPolicies: [JSON] = [],
    value: JSON? = nil, echoOn: Bool = true
  ) {
    self.prompt = prompt
    self.name = name
    self.required = required
    self.requirements = requirements
    self.failedPolicies = failedPolicies
    self.value = value
    self.echoOn = echoOn
  }

  init(_ reader: CallbackOutputs, defaultPrompt: String) throws(JourneyError) {
    prompt = try reader.text("prompt", default: defaultPrompt)
    name = try reader.text("name", default: "")
    required = try reader.flag("required", default: false)
    echoOn = try reader.flag("echoOn", default: true)
    switch reader.callback.output("value") {
    case nil, .null?: value = nil
    case let other?: value = other
    }
    requirements = []
    if case .object(let policies)? = reader.callback.output("policies"), case .array(let names)? = policies["policyRequirements"] {
      requirements = names.compactMap(\.stringValue)
    }
    // AM sends each failed policy as a JSON string (the JS SDK parses them the same way).
    failedPolicies = []
    if case .array(let items)? = reader.callback.output("failedPolicies") {
      for item in items {
        switch item {
        case .string(let text):
          guard let parsed = try? JSONParser.parse(text) else {
            throw .malformedCallback(
              index: reader.callback.index, reason: "\(reader.type) output \"failedPolicies\" holds text that is not JSON")
          }
          failedPolicies.append(parsed)
        case .object: failedPolicies.append(item)
        default:
          throw .malformedCallback(index: reader.callback.index, reason: "\(reader.type) output \"failedPolicies\" holds a non-object")
        }
      }
    }
  }

  /// The failed policies in words ("at least 8 characters", "not already taken").
  public var failures: [String] { failedPolicies.map(Self.describe) }

  /// One failed policy (`{"policyRequirement": …, "params": {…}}`) in words; an unknown
  /// requirement is named as it came, with its parameters.
  public static func describe(_ policy: JSON) -> String {
    let requirement = policy["policyRequirement"]?.stringValue ?? policy["policyId"]?.stringValue ?? "a policy"
    let params = policy["params"]?.objectValue ?? JSONObject()
    func number(_ key: String) -> String { params[key].map { JSONWriter.compact($0) } ?? "?" }
    switch requirement {
    case "REQUIRED": return "a value is required"
    case "MIN_LENGTH": return "at least \(number("minLength")) characters"
    case "MAX_LENGTH": return "at most \(number("maxLength")) characters"
    case "AT_LEAST_X_CAPITAL_LETTERS": return "at least \(number("numCaps")) capital letters"
    case "AT_LEAST_X_NUMBERS": return "at least \(number("numNums")) numbers"
    case "CANNOT_CONTAIN_CHARACTERS": return "none of the characters \(number("forbiddenChars"))"
    case "CANNOT_CONTAIN_OTHERS": return "none of \(number("disallowedFields")) (your other details)"
    case "CANNOT_CONTAIN_DUPLICATES": return "no repeated characters"
    case "UNIQUE", "VALID_USERNAME": return "not already taken"
    case "VALID_EMAIL_ADDRESS_FORMAT": return "a valid email address"
    case "VALID_NAME_FORMAT": return "a valid name"
    case "VALID_PHONE_FORMAT": return "a valid phone number"
    case "IS_NEW": return "not one used before"
    case "MATCH_REGEXP": return "the required format"
    default:
      return requirement.lowercased().replacingUnderscores + (params.isEmpty ? "" : " \(JSONWriter.compact(.object(params)))")
    }
  }
}

/// A profile attribute input: the attribute's kind and its validated value.
public struct AttributeInput: Sendable, Equatable {
  public enum Kind: String, Sendable, Equatable { case string, boolean, number }
  public var kind: Kind
  public var input: ValidatedInput

  public init(kind: Kind, input: ValidatedInput) {
    self.kind = kind
    self.input = input
  }
}

/// What a `ConsentMappingCallback` asks consent for.
public struct ConsentMapping: Sendable, Equatable {
  public var name: String
  public var displayName: String
  public var accessLevel: String
  public var isRequired: Bool
  public var message: String
  public var fields: [String]
}

/// What a `TextOutputCallback` of type 4 (a script for browsers) carries, as far as a client
/// without a browser can tell.
public enum ScriptMessage: Sendable, Equatable {
  /// AM's Display Recovery Codes node: the codes, to be kept by the user.
  case recoveryCodes([String])
  /// AM's WebAuthn nodes: the browser's WebAuthn API with a platform or roaming authenticator.
  case webAuthn
  /// Anything else (a page script).
  case other

  /// Reads a script. Recovery codes are the lines of ten or more word characters the node puts
  /// between quotes in its HTML; WebAuthn scripts call `navigator.credentials`.
  public init(script: String) {
    if script.contains("navigator.credentials") || script.contains("webAuthn")
      || script.contains("WebAuthn") && script.contains("PublicKeyCredential")
    {
      self = .webAuthn
      return
    }
    guard script.lowercased().contains("recovery codes") else {
      self = .other
      return
    }
    // Each code stands alone on a line of the node's HTML, written in the script as a string
    // literal: a quote, the code, and the backslash of its "\n".
    var codes: [String] = []
    let characters = Array(script)
    var index = 0
    while index < characters.count {
      defer { index += 1 }
      guard characters[index] == "\"" else { continue }
      var end = index + 1
      while end < characters.count, characters[end].isASCII, characters[end].isLetter || characters[end].isNumber { end += 1 }
      if end - index - 1 >= 8, end < characters.count, characters[end] == "\\" {
        let code = String(characters[(index + 1)..<end])
        if !codes.contains(code) { codes.append(code) }
      }
    }
    self = codes.isEmpty ? .other : .recoveryCodes(codes)
  }
}

extension AuthenticateStep {
  /// Every callback of the step read as a request, in order. A body without `callbacks`, an
  /// unsupported type or a malformed callback throws before anything is answered.
  public func requests() throws(JourneyError) -> [(index: Int, request: CallbackRequest)] {
    guard let callbacks else { throw .noCallbacks }
    var found: [(index: Int, request: CallbackRequest)] = []
    for callback in callbacks { found.append((callback.index, try CallbackRequest(callback))) }
    return found
  }

  /// Answers a callback whose answer is text (name, password, text input, attribute, username,
  /// the provider of SelectIdPCallback) in its first input.
  public mutating func answer(_ callback: Int, with text: String) throws(JourneyError) {
    try setInput(callback: callback, value: .string(text))
  }

  /// Answers a choice or confirmation callback with the index of the option picked.
  public mutating func answer(_ callback: Int, choosing option: Int) throws(JourneyError) {
    try setInput(callback: callback, value: .number(Double(option)))
  }

  /// Answers a callback whose answer is a yes or no (terms, consent, a boolean attribute).
  public mutating func answer(_ callback: Int, accepting: Bool) throws(JourneyError) {
    try setInput(callback: callback, value: .bool(accepting))
  }

  /// Answers a callback with any JSON value in its first input (a number attribute).
  public mutating func answer(_ callback: Int, value: JSON) throws(JourneyError) {
    try setInput(callback: callback, value: value)
  }

  /// Answers a validated callback (username, password, attribute) with `value`, to be submitted
  /// (its `…validateOnly` input false) rather than only checked.
  public mutating func answerValidated(_ callback: Int, value: JSON) throws(JourneyError) {
    try setInput(callback: callback, value: value)
    if (callbacks?[safe: callback]?.inputNames ?? []).contains(where: { $0.hasSuffix("validateOnly") }) {
      try setInput(callback: callback, named: "validateOnly", value: .bool(false))
    }
  }

  /// Answers a KbaCreateCallback with a question and its answer.
  public mutating func answer(_ callback: Int, question: String, answer: String) throws(JourneyError) {
    try setInput(callback: callback, named: "question", value: .string(question))
    try setInput(callback: callback, named: "answer", value: .string(answer))
  }

  /// Sends `reason` in the callback's `…clientError` input: what a client that cannot do what
  /// the callback asks (PingOne Protect, reCAPTCHA) tells the node, which routes on it.
  public mutating func answer(_ callback: Int, clientError reason: String) throws(JourneyError) {
    try setInput(callback: callback, named: "clientError", value: .string(reason))
  }

  /// Sets the input of `callback` whose name ends with `suffix` (`IDToken1question`).
  public mutating func setInput(callback: Int, named suffix: String, value: JSON) throws(JourneyError) {
    guard let names = callbacks?[safe: callback]?.inputNames, let position = names.firstIndex(where: { $0.hasSuffix(suffix) }) else {
      throw .malformedCallback(index: callback, reason: "it has no input named …\(suffix)")
    }
    try setInput(callback: callback, input: position, value: value)
  }
}

extension Array {
  fileprivate subscript(safe index: Int) -> Element? { indices.contains(index) ? self[index] : nil }
}

extension String {
  fileprivate var replacingUnderscores: String { String(map { $0 == "_" ? " " : $0 }) }
}
