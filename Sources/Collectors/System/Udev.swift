import CUdev
import Synchronization
import SystemCalls

/// A device as libudev (or the sysfs walk below a fixture root) saw it, copied out of C.
public struct UdevDevice: Sendable, Equatable {
  /// The kernel subsystem, e.g. "drm", "video4linux", "bluetooth".
  public var subsystem: String
  /// The last component of the syspath, e.g. "card0-eDP-1", "video0", "hci0".
  public var sysname: String
  /// The device's absolute path inside the machine, e.g. "/sys/devices/pci0000:00/…/card0-eDP-1".
  /// Read files below it through `SystemSource`, so a fixture root applies.
  public var syspath: String
  /// DEVTYPE, e.g. "drm_connector", "host"; nil when the kernel gives none.
  public var devtype: String?
  /// The uevent variables and udev database properties (`ID_V4L_CAPABILITIES`, …).
  public var properties: [String: String]
  /// The requested sysfs attributes that exist, trailing newlines removed.
  public var attributes: [String: String]

  public init(
    subsystem: String, sysname: String, syspath: String, devtype: String? = nil,
    properties: [String: String] = [:], attributes: [String: String] = [:]
  ) {
    self.subsystem = subsystem
    self.sysname = sysname
    self.syspath = syspath
    self.devtype = devtype
    self.properties = properties
    self.attributes = attributes
  }
}

/// Lists the devices of a subsystem. Collectors depend on this, so tests can hand them a fixed list.
public protocol DeviceEnumerating: Sendable {
  /// The devices of `subsystem`, sorted by syspath, each with those of `attributes` that it has.
  func devices(subsystem: String, attributes: [String]) -> [UdevDevice]
}

/// The live machine through libudev: the code path umockdev fakes in the end-to-end tests.
///
/// Uses neither `udev_enumerate_add_match_is_initialized` nor tags: machines without a udev
/// daemon (containers, CI) have no udev database, and their devices must still be listed.
///
/// libudev is asked only about a subsystem the kernel has (`/sys/class/<subsystem>` or
/// `/sys/bus/<subsystem>`, one `stat` each): most servers and VMs have no drm, video4linux or
/// bluetooth, and an enumeration that finds nothing still scans /sys/bus and /sys/class. Only
/// then is libudev.so.1 loaded (dlopen, Sources/CUdev), so on those machines it is never mapped.
/// One udev context serves all enumerations of an enumerator (a collection's `CollectionContext`
/// makes one), created on first use.
///
/// When libudev.so.1 cannot be loaded, the devices come from the sysfs walk of the live machine
/// (`SysfsEnumerator`, which reads the same udev database), and `diagnostics` gets a warning
/// naming the subsystem and the reason.
public struct LibudevEnumerator: DeviceEnumerating {
  private let session = UdevSession()
  private let diagnostics: Diagnostics?

  public init(diagnostics: Diagnostics? = nil) {
    self.diagnostics = diagnostics
  }

  public func devices(subsystem: String, attributes: [String]) -> [UdevDevice] {
    let live = SystemSource(root: "/", environment: [:])
    guard live.exists("/sys/class/" + subsystem) || live.exists("/sys/bus/" + subsystem) else { return [] }
    if let devices = session.devices(subsystem: subsystem, attributes: attributes) { return devices }
    var reason: UnsafePointer<CChar>? = nil
    let why = frp_udev_load(&reason) == 1 ? "udev_new() failed" : reason.map { String(cString: $0) } ?? "dlopen failed"
    diagnostics?.warn(
      "udev",
      "libudev.so.1 could not be used (\(why)); \(subsystem) devices were read from /sys and the udev "
        + "database instead (Debian package libudev1)")
    return SysfsEnumerator(system: live).devices(subsystem: subsystem, attributes: attributes)
  }
}

/// The udev context of one enumerator, behind a lock: libudev handles are not thread-safe.
private final class UdevSession: Sendable {
  private let udev = Mutex<Udev?>(nil)

  /// nil when libudev could not be loaded or gave no context.
  func devices(subsystem: String, attributes: [String]) -> [UdevDevice]? {
    udev.withLock { udev in
      if udev == nil { udev = Udev() }
      return udev?.devices(subsystem: subsystem, attributes: attributes)
    }
  }
}

/// The one owner of libudev handles. The context lives as long as this object; enumerations and
/// devices are released before `devices` returns, so no pointer leaves this file.
private final class Udev {
  private let context: OpaquePointer

  init?() {
    guard frp_udev_load(nil) == 1, let context = frp_udev_new() else { return nil }
    self.context = context
  }

  deinit { frp_udev_unref(context) }

  func devices(subsystem: String, attributes: [String]) -> [UdevDevice] {
    guard let enumeration = frp_udev_enumerate_new(context) else { return [] }
    defer { frp_udev_enumerate_unref(enumeration) }
    guard frp_udev_enumerate_add_match_subsystem(enumeration, subsystem) >= 0,
      frp_udev_enumerate_scan_devices(enumeration) >= 0
    else { return [] }
    var result: [UdevDevice] = []
    var entry = frp_udev_enumerate_get_list_entry(enumeration)
    while let current = entry {
      entry = frp_udev_list_entry_get_next(current)
      guard let syspath = frp_udev_list_entry_get_name(current),
        let device = frp_udev_device_new_from_syspath(context, syspath)
      else { continue }
      defer { frp_udev_device_unref(device) }
      result.append(copy(device, attributes: attributes))
    }
    return result.sorted { $0.syspath < $1.syspath }
  }

  private func copy(_ device: OpaquePointer, attributes names: [String]) -> UdevDevice {
    var properties: [String: String] = [:]
    var entry = frp_udev_device_get_properties_list_entry(device)
    while let current = entry {
      if let name = frp_udev_list_entry_get_name(current) {
        properties[String(cString: name)] = frp_udev_list_entry_get_value(current).map { String(cString: $0) } ?? ""
      }
      entry = frp_udev_list_entry_get_next(current)
    }
    var attributes: [String: String] = [:]
    for name in names {
      if let value = frp_udev_device_get_sysattr_value(device, name) {
        attributes[name] = String(cString: value)
      }
    }
    return UdevDevice(
      subsystem: frp_udev_device_get_subsystem(device).map { String(cString: $0) } ?? "",
      sysname: frp_udev_device_get_sysname(device).map { String(cString: $0) } ?? "",
      syspath: frp_udev_device_get_syspath(device).map { String(cString: $0) } ?? "",
      devtype: frp_udev_device_get_devtype(device).map { String(cString: $0) },
      properties: properties,
      attributes: attributes)
  }
}
