import DeviceFacts
import ProfileJSON

/// "hardware.camera": how many cameras can capture (Android's `CameraCollector`).
///
/// A camera is a video4linux node whose udev property `ID_V4L_CAPABILITIES` contains
/// ":capture:" (set by udev's v4l_id from VIDIOC_QUERYCAP), so metadata nodes (":"), codecs
/// and radios do not count. A physical device whose nodes have no udev properties (no udev
/// daemon, no database) counts once if it has a "video<N>" node: sysfs alone cannot tell capture
/// from other nodes, so one per physical device is the best guess.
public struct CameraCollector: DeviceCollector {
  public let name = "camera"

  public init() {}

  public func collect(_ context: CollectionContext) -> JSON? {
    let nodes = context.devices.devices(subsystem: "video4linux", attributes: [])
    let count = countCameras(nodes)
    context.diagnostics.detail("hardware.camera", "\(count) of \(nodes.count) video4linux nodes counted")
    var section = SectionBuilder()
    // "numberOfCameras" ← video4linux nodes with ":capture:" in ID_V4L_CAPABILITIES, else one per physical device
    section.set("numberOfCameras", count)
    return section.value
  }
}

/// The number of cameras among video4linux nodes; see `CameraCollector`.
///
/// Groups in an array and compares bytes: a `[String: [UdevDevice]]`, `joined(separator:)` or
/// `String.contains(String)` here would each cost a runtime conformance lookup on every collect
/// of a machine with a camera (bench/README.md).
func countCameras(_ nodes: [UdevDevice]) -> Int {
  var groups: [(path: String, nodes: [UdevDevice])] = []
  for node in nodes {
    let path = physicalDevicePath(ofVideoNode: node.syspath)
    if let index = groups.firstIndex(where: { $0.path == path }) {
      groups[index].nodes.append(node)
    } else {
      groups.append((path, [node]))
    }
  }
  var count = 0
  for group in groups.map(\.nodes) {
    if group.contains(where: { $0.properties["ID_V4L_CAPABILITIES"] != nil }) {
      count += group.filter { $0.properties["ID_V4L_CAPABILITIES"].map(canCapture) == true }.count
    } else if group.contains(where: { isVideoNodeName($0.sysname) }) {
      count += 1
    }
  }
  return count
}

/// `ID_V4L_CAPABILITIES` lists ":capture:" (e.g. ":capture:" or ":capture:video_output:").
private func canCapture(_ capabilities: String) -> Bool {
  containsBytes(Array(capabilities.utf8), ":capture:")
}

/// The device a video node belongs to: ".../3-6/3-6:1.0/video4linux/video0" → ".../3-6" (a USB
/// interface is folded into its USB device, whose other interfaces belong to the same camera).
package func physicalDevicePath(ofVideoNode syspath: String) -> String {
  var parts = syspath.split(separator: "/")
  if parts.count >= 2, parts[parts.count - 2] == "video4linux" { parts.removeLast(2) }
  if let last = parts.last, isUSBInterfaceName(last) { parts.removeLast() }
  var path = ""
  for part in parts {
    path.append("/")
    path.append(contentsOf: part)
  }
  return path.isEmpty ? "/" : path
}

/// "video0", not "v4l-subdev0", "radio0", "vbi0", "swradio0" or "v4l-touch0".
func isVideoNodeName(_ sysname: String) -> Bool {
  let digits = sysname.dropFirst("video".count)
  return sysname.hasPrefix("video") && !digits.isEmpty && digits.allSatisfy { $0.isASCII && $0.isNumber }
}

/// A USB interface's sysfs name: "<bus>-<port>[.<port>…]:<configuration>.<interface>", e.g. "3-6:1.0".
private func isUSBInterfaceName(_ name: Substring) -> Bool {
  let halves = name.split(separator: ":")
  guard halves.count == 2, halves[0].contains("-") else { return false }
  return halves[1].split(separator: ".").count == 2
    && halves[1].allSatisfy { $0 == "." || ($0.isASCII && $0.isNumber) }
    && halves[0].allSatisfy { $0 == "-" || $0 == "." || ($0.isASCII && $0.isNumber) }
}
