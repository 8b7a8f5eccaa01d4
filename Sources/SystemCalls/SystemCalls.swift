#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// The one funnel for the system calls on secrets and outputs: every call is retried while it
/// fails with EINTR and otherwise fails with a typed error that names the call, the way
/// swift-system's internal `valueOrErrno` and swift-nio's `syscall(blocking:)` wrap theirs.
///
/// Ours, not swift-system's `FileDescriptor`: that has no public `*at` calls (openat, linkat,
/// renameat, fstatat, unlinkat) or flock, which every secret path uses, and taking it for read
/// and write alone would add a second error type. A target of its own because the modules that
/// use it (Collectors, DeviceMatch, ProfileCLI) do not otherwise depend on each other.

/// A system call that failed: its name and errno.
public struct SystemCallError: Error, Sendable, Equatable, CustomStringConvertible {
  /// The call, as in its man page: "openat", "read", "linkat".
  public let call: String
  public let errno: Int32

  public init(_ call: String, errno: Int32) {
    self.call = call
    self.errno = errno
  }

  /// "openat: Permission denied".
  public var description: String { "\(call): \(errorText(errno))" }
}

/// Runs `body`, a system call that returns -1 and sets errno on failure, until it returns
/// something else or fails with an error other than EINTR, which is thrown named `call`.
@inlinable @inline(__always)
package func systemCall<Result: FixedWidthInteger>(_ call: StaticString, _ body: () -> Result) throws(SystemCallError) -> Result {
  while true {
    let result = body()
    if result != -1 { return result }
    let code = errno
    if code != EINTR { throw SystemCallError("\(call)", errno: code) }
  }
}

/// strerror's text for an errno value: the one spelling of a system error in every message.
package func errorText(_ code: Int32) -> String {
  String(cString: strerror(code))
}

/// `O_TMPFILE` (glibc defines it as a macro Swift does not import): an unnamed file in a
/// directory, named later with `linkat`.
// swift-format-ignore: AlwaysUseLowerCamelCase
package let O_TMPFILE_: Int32 = 0o20000000 | O_DIRECTORY

// MARK: - Reading and writing

/// One `read` (or, with `offset`, `pread`) into `buffer`: the count read, 0 at end of file.
/// The one read primitive: `readAll` and the stored-profile reader of DeviceMatch both use it.
@inlinable @inline(__always)
package func readSome(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64? = nil) throws(SystemCallError) -> Int {
  guard let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
  if let offset { return try systemCall("pread") { pread(fd, base, buffer.count, off_t(offset)) } }
  return try systemCall("read") { read(fd, base, buffer.count) }
}

/// Reads from `fd` until end of file or `limit` bytes.
package func readAll(_ fd: Int32, limit: Int) throws(SystemCallError) -> [UInt8] {
  var result: [UInt8] = []
  var chunk = 4096
  while result.count < limit {
    let want = min(chunk, limit - result.count)
    // Each read fills a new array's uninitialised capacity: no zero-filling first (appending
    // `repeatElement(0, count:)` went byte by byte, ~3 % of a whole collect).
    var failure: SystemCallError?
    let piece = [UInt8](unsafeUninitializedCapacity: want) { buffer, initialized in
      do throws(SystemCallError) {
        initialized = try readSome(fd, into: UnsafeMutableRawBufferPointer(buffer))
      } catch {
        initialized = 0
        failure = error
      }
    }
    if let failure { throw failure }
    if piece.isEmpty { break }
    if result.isEmpty { result = piece } else { result.append(contentsOf: piece) }
    chunk = min(chunk * 2, 1 << 16)
  }
  return result
}

/// Writes all of `bytes` to `fd`, retrying short writes.
package func writeAll(_ fd: Int32, _ bytes: [UInt8]) throws(SystemCallError) {
  var written = 0
  while written < bytes.count {
    written += try systemCall("write") {
      bytes.withUnsafeBytes { raw in write(fd, raw.baseAddress! + written, raw.count - written) }
    }
  }
}

// MARK: - The atomic writer

