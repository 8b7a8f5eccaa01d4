import ProfileJSON

/// "hardware.display": the primary display's preferred mode (Android's `DisplayCollector`).
///
/// The primary display is a DRM connector whose `status` is "connected": the internal panel
/// (eDP, LVDS, DSI) when one is connected, else the first connected connector in natural order of
/// card and connector name (card0-DP-1 < card0-DP-2 < card0-HDMI-A-1 < card1-…). No connected
/// connector with a known mode (servers, headless VMs): the key is omitted.
///
/// Orientation follows Android's rule (1 = natural rotation 0°/180°, 0 = rotated 90°/270°). Linux
/// outside a graphical session knows no current rotation: it is a setting of the compositor
/// (X11/Wayland), not visible in sysfs, and would make two collects differ when a user turns a
/// screen. So orientation is always 1 and width/height describe the natural orientation: the
/// preferred mode, swapped when the kernel command line declares the panel mounted sideways
/// (`video=<connector>:panel_orientation=left_side_up|right_side_up`). The kernel's built-in
/// panel-orientation quirks are a DRM property, readable only through the device node, and are
/// not applied.
public struct DisplayCollector: DeviceCollector {
  public let name = "display"

  public init() {}

  public func collect(_ context: CollectionContext) -> JSON? {
    let drm = context.devices.devices(subsystem: "drm", attributes: ["status", "modes"])
    for connector in primaryDisplayCandidates(drm) {
      let connectorName = drmConnectorName(connector.sysname)
      guard var mode = preferredMode(of: connector, context) else { continue }
      if let cmdline = context.system.readLine("/proc/cmdline"),
        panelIsSideways(kernelCommandLine: cmdline, connector: connectorName)
      {
        mode = DisplayMode(width: mode.height, height: mode.width)
        context.diagnostics.detail(
          "hardware.display", "\(connectorName): panel_orientation on the kernel command line, width and height swapped")
      }
      var section = SectionBuilder()
      // "width" ← EDID preferred timing of <syspath>/edid, else first line of `modes`
      section.set("width", mode.width)
      // "height" ← the same mode's vertical active pixels
      section.set("height", mode.height)
      // "orientation" ← always natural (1): rotation is the compositor's, see above
      section.set("orientation", 1)
      return section.value
    }
    context.diagnostics.detail("hardware.display", "no connected DRM connector with a known mode")
    return nil
  }

  /// The connector's preferred mode: EDID first, then the kernel's `modes` list.
  private func preferredMode(of connector: UdevDevice, _ context: CollectionContext) -> DisplayMode? {
    let key = "hardware.display"
    // Read as a file: libudev returns "" for an attribute starting with a zero byte, as EDIDs do.
    if let edid = context.system.readBytes(connector.syspath + "/edid", limit: 32768) {
      switch parseEDID(edid) {
      case .success(let mode):
        context.diagnostics.detail(key, "\(connector.sysname): preferred timing from edid")
        return mode
      case .failure(let error):
        context.diagnostics.detail(key, "\(connector.sysname): \(error); trying modes")
      }
    }
    if let mode = connector.attributes["modes"].flatMap(parseFirstMode) {
      context.diagnostics.detail(key, "\(connector.sysname): first line of modes")
      return mode
    }
    context.diagnostics.detail(key, "\(connector.sysname): connected, but neither edid nor modes gives a mode")
    return nil
  }
}

/// Connected DRM connectors, primary first: internal panels (eDP, LVDS, DSI), then the rest, each
/// group in natural order of sysname ("card0-DP-2" before "card0-DP-10", "card0-…" before "card1-…").
func primaryDisplayCandidates(_ drm: [UdevDevice]) -> [UdevDevice] {
  let connected = drm.filter { isDRMConnector($0) && $0.attributes["status"] == "connected" }
  return connected.sorted { a, b in
    let internalA = isInternalPanel(drmConnectorName(a.sysname))
    let internalB = isInternalPanel(drmConnectorName(b.sysname))
    if internalA != internalB { return internalA }
    return naturalLess(a.sysname, b.sysname)
  }
}

/// A connector ("card0-HDMI-A-1") rather than a card ("card0") or render node ("renderD128").
func isDRMConnector(_ device: UdevDevice) -> Bool {
  if let devtype = device.devtype { return devtype == "drm_connector" }
  return device.sysname.hasPrefix("card") && device.sysname.contains("-")
}

/// "card0-eDP-1" → "eDP-1", the name `xrandr` and the kernel command line use.
func drmConnectorName(_ sysname: String) -> String {
  guard let dash = sysname.firstIndex(of: "-") else { return sysname }
  return String(sysname[sysname.index(after: dash)...])
}

/// Built-in panels: embedded DisplayPort, LVDS and MIPI DSI.
func isInternalPanel(_ connectorName: String) -> Bool {
  ["eDP-", "LVDS-", "DSI-"].contains { connectorName.hasPrefix($0) }
}

/// True when the kernel command line mounts the connector's panel turned by 90° or 270°.
///
///     BOOT_IMAGE=/vmlinuz quiet video=DSI-1:panel_orientation=right_side_up
///     video=eDP-1:1920x1200@60,panel_orientation=left_side_up
package func panelIsSideways(kernelCommandLine: String, connector: String) -> Bool {
  let prefix = "video=" + connector + ":"
  for word in kernelCommandLine.split(separator: " ") where word.hasPrefix(prefix) {
    for option in word.dropFirst(prefix.count).split(separator: ",") {
      if option == "panel_orientation=left_side_up" || option == "panel_orientation=right_side_up" { return true }
    }
  }
  return false
}

/// Orders strings with runs of digits compared as numbers: "DP-2" < "DP-10".
package func naturalLess(_ a: String, _ b: String) -> Bool {
  var left = a.unicodeScalars[...]
  var right = b.unicodeScalars[...]
  let isDigit: (Unicode.Scalar) -> Bool = { $0.value >= 48 && $0.value <= 57 }
  while let l = left.first, let r = right.first {
    if isDigit(l) && isDigit(r) {
      let leftRun = left.prefix(while: isDigit)
      let rightRun = right.prefix(while: isDigit)
      let leftNumber = String(leftRun).drop(while: { $0 == "0" })
      let rightNumber = String(rightRun).drop(while: { $0 == "0" })
      if leftNumber.count != rightNumber.count { return leftNumber.count < rightNumber.count }
      if leftNumber != rightNumber { return leftNumber < rightNumber }
      left = left.dropFirst(leftRun.count)
      right = right.dropFirst(rightRun.count)
    } else {
      if l != r { return l.value < r.value }
      left = left.dropFirst()
      right = right.dropFirst()
    }
  }
  return left.isEmpty && !right.isEmpty
}
