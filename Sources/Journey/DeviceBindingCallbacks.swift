import ProfileJSON

/// What a `DeviceBindingCallback` (AM's Device Binding node) asks for: create a key for
/// `userId`, protected as `authenticationType` says, and return a JWS over `challenge`.
/// Answered by `DeviceBinder` (library DeviceBinding); this type only reads the callback.
public struct DeviceBindingRequest: Sendable, Equatable {
  public static let callbackType = CallbackType.deviceBinding.rawValue

  public var userId: String
  public var username: String
  /// `NONE`, `APPLICATION_PIN`, `BIOMETRIC_ONLY` or `BIOMETRIC_ALLOW_FALLBACK`, as sent.
  public var authenticationType: String
  public var challenge: String
  public var title: String
  public var subtitle: String
  public var description: String
  /// Seconds for the whole interaction and the JWS lifetime (node default 60).
  public var timeout: Int
  /// The node demands Android key attestation (a Linux client answers `Unsupported`).
  public var attestation: Bool

  public init(
    userId: String, username: String, authenticationType: String, challenge: String, title: String = "",
    subtitle: String = "", description: String = "", timeout: Int = 60, attestation: Bool = false
  ) {
    self.userId = userId
    self.username = username
    self.authenticationType = authenticationType
    self.challenge = challenge
    self.title = title
    self.subtitle = subtitle
    self.description = description
    self.timeout = timeout
    self.attestation = attestation
  }

  /// Reads the callback; nil for another type. A missing or mistyped output, or missing
  /// `jws`/`deviceName`/`deviceId`/`clientError` inputs, is an error naming it.
  public init?(_ callback: Callback) throws(JourneyError) {
    guard callback.type == Self.callbackType else { return nil }
    let reader = CallbackOutputs(callback: callback)
    userId = try reader.text("userId")
    username = try reader.text("username", default: "")
    authenticationType = try reader.text("authenticationType")
    challenge = try reader.text("challenge")
    title = try reader.text("title", default: "")
    subtitle = try reader.text("subtitle", default: "")
    description = try reader.text("description", default: "")
    timeout = try reader.integer("timeout", default: 60)
    attestation = try reader.flag("attestation", default: false)
    try reader.requireInputs(["jws", "deviceName", "deviceId", "clientError"])
  }
}

/// What a `DeviceSigningVerifierCallback` (AM's Device Signing Verifier node) asks for: a JWS
/// over `challenge` signed with the key bound for `userId` (empty in usernameless journeys).
public struct DeviceSigningRequest: Sendable, Equatable {
  public static let callbackType = CallbackType.deviceSigning.rawValue

  public var userId: String
  public var challenge: String
  public var title: String
  public var subtitle: String
  public var description: String
  public var timeout: Int

  public init(
    userId: String, challenge: String, title: String = "", subtitle: String = "", description: String = "",
    timeout: Int = 60
  ) {
    self.userId = userId
    self.challenge = challenge
    self.title = title
    self.subtitle = subtitle
    self.description = description
    self.timeout = timeout
  }

  public init?(_ callback: Callback) throws(JourneyError) {
    guard callback.type == Self.callbackType else { return nil }
    let reader = CallbackOutputs(callback: callback)
    userId = try reader.text("userId", default: "")
    challenge = try reader.text("challenge")
    title = try reader.text("title", default: "")
    subtitle = try reader.text("subtitle", default: "")
    description = try reader.text("description", default: "")
    timeout = try reader.integer("timeout", default: 60)
    try reader.requireInputs(["jws", "clientError"])
  }
}

/// How a binding or signing callback is answered: a JWS (binding also sends the device's
/// name and id) or one of the client-error outcome names.
public enum DeviceBindingAnswer: Sendable, Equatable {
  case jws(String, deviceName: String = "", deviceId: String = "")
  /// `Unsupported`, `Timeout`, `Abort`, `ClientNotRegistered` (or an admin's custom name).
  case clientError(String)
}

extension AuthenticateStep {
  /// Sets the value of the callback's input whose name ends with `suffix` (AM names them
  /// `IDToken<N>jws`, `IDToken<N>clientError`, …); the name is kept.
  public mutating func setInput(callback: Int, suffix: String, value: JSON) throws(JourneyError) {
    guard let callbacks, callbacks.indices.contains(callback) else {
      throw .malformedCallback(index: callback, reason: "no such callback")
    }
    guard let position = callbacks[callback].inputNames.firstIndex(where: { $0.hasSuffix(suffix) }) else {
      throw .malformedCallback(index: callback, reason: "it has no input named …\(suffix)")
    }
    try setInput(callback: callback, input: position, value: value)
  }

  /// Writes a binding or signing answer into callback `index`: on success `jws` (and for a
  /// binding `deviceName`, `deviceId`) with an empty `clientError`; on failure only
  /// `clientError`, the other inputs empty.
  public mutating func answer(_ index: Int, binding answer: DeviceBindingAnswer) throws(JourneyError) {
    let isBinding = callbacks?[safe: index]?.type == DeviceBindingRequest.callbackType
    switch answer {
    case .jws(let jws, let deviceName, let deviceId):
      try setInput(callback: index, suffix: "jws", value: .string(jws))
      if isBinding {
        try setInput(callback: index, suffix: "deviceName", value: .string(deviceName))
        try setInput(callback: index, suffix: "deviceId", value: .string(deviceId))
      }
      try setInput(callback: index, suffix: "clientError", value: "")
    case .clientError(let name):
      try setInput(callback: index, suffix: "jws", value: "")
      if isBinding {
        try setInput(callback: index, suffix: "deviceName", value: "")
        try setInput(callback: index, suffix: "deviceId", value: "")
      }
      try setInput(callback: index, suffix: "clientError", value: .string(name))
    }
  }
}

extension Array {
  fileprivate subscript(safe index: Int) -> Element? { indices.contains(index) ? self[index] : nil }
}
