import SystemCalls

/// System directories that someone other than their rightful owner can write: a non-root user
/// could then replace programs or configuration every user runs (the Android SDK's "writable
/// system partition" check). Score 0.9.
///
/// "Rightful owner" is the owner of the root directory — uid 0 on a live machine; for a
/// recorded tree (a `SystemSource` root), whoever owns the tree — so fixtures behave like machines.
public struct WritableSystemDirectoryDetector: TamperDetector {
  public let name = "writableSystemDirectories"
  public init() {}

  static let directories = ["/bin", "/sbin", "/usr/bin", "/usr/sbin", "/lib", "/usr/lib", "/etc", "/usr/libexec"]

  public func analyze(_ context: TamperContext) -> TamperFinding {
    let system = context.system
    guard let rootOwner = system.status("/", followLinks: true)?.uid else { return .clean }
    var evidence: [String] = []
    for directory in Self.directories {
      // /bin → usr/bin on merged-/usr systems: judge the directory the link leads to.
      guard let info = system.status(directory, followLinks: true), info.isDirectory else { continue }
      if let reason = writableByOthers(info, systemOwner: rootOwner) { evidence.append("\(directory) \(reason)") }
    }
    return evidence.isEmpty ? .clean : TamperFinding(score: 0.9, evidence: evidence)
  }
}

/// Why a directory is writable by someone other than `systemOwner`, or nil if it is not.
/// Group write counts only for a group other than the owner's system group (gid 0 on live machines).
package func writableByOthers(_ info: SystemSource.FileStatus, systemOwner: UInt32) -> String? {
  let mode = info.permissions
  if mode & 0o002 != 0 && mode & 0o1000 == 0 { return "is world-writable (mode \(octal(mode)))" }
  if mode & 0o002 != 0 { return "is world-writable with the sticky bit (mode \(octal(mode)))" }
  if info.uid != systemOwner && mode & 0o200 != 0 { return "is owned and writable by uid \(info.uid)" }
  if mode & 0o020 != 0 && info.gid != 0 && info.gid != systemOwner { return "is writable by group \(info.gid) (mode \(octal(mode)))" }
  return nil
}
