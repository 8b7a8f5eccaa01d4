import SystemCalls

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// Whether the machine is a container or a virtual machine, and the evidence, in the order
/// `systemd-detect-virt` checks: containers first (a container on a VM is a container).
public enum Virtualization: Equatable, Sendable {
  case none
  case container(technology: String, evidence: String)
  case vm(technology: String, evidence: String)

  public var evidence: String? {
    switch self {
    case .none: nil
    case .container(_, let evidence), .vm(_, let evidence): evidence
    }
  }

  public static func detect(_ system: SystemSource) -> Virtualization {
    detect(system, facts: SharedFacts(system: system))
  }

  /// Through a collection's facts, so DMI fields and cpuinfo are read once.
  static func detect(_ system: SystemSource, facts: SharedFacts) -> Virtualization {
    if let container = detectContainer(system) { return container }
    if let vm = detectVM(system, facts: facts) { return vm }
    return .none
  }

  static func detectContainer(_ system: SystemSource) -> Virtualization? {
    if let name = system.readLine("/run/systemd/container") {
      return .container(technology: name, evidence: "/run/systemd/container says \(name)")
    }
    if let environ = system.readBytes("/proc/1/environ", limit: 65536) {
      let name: String? = environ.withUnsafeBufferPointer { bytes in
        var start = 0
        while start < bytes.count {
          let end = firstIndex(of: 0, in: bytes, start..<bytes.count) ?? bytes.count
          if end > start, bytesHavePrefix(bytes, start..<end, "container=") { return decode(bytes, (start + 10)..<end) }
          start = end + 1
        }
        return nil
      }
      if let name { return .container(technology: name, evidence: "PID 1 has container=\(name)") }
    }
    if system.status("/.dockerenv") != nil {
      return .container(technology: "docker", evidence: "/.dockerenv exists")
    }
    if system.status("/run/.containerenv") != nil {
      return .container(technology: "podman", evidence: "/run/.containerenv exists")
    }
    if let osrelease = system.readLine("/proc/sys/kernel/osrelease"),
      osrelease.contains("Microsoft") || osrelease.contains("WSL")
    {
      return .container(technology: "wsl", evidence: "kernel release \(osrelease)")
    }
    if let cgroup = system.readBytes("/proc/1/cgroup", limit: 65536) {
      for marker in ["docker", "kubepods", "libpod", "lxc", "containerd"] where containsBytes(cgroup, marker) {
        return .container(technology: marker, evidence: "/proc/1/cgroup mentions \(marker)")
      }
    }
    return nil
  }

  /// DMI vendor or product strings of hypervisors and clouds (systemd's `dmi_vendor_table`).
  private static let dmiHypervisors: [(marker: String, technology: String)] = [
    ("KVM", "kvm"), ("OpenStack", "kvm"), ("KubeVirt", "kvm"), ("Amazon EC2", "amazon"), ("QEMU", "qemu"),
    ("VMware", "vmware"), ("VMW", "vmware"), ("innotek GmbH", "oracle"), ("VirtualBox", "oracle"),
    ("Oracle Corporation", "oracle"), ("Xen", "xen"), ("Bochs", "bochs"), ("Parallels", "parallels"),
    ("BHYVE", "bhyve"), ("Hyper-V", "microsoft"), ("Google Compute Engine", "google"),
    ("DigitalOcean", "kvm"), ("Hetzner", "kvm"), ("Alibaba Cloud", "kvm"), ("Apple Virtualization", "apple"),
  ]

  static func detectVM(_ system: SystemSource, facts: SharedFacts) -> Virtualization? {
    for field in ["sys_vendor", "product_name", "board_vendor", "bios_vendor", "product_version"] {
      guard let value = facts.dmi(field) else { continue }
      for (marker, technology) in dmiHypervisors where value.contains(marker) {
        return .vm(technology: technology, evidence: "DMI \(field) is \"\(value)\"")
      }
      if field == "product_name", value == "Virtual Machine",
        facts.dmi("sys_vendor") == "Microsoft Corporation"
      {
        return .vm(technology: "microsoft", evidence: "DMI says Microsoft Corporation Virtual Machine")
      }
    }
    if let type = system.readLine("/sys/hypervisor/type") {
      return .vm(technology: type, evidence: "/sys/hypervisor/type is \(type)")
    }
    if system.status("/proc/device-tree/hypervisor") != nil {
      return .vm(technology: "device-tree", evidence: "/proc/device-tree/hypervisor exists")
    }
    if facts.cpuInfoFields.hypervisorFlag {
      return .vm(technology: "unknown", evidence: "the CPU reports the hypervisor flag")
    }
    return nil
  }
}

/// Whether `haystack` contains the UTF-8 bytes of `needle`, compared as bytes.
package func containsBytes(_ haystack: [UInt8], _ needle: String) -> Bool {
  let pattern = Array(needle.utf8)
  guard let first = pattern.first, haystack.count >= pattern.count else { return pattern.isEmpty }
  return haystack.withUnsafeBufferPointer { bytes in
    var start = 0
    while start + pattern.count <= bytes.count,
      let hit = firstIndex(of: first, in: bytes, start..<(bytes.count - pattern.count + 1))
    {
      if memcmp(bytes.baseAddress! + hit, pattern, pattern.count) == 0 { return true }
      start = hit + 1
    }
    return false
  }
}
