import Collectors
import ProfileJSON
import SystemCalls
import Testing

private func bluetooth(_ devices: [UdevDevice]) -> JSON? {
  BluetoothCollector().collect(
    CollectionContext(system: SystemSource(root: "/nonexistent", environment: [:]), devices: StubDevices(devices)))
}

private let hci0 = UdevDevice(
  subsystem: "bluetooth", sysname: "hci0", syspath: "/sys/devices/pci0000:00/0000:00:14.0/usb3/3-10/3-10:1.0/bluetooth/hci0",
  devtype: "host")

@Suite(.timeLimit(.minutes(10))) struct BluetoothCollectorTests {
  @Test func adapterMeansSupported() {
    #expect(bluetooth([hci0]) == ["supported": true])
  }

  @Test func noAdapterMeansUnsupported() {
    #expect(bluetooth([]) == ["supported": false])
  }

  @Test func aConnectionAloneIsNoAdapter() {
    let link = UdevDevice(subsystem: "bluetooth", sysname: "hci0:11", syspath: hci0.syspath + "/hci0:11", devtype: "link")
    #expect(bluetooth([link]) == ["supported": false])
  }

  @Test func adapterWithoutDevtypeIsKnownByName() {
    var adapter = hci0
    adapter.devtype = nil
    #expect(bluetooth([adapter]) == ["supported": true])
  }

  @Test func blockedAdapterIsStillSupported() {
    // rfkill devices are another subsystem: a blocked adapter keeps its hci0 device.
    let rfkill = UdevDevice(
      subsystem: "rfkill", sysname: "rfkill0", syspath: hci0.syspath + "/rfkill0",
      properties: ["RFKILL_STATE": "0", "RFKILL_TYPE": "bluetooth"], attributes: ["soft": "1"])
    #expect(bluetooth([hci0, rfkill]) == ["supported": true])
  }
}
