import ArgumentParser
import Collectors
import DeviceIdentity
import Dispatch
import Journey
import StateStore
import SystemCalls

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// A failure with its message and sysexits code. Commands throw it; `reportingFailures` prints
/// the one-line message and exits with the code (ArgumentParser would exit 1 for any error).
package struct Failure: Error, CustomStringConvertible {
  package var status: ExitStatus
  package var description: String

  package init(_ status: ExitStatus, _ message: String) {
    self.status = status
    self.description = message
  }

  package init(_ error: IdentityError) {
    self.init(error.exitStatus, error.message)
  }

  /// The process exit code.
  package var code: Int32 { status.rawValue }
}

/// The command line's reading of identity errors: an exit code and what to do.
extension IdentityError {
  /// The exit status for this failure.
  package var exitStatus: ExitStatus {
    switch code {
    case .noStateDirectory: .configuration
    case .stateDirectoryNotADirectory, .cannotCreateStateDirectory, .cannotWriteKey: .cannotCreate
    case .stateDirectoryForeignOwner, .stateDirectoryInsecure, .stateDirectoryUnsafe, .keyNotARegularFile,
      .keyForeignOwner, .keyInsecureMode:
      .permission
    case .keyUnreadable, .stateDirectoryUnreadable:
      errno == EACCES || errno == EPERM ? .permission : .ioError
    case .keyCorrupt, .keyMismatch: .dataError
    case .keyMissing: .noInput
    case .keyInTPM: .timedOut  // EX_TEMPFAIL: the identity moved to the TPM during the run; again resets it there
    default: .ioError
    }
  }

  /// One line: what is wrong and what to do, naming the flags and commands that help.
  package var message: String {
    let me = geteuid()
    let path = self.path ?? ""
    let owner = self.owner ?? 0
    let mode = self.mode ?? 0
    let errno = self.errno ?? 0
    switch code {
    case .noStateDirectory:
      return "no state directory: HOME is not set. Set FR_PROFILE_HOME or pass --state-dir DIR."
    case .stateDirectoryNotADirectory:
      return "the state directory \(path) is not a directory (or is a symbolic link). Remove it or pass another --state-dir."
    case .stateDirectoryForeignOwner:
      return
        "the state directory \(path) belongs to uid \(owner), not to you (uid \(me)). Run fr-profile as its owner or pass your own --state-dir."
    case .stateDirectoryInsecure:
      return "the state directory \(path) has mode \(octal(mode)); others could replace the device key. Run 'chmod 700 \(path)'."
    case .stateDirectoryUnsafe:
      let ancestor = self.ancestor ?? ""
      switch unsafe {
      case .ancestorOwner(let uid):
        return
          "the state directory \(path) is unsafe: \(ancestor) belongs to uid \(uid), who could swap it. Use a --state-dir whose parents belong to root or to you."
      case .ancestorWritable(let mode):
        return
          "the state directory \(path) is unsafe: \(ancestor) (mode \(octal(mode))) is writable by others, who could swap it. Run 'chmod go-w \(ancestor)' or use another --state-dir."
      case .rootDirectory, nil:
        return "the state directory cannot be /. Pass a directory of its own with --state-dir."
      }
    case .cannotCreateStateDirectory:
      return "cannot create the state directory \(path): \(errorText(errno)). Pass a writable --state-dir or set FR_PROFILE_HOME."
    case .stateDirectoryUnreadable:
      return
        "cannot open \(path) on the way to the state directory: \(errorText(errno)). Check its owner and mode, or pass another --state-dir."
    case .cannotWriteKey:
      return "cannot create the device key in \(path): \(errorText(errno)). Make the directory writable by you or pass another --state-dir."
    case .keyNotARegularFile:
      return
        "the device key file \(path) is not a regular file (a link, FIFO or directory). Move it away; restore the key from a backup if it is the private key."
    case .keyForeignOwner:
      return
        "the device key file \(path) belongs to uid \(owner), not to you (uid \(me)). Run fr-profile as the key's owner, or 'chown' it back."
    case .keyInsecureMode:
      // The private key and the TPM blob must be 0600; the public-key cache only must not be writable by others.
      return path.hasSuffix(".pem") || path.hasSuffix(".tpm")
        ? "the device key \(path) has mode \(octal(mode)): others may have read it. Run 'chmod 600 \(path)', or 'fr-profile identifier --reset' if it may have leaked."
        : "the device key file \(path) has mode \(octal(mode)): others could change it. Run 'chmod go-w \(path)'."
    case .keyUnreadable:
      // No "--reset" for a permission problem: a reset needs the same access, so that advice loops.
      return errno == EACCES || errno == EPERM
        ? "cannot read the device key at \(path): \(errorText(errno)). It belongs to another user or has the wrong mode: run fr-profile as the key's owner (root for /var/lib/fr-profile), or pass your own --state-dir."
        : "cannot read the device key at \(path): \(errorText(errno)). Check the disk, restore the key from a backup, or run 'fr-profile identifier --reset' to make a new identity."
    case .keyCorrupt:
      return
        "the device key \(path) is corrupt (\(reason ?? "")). Restore it from a backup, or run 'fr-profile identifier --reset' to make a new identity."
    case .keyMismatch:
      return "the public key cached beside \(path) does not belong to it. Delete the .pub file to rebuild it from the key."
    case .keyMissing:
      return
        "the device key \(path) is missing, but earlier keys are kept (\(backups?.last ?? "")): restore one with 'mv BACKUP \(path)', or run 'fr-profile identifier --reset' to make a new identity."
    case .keyInTPM:
      return
        "the device key moved into the TPM (\(path)) while this ran; nothing was reset. Run 'fr-profile identifier --reset' again to make a new key in the TPM."
    default:
      return description + "."
    }
  }
}

