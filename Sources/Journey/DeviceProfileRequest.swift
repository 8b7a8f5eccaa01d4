import ProfileJSON

/// What a `DeviceProfileCallback` asks for: its outputs `metadata` and `location` (booleans)
/// and `message` (text to show while collecting).
public struct DeviceProfileRequest: Sendable, Equatable {
  public static let callbackType = CallbackType.deviceProfile.rawValue

  public var metadata: Bool
  public var location: Bool
  public var message: String

  public init(metadata: Bool, location: Bool, message: String = "") {
    self.metadata = metadata
    self.location = location
    self.message = message
  }

  /// Reads the request of a DeviceProfileCallback; nil for other callback types. Outputs that
  /// are missing or of the wrong type, or a missing `input[0]`, are errors naming the output.
  public init?(_ callback: Callback) throws(JourneyError) {
    guard callback.type == Self.callbackType else { return nil }
    func flag(_ name: String) throws(JourneyError) -> Bool {
      guard let value = callback.output(name) else {
        throw .malformedCallback(index: callback.index, reason: "DeviceProfileCallback has no output \"\(name)\"")
      }
      guard case .bool(let flag) = value else {
        throw .malformedCallback(index: callback.index, reason: "DeviceProfileCallback output \"\(name)\" is not a boolean")
      }
      return flag
    }
    metadata = try flag("metadata")
    location = try flag("location")
    switch callback.output("message") {
    case nil: message = ""
    case .string(let text)?: message = text
    default: throw .malformedCallback(index: callback.index, reason: "DeviceProfileCallback output \"message\" is not a string")
    }
    guard case .array(let inputs)? = callback.json["input"], case .object? = inputs.first else {
      throw .malformedCallback(index: callback.index, reason: "DeviceProfileCallback has no input[0] to answer in")
    }
  }
}
