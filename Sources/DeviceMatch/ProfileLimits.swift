/// The size limits of matching, one for every profile read: a stored entry larger than
/// `maxProfileBytes` is skipped with a warning, an incoming profile larger than it is an
/// error. AM itself rejects profiles over a few KB; the limit only bounds memory.
public enum ProfileLimits {
  /// Largest profile (stored entry or incoming file) read, in bytes: 16 MiB.
  public static let maxProfileBytes = 16 << 20
  /// Largest match config read, in bytes: 1 MiB.
  public static let maxConfigBytes = 1 << 20
}