/// Runs `body`; a `Failure` becomes "fr-profile: error: …" on stderr and its exit code.
package func reportingFailures(_ body: () throws -> Void) throws {
  do { try body() } catch let failure as Failure { throw reported(failure) }
}

/// `reportingFailures` for an async command's body.
package func reportingFailuresAsync(_ body: () async throws -> Void) async throws {
  do { try await body() } catch let failure as Failure { throw reported(failure) }
}

/// `failure` written to stderr as one line; the exit code that says it was reported.
private func reported(_ failure: Failure) -> ExitCode {
  writeStandardError("fr-profile: error: \(failure.description)\n")
  return ExitCode(failure.code)
}

/// Writes `text` to stderr with control characters other than newline and tab replaced
/// (`ServerText.printable`): messages quote what servers, stored records and files said, and
/// none of it may drive the terminal. Our own messages hold no other controls.
package func writeStandardError(_ text: String) {
  _ = try? writeAll(2, Array(ServerText.printable(text).utf8))
}

/// The one warning for a profile above AM's default Maximum Profile Size (3 KB), for
/// `collect`, `callback` and `journey` alike. `subject` names it, e.g. "the profile for
/// callbacks[2]".
package func warnIfOversized(_ size: Int, subject: String = "the profile") {
  guard size > DeviceProfile.defaultMaximumSize else { return }
  writeStandardError(
    "fr-profile: warning: \(subject) is \(size) bytes, above AM's default Maximum Profile Size of \(DeviceProfile.defaultMaximumSize) bytes; the Device Profile Collector node may reject it.\n"
  )
}

package func note(_ text: String) { writeStandardError("fr-profile: note: \(text)\n") }
package func detail(_ text: String) { writeStandardError("fr-profile: detail: \(text)\n") }

/// Prints `text` to stdout; a closed or failing stdout is an I/O error (74).
package func printOutput(_ text: String) throws {
  do throws(SystemCallError) { try writeAll(1, Array(text.utf8)) } catch {
    throw Failure(.ioError, "cannot write to standard output: \(errorText(error.errno)).")
  }
}

