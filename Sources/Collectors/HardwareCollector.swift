import DeviceFacts
import ProfileJSON

/// The "hardware" section: processor, maker, storage, memory, CPUs, then the nested sections
/// (display, camera) of the collectors it is given.
public struct HardwareCollector: DeviceCollector {
  public let name = "hardware"
  /// Collectors whose sections become members after "cpu" (Android's order: display, camera).
  public var nested: [any DeviceCollector]

  public init(nested: [any DeviceCollector] = []) {
    self.nested = nested
  }

  /// MemTotal is rounded up to this granularity: kernels reserve a few MiB more or less from
  /// release to release, and a profile must not change with a kernel update. 128 MiB keeps
  /// the figure recognisable (1024 on a 1 GiB board, 16000 on a 16 GiB laptop) while a drift
  /// flips it only when MemTotal sits within a few MiB of a multiple of 128 MiB.
  public static let memoryGranularityMiB: UInt64 = 128

  public func collect(_ context: CollectionContext) -> JSON? {
    let system = context.system
    var section = SectionBuilder()
    // "hardware" ← cpuinfo "model name" (x86), ARM core name from "CPU part", else the device-tree SoC
    section.set("hardware", processorName(context))
    // "manufacturer" ← DMI sys_vendor / board_vendor, or the device-tree vendor
    section.set("manufacturer", context.facts.machineIdentity.vendor)
    // "storage" ← statvfs("/"): f_blocks × f_frsize, MiB
    section.set("storage", system.fileSystemSize("/").map { Int($0 >> 20) })
    // "memory" ← MemTotal in /proc/meminfo, MiB, rounded up to 128 MiB
    section.set("memory", memoryMiB(context))
    // "cpu" ← logical CPUs configured: /sys/devices/system/cpu/present, else cpuinfo processors
    section.set("cpu", cpuCount(context))
    for collector in nested {
      section.set(collector.name, collector.collect(context))
    }
    return section.value
  }

  func memoryMiB(_ context: CollectionContext) -> Int? {
    guard let text = context.system.readBytes("/proc/meminfo", limit: 16384) else {
      context.diagnostics.detail("hardware.memory", "/proc/meminfo is not readable")
      return nil
    }
    guard let kib = parseMemTotalKiB(text), kib > 0 else {
      context.diagnostics.warn("hardware.memory", "dropped: /proc/meminfo has no usable MemTotal line")
      return nil
    }
    return Int(roundMemoryMiB(kib: kib))
  }

  func cpuCount(_ context: CollectionContext) -> Int? {
    if let present = context.system.readLine("/sys/devices/system/cpu/present") {
      if let count = parseCPUListCount(present) { return count }
      context.diagnostics.warn("hardware.cpu", "/sys/devices/system/cpu/present is not a CPU list: \"\(present)\"")
    }
    guard let text = context.system.readBytes("/proc/cpuinfo") else { return nil }
    let count = parseCPUInfo(text).processors
    return count > 0 ? count : nil
  }

  func processorName(_ context: CollectionContext) -> String? {
    let info = context.facts.cpuInfoFields  // all fields nil when /proc/cpuinfo is missing
    if let model = meaningful(info.modelName) { return model }
    if let implementer = info.implementer, let part = info.part, let core = armCoreName(implementer: implementer, part: part) {
      return core
    }
    // Boards: the SoC is the last `compatible` entry of the device tree ("brcm,bcm2711").
    let compatible = context.system.readBytes("/proc/device-tree/compatible", limit: 1024).map(parseDeviceTreeStrings)
    return compatible?.last
  }
}

/// MemTotal (KiB) → MiB rounded up to `HardwareCollector.memoryGranularityMiB`.
package func roundMemoryMiB(kib: UInt64) -> UInt64 {
  let granularity = HardwareCollector.memoryGranularityMiB
  let mib = (kib + 1023) / 1024
  return (mib + granularity - 1) / granularity * granularity
}

/// ARM core names by implementer and part number, as util-linux `lscpu` names them.
package func armCoreName(implementer: String, part: String) -> String? {
  let arm: [String: String] = [
    "0xb76": "ARM1176", "0xc07": "Cortex-A7", "0xc08": "Cortex-A8", "0xc09": "Cortex-A9", "0xc0f": "Cortex-A15",
    "0xd03": "Cortex-A53", "0xd04": "Cortex-A35", "0xd05": "Cortex-A55", "0xd07": "Cortex-A57",
    "0xd08": "Cortex-A72", "0xd09": "Cortex-A73", "0xd0a": "Cortex-A75", "0xd0b": "Cortex-A76",
    "0xd0c": "Neoverse-N1", "0xd0d": "Cortex-A77", "0xd40": "Neoverse-V1", "0xd41": "Cortex-A78",
    "0xd44": "Cortex-X1", "0xd46": "Cortex-A510", "0xd47": "Cortex-A710", "0xd48": "Cortex-X2",
    "0xd49": "Neoverse-N2", "0xd4b": "Cortex-A78C", "0xd4f": "Neoverse-V2", "0xd80": "Cortex-A520",
    "0xd81": "Cortex-A720",
  ]
  guard implementer == "0x41", let core = arm[part] else { return nil }
  return "ARM " + core
}
