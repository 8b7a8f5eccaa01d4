#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// Code injected into processes: `LD_PRELOAD`, /etc/ld.so.preload, and instrumentation
/// frameworks (Frida, its gadget, Substrate) mapped into this process.
///
/// Scores: a mapped instrumentation framework 1 (hooking is certain; the Android SDK scores
/// Frida the same); a preload 0.7 (it can hook every call, but jemalloc or libeatmydata are
/// legitimate uses, so it is strong evidence, not proof).
public struct InjectedLibraryDetector: TamperDetector {
  public let name = "injectedLibraries"
  public init() {}

  static let instrumentationMarkers: [StaticString] = ["frida", "gadget", "libsubstrate", "libxposed"]

  public func analyze(_ context: CollectionContext) -> TamperFinding {
    var finding = TamperFinding.clean
    if let preload = context.system.variable("LD_PRELOAD"), !trimmed(preload).isEmpty {
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
    if let maps = context.system.readBytes("/proc/self/maps", limit: 4 << 20) {
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
/// Works on bytes, without copying: the maps of a large process run to thousands of lines, and
/// this runs at every collect. Only a line whose file name contains a marker (ASCII case
/// ignored) becomes a `String`.
package func instrumentationLibraries(inMaps maps: [UInt8]) -> [String] {
  var found: [String] = []
  maps.withUnsafeBufferPointer { bytes in
    // A mapped file shows up on several consecutive lines (one per segment): a line whose file
    // name is the previous line's skips the marker search.
    var previousName = 0..<0
    forEachLine(bytes) { line in
      guard let slash = firstIndex(of: UInt8(ascii: "/"), in: bytes, line) else { return true }
      var nameStart = line.upperBound
      while nameStart > slash && bytes[nameStart - 1] != UInt8(ascii: "/") { nameStart -= 1 }
      let name = nameStart..<line.upperBound
      if name.count == previousName.count
        && memcmp(bytes.baseAddress! + name.lowerBound, bytes.baseAddress! + previousName.lowerBound, name.count) == 0
      {
        return true
      }
      previousName = name
      guard InjectedLibraryDetector.instrumentationMarkers.contains(where: { containsIgnoringASCIICase(bytes, name, $0) })
      else { return true }
      let path = decode(bytes, slash..<line.upperBound)
      if !found.contains(path) { found.append(path) }
      return true
    }
  }
  return found
}

package func instrumentationLibraries(inMaps maps: String) -> [String] {
  instrumentationLibraries(inMaps: Array(maps.utf8))
}

/// Whether `range` of `bytes` contains the lowercase ASCII `needle`, ignoring ASCII case.
private func containsIgnoringASCIICase(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, _ needle: StaticString) -> Bool {
  let count = needle.utf8CodeUnitCount
  guard range.count >= count else { return false }
  let pattern = UnsafeBufferPointer(start: needle.utf8Start, count: count)
  @inline(__always) func lower(_ byte: UInt8) -> UInt8 { byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte }
  for start in range.lowerBound...(range.upperBound - count) where lower(bytes[start]) == pattern[0] {
    var index = 1
    while index < count && lower(bytes[start + index]) == pattern[index] { index += 1 }
    if index == count { return true }
  }
  return false
}
