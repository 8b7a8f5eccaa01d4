import SystemCalls

/// `selinuxEnforcing`, `apparmorEnabled` ← the Linux security modules' own files.
///
/// SELinux: /sys/fs/selinux/enforce (0444) is 1 in enforcing mode, 0 in permissive mode; no
/// selinuxfs means SELinux is not active. AppArmor: the active modules in
/// /sys/kernel/security/lsm (0444, securityfs), else /sys/module/apparmor/parameters/enabled
/// (Y/N). Which AppArmor profiles enforce is in /sys/kernel/security/apparmor/profiles, which the
/// kernel shows only to a caller allowed to view policy (root): counted when readable, and said
/// when not.
struct SecurityModules {
  let system: SystemSource

  func selinux() -> PostureFact {
    if let value = system.readLine("/sys/fs/selinux/enforce") {
      switch value {
      case "1": return .holds(true, "/sys/fs/selinux/enforce is 1: SELinux enforces its policy")
      case "0": return .holds(false, "/sys/fs/selinux/enforce is 0: SELinux is in permissive mode (denials are only logged)")
      default: return .unknown("/sys/fs/selinux/enforce holds \(value.prefix(40)), neither 0 nor 1")
      }
    }
    if system.exists("/sys/fs/selinux/enforce") { return .unknown("/sys/fs/selinux/enforce cannot be read") }
    if let modules = activeModules(), modules.contains("selinux") {
      return .unknown("SELinux is active (/sys/kernel/security/lsm) but selinuxfs is not mounted at /sys/fs/selinux")
    }
    return .holds(false, "SELinux is not active: there is no /sys/fs/selinux")
  }

  func apparmor() -> PostureFact {
    let active: Bool
    let source: String
    if let modules = activeModules() {
      active = modules.contains("apparmor")
      source = "/sys/kernel/security/lsm lists \(modules.joined(separator: ","))"
    } else if let enabled = system.readLine("/sys/module/apparmor/parameters/enabled") {
      guard enabled == "Y" || enabled == "N" else {
        return .unknown("/sys/module/apparmor/parameters/enabled holds \(enabled.prefix(40)), neither Y nor N")
      }
      active = enabled == "Y"
      source = "/sys/module/apparmor/parameters/enabled is \(enabled) (/sys/kernel/security is not mounted)"
    } else if system.exists("/sys/module") {
      return .holds(false, "AppArmor is not in this kernel: no /sys/module/apparmor, and /sys/kernel/security/lsm cannot be read")
    } else {
      return .unknown("neither /sys/kernel/security/lsm nor /sys/module can be read")
    }
    guard active else { return .holds(false, "\(source): AppArmor is not active") }
    let path = "/sys/kernel/security/apparmor/profiles"
    guard let profiles = system.readText(path) else {
      return .holds(
        true,
        "\(source): AppArmor is active; how many profiles enforce is in \(path), which only a caller allowed to view policy (root) can read"
      )
    }
    let lines = profiles.split(separator: "\n")
    let enforcing = lines.filter { $0.hasSuffix("(enforce)") }.count
    return .holds(
      true, "\(source): AppArmor is active; \(path) lists \(lines.count) profiles, \(enforcing) in enforce mode",
      details: [("enforcingProfiles", .number(Double(enforcing)))])
  }

  /// The active security modules, or nil when securityfs cannot be read.
  private func activeModules() -> [String]? {
    system.readLine("/sys/kernel/security/lsm").map { $0.split(separator: ",").map(String.init) }
  }
}
