import Collectors
import ProfileJSON
import SystemCalls
import Testing

private let usb = "/sys/devices/pci0000:00/0000:00:14.0/usb3"

private func node(_ usbInterface: String, _ name: String, capabilities: String?) -> UdevDevice {
  let device = usbInterface.split(separator: ":").first!
  return UdevDevice(
    subsystem: "video4linux", sysname: name, syspath: "\(usb)/\(device)/\(usbInterface)/video4linux/\(name)",
    properties: capabilities.map { ["ID_V4L_CAPABILITIES": $0] } ?? [:])
}

private func cameras(_ nodes: [UdevDevice]) -> JSON? {
  CameraCollector().collect(CollectionContext(system: SystemSource(root: "/nonexistent", environment: [:]), devices: StubDevices(nodes)))
}

@Suite(.timeLimit(.minutes(10))) struct CameraCollectorTests {
  @Test func metadataNodeDoesNotCount() {
    #expect(
      cameras([node("3-6:1.0", "video0", capabilities: ":capture:"), node("3-6:1.0", "video1", capabilities: ":")])
        == ["numberOfCameras": 1])
  }

  @Test func twoWebcamsCountTwo() {
    let nodes = [
      node("3-6:1.0", "video0", capabilities: ":capture:"), node("3-6:1.0", "video1", capabilities: ":"),
      node("3-9:1.0", "video2", capabilities: ":capture:"), node("3-9:1.0", "video3", capabilities: ":"),
    ]
    #expect(cameras(nodes) == ["numberOfCameras": 2])
  }

  @Test func zeroWhenThereAreNoVideoDevices() {
    #expect(cameras([]) == ["numberOfCameras": 0])
  }

  @Test func nodesThatCannotCaptureDoNotCount() {
    let nodes = [
      node("1-1:1.0", "video0", capabilities: ":video_output:"), node("1-2:1.0", "radio0", capabilities: ":radio:"),
    ]
    #expect(cameras(nodes) == ["numberOfCameras": 0])
  }

  @Test func withoutUdevPropertiesOnePerPhysicalDevice() {
    #expect(
      cameras([node("3-6:1.0", "video0", capabilities: nil), node("3-6:1.0", "video1", capabilities: nil)])
        == ["numberOfCameras": 1])
    let twoDevices = [
      node("3-6:1.0", "video0", capabilities: nil), node("3-6:1.0", "video1", capabilities: nil),
      node("3-9:1.0", "video2", capabilities: nil), node("3-9:1.0", "video3", capabilities: nil),
    ]
    #expect(cameras(twoDevices) == ["numberOfCameras": 2])
  }

  @Test func withoutUdevPropertiesOnlyVideoNodesCount() {
    let nodes = [node("1-2:1.0", "radio0", capabilities: nil), node("1-3:1.0", "v4l-subdev0", capabilities: nil)]
    #expect(cameras(nodes) == ["numberOfCameras": 0])
  }

  @Test func usbInterfacesFoldIntoTheirDevice() {
    #expect(physicalDevicePath(ofVideoNode: "\(usb)/3-6/3-6:1.0/video4linux/video0") == "\(usb)/3-6")
    #expect(physicalDevicePath(ofVideoNode: "\(usb)/3-1/3-1.4/3-1.4:1.2/video4linux/video3") == "\(usb)/3-1/3-1.4")
    #expect(physicalDevicePath(ofVideoNode: "/sys/devices/platform/vivid.0/video4linux/video0") == "/sys/devices/platform/vivid.0")
  }
}
