/// The kernel says foreign code was forced into it: /proc/sys/kernel/tainted.
///
/// Scores, by taint flag (Documentation/admin-guide/tainted-kernels.rst): F (module force-loaded)
/// and R (module force-unloaded) 0.7 — version checks were overridden; E (unsigned module) 0.5 —
/// code the distribution did not sign runs in the kernel; O (out-of-tree module) 0.3 — rootkits
/// are out-of-tree modules, and so are ZFS and VirtualBox. Other flags (P for NVIDIA's driver,
/// W for a past warning…) say nothing about tampering and are listed as evidence with score 0.
public struct TaintedKernelDetector: TamperDetector {
  public let name = "taintedKernel"
  public init() {}

  static let flags: [(bit: Int, letter: Character, meaning: String, score: Double)] = [
    (0, "P", "proprietary module loaded", 0), (1, "F", "module force-loaded", 0.7),
    (2, "S", "kernel running on an out-of-spec system", 0), (3, "R", "module force-unloaded", 0.7),
    (4, "M", "machine check", 0), (5, "B", "bad page", 0), (6, "U", "taint requested by user space", 0),
    (7, "D", "kernel oops or BUG", 0), (8, "A", "ACPI table overridden", 0), (9, "W", "kernel warning", 0),
    (10, "C", "staging driver loaded", 0), (11, "I", "firmware bug workaround", 0),
    (12, "O", "out-of-tree module loaded", 0.3), (13, "E", "unsigned module loaded", 0.5),
    (14, "L", "soft lockup", 0), (15, "K", "kernel live-patched", 0), (16, "X", "auxiliary taint", 0),
    (17, "T", "built with struct randomization", 0),
  ]

  public func analyze(_ context: TamperContext) -> TamperFinding {
    guard let text = context.system.readLine("/proc/sys/kernel/tainted"), let value = UInt64(text), value != 0 else {
      return .clean
    }
    var finding = TamperFinding.clean
    for flag in Self.flags where value & (1 << UInt64(flag.bit)) != 0 {
      finding = finding.merged(TamperFinding(score: flag.score, evidence: ["tainted \(flag.letter): \(flag.meaning)"]))
    }
    return finding
  }
}
