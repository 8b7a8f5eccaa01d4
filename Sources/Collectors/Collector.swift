import DeviceFacts
import ProfileJSON
import Synchronization
import SystemCalls

/// One section (or sub-section) of the device profile, named by its JSON key.
///
/// The Linux counterpart of the SDKs' `DeviceCollector`: a small value with a `name` and a
/// synchronous, side-effect-free `collect` over the context's system source. It returns nil when
/// it knows nothing (the SDKs omit unknown keys; a profile never carries `null`).
public protocol DeviceCollector: Sendable {
  /// The JSON key this collector fills, e.g. "platform".
  var name: String { get }
  /// The section's value, or nil to omit the key.
  func collect(_ context: CollectionContext) -> JSON?
}

/// What a collector may look at, and where it reports what it could not read.
public struct CollectionContext: Sendable {
  public var system: SystemSource
  public var diagnostics: Diagnostics
  /// Facts several collectors and detectors need, read once per collection.
  public let facts: SharedFacts

  /// What the tamper detectors look at: the same system and facts.
  public var tamperContext: TamperContext { TamperContext(system: system, facts: facts) }
  /// Where device lists come from (displays, cameras, bluetooth adapters).
  public var devices: any DeviceEnumerating

  /// Devices come from libudev on the live machine and from a sysfs walk below a fixture root
  /// (libudev cannot be pointed at one).
  public init(system: SystemSource, diagnostics: Diagnostics = Diagnostics()) {
    // Two initialisers rather than an optional `devices` parameter: the first
    // `Optional<any DeviceEnumerating>` of a process costs collect a runtime metadata
    // instantiation (~34 k instructions; bench/README.md).
    let devices: any DeviceEnumerating =
      system.isLive ? LibudevEnumerator(diagnostics: diagnostics) : SysfsEnumerator(system: system)
    self.init(system: system, diagnostics: diagnostics, devices: devices)
  }

  /// A context whose device lists come from `devices` (tests hand in a fixed list).
  public init(system: SystemSource, diagnostics: Diagnostics = Diagnostics(), devices: any DeviceEnumerating) {
    self.system = system
    self.diagnostics = diagnostics
    self.facts = SharedFacts(system: system)
    self.devices = devices
  }
}

/// Notes collectors leave about dropped keys and odd input: warnings, and (when recorded) the
/// detail of where each value came from. What to show is the caller's choice. Collectors may run
/// on several threads at once: the notes sit behind a `Mutex`.
public final class Diagnostics: Sendable {
  public enum Level: Int, Sendable, Comparable {
    case detail = 0
    case warning = 1
    public static func < (a: Level, b: Level) -> Bool { a.rawValue < b.rawValue }
  }
  public struct Note: Sendable, Equatable {
    public var level: Level
    /// Dotted place in the profile, e.g. "hardware.memory".
    public var key: String
    public var message: String
  }

  private let storage = Mutex<[Note]>([])
  /// Whether `detail` notes are kept; without it, their messages are never built.
  public let recordsDetail: Bool

  public init(recordsDetail: Bool = true) {
    self.recordsDetail = recordsDetail
  }

  /// The notes so far, in the order they were left.
  public var notes: [Note] { storage.withLock { $0 } }

  /// Something a user should know: a key was dropped because its source was odd or broken.
  public func warn(_ key: String, _ message: String) {
    let note = Note(level: .warning, key: key, message: message)
    storage.withLock { $0.append(note) }
  }
  /// Detail: where a value came from, or why an optional source was absent.
  /// The message is built only when detail is recorded.
  public func detail(_ key: String, _ message: @autoclosure () -> String) {
    guard recordsDetail else { return }
    let note = Note(level: .detail, key: key, message: message())
    storage.withLock { $0.append(note) }
  }
}

/// Builds a JSON object from optional members, dropping nil values so a profile never carries null.
public struct SectionBuilder {
  public private(set) var object = JSONObject()
  public init() {}
  public mutating func set(_ key: String, _ value: JSON?) {
    if let value { object.members.append((key, value)) }
  }
  public mutating func set(_ key: String, _ value: String?) { set(key, value.map(JSON.string)) }
  public mutating func set(_ key: String, _ value: Int?) { set(key, value.map { JSON.number(Double($0)) }) }
  public mutating func set(_ key: String, _ value: Bool?) { set(key, value.map(JSON.bool)) }
  /// The object, or nil when no member was set.
  public var value: JSON? { object.isEmpty ? nil : .object(object) }
}
