import SystemCalls

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// Code injected into processes: `LD_PRELOAD`, /etc/ld.so.preload, instrumentation
/// frameworks (Frida, its gadget, Substrate) mapped into this process, and shared libraries
/// mapped from outside the system's library directories.
///
/// Scores: a mapped instrumentation framework 1 (hooking is certain; the Android SDK scores
/// Frida the same); a preload, or a library no package could have installed, 0.7 (it can hook
/// every call, but jemalloc or libeatmydata are legitimate uses, so it is strong evidence, not
/// proof). The maps catch a preload that unset `LD_PRELOAD` in its constructor, which the
/// environment no longer shows.
public struct InjectedLibraryDetector: TamperDetector {
  public let name = "injectedLibraries"
  public init() {}

  static let instrumentationMarkers: [StaticString] = ["frida", "gadget", "libsubstrate", "libxposed"]

  public func analyze(_ context: TamperContext) -> TamperFinding {
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
      let mapped = suspiciousLibraries(inMaps: maps)
      if !mapped.instrumentation.isEmpty {
        finding = finding.merged(
          TamperFinding(score: 1, evidence: mapped.instrumentation.map { "instrumentation library mapped: \($0)" }))
      }
      let foreign = mapped.foreign.filter { !mapped.instrumentation.contains($0) && !isInstalledByRoot($0, context.system) }
      if !foreign.isEmpty {
        finding = finding.merged(
          TamperFinding(score: 0.7, evidence: foreign.map { "library mapped from outside the system library directories: \($0)" }))
      }
    }
    return finding
  }
}

/// Whether `path` and every directory above it belong to root and only root may write them:
/// a library an administrator installed outside the package directories (a toolchain in /opt,
/// /usr/local/lib). What a user could have put there — /tmp, a home, a memfd, a deleted file —
/// fails.
func isInstalledByRoot(_ path: String, _ system: SystemSource) -> Bool {
  guard path.hasPrefix("/"), !path.hasSuffix(" (deleted)") else { return false }
  var current = Substring(path)
  while !current.isEmpty {
    guard let status = system.status(String(current), followLinks: true), status.uid == 0, status.mode & 0o022 == 0 else {
      return false
    }
    guard let slash = current.lastIndex(of: "/") else { break }
    current = current[..<slash]
  }
  return true
}

/// The directories a package installs shared libraries into (Debian's multiarch ones
/// included; /lib is /usr/lib on merged-/usr systems). A library mapped from anywhere else
/// (/tmp, a home directory, /dev/shm, a memfd) was put there by someone other than dpkg. /usr/libexec
/// holds packages' helper libraries (valgrind's preloads among them).
let systemLibraryDirectories: [StaticString] = [
  "/usr/lib/", "/lib/", "/usr/lib64/", "/lib64/", "/usr/lib32/", "/lib32/", "/usr/libexec/",
]

/// Paths in /proc/self/maps of shared libraries that look injected: `instrumentation`, whose
/// file name names an instrumentation framework, and `foreign`, whose file name has ".so" and
/// whose path is outside `systemLibraryDirectories` (the executable itself has no ".so").
///
///     7f3a1c000000-7f3a1c200000 r-xp 00000000 08:01 1234  /tmp/frida-agent-64.so
///
/// Works on bytes, without copying: the maps of a large process run to thousands of lines, and
/// this runs at every collect. Only a line that is flagged becomes a `String`.
package func suspiciousLibraries(inMaps maps: [UInt8]) -> (instrumentation: [String], foreign: [String]) {
  var instrumentation: [String] = []
  var foreign: [String] = []
  maps.withUnsafeBufferPointer { bytes in
    // A mapped file shows up on several consecutive lines (one per segment): a line whose file
    // name is the previous line's is skipped.
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
      let path = slash..<line.upperBound
      if InjectedLibraryDetector.instrumentationMarkers.contains(where: { containsIgnoringASCIICase(bytes, name, $0) }) {
        let text = decode(bytes, path)
        if !instrumentation.contains(text) { instrumentation.append(text) }
      }
      if containsIgnoringASCIICase(bytes, name, ".so"),
        !systemLibraryDirectories.contains(where: { bytesHavePrefix(bytes, path, $0) })
      {
        let text = decode(bytes, path)
        if !foreign.contains(text) { foreign.append(text) }
      }
      return true
    }
  }
  return (instrumentation, foreign)
}

package func suspiciousLibraries(inMaps maps: String) -> (instrumentation: [String], foreign: [String]) {
  suspiciousLibraries(inMaps: Array(maps.utf8))
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
