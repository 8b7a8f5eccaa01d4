import Collectors
import DeviceFacts
import DeviceIdentity
import Journey
import ProfileJSON
import SystemCalls

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
    let metadata =
      request.metadata
      ? DeviceProfile.metadata(collectors, CollectionContext(system: system, diagnostics: diagnostics)) : nil
    let position = request.location ? try location() : nil
    return DeviceProfile.profile(identifier: try identifier(), metadata: metadata, location: position)
  }

  /// Answers every DeviceProfileCallback of `step` in place: the profile, serialised as a JSON
  /// string, goes into its `input[0].value`. Returns the requests answered (empty when the step
  /// has none). A body without `callbacks`, more than `maximumCallbacks` callbacks or a
  /// malformed DeviceProfileCallback throws `JourneyError` before anything is changed.
  @discardableResult
  public func answer(
    _ step: inout AuthenticateStep, diagnostics: Diagnostics = Diagnostics(),
    maximumCallbacks: Int = AuthenticateStep.defaultMaximumCallbacks
  ) throws -> [DeviceProfileRequest] {
    try answers(&step, diagnostics: diagnostics, maximumCallbacks: maximumCallbacks).map(\.request)
  }

  /// `answer(_:diagnostics:maximumCallbacks:)`, with where each answer went and its size.
  ///
  /// The machine is collected once per step, however many callbacks ask: metadata once if
  /// any asks for it, the identifier once, the location once; each callback gets the subset
  /// it asked for. Inputs are set in one pass (linear in the step's size).
  public func answers(
    _ step: inout AuthenticateStep, diagnostics: Diagnostics = Diagnostics(),
    maximumCallbacks: Int = AuthenticateStep.defaultMaximumCallbacks
  ) throws -> [DeviceProfileAnswer] {
    guard let callbacks = step.callbacks else { throw JourneyError.noCallbacks }
    guard callbacks.count <= maximumCallbacks else {
      throw JourneyError.tooManyCallbacks(count: callbacks.count, limit: maximumCallbacks)
    }
    var found: [(index: Int, request: DeviceProfileRequest)] = []
    for callback in callbacks {
      if let request = try DeviceProfileRequest(callback) { found.append((callback.index, request)) }
    }
    guard !found.isEmpty else { return [] }
    let metadata =
      found.contains { $0.request.metadata }
      ? DeviceProfile.metadata(collectors, CollectionContext(system: system, diagnostics: diagnostics)) : nil
    let position = found.contains { $0.request.location } ? try location() : nil
    let identifier = try identifier()
    var texts: [Int: String] = [:]  // by the request's shape: metadata, location
    var results: [DeviceProfileAnswer] = []
    var inputs: [(callback: Int, value: JSON)] = []
    for (index, request) in found {
      let shape = (request.metadata ? 1 : 0) + (request.location ? 2 : 0)
      let text =
        texts[shape]
        ?? JSONWriter.compact(
          DeviceProfile.profile(
            identifier: identifier, metadata: request.metadata ? metadata : nil, location: request.location ? position : nil))
      texts[shape] = text
      inputs.append((index, .string(text)))
      results.append(DeviceProfileAnswer(index: index, request: request, size: text.utf8.count))
    }
    try step.setInputs(inputs)
    return results
  }
}

/// One answered DeviceProfileCallback: where it is in the step, what it asked, and the size
/// of the profile sent (AM's Device Profile Collector node rejects profiles above its Maximum
/// Profile Size, 3 KB by default: `DeviceProfile.defaultMaximumSize`).
public struct DeviceProfileAnswer: Sendable, Equatable {
  public var index: Int
  public var request: DeviceProfileRequest
  /// Bytes of the profile's compact JSON.
  public var size: Int
}
