import StateStore
import SystemCalls

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// Why the device identity could not be read or created: domain facts (paths, owners, modes,
/// errno), no exit codes, flags or commands — the command line maps each code to a message
/// with advice and an exit code. No failure is ever answered by silently making a new key (the
/// iOS SDK's bug: devices stopped matching).
///
/// A struct, not an enum, so that a release can add a failure without breaking an embedder's
/// `switch`: new codes may be added in any release. Match on ``code`` (`error.code ==
/// .keyMissing`, or `switch error.code` with a `default:`); the values the failure carries are
/// the optional properties (`nil` where a code has none), ``description`` is the message.
public struct IdentityError: Error, CustomStringConvertible, Hashable, Sendable {
  /// What kind of failure it is. New codes may be added in any release: switch with a
  /// `default:`.
  public struct Code: Hashable, Sendable, CustomStringConvertible {
    private enum Backing: Hashable, Sendable {
      case noStateDirectory, stateDirectoryNotADirectory, stateDirectoryForeignOwner, stateDirectoryInsecure
      case stateDirectoryUnsafe, cannotCreateStateDirectory, stateDirectoryUnreadable, cannotWriteKey
      case keyNotARegularFile, keyForeignOwner, keyInsecureMode, keyUnreadable, keyCorrupt, keyMismatch, keyMissing
      case keyInTPM
    }

    private var backing: Backing
    private init(_ backing: Backing) { self.backing = backing }

    /// No state directory could be determined (no HOME, no configured directory).
    public static let noStateDirectory = Code(.noStateDirectory)
    /// The state directory is not a directory (or is a symbolic link).
    public static let stateDirectoryNotADirectory = Code(.stateDirectoryNotADirectory)
    /// The state directory belongs to someone else (``owner``).
    public static let stateDirectoryForeignOwner = Code(.stateDirectoryForeignOwner)
    /// Others may read or write the state directory (``mode``).
    public static let stateDirectoryInsecure = Code(.stateDirectoryInsecure)
    /// A directory on the way to the state directory (``ancestor``) can be changed by someone
    /// other than root and the owner, who could swap the state directory (``unsafe`` says why).
    public static let stateDirectoryUnsafe = Code(.stateDirectoryUnsafe)
    /// The state directory cannot be created (``errno``).
    public static let cannotCreateStateDirectory = Code(.cannotCreateStateDirectory)
    /// The state directory, or a directory on the way to it (``path``), cannot be opened (``errno``).
    public static let stateDirectoryUnreadable = Code(.stateDirectoryUnreadable)
    /// The key cannot be written in the state directory (``errno``).
    public static let cannotWriteKey = Code(.cannotWriteKey)
    /// A key file (the private key or its public key cache) is a link, a FIFO, a directory….
    public static let keyNotARegularFile = Code(.keyNotARegularFile)
    /// A key file belongs to someone else (``owner``).
    public static let keyForeignOwner = Code(.keyForeignOwner)
    /// Others may read or write a key file (``mode``).
    public static let keyInsecureMode = Code(.keyInsecureMode)
    /// A key file cannot be read (``errno``).
    public static let keyUnreadable = Code(.keyUnreadable)
    /// A key file does not parse (``reason``).
    public static let keyCorrupt = Code(.keyCorrupt)
    /// The cached public key does not belong to the private key.
    public static let keyMismatch = Code(.keyMismatch)
    /// There is no key, but backups of earlier keys (``backups``): an interrupted reset of an
    /// older version, or a deleted key. A new identity is not made behind the user's back.
    public static let keyMissing = Code(.keyMissing)
    /// The identity key is in a TPM (``path``, its blob): a reset that makes a file key would not
    /// replace it. `DeviceKeyStore.resetTPMKey` resets it.
    public static let keyInTPM = Code(.keyInTPM)

    public var description: String { String(describing: backing) }
  }

  /// What kind of failure it is.
  public let code: Code
  /// The directory or file concerned (`nil` for ``Code/noStateDirectory``).
  public let path: String?
  /// The uid that owns ``path`` (``Code/stateDirectoryForeignOwner``, ``Code/keyForeignOwner``).
  public let owner: UInt32?
  /// The mode of ``path`` (``Code/stateDirectoryInsecure``, ``Code/keyInsecureMode``).
  public let mode: UInt32?
  /// The errno of the failed call (``Code/cannotCreateStateDirectory``,
  /// ``Code/stateDirectoryUnreadable``, ``Code/cannotWriteKey``, ``Code/keyUnreadable``).
  public let errno: Int32?
  /// The unsafe directory on the way to the state directory (``Code/stateDirectoryUnsafe``).
  public let ancestor: String?
  /// Why ``ancestor`` is unsafe (``Code/stateDirectoryUnsafe``).
  public let unsafe: StateDirectoryError.Unsafe?
  /// Why the key does not parse (``Code/keyCorrupt``).
  public let reason: String?
  /// The backups of earlier keys (``Code/keyMissing``).
  public let backups: [String]?
  /// One line saying what is wrong.
  public let description: String

