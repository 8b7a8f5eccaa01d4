import ProfileJSON

/// What one callback of a step asks for, for the callback types of AM's common nodes
/// (Username Collector, Password Collector, Message / Choice Collector, Device Profile
/// Collector). A journey client reads each callback into this, gets the answer from the user
/// or the machine, and writes it with `AuthenticateStep.answer(_:with:)`.
public enum CallbackRequest: Sendable, Equatable {
  /// `NameCallback`: a user name, as text.
  case name(prompt: String)
  /// `PasswordCallback`: a secret, as text.
  case password(prompt: String)
  /// `TextOutputCallback`: a message to show; nothing to answer. `messageType` 0 information,
  /// 1 warning, 2 error, 4 a script (for browsers; a CLI shows nothing).
  case textOutput(message: String, messageType: Int)
  /// `ChoiceCallback`: pick one of `choices` by index.
  case choice(prompt: String, choices: [String], defaultChoice: Int)
  /// `ConfirmationCallback`: pick one of `options` by index.
  case confirmation(prompt: String, options: [String], defaultOption: Int)
  /// `DeviceProfileCallback`: a device profile (answered by `DeviceProfiler`).
  case deviceProfile(DeviceProfileRequest)
  /// `DeviceBindingCallback`: bind a key (answered by `DeviceBinder`, library DeviceBinding).
  case deviceBinding(DeviceBindingRequest)
  /// `DeviceSigningVerifierCallback`: sign with a bound key (answered by `DeviceBinder`).
  case deviceSigning(DeviceSigningRequest)
  /// `HiddenValueCallback`: a value a script sends without showing it, answered (or left as
  /// it is) by what knows its `id` — fr-profile answers the TPM attestation rounds
  /// (`frTpmAttestationRequest`, `frTpmAttestationChallenge`) and leaves other ids unchanged,
  /// as the SDKs do.
  case hiddenValue(id: String, value: String)

  /// The callback types this enum reads.
  public static let supportedTypes = [
    "NameCallback", "PasswordCallback", "TextOutputCallback", "ChoiceCallback", "ConfirmationCallback",
    DeviceProfileRequest.callbackType, DeviceBindingRequest.callbackType, DeviceSigningRequest.callbackType,
    "HiddenValueCallback",
  ]

  /// Reads `callback`. A type not in `supportedTypes` is `JourneyError.unsupportedCallback`
  /// naming the type; a supported type with missing or mistyped outputs is
  /// `JourneyError.malformedCallback` naming the output.
  public init(_ callback: Callback) throws(JourneyError) {
    let reader = CallbackOutputs(callback: callback)
    switch callback.type ?? "" {
    case "NameCallback":
      self = .name(prompt: try reader.text("prompt", default: "User Name"))
      try reader.needsInput()
    case "PasswordCallback":
      self = .password(prompt: try reader.text("prompt", default: "Password"))
      try reader.needsInput()
    case "TextOutputCallback":
      self = .textOutput(message: try reader.text("message"), messageType: try reader.integer("messageType", default: 0))
    case "ChoiceCallback":
      self = .choice(
        prompt: try reader.text("prompt", default: ""), choices: try reader.texts("choices"),
        defaultChoice: try reader.integer("defaultChoice", default: 0))
      try reader.needsInput()
    case "ConfirmationCallback":
      self = .confirmation(
        prompt: try reader.text("prompt", default: ""), options: try reader.texts("options"),
        defaultOption: try reader.integer("defaultOption", default: 0))
      try reader.needsInput()
    case DeviceProfileRequest.callbackType:
      self = .deviceProfile(try DeviceProfileRequest(callback)!)
    case DeviceBindingRequest.callbackType:
      self = .deviceBinding(try DeviceBindingRequest(callback)!)
    case DeviceSigningRequest.callbackType:
      self = .deviceSigning(try DeviceSigningRequest(callback)!)
    case "HiddenValueCallback":
      self = .hiddenValue(id: try reader.text("id"), value: try reader.text("value", default: ""))
      try reader.needsInput()
    default:
      throw .unsupportedCallback(index: callback.index, type: callback.type)
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

extension AuthenticateStep {
  /// Every callback of the step read as a request, in order. A body without `callbacks`, an
  /// unsupported type or a malformed callback throws before anything is answered.
  public func requests() throws(JourneyError) -> [(index: Int, request: CallbackRequest)] {
    guard let callbacks else { throw .noCallbacks }
    var found: [(index: Int, request: CallbackRequest)] = []
    for callback in callbacks { found.append((callback.index, try CallbackRequest(callback))) }
    return found
  }

  /// Answers a name or password callback with text.
  public mutating func answer(_ callback: Int, with text: String) throws(JourneyError) {
    try setInput(callback: callback, value: .string(text))
  }

  /// Answers a choice or confirmation callback with the index of the option picked.
  public mutating func answer(_ callback: Int, choosing option: Int) throws(JourneyError) {
    try setInput(callback: callback, value: .number(Double(option)))
  }
}
