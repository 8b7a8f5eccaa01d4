/// Every exit status of `fr-profile`, in one place: commands throw a `Failure` with one of these,
/// and the EXIT CODES section of each command's help is generated from them (`helpSection`), so
/// the list a user reads and the code a script sees cannot drift apart. The numbers follow
/// sysexits.h where one fits (64–78); 80–83 are the TPM's.
package enum ExitStatus: Int32, CaseIterable, Sendable {
  case success = 0
  /// A negative answer; each command says what it means (AM refused, no such key, a policy is
  /// breached, match: false).
  case negative = 1
  /// journey and callback: a callback fr-profile cannot answer; match: the script would throw.
  case cannotAnswer = 2
  /// match: unknownDevice.
  case unknownDevice = 3
  /// journey: a Suspend node stopped the journey; its link continues it.
  case suspended = 4
  /// token: no tokens are stored, or their grant ended and there is no terminal to log in on.
  case loginRequired = 5
  case usage = 64
  case dataError = 65
  case noInput = 66
  case untrustedServer = 67
  case cannotConnect = 68
  case libraryMissing = 69
  case cannotCreate = 73
  case ioError = 74
  case timedOut = 75
  case badResponse = 76
  case permission = 77
  case configuration = 78
  case noTPM = 80
  case foreignTPMKey = 81
  case tpmLockout = 82
  case tpmFailure = 83
  /// Ctrl-C at a security key: the key's request was cancelled and nothing was posted (the
  /// shell's 128 + SIGINT).
  case interrupted = 130

  /// What the status means when a command does not say more; nil where only the command can say.
  package var meaning: String? {
    switch self {
    case .success: "success"
    case .negative, .cannotAnswer, .unknownDevice, .suspended: nil
    case .loginRequired:
      "log in: no tokens are stored for this server, realm and client, or their refresh token no longer works (fr-profile journey … --client-id)"
    case .usage: "usage error (bad flags or arguments)"
    case .dataError: "bad data (corrupt key, invalid location value, malformed input)"
    case .noInput: "an input file is missing or unreadable; the device key is missing but backups of it exist"
    case .untrustedServer: "TLS failed: the server's certificate is not trusted (see --cacert)"
    case .cannotConnect: "cannot connect: unknown host, connection refused or dropped"
    case .libraryMissing:
      "a system library the command needs (libcurl, libtss2, libpam, libfido2) cannot be loaded; the message names the Debian package to install"
    case .cannotCreate:
      "cannot create the state directory, the key or the output file (or --output names a link, FIFO, device or directory)"
    case .ioError: "I/O error"
    case .timedOut: "timed out"
    case .badResponse: "the server's answer is not an AM authenticate response, or is too large"
    case .permission:
      "permission problem (key or state directory mode/owner, a directory on the way to it that others can write, or an --output file another user owns or could replace)"
    case .configuration: "configuration error (no state directory could be determined; FR_PROFILE_TCTI is not a TPM interface)"
    case .noTPM: "no usable TPM at --tcti (FR_PROFILE_TCTI, default device:/dev/tpmrm0)"
    case .foreignTPMKey: "a key was made by another TPM: the state directory was copied, or the TPM was cleared"
    case .tpmLockout: "the TPM is in dictionary-attack lockout"
    case .tpmFailure: "another TPM failure"
    case .interrupted: "cancelled with Ctrl-C at a security key; nothing was sent to AM"
    }
  }

  /// The statuses every command that reads the device identity can end with.
  package static let identity: [ExitStatus] = [.dataError, .noInput, .cannotCreate, .ioError, .permission, .configuration]

  /// The statuses of commands that may use the TPM.
  package static let tpm: [ExitStatus] = [.noTPM, .foreignTPMKey, .tpmLockout, .tpmFailure]

  /// An EXIT CODES section for a command's help: one row per status, in numeric order, with
  /// the command's own wording where `overrides` has one. Rows wrap at 72 columns.
  package static func helpSection(_ statuses: [ExitStatus], _ overrides: [ExitStatus: String] = [:]) -> String {
    var lines = ["EXIT CODES:"]
    for status in Set(statuses).sorted(by: { $0.rawValue < $1.rawValue }) {
      guard let text = overrides[status] ?? status.meaning else {
        preconditionFailure("exit status \(status.rawValue) needs the command's own wording")
      }
      let number = String(status.rawValue)
      var line = "  " + number + String(repeating: " ", count: max(1, 4 - number.count))
      let indent = String(repeating: " ", count: line.count)
      var first = true
      for word in text.split(separator: " ") {
        if !first && line.count + 1 + word.count > 72 {
          lines.append(line)
          line = indent + word
        } else {
          line += (first ? "" : " ") + word
        }
        first = false
      }
      lines.append(line)
    }
    return lines.joined(separator: "\n")
  }
}
