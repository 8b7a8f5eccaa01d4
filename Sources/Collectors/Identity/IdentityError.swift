#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Why the device identity could not be read or created. Every case says what to do; none is
/// ever answered by silently making a new key (the iOS SDK's bug: devices stopped matching).
public enum IdentityError: Error, CustomStringConvertible, Equatable {
  case noStateDirectory
  case stateDirectoryNotADirectory(path: String)
  case stateDirectoryForeignOwner(path: String, owner: UInt32)
  case stateDirectoryInsecure(path: String, mode: UInt32)
  case cannotCreateStateDirectory(path: String, errno: Int32)
  case cannotWriteKey(path: String, errno: Int32)
  case keyNotARegularFile(path: String)
  case keyForeignOwner(path: String, owner: UInt32)
  case keyInsecureMode(path: String, mode: UInt32)
  case keyUnreadable(path: String, errno: Int32)
  case keyCorrupt(path: String, reason: String)
  case keyMismatch(path: String)

  public var description: String {
    switch self {
    case .noStateDirectory:
      "no state directory: HOME is not set. Set FR_PROFILE_HOME or pass --state-dir DIR."
    case .stateDirectoryNotADirectory(let path):
      "the state directory \(path) is not a directory. Remove it or pass another --state-dir."
    case .stateDirectoryForeignOwner(let path, let owner):
      "the state directory \(path) belongs to uid \(owner), not to you (uid \(geteuid())). Run fr-profile as its owner or pass your own --state-dir."
    case .stateDirectoryInsecure(let path, let mode):
      "the state directory \(path) has mode \(octal(mode)); others could replace the device key. Run 'chmod 700 \(path)'."
    case .cannotCreateStateDirectory(let path, let errno):
      "cannot create the state directory \(path): \(errorText(errno)). Pass a writable --state-dir or set FR_PROFILE_HOME."
    case .cannotWriteKey(let path, let errno):
      "cannot create the device key in \(path): \(errorText(errno)). Make the directory writable by you or pass another --state-dir."
    case .keyNotARegularFile(let path):
      "the device key \(path) is not a regular file (a link or a directory). Move it away and restore the key from a backup."
    case .keyForeignOwner(let path, let owner):
      "the device key \(path) belongs to uid \(owner), not to you (uid \(geteuid())). Run fr-profile as the key's owner, or 'chown' the key back."
    case .keyInsecureMode(let path, let mode):
      "the device key \(path) has mode \(octal(mode)): others may have read it. Run 'chmod 600 \(path)', or 'fr-profile identifier --reset' if it may have leaked."
    case .keyUnreadable(let path, let errno):
      "cannot read the device key at \(path): \(errorText(errno)). Check its owner and mode (0600), or run 'fr-profile identifier --reset'."
    case .keyCorrupt(let path, let reason):
      "the device key \(path) is corrupt (\(reason)). Restore it from a backup, or run 'fr-profile identifier --reset' to make a new identity."
    case .keyMismatch(let path):
      "the public key cached beside \(path) does not belong to it. Delete the .pub file to rebuild it from the key."
    }
  }

  /// The sysexits code for this failure.
  public var exitCode: Int32 {
    switch self {
    case .noStateDirectory: 78  // EX_CONFIG
    case .stateDirectoryNotADirectory, .cannotCreateStateDirectory, .cannotWriteKey: 73  // EX_CANTCREAT
    case .stateDirectoryForeignOwner, .stateDirectoryInsecure, .keyNotARegularFile, .keyForeignOwner, .keyInsecureMode:
      77  // EX_NOPERM
    case .keyUnreadable(_, let errno): errno == EACCES || errno == EPERM ? 77 : 74  // EX_NOPERM, EX_IOERR
    case .keyCorrupt, .keyMismatch: 65  // EX_DATAERR
    }
  }
}

func errorText(_ code: Int32) -> String {
  String(cString: strerror(code))
}
