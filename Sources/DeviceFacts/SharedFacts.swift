import ProfileJSON
import Synchronization
import SystemCalls

/// What the tamper detectors look at: the system source and the facts read once per
/// collection (a collect's `CollectionContext.tamperContext`, or a context of its own for a
/// check outside collect, such as the `deviceTampering` binding policy).
public struct TamperContext: Sendable {
  public var system: SystemSource
  public let facts: SharedFacts

  public init(system: SystemSource, facts: SharedFacts) {
    self.system = system
    self.facts = facts
  }

  public init(system: SystemSource) { self.init(system: system, facts: SharedFacts(system: system)) }
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

  package init(system: SystemSource) { self.system = system }

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
  package var machineIdentity: MachineIdentity {
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

// MARK: - model and vendor

/// The machine's maker and model, from DMI on PCs and servers, from the device tree on boards.
package struct MachineIdentity: Sendable {
  package var vendor: String?
  package var model: String?

  /// Read once per collection through `SharedFacts.machineIdentity`.
  static func read(_ system: SystemSource, facts: SharedFacts) -> MachineIdentity {
    func dmi(_ field: String) -> String? { meaningful(facts.dmi(field)) }
    let vendor = dmi("sys_vendor") ?? dmi("board_vendor")
    if vendor != nil || dmi("product_name") != nil {
      // Lenovo keeps the marketing name in product_version ("ThinkPad X1 Carbon Gen 9") and a
      // machine-type code in product_name ("20XW0026GE"); udev's hwdb (20-dmi-id) makes
      // hostnamectl show product_version for them, and so do we.
      let lenovoVersion = vendor?.uppercased() == "LENOVO" ? dmi("product_version") : nil
      return MachineIdentity(vendor: vendor, model: lenovoVersion ?? dmi("product_name") ?? dmi("product_family") ?? dmi("board_name"))
    }
    let model = system.readBytes("/proc/device-tree/model", limit: 512).flatMap { parseDeviceTreeStrings($0).first }
    let compatible = system.readBytes("/proc/device-tree/compatible", limit: 1024).map(parseDeviceTreeStrings) ?? []
    return MachineIdentity(vendor: compatible.first.flatMap(deviceTreeVendor), model: meaningful(model))
  }
}

/// Device-tree vendor prefixes (Documentation/devicetree/bindings/vendor-prefixes.yaml) → names.
private let deviceTreeVendors: [String: String] = [
  "raspberrypi": "Raspberry Pi", "brcm": "Broadcom", "rockchip": "Rockchip", "allwinner": "Allwinner",
  "nvidia": "NVIDIA", "qcom": "Qualcomm", "pine64": "Pine64", "hardkernel": "Hardkernel", "radxa": "Radxa",
  "friendlyarm": "FriendlyElec", "fsl": "NXP", "nxp": "NXP", "ti": "Texas Instruments", "amlogic": "Amlogic",
  "xunlong": "Xunlong", "beagle": "BeagleBoard.org", "starfive": "StarFive", "sifive": "SiFive",
  "mediatek": "MediaTek", "samsung": "Samsung", "apple": "Apple", "toradex": "Toradex", "st": "STMicroelectronics",
]

/// The vendor of a device-tree `compatible` entry such as "raspberrypi,4-model-b".
package func deviceTreeVendor(_ compatible: String) -> String? {
  guard let comma = compatible.firstIndex(of: ","), comma > compatible.startIndex else { return nil }
  let prefix = String(compatible[..<comma])
  return deviceTreeVendors[prefix] ?? prefix
}