  private init(
    _ code: Code, path: String?, owner: UInt32? = nil, mode: UInt32? = nil, errno: Int32? = nil, ancestor: String? = nil,
    unsafe: StateDirectoryError.Unsafe? = nil, reason: String? = nil, backups: [String]? = nil, _ description: String
  ) {
    self.code = code
    self.path = path
    self.owner = owner
    self.mode = mode
    self.errno = errno
    self.ancestor = ancestor
    self.unsafe = unsafe
    self.reason = reason
    self.backups = backups
    self.description = description
  }

  /// No state directory could be determined (no HOME, no configured directory).
  public static var noStateDirectory: Self { Self(.noStateDirectory, path: nil, "no state directory could be determined") }

  public static func stateDirectoryNotADirectory(path: String) -> Self {
    Self(.stateDirectoryNotADirectory, path: path, "the state directory \(path) is not a directory")
  }

  public static func stateDirectoryForeignOwner(path: String, owner: UInt32) -> Self {
    Self(.stateDirectoryForeignOwner, path: path, owner: owner, "the state directory \(path) belongs to uid \(owner)")
  }

  public static func stateDirectoryInsecure(path: String, mode: UInt32) -> Self {
    Self(.stateDirectoryInsecure, path: path, mode: mode, "the state directory \(path) has mode \(octal(mode))")
  }

  /// A directory on the way to the state directory (`ancestor`) can be changed by someone
  /// other than root and the owner, who could swap the state directory.
  public static func stateDirectoryUnsafe(path: String, ancestor: String, reason: StateDirectoryError.Unsafe) -> Self {
    let text =
      switch reason {
      case .ancestorOwner(let uid): "the state directory \(path) is unsafe: \(ancestor) belongs to uid \(uid)"
      case .ancestorWritable(let mode): "the state directory \(path) is unsafe: \(ancestor) has mode \(octal(mode))"
      case .rootDirectory: "the state directory \(path) is the root directory"
      }
    return Self(.stateDirectoryUnsafe, path: path, ancestor: ancestor, unsafe: reason, text)
  }

  public static func cannotCreateStateDirectory(path: String, errno: Int32) -> Self {
    Self(.cannotCreateStateDirectory, path: path, errno: errno, "cannot create the state directory \(path): \(errorText(errno))")
  }

  /// The state directory, or a directory on the way to it (`path`), cannot be opened.
  public static func stateDirectoryUnreadable(path: String, errno: Int32) -> Self {
    Self(.stateDirectoryUnreadable, path: path, errno: errno, "cannot open \(path): \(errorText(errno))")
  }

  public static func cannotWriteKey(path: String, errno: Int32) -> Self {
    Self(.cannotWriteKey, path: path, errno: errno, "cannot create the device key in \(path): \(errorText(errno))")
  }

  /// A key file (the private key or its public key cache) is a link, a FIFO, a directory….
  public static func keyNotARegularFile(path: String) -> Self {
    Self(.keyNotARegularFile, path: path, "the device key file \(path) is not a regular file")
  }

  public static func keyForeignOwner(path: String, owner: UInt32) -> Self {
    Self(.keyForeignOwner, path: path, owner: owner, "the device key file \(path) belongs to uid \(owner)")
  }

  public static func keyInsecureMode(path: String, mode: UInt32) -> Self {
    Self(.keyInsecureMode, path: path, mode: mode, "the device key file \(path) has mode \(octal(mode))")
  }

  public static func keyUnreadable(path: String, errno: Int32) -> Self {
    Self(.keyUnreadable, path: path, errno: errno, "cannot read the device key at \(path): \(errorText(errno))")
  }

  public static func keyCorrupt(path: String, reason: String) -> Self {
    Self(.keyCorrupt, path: path, reason: reason, "the device key \(path) is corrupt (\(reason))")
  }

  public static func keyMismatch(path: String) -> Self {
    Self(.keyMismatch, path: path, "the public key cached beside \(path) does not belong to it")
  }

  /// There is no key, but backups of earlier keys: an interrupted reset of an older version,
  /// or a deleted key. A new identity is not made behind the user's back.
  public static func keyMissing(path: String, backups: [String]) -> Self {
    Self(.keyMissing, path: path, backups: backups, "the device key \(path) is missing, but \(backups.count) backup(s) exist")
  }

  /// The identity key is in a TPM (`path`, its blob): a reset that makes a file key would not
  /// replace it. `DeviceKeyStore.resetTPMKey` resets it.
  public static func keyInTPM(path: String) -> Self {
    Self(.keyInTPM, path: path, "the device key is in the TPM (\(path)): a file key would not replace it")
  }
}
