import StateStore
import SystemCalls

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// Why the device identity could not be read or created: domain facts (paths, owners, modes,
/// errno), no exit codes, flags or commands — the command line maps each case to a message
/// with advice and an exit code. No case is ever answered by silently making a new key (the
/// iOS SDK's bug: devices stopped matching).
public enum IdentityError: Error, CustomStringConvertible, Equatable, Sendable {
  /// No state directory could be determined (no HOME, no configured directory).
  case noStateDirectory
  case stateDirectoryNotADirectory(path: String)
  case stateDirectoryForeignOwner(path: String, owner: UInt32)
  case stateDirectoryInsecure(path: String, mode: UInt32)
  /// A directory on the way to the state directory (`ancestor`) can be changed by someone
  /// other than root and the owner, who could swap the state directory.
  case stateDirectoryUnsafe(path: String, ancestor: String, reason: StateDirectoryError.Unsafe)
  case cannotCreateStateDirectory(path: String, errno: Int32)
  /// The state directory, or a directory on the way to it (`path`), cannot be opened.
  case stateDirectoryUnreadable(path: String, errno: Int32)
  case cannotWriteKey(path: String, errno: Int32)
  /// A key file (the private key or its public key cache) is a link, a FIFO, a directory….
  case keyNotARegularFile(path: String)
  case keyForeignOwner(path: String, owner: UInt32)
  case keyInsecureMode(path: String, mode: UInt32)
  case keyUnreadable(path: String, errno: Int32)
  case keyCorrupt(path: String, reason: String)
  case keyMismatch(path: String)
  /// There is no key, but backups of earlier keys: an interrupted reset of an older version,
  /// or a deleted key. A new identity is not made behind the user's back.
  case keyMissing(path: String, backups: [String])
  /// The identity key is in a TPM (`path`, its blob): a reset that makes a file key would not
  /// replace it. `DeviceKeyStore.resetTPMKey` resets it.
  case keyInTPM(path: String)

  public var description: String {
    switch self {
    case .noStateDirectory: "no state directory could be determined"
    case .stateDirectoryNotADirectory(let path): "the state directory \(path) is not a directory"
    case .stateDirectoryForeignOwner(let path, let owner): "the state directory \(path) belongs to uid \(owner)"
    case .stateDirectoryInsecure(let path, let mode): "the state directory \(path) has mode \(octal(mode))"
    case .stateDirectoryUnsafe(let path, let ancestor, let reason):
      switch reason {
      case .ancestorOwner(let uid): "the state directory \(path) is unsafe: \(ancestor) belongs to uid \(uid)"
      case .ancestorWritable(let mode): "the state directory \(path) is unsafe: \(ancestor) has mode \(octal(mode))"
      case .rootDirectory: "the state directory \(path) is the root directory"
      }
    case .cannotCreateStateDirectory(let path, let errno): "cannot create the state directory \(path): \(errorText(errno))"
    case .stateDirectoryUnreadable(let path, let errno): "cannot open \(path): \(errorText(errno))"
    case .cannotWriteKey(let path, let errno): "cannot create the device key in \(path): \(errorText(errno))"
    case .keyNotARegularFile(let path): "the device key file \(path) is not a regular file"
    case .keyForeignOwner(let path, let owner): "the device key file \(path) belongs to uid \(owner)"
    case .keyInsecureMode(let path, let mode): "the device key file \(path) has mode \(octal(mode))"
    case .keyUnreadable(let path, let errno): "cannot read the device key at \(path): \(errorText(errno))"
    case .keyCorrupt(let path, let reason): "the device key \(path) is corrupt (\(reason))"
    case .keyMismatch(let path): "the public key cached beside \(path) does not belong to it"
    case .keyMissing(let path, let backups): "the device key \(path) is missing, but \(backups.count) backup(s) exist"
    case .keyInTPM(let path): "the device key is in the TPM (\(path)): a file key would not replace it"
    }
  }
}
