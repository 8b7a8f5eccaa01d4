import ProfileJSON
import Synchronization

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

/// Facts several collectors and detectors need, each read and parsed at most once per
/// collection: os-release (platform, browser), DMI fields (platform, hardware, virtualization),
/// the head of /proc/cpuinfo (hardware, virtualization; the kernel generates it on every read),
/// virtualization (platform, tamper). Safe to share between threads: the cache sits behind a
/// `Mutex`; two threads asking at once may both read a file, and the first answer is kept.
public final class SharedFacts: Sendable {
  private let system: SystemSource
  private let cache = Mutex(Cache())

  private struct Cache {
    var osRelease: KeyValues?
    /// /proc/cpuinfo: whether it was read, whether it existed, and what it said. Not a
    /// `CPUInfo??` through `cached` nor a `CPUInfo?`: on collect's path each costs a runtime
    /// metadata instantiation (~10 k instructions; bench/README.md).
    var cpuInfoRead = false
    var cpuInfoExists = false
    var cpuInfo = CPUInfo()
    var virtualization: Virtualization?
    var machineIdentity: MachineIdentity?
    var dmiPresent: Bool?
    var dmi: [(field: String, value: String?)] = []
  }

  init(system: SystemSource) { self.system = system }

  /// The cached value at `slot`, computed outside the lock on first use.
  private func cached<Value: Sendable>(_ slot: WritableKeyPath<Cache, Value?> & Sendable, _ compute: () -> Value) -> Value {
    if let value = cache.withLock({ $0[keyPath: slot] }) { return value }
    let value = compute()
    return cache.withLock { cache in
      if let existing = cache[keyPath: slot] { return existing }
      cache[keyPath: slot] = value
      return value
    }
  }

  /// The head of /proc/cpuinfo: the first processor's block is all the profile needs.
  public var cpuInfo: CPUInfo? {
    let info = cpuInfoFields
    return cache.withLock { $0.cpuInfoExists } ? info : nil
  }

  /// `cpuInfo`, with every field empty (no processors, no names, no hypervisor flag) when
  /// /proc/cpuinfo cannot be read: what collect's path asks.
  package var cpuInfoFields: CPUInfo {
    var known = false
    let cached = cache.withLock { cache in
      known = cache.cpuInfoRead
      return cache.cpuInfo
    }
    if known { return cached }
    var info = CPUInfo()
    var exists = false
    if let bytes = system.readBytes("/proc/cpuinfo", limit: 16384) {
      info = parseCPUInfo(bytes)
      exists = true
    }
    return cache.withLock { cache in
      if cache.cpuInfoRead { return cache.cpuInfo }
      cache.cpuInfoRead = true
      cache.cpuInfoExists = exists
      cache.cpuInfo = info
      return info
    }
  }

  public var virtualization: Virtualization {
    cached(\.virtualization) { Virtualization.detect(system, facts: self) }
  }

  /// os-release, from /etc or its fallback location /usr/lib (os-release(5)); empty when neither exists.
  package var osRelease: KeyValues {
    cached(\.osRelease) {
      (system.readBytes("/etc/os-release") ?? system.readBytes("/usr/lib/os-release")).map(parseKeyValueFile) ?? KeyValues()
    }
  }

  /// The machine's maker and model (DMI, else the device tree).
  var machineIdentity: MachineIdentity {
    cached(\.machineIdentity) { MachineIdentity.read(system, facts: self) }
  }

  /// The first line of /sys/class/dmi/id/<field>, trimmed; nil when missing or empty. Machines
  /// without DMI (boards, some VMs) cost one `stat` instead of a failed open per field.
  public func dmi(_ field: String) -> String? {
    let present = cached(\.dmiPresent) { system.exists("/sys/class/dmi/id") }
    guard present else { return nil }
    if let hit = cache.withLock({ cache in cache.dmi.first(where: { $0.field == field }) }) { return hit.value }
    let value = system.readLine("/sys/class/dmi/id/" + field)
    cache.withLock { cache in
      if !cache.dmi.contains(where: { $0.field == field }) { cache.dmi.append((field, value)) }
    }
    return value
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
