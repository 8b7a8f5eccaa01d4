/// UEFI Secure Boot is off where the firmware supports it: the boot chain (bootloader, kernel,
/// modules) is not verified. Score 0.3: many legitimate Linux installs turn it off, so it
/// weakens trust without showing tampering. Machines without EFI (BIOS boot, most boards and
/// containers) give no evidence either way and score 0.
public struct SecureBootDetector: TamperDetector {
  public let name = "secureBoot"
  public init() {}

  package static let variable = "/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c"

  public func analyze(_ context: TamperContext) -> TamperFinding {
    // efivarfs files hold 4 bytes of attributes, then the value: one byte, 1 = enabled.
    guard let bytes = context.system.readBytes(Self.variable, limit: 64), bytes.count >= 5 else { return .clean }
    return bytes[4] == 0 ? TamperFinding(score: 0.3, evidence: ["EFI reports Secure Boot disabled"]) : .clean
  }
}
