import SystemCalls

/// `firewallServiceEnabled` ← whether a known firewall service is enabled at boot: systemd unit
/// symlinks in /etc/systemd/system/*.wants (and *.requires, and /run/systemd/system for runtime
/// enablement), a unit masked to /dev/null counting as disabled; for ufw, also ENABLED=yes in
/// /etc/ufw/ufw.conf (ufw.service loads no rules without it). All world-readable.
///
/// What it does not say: the rules in force (reading them, `nft list ruleset` or
/// `iptables -S`, needs CAP_NET_ADMIN), whether a service's start succeeded this boot (systemd's
/// answer comes over D-Bus, not from a file), or a firewall loaded some other way (a script, a
/// container runtime's rules).
package struct Firewall {
  let system: SystemSource

  package init(system: SystemSource) {
    self.system = system
  }

  /// The services, in the order they are named.
  static let services = ["ufw.service", "firewalld.service", "nftables.service", "netfilter-persistent.service", "iptables.service"]
  static let unitDirectories = ["/etc/systemd/system", "/run/systemd/system"]

  package func fact() -> PostureFact {
    let limit = "the rules in force are not read (that needs CAP_NET_ADMIN)"
    var enabled: [String] = []
    var notes: [String] = []
    for service in Self.services {
      switch state(of: service) {
      case .masked(let path): notes.append("\(service) is masked (\(path))")
      case .disabled: continue
      case .enabled(let link):
        if service == "ufw.service" {
          let setting = system.readBytes("/etc/ufw/ufw.conf").map(parseKeyValueFile)?["ENABLED"]
          guard setting?.lowercased() == "yes" else {
            notes.append("ufw.service is enabled (\(link)) but /etc/ufw/ufw.conf has ENABLED=\(setting ?? "(unset)"), so it loads no rules")
            continue
          }
          enabled.append("ufw.service (\(link)) with ENABLED=yes in /etc/ufw/ufw.conf")
        } else {
          enabled.append("\(service) (\(link))")
        }
      }
    }
    let noted = notes.isEmpty ? "" : "; " + notes.joined(separator: "; ")
    if !enabled.isEmpty {
      return .holds(true, "enabled at boot: \(enabled.joined(separator: ", "))\(noted); \(limit)")
    }
    return .holds(
      false,
      "none of \(Self.services.joined(separator: ", ")) is enabled at boot in /etc/systemd/system\(noted); a firewall loaded another way is not seen, and \(limit)"
    )
  }

  enum UnitState: Equatable {
    case enabled(String)
    case masked(String)
    case disabled
  }

  /// Whether `unit` is masked, or enabled by a symlink in a .wants or .requires directory.
  func state(of unit: String) -> UnitState {
    for directory in Self.unitDirectories {
      let path = "\(directory)/\(unit)"
      if system.readLink(path) == "/dev/null" { return .masked("\(path) → /dev/null") }
    }
    for directory in Self.unitDirectories {
      for entry in system.listDirectory(directory) where entry.hasSuffix(".wants") || entry.hasSuffix(".requires") {
        let link = "\(directory)/\(entry)/\(unit)"
        if system.status(link) != nil { return .enabled(link) }
      }
    }
    return .disabled
  }
}
