/// A shell or interpreter with the setuid or setgid bit: any user can run arbitrary code as
/// its owner — the Linux form of a planted `su` binary (the SDKs' su/busybox checks). Score 1.
/// Only names that are never legitimately setuid are checked (su, sudo and passwd are).
public struct SetuidInterpreterDetector: TamperDetector {
  public let name = "setuidInterpreter"
  public init() {}

  static let directories = ["/usr/bin", "/bin", "/usr/local/bin", "/usr/sbin", "/sbin"]
  static let programs: [String] = [
    "sh", "bash", "dash", "zsh", "ksh", "mksh", "fish", "csh", "tcsh", "busybox", "python", "python2", "python3",
    "perl", "ruby", "node", "nodejs", "lua", "php", "tclsh", "env", "awk", "gawk", "find", "vim", "vi", "less",
    "python3.6", "python3.7", "python3.8", "python3.9", "python3.10", "python3.11", "python3.12", "python3.13",
    "python3.14",
  ]

  public func analyze(_ context: TamperContext) -> TamperFinding {
    var evidence: [String] = []
    var seen: [String] = []  // five names at most: an array, not a Set (no hashing set-up at every login)
    for directory in Self.directories {
      // Skip a directory that is a link to one already checked (/bin → usr/bin).
      let canonical = context.system.readLink(directory).map { $0.hasPrefix("/") ? $0 : "/" + $0 } ?? directory
      guard !seen.contains(canonical) else { continue }
      seen.append(canonical)
      context.system.forEachStatus(in: directory, names: Self.programs) { program, info in
        guard info.isRegularFile else { return }
        if info.mode & 0o4000 != 0 { evidence.append("\(directory)/\(program) is setuid (owner uid \(info.uid))") }
        if info.mode & 0o2000 != 0 { evidence.append("\(directory)/\(program) is setgid (group \(info.gid))") }
      }
    }
    return evidence.isEmpty ? .clean : TamperFinding(score: 1, evidence: evidence)
  }
}