/// Writes `text` to `path` atomically, for the caller, with `mode` exactly (whatever the umask):
/// readers see the old file or the new one, whole, and a crash leaves one of them.
///
/// The file is the caller's and nothing is inherited from a file it replaces (a
/// planted file once gave root's TPM key to its planter). So the directory must be one that only
/// root or the caller can change — every directory on the way is checked as the state
/// directory's ancestors are, OpenSSH's `safe_path` rule, with sticky `/tmp` allowed — and an
/// existing `path` must be a regular file of the caller's: another user's file, a link, a FIFO,
/// a device or a directory is refused, never replaced. The directory is opened once and
/// everything happens relative to it: the new file is an unnamed `O_TMPFILE` (else an
/// `O_EXCL | O_NOFOLLOW` file with a random name), fsynced, linked under a random temporary name
/// and renamed over `path`, then the directory is fsynced. Stale temporaries of earlier runs
/// killed half-way (ours, older than a minute) are removed.
package func writeFileAtomically(_ path: String, _ text: String, mode: mode_t = 0o644) throws {
  let (directory, name) = try outputLocation(path)
  var existing = stat()
  if fstatat(directory.descriptor, name, &existing, AT_SYMLINK_NOFOLLOW) == 0 {
    guard existing.st_mode & S_IFMT == S_IFREG else {
      throw Failure(
        .cannotCreate,
        "cannot write \(path): it exists and is not a regular file (a link, FIFO, device or directory); fr-profile replaces only regular files. Remove it or choose another --output."
      )
    }
    guard existing.st_uid == geteuid() else {
      throw Failure(
        .permission,
        "cannot write \(path): it belongs to uid \(existing.st_uid), not to you (uid \(geteuid())); fr-profile never replaces another user's file. Remove it or choose another path."
      )
    }
  }
  removeStaleOutputTemporaries(directory.descriptor)
  do throws(SystemCallError) {
    try writeAtomically(
      Array(text.utf8), as: name, in: directory.descriptor, mode: mode, replace: true, temporaryPrefix: outputTemporaryPrefix)
  } catch {
    switch error.call {
    case "openat": throw Failure(.cannotCreate, "cannot write \(path): \(errorText(error.errno)). Check that its directory is writable.")
    case "fchmod": throw Failure(.cannotCreate, "cannot set the mode of \(path): \(errorText(error.errno)).")
    case "write", "fsync": throw Failure(.ioError, "cannot write \(path): \(errorText(error.errno)).")
    case "renameat": throw Failure(.cannotCreate, "cannot replace \(path): \(errorText(error.errno)).")
    default: throw Failure(.cannotCreate, "cannot write \(path): \(errorText(error.errno)).")
    }
  }
}

/// Reads a file the caller wrote for itself earlier (`attest challenge --state`) and trusts:
/// the same directory checks as `writeFileAtomically`, and the file a regular file of the
/// caller's that no one else may write — with `secret`, that no one else may read either (mode
/// 0600 or stricter: `journey --answers`, `--session-file`). At most `limit` bytes.
package func readOwnFile(_ path: String, limit: Int, secret: Bool = false) throws -> [UInt8] {
  let (directory, name) = try outputLocation(path)
  let fd = openat(directory.descriptor, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)
  guard fd >= 0 else {
    let code = errno
    if code == ELOOP { throw Failure(.permission, "cannot read \(path): it is a symbolic link; give the file itself.") }
    throw Failure(.noInput, "cannot read \(path): \(errorText(code)).")
  }
  defer { close(fd) }
  var info = stat()
  guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
    throw Failure(.permission, "cannot read \(path): it is not a regular file.")
  }
  guard info.st_uid == geteuid() else {
    throw Failure(
      .permission,
      "refusing \(path): it belongs to uid \(info.st_uid), not to you (uid \(geteuid())), who could have written anything in it. Use the file your own run wrote."
    )
  }
  guard info.st_mode & 0o022 == 0 else {
    throw Failure(
      .permission,
      "refusing \(path): others may write it (mode \(String(info.st_mode & 0o7777, radix: 8))). Run 'chmod go-w \(path)' if its content is yours, or write it again."
    )
  }
  guard !secret || info.st_mode & 0o077 == 0 else {
    throw Failure(
      .permission,
      "refusing \(path): it holds secrets and others may read it (mode \(String(info.st_mode & 0o7777, radix: 8))). Run 'chmod 600 \(path)'."
    )
  }
  let bytes: [UInt8]
  do throws(SystemCallError) { bytes = try readAll(fd, limit: limit + 1) } catch {
    throw Failure(.ioError, "cannot read \(path): \(errorText(error.errno)).")
  }
  guard bytes.count <= limit else { throw Failure(.dataError, "\(path) is larger than \(limit) bytes.") }
  return bytes
}

