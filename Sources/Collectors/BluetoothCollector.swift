import ProfileJSON

/// "bluetooth": whether the machine has a bluetooth adapter (Android's `BluetoothCollector`).
///
/// Android reports an adapter present, not enabled; likewise any "hci<N>" device of the bluetooth
/// subsystem counts whatever its rfkill state (soft- or hard-blocked adapters stay listed). The
/// adapter is listed only while the kernel's bluetooth driver is loaded.
public struct BluetoothCollector: DeviceCollector {
  public let name = "bluetooth"

  public init() {}

  public func collect(_ context: CollectionContext) -> JSON? {
    let devices = context.devices.devices(subsystem: "bluetooth", attributes: [])
    let adapters = devices.filter(isBluetoothAdapter)
    context.diagnostics.detail("bluetooth", "adapters: \(adapters.map(\.sysname))")
    var section = SectionBuilder()
    // "supported" ← an hci<N> device in the bluetooth subsystem, rfkill ignored
    section.set("supported", !adapters.isEmpty)
    return section.value
  }
}

/// An adapter ("hci0", DEVTYPE "host"), not a connection ("hci0:11", DEVTYPE "link").
func isBluetoothAdapter(_ device: UdevDevice) -> Bool {
  if let devtype = device.devtype, devtype != "host" { return false }
  let number = device.sysname.dropFirst(3)
  return device.sysname.hasPrefix("hci") && !number.isEmpty && number.allSatisfy { $0.isASCII && $0.isNumber }
}
