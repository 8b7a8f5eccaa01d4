/// Code injected into processes: `LD_PRELOAD`, /etc/ld.so.preload, and instrumentation
/// frameworks (Frida, its gadget, Substrate) mapped into this process.
///
/// Scores: a mapped instrumentation framework 1 (hooking is certain; the Android SDK scores
/// Frida the same); a preload 0.7 (it can hook every call, but jemalloc or libeatmydata are
/// legitimate uses, so it is strong evidence, not proof).
public struct InjectedLibraryDetector: TamperDetector {
  public let name = "injectedLibraries"
  public init() {}

  static let instrumentationMarkers = ["frida", "gadget", "libsubstrate", "libxposed"]

  public func analyze(_ context: CollectionContext) -> TamperFinding {
    var finding = TamperFinding.clean
    if let preload = context.system.environment["LD_PRELOAD"], !trimmed(preload).isEmpty {
      finding = finding.merged(TamperFinding(score: 0.7, evidence: ["LD_PRELOAD is set: \(trimmed(preload))"]))
    }
    if let text = context.system.readText("/etc/ld.so.preload", limit: 65536) {
      // Entries are separated by white space or colons; "#" starts a comment to the line's end.
      let entries = text.split(separator: "\n")
        .flatMap { line in line.prefix(while: { $0 != "#" }).split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == ":" }) }
        .map { trimmed($0) }.filter { !$0.isEmpty }
      if !entries.isEmpty {
        finding = finding.merged(TamperFinding(score: 0.7, evidence: ["/etc/ld.so.preload lists \(entries.joined(separator: ", "))"]))
      }
    }
    if let maps = context.system.readText("/proc/self/maps", limit: 4 << 20) {
      let hits = instrumentationLibraries(inMaps: maps)
      if !hits.isEmpty {
        finding = finding.merged(TamperFinding(score: 1, evidence: hits.map { "instrumentation library mapped: \($0)" }))
      }
    }
    return finding
  }
}

/// Paths in /proc/self/maps whose file name names an instrumentation framework.
///
///     7f3a1c000000-7f3a1c200000 r-xp 00000000 08:01 1234  /tmp/frida-agent-64.so
public func instrumentationLibraries(inMaps maps: String) -> [String] {
  var found: [String] = []
  for line in maps.split(separator: "\n") {
    guard let slash = line.firstIndex(of: "/") else { continue }
    let path = String(line[slash...])
    let file = path.split(separator: "/").last.map { $0.lowercased() } ?? ""
    if InjectedLibraryDetector.instrumentationMarkers.contains(where: { file.contains($0) }), !found.contains(path) {
      found.append(path)
    }
  }
  return found
}
