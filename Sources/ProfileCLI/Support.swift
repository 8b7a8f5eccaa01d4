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
  let name = path == "-" ? "standard input" : path
  guard let bytes = readAll(fd, limit: limit + 1) else {
    throw Failure(code: 66, "cannot read \(name): \(String(cString: strerror(errno))).")
  }
  guard bytes.count <= limit else {
    throw Failure(code: 65, "\(name) is larger than \(limit >> 20) MiB: not an authenticate response.")
  }
  return bytes
}
