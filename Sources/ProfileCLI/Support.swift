#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import ArgumentParser
import Collectors

/// A failure with its message and sysexits code. Commands throw it; `reportingFailures` prints
/// the one-line message and exits with the code (ArgumentParser would exit 1 for any error).
package struct Failure: Error, CustomStringConvertible {
  package var code: Int32
  package var description: String

  package init(code: Int32, _ message: String) {
    self.code = code
    self.description = message
  }

  package init(_ error: IdentityError) {
    self.init(code: error.exitCode, error.description)
  }
}

/// Runs `body`; a `Failure` becomes "fr-profile: error: …" on stderr and its exit code.
package func reportingFailures(_ body: () throws -> Void) throws {
  do {
    try body()
  } catch let failure as Failure {
    writeStandardError("fr-profile: error: \(failure.description)\n")
    throw ExitCode(failure.code)
  }
}

package func writeStandardError(_ text: String) {
  _ = writeAll(2, Array(text.utf8))
}

package func note(_ text: String) { writeStandardError("fr-profile: note: \(text)\n") }
package func detail(_ text: String) { writeStandardError("fr-profile: detail: \(text)\n") }

/// Writes all of `bytes` to file descriptor `fd`.
package func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
  var written = 0
  while written < bytes.count {
    let result = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + written, $0.count - written) }
    if result < 0 {
      if errno == EINTR { continue }
      return false
    }
    written += result
  }
  return true
}

/// Prints `text` to stdout; a closed or failing stdout is an I/O error (74).
package func printOutput(_ text: String) throws {
  guard writeAll(1, Array(text.utf8)) else {
    throw Failure(code: 74, "cannot write to standard output: \(String(cString: strerror(errno))).")
  }
}

/// Writes `text` to `path` atomically: a temporary file in the same directory, fsync, rename.
/// A reader sees the old file or the new one, never a torn one.
package func writeFileAtomically(_ path: String, _ text: String) throws {
  let slash = path.lastIndex(of: "/")
  let directory = slash.map { String(path[..<$0]) } ?? "."
  let temporary = (directory.isEmpty ? "" : directory) + "/.fr-profile.tmp.\(getpid())"
  let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
  guard fd >= 0 else {
    throw Failure(code: 73, "cannot write \(path): \(String(cString: strerror(errno))). Check that its directory exists and is writable.")
  }
  let ok = writeAll(fd, Array(text.utf8)) && fsync(fd) == 0
  let code = errno
  close(fd)
  guard ok else {
    unlink(temporary)
    throw Failure(code: 74, "cannot write \(path): \(String(cString: strerror(code))).")
  }
  guard rename(temporary, path) == 0 else {
    let code = errno
    unlink(temporary)
    throw Failure(code: 73, "cannot replace \(path): \(String(cString: strerror(code))).")
  }
}

package var standardOutputIsTerminal: Bool { isatty(1) != 0 }

/// All bytes of `path`, or of standard input for "-". Unreadable is EX_NOINPUT (66).
package func readInput(_ path: String, limit: Int = 64 << 20) throws -> [UInt8] {
  let fd = path == "-" ? 0 : open(path, O_RDONLY | O_CLOEXEC)
  guard fd >= 0 else {
    throw Failure(code: 66, "cannot read \(path): \(String(cString: strerror(errno))).")
  }
  defer { if fd != 0 { close(fd) } }
  var bytes: [UInt8] = []
  var chunk = [UInt8](repeating: 0, count: 65536)
  while true {
    let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
    if count < 0 {
      if errno == EINTR { continue }
      throw Failure(code: 66, "cannot read \(path == "-" ? "standard input" : path): \(String(cString: strerror(errno))).")
    }
    if count == 0 { break }
    bytes.append(contentsOf: chunk[..<count])
    if bytes.count > limit {
      throw Failure(code: 65, "\(path == "-" ? "standard input" : path) is larger than \(limit >> 20) MiB: not an authenticate response.")
    }
  }
  return bytes
}
