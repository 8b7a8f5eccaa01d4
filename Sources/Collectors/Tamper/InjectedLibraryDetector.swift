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
///
/// Works on bytes: the maps of a large process run to thousands of lines, and this runs at
/// every collect. A line is examined only when its lowercased bytes contain a marker.
public func instrumentationLibraries(inMaps maps: String) -> [String] {
  let markers = InjectedLibraryDetector.instrumentationMarkers.map { Array($0.utf8) }
  var found: [String] = []
  var lines = maps.utf8[...]
  while !lines.isEmpty {
    let end = lines.firstIndex(of: UInt8(ascii: "\n")) ?? lines.endIndex
    let line = lines[..<end]
    lines = end == lines.endIndex ? lines[end...] : lines[lines.index(after: end)...]
    guard let slash = line.firstIndex(of: UInt8(ascii: "/")) else { continue }
    let nameStart = line.lastIndex(of: UInt8(ascii: "/")).map { line.index(after: $0) } ?? slash
    let name = line[nameStart...].map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }
    guard markers.contains(where: { contains(name, $0) }) else { continue }
    let path = String(decoding: line[slash...], as: UTF8.self)
    if !found.contains(path) { found.append(path) }
  }
  return found
}

private func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
  guard haystack.count >= needle.count else { return false }
  for start in 0...(haystack.count - needle.count) where haystack[start] == needle[0] {
    if haystack[start..<(start + needle.count)].elementsEqual(needle) { return true }
  }
  return false
}
