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

  /// The callback types this enum reads.
  public static let supportedTypes = [
    "NameCallback", "PasswordCallback", "TextOutputCallback", "ChoiceCallback", "ConfirmationCallback",
    DeviceProfileRequest.callbackType, DeviceBindingRequest.callbackType, DeviceSigningRequest.callbackType,
  ]

  /// Reads `callback`. A type not in `supportedTypes` is `JourneyError.unsupportedCallback`
  /// naming the type; a supported type with missing or mistyped outputs is
  /// `JourneyError.malformedCallback` naming the output.
  public init(_ callback: Callback) throws(JourneyError) {
    let index = callback.index
    let type = callback.type ?? ""
    func text(_ name: String, default fallback: String? = nil) throws(JourneyError) -> String {
      switch callback.output(name) {
      case .string(let value)?: return value
      case nil:
        if let fallback { return fallback }
        throw .malformedCallback(index: index, reason: "\(type) has no output \"\(name)\"")
      default: throw .malformedCallback(index: index, reason: "\(type) output \"\(name)\" is not a string")
      }
    }
    func integer(_ name: String, default fallback: Int) throws(JourneyError) -> Int {
      switch callback.output(name) {
      case nil: return fallback
      case .number(let value)? where value == value.rounded() && abs(value) < 1e9: return Int(value)
      // AM sends TextOutputCallback's messageType as a string ("0").
      case .string(let value)? where Int(value) != nil: return Int(value)!
      default: throw .malformedCallback(index: index, reason: "\(type) output \"\(name)\" is not an integer")
      }
    }
    func texts(_ name: String) throws(JourneyError) -> [String] {
      guard case .array(let items)? = callback.output(name) else {
        throw .malformedCallback(index: index, reason: "\(type) output \"\(name)\" is not an array")
      }
      var strings: [String] = []
      for item in items {
        guard case .string(let value) = item else {
          throw .malformedCallback(index: index, reason: "\(type) output \"\(name)\" holds a non-string")
        }
        strings.append(value)
      }
      guard !strings.isEmpty else { throw .malformedCallback(index: index, reason: "\(type) output \"\(name)\" is empty") }
      return strings
    }
    func needsInput() throws(JourneyError) {
      guard case .array(let inputs)? = callback.json["input"], case .object? = inputs.first else {
        throw .malformedCallback(index: index, reason: "\(type) has no input[0] to answer in")
      }
    }

    switch type {
    case "NameCallback":
      self = .name(prompt: try text("prompt", default: "User Name"))
      try needsInput()
    case "PasswordCallback":
      self = .password(prompt: try text("prompt", default: "Password"))
      try needsInput()
    case "TextOutputCallback":
      self = .textOutput(message: try text("message"), messageType: try integer("messageType", default: 0))
    case "ChoiceCallback":
      self = .choice(
        prompt: try text("prompt", default: ""), choices: try texts("choices"),
        defaultChoice: try integer("defaultChoice", default: 0))
      try needsInput()
    case "ConfirmationCallback":
      self = .confirmation(
        prompt: try text("prompt", default: ""), options: try texts("options"),
        defaultOption: try integer("defaultOption", default: 0))
      try needsInput()
    case DeviceProfileRequest.callbackType:
      self = .deviceProfile(try DeviceProfileRequest(callback)!)
    case DeviceBindingRequest.callbackType:
      self = .deviceBinding(try DeviceBindingRequest(callback)!)
    case DeviceSigningRequest.callbackType:
      self = .deviceSigning(try DeviceSigningRequest(callback)!)
    default:
      throw .unsupportedCallback(index: index, type: callback.type)
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