/// Writes `bytes` as `name` in the directory `directory` (a descriptor), atomically: readers
/// see the old file or the new one, whole, and a crash leaves one of them. The one writer of
/// the state directory's files and of the commands' `--output` files.
///
/// The new file is an unnamed `O_TMPFILE` in the directory (or, where the file system or a
/// missing /proc rules that out, or `unnamed` is false, an `O_EXCL | O_NOFOLLOW` file with a
/// random name starting with `temporaryPrefix`), given `mode` whatever the umask, handed to
/// `prepare` (e.g. to take a replaced file's owner), written, fsynced and then named:
/// - `replace`: linked under a random temporary name and renamed over `name`;
/// - create-only: linked as `name` itself, so an existing `name` wins and the call fails with
///   EEXIST (`linkat`), leaving it untouched — how concurrent first runs agree on one file.
/// The directory is fsynced last. No predictable name ever exists for another user to plant a
/// link at. Returns the new file's `stat`.
@discardableResult
package func writeAtomically(
  _ bytes: [UInt8], as name: String, in directory: Int32, mode: mode_t, replace: Bool, temporaryPrefix: String,
  unnamed: Bool = true, prepare: (Int32) throws(SystemCallError) -> Void = { _ in }
) throws(SystemCallError) -> stat {
  var (fd, temporary) = try makeTemporary(in: directory, mode: mode, prefix: temporaryPrefix, unnamed: unnamed)
  defer {
    close(fd)
    if let temporary { unlinkat(directory, temporary, 0) }
  }
  _ = try systemCall("fchmod") { fchmod(fd, mode) }  // the umask must not change it
  try prepare(fd)
  try writeAll(fd, bytes)
  _ = try systemCall("fsync") { fsync(fd) }
  var info = stat()
  _ = try systemCall("fstat") { fstat(fd, &info) }
  if replace {
    if temporary == nil { temporary = try linkUnnamed(fd, in: directory, as: nil, prefix: temporaryPrefix) }
    _ = try systemCall("renameat") { renameat(directory, temporary!, directory, name) }
    temporary = nil
  } else if let named = temporary {
    _ = try systemCall("linkat") { linkat(directory, named, directory, name, 0) }
  } else {
    _ = try linkUnnamed(fd, in: directory, as: name, prefix: temporaryPrefix)
  }
  fsync(directory)
  return info
}

/// An unnamed file (`O_TMPFILE`) in the directory, or where that cannot be a new file with a
/// random temporary name (`O_EXCL`); the name is nil for the unnamed file.
private func makeTemporary(in directory: Int32, mode: mode_t, prefix: String, unnamed: Bool) throws(SystemCallError) -> (
  Int32, String?
) {
  // An unnamed file is named through /proc/self/fd (`linkUnnamed`): without /proc, or on file
  // systems without O_TMPFILE (EOPNOTSUPP, EISDIR on old kernels), a random name.
  if unnamed && access("/proc/self/fd", X_OK) == 0 {
    do {
      return (try systemCall("openat") { openat(directory, ".", O_TMPFILE_ | O_WRONLY | O_CLOEXEC, mode) }, nil)
    } catch  where [EOPNOTSUPP, EISDIR, EINVAL, ENOENT].contains(error.errno) {
      // falls back to a named file
    }
  }
  for _ in 0..<16 {
    let name = temporaryName(prefix)
    do {
      return (try systemCall("openat") { openat(directory, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode) }, name)
    } catch  where error.errno == EEXIST {
      continue
    }
  }
  throw SystemCallError("openat", errno: EEXIST)
}

/// Gives the unnamed file `fd` the name `target` (nil: a fresh temporary name, returned).
/// linkat(fd, "", …, AT_EMPTY_PATH) needs CAP_DAC_READ_SEARCH; the /proc link does not.
private func linkUnnamed(_ fd: Int32, in directory: Int32, as target: String?, prefix: String) throws(SystemCallError) -> String {
  let source = "/proc/self/fd/\(fd)"
  for _ in 0..<16 {
    let name = target ?? temporaryName(prefix)
    do {
      _ = try systemCall("linkat") { linkat(AT_FDCWD, source, directory, name, AT_SYMLINK_FOLLOW) }
      return name
    } catch  where error.errno == EEXIST && target == nil {
      continue
    }
  }
  throw SystemCallError("linkat", errno: EEXIST)
}

private func temporaryName(_ prefix: String) -> String {
  prefix + String(UInt64.random(in: 0...UInt64.max), radix: 16)
}

/// Seconds on CLOCK_MONOTONIC: the one clock of the package's deadlines and timeouts (journey
/// and login time limits, PIN lockouts, lock waits, TPM retries), which does not move with the
/// wall clock.
public func monotonicSeconds() -> Double {
  var now = timespec()
  clock_gettime(CLOCK_MONOTONIC, &now)
  return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}
