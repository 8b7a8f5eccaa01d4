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
    if let container = detectContainer(system) { return container }
    if let vm = detectVM(system) { return vm }
    return .none
  }

  static func detectContainer(_ system: SystemSource) -> Virtualization? {
    if let name = system.readLine("/run/systemd/container") {
      return .container(technology: name, evidence: "/run/systemd/container says \(name)")
    }
    if let environ = system.readBytes("/proc/1/environ", limit: 65536) {
      for entry in environ.split(separator: 0) where entry.starts(with: Array("container=".utf8)) {
        let name = String(decoding: entry.dropFirst(10), as: UTF8.self)
        return .container(technology: name, evidence: "PID 1 has container=\(name)")
      }
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
    if let cgroup = system.readText("/proc/1/cgroup", limit: 65536) {
      for marker in ["docker", "kubepods", "libpod", "lxc", "containerd"] where cgroup.contains(marker) {
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

  static func detectVM(_ system: SystemSource) -> Virtualization? {
    for field in ["sys_vendor", "product_name", "board_vendor", "bios_vendor", "product_version"] {
      guard let value = system.readLine("/sys/class/dmi/id/\(field)") else { continue }
      for (marker, technology) in dmiHypervisors where value.contains(marker) {
        return .vm(technology: technology, evidence: "DMI \(field) is \"\(value)\"")
      }
      if field == "product_name", value == "Virtual Machine",
        system.readLine("/sys/class/dmi/id/sys_vendor") == "Microsoft Corporation"
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
    if let cpuinfo = system.readText("/proc/cpuinfo", limit: 16384), parseCPUInfo(cpuinfo).hypervisorFlag {
      return .vm(technology: "unknown", evidence: "the CPU reports the hypervisor flag")
    }
    return nil
  }
}
