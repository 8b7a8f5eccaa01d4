import Collectors
import ProfileJSON

/// What a `DeviceProfileCallback` asks for: its outputs `metadata` and `location` (booleans)
/// and `message` (text to show while collecting).
public struct DeviceProfileRequest: Sendable, Equatable {
  public static let callbackType = "DeviceProfileCallback"

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

/// Answers DeviceProfileCallbacks from a configured set of collectors — the Swift API for
/// journey clients. Add collectors (`DeviceCollector`) or tamper detectors (`TamperDetector`,
/// given to `PlatformCollector`) the way the SDKs let apps register theirs.
///
///     var profiler = DeviceProfiler(identifier: { try myIdentifier() })
///     profiler.collectors.append(KioskCollector())
///     var step = try AuthenticateStep(parsing: responseBytes)
///     let requests = try profiler.answer(&step)
///     post(step.text)
public struct DeviceProfiler: Sendable {
  /// The metadata sections, in order.
  public var collectors: [any DeviceCollector]
  /// Where the collectors read the system.
  public var system: SystemSource
  /// The device identifier (e.g. from a `DeviceKeyStore`); called once per answer.
  public var identifier: @Sendable () throws -> String
  /// The position to report when a callback asks for it; nil means unknown (then omitted).
  public var location: @Sendable () throws -> Location?

  public init(
    collectors: [any DeviceCollector] = DeviceProfile.defaultCollectors(),
    system: SystemSource = .live(),
    identifier: @escaping @Sendable () throws -> String,
    location: @escaping @Sendable () throws -> Location? = { nil }
  ) {
    self.collectors = collectors
    self.system = system
    self.identifier = identifier
    self.location = location
  }

  /// The profile a request asks for: identifier and version always, metadata if asked,
  /// location if asked and known (the Android SDK's shape).
  public func profile(for request: DeviceProfileRequest, diagnostics: Diagnostics = Diagnostics()) throws -> JSON {
    let metadata = request.metadata
      ? DeviceProfile.metadata(collectors, CollectionContext(system: system, diagnostics: diagnostics)) : nil
    let position = request.location ? try location() : nil
    return DeviceProfile.profile(identifier: try identifier(), metadata: metadata, location: position)
  }

  /// Answers every DeviceProfileCallback of `step` in place: the profile, serialised as a JSON
  /// string, goes into its `input[0].value`. Returns the requests answered (empty when the step
  /// has none). A body without `callbacks` or a malformed DeviceProfileCallback throws
  /// `JourneyError` before anything is changed.
  @discardableResult
  public func answer(_ step: inout AuthenticateStep, diagnostics: Diagnostics = Diagnostics()) throws -> [DeviceProfileRequest] {
    guard let callbacks = step.callbacks else { throw JourneyError.noCallbacks }
    var found: [(index: Int, request: DeviceProfileRequest)] = []
    for callback in callbacks {
      if let request = try DeviceProfileRequest(callback) { found.append((callback.index, request)) }
    }
    for (index, request) in found {
      let profile = try profile(for: request, diagnostics: diagnostics)
      try step.setInput(callback: index, value: .string(JSONWriter.compact(profile)))
    }
    return found.map(\.request)
  }
}
