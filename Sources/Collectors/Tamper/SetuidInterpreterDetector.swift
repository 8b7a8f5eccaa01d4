/// A shell or interpreter with the setuid or setgid bit: any user can run arbitrary code as
/// its owner — the Linux form of a planted `su` binary (the SDKs' su/busybox checks). Score 1.
/// Only names that are never legitimately setuid are checked (su, sudo and passwd are).
public struct SetuidInterpreterDetector: TamperDetector {
  public let name = "setuidInterpreter"
  public init() {}

  static let directories = ["/usr/bin", "/bin", "/usr/local/bin", "/usr/sbin", "/sbin"]
  static let programs: [String] = {
    var names = [
      "sh", "bash", "dash", "zsh", "ksh", "mksh", "fish", "csh", "tcsh", "busybox", "python", "python2", "python3",
      "perl", "ruby", "node", "nodejs", "lua", "php", "tclsh", "env", "awk", "gawk", "find", "vim", "vi", "less",
    ]
    names += (6...14).map { "python3.\($0)" }
    return names
  }()

  public func analyze(_ context: CollectionContext) -> TamperFinding {
    var evidence: [String] = []
    var seen: [String] = []  // five names at most: an array, not a Set (no hashing set-up at every login)
    for directory in Self.directories {
      // Skip a directory that is a link to one already checked (/bin → usr/bin).
      let canonical = context.system.readLink(directory).map { $0.hasPrefix("/") ? $0 : "/" + $0 } ?? directory
      guard !seen.contains(canonical) else { continue }
      seen.append(canonical)
      for (program, info) in context.system.statuses(in: directory, names: Self.programs) where info.isRegularFile {
        if info.mode & 0o4000 != 0 { evidence.append("\(directory)/\(program) is setuid (owner uid \(info.uid))") }
        if info.mode & 0o2000 != 0 { evidence.append("\(directory)/\(program) is setgid (group \(info.gid))") }
      }
    }
    return evidence.isEmpty ? .clean : TamperFinding(score: 1, evidence: evidence)
  }
}