/// The directory of an output `path`, opened with the checks of a shared directory
/// (`StateDirectory.open(shared:)`), and the file's name in it.
private func outputLocation(_ path: String) throws -> (StateDirectory, String) {
  let slash = path.lastIndex(of: "/")
  let directoryPath = slash.map { path[..<$0].isEmpty ? "/" : String(path[..<$0]) } ?? "."
  let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
  guard !name.isEmpty, name != ".", name != ".." else {
    throw Failure(
      .cannotCreate,
      "cannot write \(path): not a file name. Name the file to write, e.g. --output \(path.hasSuffix("/") ? path : path + "/")profile.json."
    )
  }
  do {
    return (try StateDirectory.open(directoryPath, create: false, shared: true), name)
  } catch {
    let what = error.path
    switch (error.code, error.unsafe) {
    case (.notSecure, .ancestorOwner(let uid)?):
      let unsafe = what
      throw Failure(
        .permission,
        "refusing \(path): the directory \(unsafe) belongs to uid \(uid), who could replace or read what is written there. Choose a directory that only you or root can change."
      )
    case (.notSecure, .ancestorWritable(let mode)?):
      let unsafe = what
      throw Failure(
        .permission,
        "refusing \(path): the directory \(unsafe) (mode \(String(mode, radix: 8))) is writable by others, who could replace what is written there. Choose another directory, or run 'chmod go-w \(unsafe)'."
      )
    case (.missing, _):
      throw Failure(.cannotCreate, "cannot write \(path): \(what) does not exist. Create the directory first.")
    case (.notADirectory, _):
      throw Failure(.cannotCreate, "cannot write \(path): \(what) is not a directory.")
    case (.cannotOpen, _):
      let code = error.errno ?? 0
      throw Failure(code == EACCES ? .permission : .cannotCreate, "cannot write \(path): cannot open \(what): \(errorText(code)).")
    default:
      throw Failure(.cannotCreate, "cannot write \(path): its directory cannot be used (\(error)).")
    }
  }
}

let outputTemporaryPrefix = ".fr-profile.tmp-"

/// Removes `.fr-profile.tmp-*` files a killed run left in `dir`: regular, ours, older than a
/// minute (a younger one may be a concurrent run's).
func removeStaleOutputTemporaries(_ dir: Int32) {
  let copy = openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
  guard copy >= 0, let stream = fdopendir(copy) else { return }
  defer { closedir(stream) }
  let now = Int(time(nil))
  let me = geteuid()
  while let entry = readdir(stream) {
    let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    guard name.hasPrefix(outputTemporaryPrefix) || name.hasPrefix(".fr-profile.tmp.") else { continue }
    var info = stat()
    guard fstatat(dir, name, &info, AT_SYMLINK_NOFOLLOW) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_uid == me,
      now - Int(info.st_mtim.tv_sec) > 60
    else { continue }
    unlinkat(dir, name, 0)
  }
}

package var standardOutputIsTerminal: Bool { isatty(1) != 0 }

/// Ends the process with exit 75 and `message` once `seconds` have passed: the bound on waits
/// nothing else can interrupt — a TPM that stops answering mid-command (tpm2-tss's synchronous
/// calls wait on a silent TCTI for ever), a PAM module that hangs. Ending there loses nothing:
/// key files are replaced atomically, a PIN attempt's slot is taken before its PIN is tried,
/// and the store's lock goes with the process.
package func armWatchdog(after seconds: Double, _ message: String) {
  DispatchQueue.global().asyncAfter(deadline: .now() + seconds) {
    writeStandardError("fr-profile: error: " + message + "\n")
    _exit(ExitStatus.timedOut.rawValue)
  }
}

/// All bytes of `path`, or of standard input for "-". Unreadable is EX_NOINPUT (66).
package func readInput(_ path: String, limit: Int = 64 << 20) throws -> [UInt8] {
  let fd = path == "-" ? 0 : open(path, O_RDONLY | O_CLOEXEC)
  guard fd >= 0 else {
    throw Failure(.noInput, "cannot read \(path): \(errorText(errno)).")
  }
  defer { if fd != 0 { close(fd) } }
  let name = path == "-" ? "standard input" : path
  let bytes: [UInt8]
  do throws(SystemCallError) { bytes = try readAll(fd, limit: limit + 1) } catch {
    throw Failure(.noInput, "cannot read \(name): \(errorText(error.errno)).")
  }
  guard bytes.count <= limit else {
    throw Failure(.dataError, "\(name) is larger than \(limit >> 20) MiB: not an authenticate response.")
  }
  return bytes
}
