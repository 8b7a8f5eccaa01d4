import SystemCalls
import TPMProtocol

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// Where the boot quote's firmware event log comes from. The kernel's copy,
/// `/sys/kernel/security/tpm0/binary_bios_measurements`, is readable by root only; the package's
/// `fr-profile-eventlog.service` (off by default) copies it at boot to `copyPath`, mode 0640,
/// group tss. The log belongs to the TPM the firmware measured into, so it is read by itself
/// only when the TCTI is the kernel's device; with another TPM (swtpm, a simulator) only a log
/// given by path is sent.
public enum FirmwareEventLog {
  public static let kernelPath = "/sys/kernel/security/tpm0/binary_bios_measurements"
  public static let copyPath = "/run/fr-profile/binary_bios_measurements"
  /// `--event-log` of `attest quote`, for `journey` and `callback`: a path, or `none`.
  public static let environmentVariable = "FR_PROFILE_EVENT_LOG"

  /// What to send: the log at `path` when one is given (`none`: no log), else the service's
  /// copy or the kernel's file when `tcti` is the kernel's device, else why there is none.
  public static func read(path: String?, tcti: String) -> BootQuote.EventLogContent {
    if let path {
      if path == "none" { return .missing("not sent: the event log was turned off (none)") }
      return load(path, given: true)
    }
    guard tcti.hasPrefix("device") else {
      return .missing("the TPM (\(tcti)) is not the one this machine's firmware measured into: its log would not be this TPM's")
    }
    if case .log(let bytes) = load(copyPath) { return .log(bytes) }
    return load(kernelPath)
  }

  /// `given`: a path the user named, whose absence is just that (not the firmware's).
  static func load(_ path: String, given: Bool = false) -> BootQuote.EventLogContent {
    let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
    guard fd >= 0 else {
      let code = errno
      switch code {
      case EACCES, EPERM:
        return .missing(
          "\(path) is readable by root only: enable fr-profile-eventlog.service to copy it for group tss (docs/tpm.md \"Boot state\")")
      case ENOENT where given:
        return .missing("\(path) does not exist")
      case ENOENT:
        return .missing("\(path) does not exist (no TPM event log from the firmware, or securityfs is not mounted)")
      default:
        return .missing("\(path): \(errorText(code))")
      }
    }
    defer { close(fd) }
    var status = stat()
    guard fstat(fd, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { return .missing("\(path) is not a regular file") }
    let bytes: [UInt8]
    do { bytes = try readAll(fd, limit: AttestationProtocol.maximumEventLogSize + 1) } catch {
      return .missing("\(path): \(error)")
    }
    guard bytes.count <= AttestationProtocol.maximumEventLogSize else {
      return .missing("\(path) is larger than \(AttestationProtocol.maximumEventLogSize >> 10) KiB, more than any firmware log")
    }
    guard !bytes.isEmpty else { return .missing("\(path) is empty") }
    return .log(bytes)
  }
}
