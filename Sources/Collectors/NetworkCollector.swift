import ProfileJSON
import SystemCalls

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// The "network" section: whether the device has a working connection.
public struct NetworkCollector: DeviceCollector {
  public let name = "network"
  public init() {}

  public func collect(_ context: CollectionContext) -> JSON? {
    // "connected" ← a default route (/proc/net/route, /proc/net/ipv6_route) on a non-loopback
    // interface, or a non-loopback interface that is up with carrier and a usable address
    // (global IPv6 in /proc/net/if_inet6; IPv4 from getifaddrs on the live machine)
    // Labelled members, not a dictionary literal (see DeviceProfile.profile).
    .object(JSONObject([(key: "connected", value: .bool(isConnected(context)))]))
  }

  func isConnected(_ context: CollectionContext) -> Bool {
    let system = context.system
    if let route = system.readBytes("/proc/net/route", limit: 65536), hasDefaultRoute(ipv4Routes: route) { return true }
    if let route = system.readBytes("/proc/net/ipv6_route", limit: 1 << 18), hasDefaultRoute(ipv6Routes: route) { return true }
    let usable = interfacesWithAddress(context)
    for interface in system.listDirectory("/sys/class/net") where interface != "lo" && usable.contains(interface) {
      let state = system.readLine("/sys/class/net/\(interface)/operstate")
      let carrier = system.readLine("/sys/class/net/\(interface)/carrier")
      if (state == "up" || state == "unknown") && carrier == "1" { return true }
    }
    return false
  }

  /// Interfaces holding a global IPv6 address or (live machine only) a non-link-local IPv4 one.
  func interfacesWithAddress(_ context: CollectionContext) -> Set<String> {
    var names = Set<String>()
    if let text = context.system.readBytes("/proc/net/if_inet6", limit: 65536) {
      names.formUnion(globalIPv6Interfaces(text))
    }
    guard context.system.isLive else { return names }
    var list: UnsafeMutablePointer<ifaddrs>?
    guard getifaddrs(&list) == 0 else { return names }
    defer { freeifaddrs(list) }
    var cursor = list
    while let entry = cursor {
      defer { cursor = entry.pointee.ifa_next }
      guard let address = entry.pointee.ifa_addr, address.pointee.sa_family == UInt16(AF_INET) else { continue }
      let ipv4 = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { UInt32(bigEndian: $0.pointee.sin_addr.s_addr) }
      let isLoopback = ipv4 >> 24 == 127
      let isLinkLocal = ipv4 >> 16 == 0xA9FE
      if !isLoopback && !isLinkLocal { names.insert(String(cString: entry.pointee.ifa_name)) }
    }
    return names
  }
}

/// A default route in /proc/net/route: destination and mask 00000000 on an interface other than lo.
///
///     Iface	Destination	Gateway 	Flags	RefCnt	Use	Metric	Mask		MTU	Window	IRTT
///     eth0	00000000	0102A8C0	0003	0	0	100	00000000	0	0	0
package func hasDefaultRoute(ipv4Routes text: [UInt8]) -> Bool {
  var found = false
  text.withUnsafeBufferPointer { bytes in
    var first = true
    forEachLine(bytes) { line in
      if first {
        first = false
        return true
      }
      let fields = Fields(bytes, line, count: 8) { $0 == 0x09 || $0 == 0x20 }
      guard fields.count >= 8, !bytesEqual(bytes, fields[0], "lo") else { return true }
      let flags = UInt32(decode(bytes, fields[3]), radix: 16) ?? 0
      found = bytesEqual(bytes, fields[1], "00000000") && bytesEqual(bytes, fields[7], "00000000") && flags & 0x1 != 0
      return !found
    }
  }
  return found
}

package func hasDefaultRoute(ipv4Routes text: String) -> Bool {
  hasDefaultRoute(ipv4Routes: Array(text.utf8))
}

/// A default route in /proc/net/ipv6_route: destination ::/0 on an interface other than lo,
/// not a reject route (flag 0x0200, which the kernel installs on lo without connectivity).
///
///     00000000000000000000000000000000 00 00000000000000000000000000000000 00 fe800000000000000000000000000001 00000400 00000001 00000000 00000003 eth0
package func hasDefaultRoute(ipv6Routes text: [UInt8]) -> Bool {
  var found = false
  text.withUnsafeBufferPointer { bytes in
    forEachLine(bytes) { line in
      let fields = Fields(bytes, line, count: 10) { $0 == 0x20 }
      guard fields.count >= 10, !bytesEqual(bytes, fields[9], "lo") else { return true }
      let flags = UInt32(decode(bytes, fields[8]), radix: 16) ?? 0
      let allZero = bytes[fields[0]].allSatisfy { $0 == UInt8(ascii: "0") }
      found = allZero && bytesEqual(bytes, fields[1], "00") && flags & 0x0200 == 0 && flags & 0x1 != 0
      return !found
    }
  }
  return found
}

package func hasDefaultRoute(ipv6Routes text: String) -> Bool {
  hasDefaultRoute(ipv6Routes: Array(text.utf8))
}

/// Interfaces with a global-scope IPv6 address in /proc/net/if_inet6 (scope field 00).
///
///     20010db8000000000000000000000001 02 40 00 80     eth0
package func globalIPv6Interfaces(_ text: [UInt8]) -> Set<String> {
  var names = Set<String>()
  text.withUnsafeBufferPointer { bytes in
    forEachLine(bytes) { line in
      let fields = Fields(bytes, line, count: 6) { $0 == 0x20 }
      if fields.count >= 6, bytesEqual(bytes, fields[3], "00"), !bytesEqual(bytes, fields[5], "lo") {
        names.insert(decode(bytes, fields[5]))
      }
      return true
    }
  }
  return names
}

package func globalIPv6Interfaces(_ text: String) -> Set<String> {
  globalIPv6Interfaces(Array(text.utf8))
}

/// The first `count` (at most 10) fields of a line, as byte ranges; the rest of the line is never
/// looked at. Kept in a flat `[Int]` (start, end, start, end…): an array of `Range<Int>` would
/// make the runtime look up `Int: Comparable` by scanning every conformance record of the binary.
private struct Fields {
  private var bounds: [Int] = []
  var count: Int { bounds.count / 2 }

  init(_ bytes: UnsafeBufferPointer<UInt8>, _ line: Range<Int>, count: Int, separatedBy isSeparator: (UInt8) -> Bool) {
    bounds.reserveCapacity(2 * count)
    forEachField(bytes, line, separatedBy: isSeparator) { field in
      bounds.append(field.lowerBound)
      bounds.append(field.upperBound)
      return bounds.count < 2 * count
    }
  }

  subscript(index: Int) -> Range<Int> { bounds[2 * index]..<bounds[2 * index + 1] }
}
