import SystemCalls

/// `secureBootEnabled`, `secureBootSetupMode` ← the UEFI variables in efivarfs
/// (/sys/firmware/efi/efivars, world-readable): each file is 4 bytes of attributes, then the
/// value; SecureBoot and SetupMode are one byte, 1 or 0 (UEFI 2.10 §3.3, "Globally Defined
/// Variables"). shim's MokSBStateRT, when present and 1, says shim was told not to verify what
/// it boots (`mokutil --disable-validation`): the firmware checks shim, shim checks nothing.
package struct SecureBoot {
  let system: SystemSource

  package init(system: SystemSource) {
    self.system = system
  }

  static let globalVariable = "8be4df61-93ca-11d2-aa0d-00e098032b8c"
  static let shimVariable = "605dab50-e046-4300-abb6-3dd810dd8b23"
  static let efivars = "/sys/firmware/efi/efivars"

  package func facts() -> (enabled: PostureFact, setupMode: PostureFact) {
    if let missing = withoutEFI() {
      let mode: PostureFact =
        missing.isUnknown ? missing : .holds(false, "no UEFI firmware started the kernel (no /sys/firmware/efi), so there is no Setup Mode")
      return (missing, mode)
    }
    let secureBoot = variable("SecureBoot-\(Self.globalVariable)")
    let setupMode = variable("SetupMode-\(Self.globalVariable)")
    let enabled: PostureFact
    switch secureBoot {
    case .value(1):
      if case .value(1) = variable("MokSBStateRT-\(Self.shimVariable)") {
        enabled = .holds(
          false,
          "the firmware's SecureBoot variable is 1, but shim's MokSBStateRT is 1: shim does not verify the boot loader and kernel it starts"
        )
      } else {
        enabled = .holds(true, "the firmware's SecureBoot variable is 1: the firmware verifies what it boots")
      }
    case .value(0): enabled = .holds(false, "the firmware's SecureBoot variable is 0")
    case .value(let other): enabled = .unknown("the SecureBoot variable holds \(other), neither 0 nor 1")
    case .absent:
      enabled = .holds(false, "the firmware has no SecureBoot variable in \(Self.efivars): it does not support Secure Boot")
    case .malformed(let why): enabled = .unknown("the SecureBoot variable \(why)")
    }
    let mode: PostureFact
    switch setupMode {
    case .value(1): mode = .holds(true, "SetupMode is 1: no platform key is enrolled, so anyone can enrol Secure Boot keys")
    case .value(0): mode = .holds(false, "SetupMode is 0: a platform key is enrolled")
    case .value(let other): mode = .unknown("the SetupMode variable holds \(other), neither 0 nor 1")
    case .absent: mode = .unknown("the firmware has no SetupMode variable in \(Self.efivars)")
    case .malformed(let why): mode = .unknown("the SetupMode variable \(why)")
    }
    return (enabled, mode)
  }

  /// A fact for both variables when efivarfs cannot answer, else nil.
  private func withoutEFI() -> PostureFact? {
    if !system.exists("/sys/firmware/efi") {
      if system.listDirectory("/sys/firmware").isEmpty {
        return .unknown("/sys/firmware is empty or missing (container runtimes mask it): the boot firmware cannot be seen")
      }
      return .holds(
        false,
        "there is no /sys/firmware/efi: the kernel was not started by UEFI firmware (BIOS or direct kernel boot), so no firmware verified it"
      )
    }
    if system.listDirectory(Self.efivars).isEmpty {
      return .unknown("\(Self.efivars) is empty: efivarfs is not mounted, so the firmware's variables cannot be read")
    }
    return nil
  }

  enum Variable: Equatable {
    case value(UInt8)
    case absent
    case malformed(String)
  }

  private func variable(_ name: String) -> Variable {
    let path = "\(Self.efivars)/\(name)"
    guard let bytes = system.readBytes(path, limit: 64) else {
      return system.exists(path) ? .malformed("cannot be read") : .absent
    }
    guard bytes.count == 5 else { return .malformed("is \(bytes.count) bytes, not 4 bytes of attributes and a 1-byte value") }
    return .value(bytes[4])
  }
}
