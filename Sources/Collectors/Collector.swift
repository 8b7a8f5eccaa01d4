import ProfileJSON

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
  /// Where device lists come from (displays, cameras, bluetooth adapters).
  public var devices: any DeviceEnumerating

  /// `devices` defaults to libudev on the live machine and to a sysfs walk below a fixture root
  /// (libudev cannot be pointed at one).
  public init(
    system: SystemSource, diagnostics: Diagnostics = Diagnostics(), devices: (any DeviceEnumerating)? = nil
  ) {
    self.system = system
    self.diagnostics = diagnostics
    self.devices = devices ?? (system.isLive ? LibudevEnumerator() : SysfsEnumerator(system: system))
  }
}

/// Notes collectors leave about dropped keys and odd input. `collect` prints warnings on stderr
/// and, with `-v`, the detail; stdout carries only the profile.
public final class Diagnostics: @unchecked Sendable {
  public enum Level: Int, Sendable, Comparable {
    case detail = 0, warning = 1
    public static func < (a: Level, b: Level) -> Bool { a.rawValue < b.rawValue }
  }
  public struct Note: Sendable, Equatable {
    public var level: Level
    /// Dotted place in the profile, e.g. "hardware.memory".
    public var key: String
    public var message: String
  }

  public private(set) var notes: [Note] = []
  public init() {}

  /// Something a user should know: a key was dropped because its source was odd or broken.
  public func warn(_ key: String, _ message: String) { notes.append(Note(level: .warning, key: key, message: message)) }
  /// Detail for `-v`: where a value came from, or why an optional source was absent.
  public func detail(_ key: String, _ message: String) { notes.append(Note(level: .detail, key: key, message: message)) }
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
