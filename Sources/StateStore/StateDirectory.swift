import SystemCalls

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// A state directory held open by a descriptor, so that nothing done inside it can be
/// redirected by someone who renames or swaps a directory on the way to it.
///
/// `open` walks the path from `/` one component at a time with `openat(…, O_NOFOLLOW)`,
/// resolving symbolic links of ancestors itself, and checks every directory it passes
/// (OpenSSH's `safe_path` rule for `authorized_keys`): each is owned by root or the owner, and
/// writable by no one else — unless it is sticky (`/tmp`), where others cannot rename or remove
/// the entry we pass through, provided that entry is owned by root or the owner. The state
/// directory itself must be a real directory (not a link), owned by the owner, mode `0700` or
/// stricter (`go-rwx`). Every file operation afterwards is relative to that descriptor
/// (`openat`, `fstatat`, `linkat`, `renameat`, `unlinkat`), and every opened file is checked
/// with `fstat` after opening (`FileRequirement`).
///
/// Changes are serialised with `lock()` (an exclusive `flock` on `.lock` in the directory).
/// Files are replaced atomically (`write(_:_:mode:replace:)`): an unnamed `O_TMPFILE`
/// linked in when the file system supports it, else an `O_EXCL` file with a random name;
/// data and directory are fsynced. Temporaries a crash left behind carry the prefix
/// `temporaryPrefix` and are removed by `removeStaleTemporaries`.
///
/// Shared by our targets (the device key store, the bound-key store); not API.
package final class StateDirectory {
  /// The absolute path the directory was opened at (for messages only; never reopened).
  package let path: String
  /// The descriptor (`O_RDONLY | O_DIRECTORY`), owned by this object.
  package let descriptor: Int32
  /// The uid that must own the directory and the files in it.
  package let owner: uid_t
  /// Whether `write` may use unnamed `O_TMPFILE` files; false forces the `O_EXCL` random-name
  /// path that file systems without `O_TMPFILE` (or a system without /proc) take — for tests.
  package var allowsUnnamedFiles = true

  /// Name prefix of temporary files; `removeStaleTemporaries` removes old ones.
  package static let temporaryPrefix = ".tmp-"
  /// Name of the lock file `lock()` takes.
  package static let lockName = ".lock"

  private init(path: String, descriptor: Int32, owner: uid_t) {
    self.path = path
    self.descriptor = descriptor
    self.owner = owner
  }

  deinit { close(descriptor) }

  // MARK: - Opening

  /// Opens (with `create`, first makes, mode 0700) the directory at `path` with the checks
  /// described on the type. A relative `path` is resolved against the current directory.
  /// Without `create`, a missing directory is `StateDirectoryError.missing`.
  ///
  /// With `shared`, the directory is one the caller writes an output file into (`--output`,
  /// `attest challenge --state`), checked as an ancestor is instead of as a state directory: it
  /// may be root's or the owner's, and writable by others only when sticky (`/tmp`), so no one
  /// else can rename, replace or remove what is written there. `/` itself is allowed.
  package static func open(
    _ path: String, create: Bool, owner: uid_t = geteuid(), shared: Bool = false
  ) throws(StateDirectoryError) -> StateDirectory {
    let absolute = absolutePath(path)
    var pending = components(absolute).reversed() as [String]
    guard !pending.isEmpty || shared else { throw .notSecure(path: absolute, reason: .rootDirectory) }
    // The chain of open ancestors, their descriptors and paths at the same index; `..` pops
    // it. Two arrays of types collect instantiates anyway, not an array of a struct or tuple:
    // a new element type costs a collect one more runtime metadata instantiation.
    var chain = AncestorChain()
    defer { chain.closeAll() }
    let rootFD = Glibc.open("/", O_PATH_ | O_DIRECTORY | O_CLOEXEC)
    guard rootFD >= 0 else { throw .cannotOpen(path: "/", errno: errno) }
    chain.push(fd: rootFD, path: "")
    try checkAncestor(rootFD, path: "/", owner: owner)
    var hops = 0
    var created = false

    while let name = pending.popLast() {
      let parent = chain.last
      if name == "." { continue }
      if name == ".." {
        if chain.count > 1 { chain.closeLast() }
        continue
      }
      let here = parent.path + "/" + name
      let isLast = pending.isEmpty
      let flags = (isLast ? O_RDONLY : O_PATH_) | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC
      var fd = openat(parent.fd, name, flags)
      if fd < 0 && errno == ENOENT && create {
        if mkdirat(parent.fd, name, 0o700) != 0 && errno != EEXIST {
          throw .cannotCreate(path: here, errno: errno)
        }
        created = isLast
        fd = openat(parent.fd, name, flags)
      }
      if fd < 0 {
        let code = errno
        if code == ENOENT { throw .missing(path: here) }
        if code == ELOOP || code == ENOTDIR {
          // ELOOP: a symbolic link (O_NOFOLLOW). Ancestors' links are followed by hand,
          // relative to the directory already checked; the state directory must not be one.
          var info = stat()
          guard fstatat(parent.fd, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else { throw .cannotOpen(path: here, errno: errno) }
          guard info.st_mode & S_IFMT == S_IFLNK, !isLast || shared else { throw .notADirectory(path: here) }
          hops += 1
          guard hops <= 40 else { throw .cannotOpen(path: here, errno: ELOOP) }
          guard let target = readLink(parent.fd, name), !target.isEmpty else { throw .cannotOpen(path: here, errno: errno) }
          if target.hasPrefix("/") {
            while chain.count > 1 { chain.closeLast() }
          }
          pending.append(contentsOf: components(target).reversed())
          continue
        }
        throw .cannotOpen(path: here, errno: code)
      }
      var info = stat()
      guard fstat(fd, &info) == 0 else {
        let code = errno
        close(fd)
        throw .cannotOpen(path: here, errno: code)
      }
      // The entry we passed through must be safe in its parent (the sticky-directory rule).
      do throws(StateDirectoryError) {
        try checkEntry(info, in: parent.fd, parentPath: parent.path.isEmpty ? "/" : parent.path, owner: owner)
        if !isLast || shared { try checkAncestor(fd, path: here, owner: owner, info: info) }
      } catch {
        close(fd)
        throw error
      }
      if isLast && shared { return StateDirectory(path: absolute, descriptor: fd, owner: owner) }
      if isLast {
        guard info.st_uid == owner else {
          close(fd)
          throw .foreignOwner(path: absolute, owner: info.st_uid)
        }
        if created { fchmod(fd, 0o700) }  // the umask must not have narrowed or widened it
        let mode = UInt32(info.st_mode) & 0o7777
        guard created || mode & 0o077 == 0 else {
          close(fd)
          throw .insecureMode(path: absolute, mode: mode)
        }
        return StateDirectory(path: absolute, descriptor: fd, owner: owner)
      }
      chain.push(fd: fd, path: here)
    }
    // The path ended in "." or "..": for an output directory, where the walk stopped (checked
    // as an ancestor on the way in).
    if shared {
      let last = chain.last
      let fd = openat(last.fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
      guard fd >= 0 else { throw .cannotOpen(path: last.path.isEmpty ? "/" : last.path, errno: errno) }
      return StateDirectory(path: last.path.isEmpty ? "/" : last.path, descriptor: fd, owner: owner)
    }
    throw .notADirectory(path: absolute)
  }

  /// `path` as an absolute path: relative paths are resolved against the current directory;
  /// repeated and trailing slashes are dropped (`.` and `..` are kept: they are resolved
  /// while walking, relative to what was actually opened). Byte-level: it runs on every
  /// `collect`, where `String.split` would first load the Unicode tables.
  package static func absolutePath(_ path: String) -> String {
    var full = Array(path.utf8)
    if full.first != UInt8(ascii: "/") {
      var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
      var cwd: [UInt8] = []
      if getcwd(&buffer, buffer.count) != nil { cwd = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) } }
      full = cwd + [UInt8(ascii: "/")] + full
    }
    var out: [UInt8] = []
    out.reserveCapacity(full.count)
    for byte in full where !(byte == UInt8(ascii: "/") && out.last == UInt8(ascii: "/")) { out.append(byte) }
    if out.count > 1 && out.last == UInt8(ascii: "/") { out.removeLast() }
    return out.isEmpty ? "/" : String(decoding: out, as: UTF8.self)
  }

  /// The non-empty names between slashes (a loop, not `split`: an `[ArraySlice<UInt8>]` costs
  /// collect a runtime metadata instantiation).
  private static func components(_ path: String) -> [String] {
    var names: [String] = []
    var name: [UInt8] = []
    for byte in path.utf8 {
      if byte == UInt8(ascii: "/") {
        if !name.isEmpty { names.append(String(decoding: name, as: UTF8.self)) }
        name.removeAll(keepingCapacity: true)
      } else {
        name.append(byte)
      }
    }
    if !name.isEmpty { names.append(String(decoding: name, as: UTF8.self)) }
    return names
  }

  private static func readLink(_ directory: Int32, _ name: String) -> String? {
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    let count = readlinkat(directory, name, &buffer, buffer.count - 1)
    guard count > 0 else { return nil }
    return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
  }

  /// An ancestor directory may be changed only by root and the owner — or, if others may
  /// write it, it must be sticky (checked for the next entry by `checkEntry`).
  private static func checkAncestor(_ fd: Int32, path: String, owner: uid_t, info given: stat? = nil) throws(StateDirectoryError) {
    var info = given ?? stat()
    if given == nil, fstat(fd, &info) != 0 { throw .cannotOpen(path: path, errno: errno) }
    let mode = UInt32(info.st_mode) & 0o7777
    guard info.st_uid == 0 || info.st_uid == owner else {
      throw .notSecure(path: path, reason: .ancestorOwner(uid: info.st_uid))
    }
    if mode & 0o022 != 0 && mode & UInt32(S_ISVTX) == 0 {
      throw .notSecure(path: path, reason: .ancestorWritable(mode: mode))
    }
  }

  /// An entry of a sticky, shared directory must belong to root or the owner (else its owner
  /// could rename it away and put another in its place).
  private static func checkEntry(_ info: stat, in parent: Int32, parentPath: String, owner: uid_t) throws(StateDirectoryError) {
    var parentInfo = stat()
    guard fstat(parent, &parentInfo) == 0 else { throw .cannotOpen(path: parentPath, errno: errno) }
    let mode = UInt32(parentInfo.st_mode) & 0o7777
    if mode & 0o022 != 0, info.st_uid != 0, info.st_uid != owner {
      throw .notSecure(path: parentPath, reason: .ancestorWritable(mode: mode))
    }
  }

  // MARK: - Files

  /// Opens `name` for reading (`O_NOFOLLOW | O_NONBLOCK`: a link or a FIFO cannot redirect or
  /// hang the read), checks it with `fstat` against `requirement` and reads it whole. Nil when
  /// it does not exist.
  package func read(_ name: String, requirement: FileRequirement) throws(StateDirectoryError) -> StateFile? {
    var bytes: [UInt8] = []
    var identity = FileIdentity(device: 0, inode: 0, size: 0, modifiedSeconds: 0, modifiedNanoseconds: 0)
    guard try read(name, requirement: requirement, bytes: &bytes, identity: &identity) else { return nil }
    return StateFile(bytes: bytes, identity: identity)
  }

  /// `read(_:requirement:)`'s bytes alone. For collect's path: there, destroying a `StateFile?`
  /// costs a runtime metadata instantiation (~35 k instructions; bench/README.md).
  package func readBytes(_ name: String, requirement: FileRequirement) throws(StateDirectoryError) -> [UInt8]? {
    var bytes: [UInt8] = []
    var identity = FileIdentity(device: 0, inode: 0, size: 0, modifiedSeconds: 0, modifiedNanoseconds: 0)
    guard try read(name, requirement: requirement, bytes: &bytes, identity: &identity) else { return nil }
    return bytes
  }

  /// The one reading of a state file: false when it does not exist.
  private func read(
    _ name: String, requirement: FileRequirement, bytes: inout [UInt8], identity: inout FileIdentity
  ) throws(StateDirectoryError) -> Bool {
    let fd: Int32
    do throws(SystemCallError) {
      fd = try systemCall("openat") { openat(descriptor, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC) }
    } catch {
      if error.errno == ENOENT { return false }
      if error.errno == ELOOP { throw .notARegularFile(path: filePath(name)) }
      throw .unreadable(path: filePath(name), errno: error.errno)
    }
    defer { close(fd) }
    var info = stat()
    do throws(SystemCallError) { _ = try systemCall("fstat") { fstat(fd, &info) } } catch {
      throw .unreadable(path: filePath(name), errno: error.errno)
    }
    try check(info, name: name, requirement: requirement)
    let contents: [UInt8]
    do throws(SystemCallError) { contents = try readAll(fd, limit: requirement.maximumSize + 1) } catch {
      throw .unreadable(path: filePath(name), errno: error.errno)
    }
    guard contents.count <= requirement.maximumSize else {
      throw .tooLarge(path: filePath(name), limit: requirement.maximumSize)
    }
    bytes = contents
    identity = FileIdentity(info)
    return true
  }

  /// The identity (`fstatat`, no link followed) of `name` after the checks of `requirement`
  /// (the size bound included); nil when it does not exist. Reads nothing.
  package func identity(of name: String, requirement: FileRequirement) throws(StateDirectoryError) -> FileIdentity? {
    var info = stat()
    guard fstatat(descriptor, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else {
      let code = errno
      if code == ENOENT { return nil }
      throw .unreadable(path: filePath(name), errno: code)
    }
    try check(info, name: name, requirement: requirement)
    guard Int(info.st_size) <= requirement.maximumSize else {
      throw .tooLarge(path: filePath(name), limit: requirement.maximumSize)
    }
    return FileIdentity(info)
  }

  private func check(_ info: stat, name: String, requirement: FileRequirement) throws(StateDirectoryError) {
    guard info.st_mode & S_IFMT == S_IFREG else { throw .notARegularFile(path: filePath(name)) }
    guard info.st_uid == owner else { throw .fileForeignOwner(path: filePath(name), owner: info.st_uid) }
    let mode = UInt32(info.st_mode) & 0o7777
    guard mode & requirement.forbiddenMode == 0 else { throw .fileInsecureMode(path: filePath(name), mode: mode) }
  }

  /// Writes `bytes` as `name` with `mode`, atomically (`writeAtomically`, the one atomic
  /// writer): readers see the old file or the new one, whole. With `replace` false an existing
  /// `name` wins: the write throws `StateDirectoryError.exists` and leaves it alone (how
  /// concurrent first runs agree on one key). Returns the new file's identity.
  @discardableResult
  package func write(_ name: String, _ bytes: [UInt8], mode: mode_t, replace: Bool) throws(StateDirectoryError) -> FileIdentity {
    do {
      return FileIdentity(
        try writeAtomically(
          bytes, as: name, in: descriptor, mode: mode, replace: replace, temporaryPrefix: Self.temporaryPrefix,
          unnamed: allowsUnnamedFiles))
    } catch {
      if error.errno == EEXIST && !replace && error.call == "linkat" { throw .exists(path: filePath(name)) }
      throw .cannotWrite(path: filePath(name), errno: error.errno)
    }
  }

  /// Renames `from` to `to` inside the directory (replacing `to`), then fsyncs the directory.
  package func rename(_ from: String, to: String) throws(StateDirectoryError) {
    do throws(SystemCallError) { _ = try systemCall("renameat") { renameat(descriptor, from, descriptor, to) } } catch {
      throw .cannotWrite(path: filePath(to), errno: error.errno)
    }
    syncDirectory()
  }

  /// Adds the name `to` for the file `from` (no link followed); `to` must not exist
  /// (`StateDirectoryError.exists`). How a backup is made without ever overwriting one.
  package func link(_ from: String, to: String) throws(StateDirectoryError) {
    do throws(SystemCallError) { _ = try systemCall("linkat") { linkat(descriptor, from, descriptor, to, 0) } } catch {
      throw error.errno == EEXIST ? .exists(path: filePath(to)) : .cannotWrite(path: filePath(to), errno: error.errno)
    }
    syncDirectory()
  }

  /// Removes the file `name`; a missing file is not an error.
  package func remove(_ name: String) throws(StateDirectoryError) {
    do throws(SystemCallError) { _ = try systemCall("unlinkat") { unlinkat(descriptor, name, 0) } } catch  where error.errno != ENOENT {
      throw .cannotWrite(path: filePath(name), errno: error.errno)
    } catch {}
  }

  /// The names in the directory (without `.` and `..`), sorted.
  package func names() throws(StateDirectoryError) -> [String] {
    let copy = openat(descriptor, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    guard copy >= 0, let stream = fdopendir(copy) else { throw .unreadable(path: path, errno: errno) }
    defer { closedir(stream) }
    var result: [String] = []
    while let entry = readdir(stream) {
      let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
        String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
      }
      if name != "." && name != ".." { result.append(name) }
    }
    return result.sorted()
  }

  /// Removes temporaries (`temporaryPrefix`, or one of `prefixes`) a crash left: regular
  /// files owned by the owner, last modified more than `age` seconds ago (younger ones may be another run's work in
  /// progress). Returns the names removed.
  @discardableResult
  package func removeStaleTemporaries(olderThan age: Int = 60, alsoPrefixed prefixes: [String] = []) -> [String] {
    guard let names = try? names() else { return [] }
    var removed: [String] = []
    let now = time(nil)
    for name in names where name.hasPrefix(Self.temporaryPrefix) || prefixes.contains(where: { name.hasPrefix($0) }) {
      var info = stat()
      guard fstatat(descriptor, name, &info, AT_SYMLINK_NOFOLLOW) == 0, info.st_mode & S_IFMT == S_IFREG,
        info.st_uid == owner, Int(now) - Int(info.st_mtim.tv_sec) > age
      else { continue }
      if unlinkat(descriptor, name, 0) == 0 { removed.append(name) }
    }
    if !removed.isEmpty { syncDirectory() }
    return removed
  }

  /// Takes an exclusive `flock` on `.lock` (created 0600), held until the returned lock is
  /// released or dropped: changes by concurrent processes happen one after the other. The
  /// lock goes with the process, so a killed holder never blocks the next run.
  package func lock() throws(StateDirectoryError) -> StateLock {
    // Without a deadline the wait has no end, so a lock always comes back.
    try lock(until: nil)!
  }

  /// The directory's exclusive lock, waited for until `deadline` (CLOCK_MONOTONIC seconds; nil
  /// waits as long as it takes); nil when the deadline passed first. The wait polls every 50 ms:
  /// flock has no timeout, and an alarm signal would reach the whole process.
  package func lock(until deadline: Double?) throws(StateDirectoryError) -> StateLock? {
    let path = filePath(Self.lockName)
    let fd: Int32
    do throws(SystemCallError) {
      fd = try systemCall("openat") { openat(descriptor, Self.lockName, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0o600) }
    } catch {
      throw error.errno == ELOOP ? .notARegularFile(path: path) : .cannotLock(path: path, errno: error.errno)
    }
    let lock = StateLock(fd)
    var info = stat()
    do throws(SystemCallError) { _ = try systemCall("fstat") { fstat(fd, &info) } } catch {
      throw .cannotLock(path: path, errno: error.errno)
    }
    try check(info, name: Self.lockName, requirement: FileRequirement(forbiddenMode: 0o022, maximumSize: 0))
    guard let deadline else {
      do throws(SystemCallError) { _ = try systemCall("flock") { flock(fd, LOCK_EX) } } catch {
        throw .cannotLock(path: path, errno: error.errno)
      }
      return lock
    }
    while true {
      if flock(fd, LOCK_EX | LOCK_NB) == 0 { return lock }
      guard errno == EWOULDBLOCK || errno == EINTR else { throw .cannotLock(path: path, errno: errno) }
      if monotonicSeconds() >= deadline { return nil }
      var pause = timespec(tv_sec: 0, tv_nsec: 50_000_000)
      nanosleep(&pause, nil)
    }
  }

  /// fsync of the directory: names made or removed survive a crash.
  package func syncDirectory() {
    fsync(descriptor)
  }

  /// `<path>/<name>`, for messages.
  package func filePath(_ name: String) -> String {
    path == "/" ? "/" + name : path + "/" + name
  }
}

/// An exclusive lock on a state directory (`StateDirectory.lock()`); released when dropped.
package final class StateLock {
  private let descriptor: Int32
  init(_ descriptor: Int32) { self.descriptor = descriptor }
  deinit { close(descriptor) }  // closing the last descriptor releases the flock
}

/// What a file in a state directory must be, besides a regular file owned by the owner.
package struct FileRequirement: Sendable, Equatable {
  /// Mode bits that must be clear: 0o077 for secrets (mode 0600 or stricter), 0o022 for public
  /// files that only the owner may change.
  package var forbiddenMode: UInt32
  /// The largest size accepted, in bytes.
  package var maximumSize: Int

  package init(forbiddenMode: UInt32, maximumSize: Int) {
    self.forbiddenMode = forbiddenMode
    self.maximumSize = maximumSize
  }

  /// A secret: readable and writable by the owner only, at most `maximumSize` bytes.
  package static func secret(maximumSize: Int) -> FileRequirement { .init(forbiddenMode: 0o077, maximumSize: maximumSize) }
  /// A public file only the owner may change, at most `maximumSize` bytes.
  package static func ownerWritable(maximumSize: Int) -> FileRequirement { .init(forbiddenMode: 0o022, maximumSize: maximumSize) }
}

/// A file's contents and the identity it had when read.
package struct StateFile: Sendable, Equatable {
  package var bytes: [UInt8]
  package var identity: FileIdentity
}

/// What identifies one version of a file: device, inode, size and modification time. A
/// rewrite, a replacement or a truncation changes it.
package struct FileIdentity: Sendable, Equatable, Hashable {
  package var device: UInt64
  package var inode: UInt64
  package var size: Int64
  package var modifiedSeconds: Int64
  package var modifiedNanoseconds: Int64

  package init(device: UInt64, inode: UInt64, size: Int64, modifiedSeconds: Int64, modifiedNanoseconds: Int64) {
    self.device = device
    self.inode = inode
    self.size = size
    self.modifiedSeconds = modifiedSeconds
    self.modifiedNanoseconds = modifiedNanoseconds
  }

  init(_ info: stat) {
    self.init(
      device: UInt64(info.st_dev), inode: UInt64(info.st_ino), size: Int64(info.st_size),
      modifiedSeconds: Int64(info.st_mtim.tv_sec), modifiedNanoseconds: Int64(info.st_mtim.tv_nsec))
  }

  /// Appends "dev:ino:size:sec.nsec", the form kept in caches. Digits are written by hand:
  /// string interpolation of five integers cost the identifier cache check (every collect)
  /// ~20 k instructions.
  package func append(to bytes: inout [UInt8]) {
    appendDecimal(device, to: &bytes)
    bytes.append(UInt8(ascii: ":"))
    appendDecimal(inode, to: &bytes)
    bytes.append(UInt8(ascii: ":"))
    appendDecimal(size, to: &bytes)
    bytes.append(UInt8(ascii: ":"))
    appendDecimal(modifiedSeconds, to: &bytes)
    bytes.append(UInt8(ascii: "."))
    appendDecimal(modifiedNanoseconds, to: &bytes)
  }
}

/// `value`'s decimal digits, as `"\(value)"` writes them.
func appendDecimal(_ value: Int64, to bytes: inout [UInt8]) {
  if value < 0 { bytes.append(UInt8(ascii: "-")) }
  appendDecimal(value.magnitude, to: &bytes)
}

func appendDecimal(_ value: UInt64, to bytes: inout [UInt8]) {
  // Least significant digit first, then swapped in place (not `bytes[start...].reverse()`: the
  // slice costs a runtime metadata instantiation on collect's path).
  var low = bytes.count
  var rest = value
  repeat {
    bytes.append(UInt8(ascii: "0") + UInt8(rest % 10))
    rest /= 10
  } while rest > 0
  var high = bytes.count - 1
  while low < high {
    bytes.swapAt(low, high)
    low += 1
    high -= 1
  }
}

/// Why a state directory or a file in it cannot be used. Domain facts only (paths, owners,
/// modes, errno); what to do about them is the command line's business.
///
/// A struct, not an enum, so that a release can add a failure without breaking an embedder's
/// `switch`: new codes may be added in any release. Match on ``code`` (`error.code ==
/// .missing`, or `switch error.code` with a `default:`); the values the failure carries are
/// the optional properties (`nil` where a code has none), ``description`` is the message.
public struct StateDirectoryError: Error, Sendable, Hashable, CustomStringConvertible {
  /// Why a directory on the way is not safe.
  public enum Unsafe: Sendable, Hashable {
    /// Owned by someone other than root and the owner.
    case ancestorOwner(uid: UInt32)
    /// Writable by others (group or world) and not sticky — or sticky, with the entry we pass
    /// through owned by someone else.
    case ancestorWritable(mode: UInt32)
    /// `/` itself was given as the state directory.
    case rootDirectory
  }

  /// What kind of failure it is. New codes may be added in any release: switch with a
  /// `default:`.
  public struct Code: Hashable, Sendable, CustomStringConvertible {
    private enum Backing: Hashable, Sendable {
      case missing, notSecure, notADirectory, foreignOwner, insecureMode, cannotCreate, cannotOpen, notARegularFile
      case fileForeignOwner, fileInsecureMode, tooLarge, unreadable, cannotWrite, exists, cannotLock
    }

    private var backing: Backing
    private init(_ backing: Backing) { self.backing = backing }

    /// The directory does not exist (and was not to be created).
    public static let missing = Code(.missing)
    /// A directory on the way (an ancestor), or `/` itself, is not safe (``unsafe`` says why).
    public static let notSecure = Code(.notSecure)
    /// The path (or a file expected to be regular) is something else: a link, a file, a FIFO.
    public static let notADirectory = Code(.notADirectory)
    /// The directory belongs to someone else (``owner``).
    public static let foreignOwner = Code(.foreignOwner)
    /// Others may read or write the directory (``mode``).
    public static let insecureMode = Code(.insecureMode)
    /// The directory cannot be created (``errno``).
    public static let cannotCreate = Code(.cannotCreate)
    /// The directory, or one on the way, cannot be opened (``errno``).
    public static let cannotOpen = Code(.cannotOpen)
    /// A file in the directory is not a regular file (a link, a FIFO, a device, a directory).
    public static let notARegularFile = Code(.notARegularFile)
    /// A file in the directory belongs to someone else (``owner``).
    public static let fileForeignOwner = Code(.fileForeignOwner)
    /// Others may read or write a file in the directory (``mode``).
    public static let fileInsecureMode = Code(.fileInsecureMode)
    /// A file is larger than its bound (``limit``).
    public static let tooLarge = Code(.tooLarge)
    /// A file cannot be read (``errno``).
    public static let unreadable = Code(.unreadable)
    /// A file cannot be written (``errno``).
    public static let cannotWrite = Code(.cannotWrite)
    /// A file that must not be replaced already exists.
    public static let exists = Code(.exists)
    /// The directory's lock cannot be taken (``errno``).
    public static let cannotLock = Code(.cannotLock)

    public var description: String { String(describing: backing) }
  }

  /// What kind of failure it is.
  public let code: Code
  /// The directory or file concerned.
  public let path: String
  /// The uid that owns `path` (``Code/foreignOwner``, ``Code/fileForeignOwner``).
  public let owner: UInt32?
  /// The mode of `path` (``Code/insecureMode``, ``Code/fileInsecureMode``).
  public let mode: UInt32?
  /// The errno of the failed call (``Code/cannotCreate``, ``Code/cannotOpen``,
  /// ``Code/unreadable``, ``Code/cannotWrite``, ``Code/cannotLock``).
  public let errno: Int32?
  /// The size bound a file exceeds (``Code/tooLarge``).
  public let limit: Int?
  /// Why the directory `path` on the way is not safe (``Code/notSecure``).
  public let unsafe: Unsafe?
  /// One line saying what is wrong.
  public let description: String

  private init(
    _ code: Code, path: String, owner: UInt32? = nil, mode: UInt32? = nil, errno: Int32? = nil, limit: Int? = nil,
    unsafe: Unsafe? = nil, _ description: String
  ) {
    self.code = code
    self.path = path
    self.owner = owner
    self.mode = mode
    self.errno = errno
    self.limit = limit
    self.unsafe = unsafe
    self.description = description
  }

  /// The directory does not exist (and was not to be created).
  public static func missing(path: String) -> Self { Self(.missing, path: path, "\(path) does not exist") }

  /// A directory on the way (an ancestor), or `/` itself, is not safe.
  public static func notSecure(path: String, reason: Unsafe) -> Self {
    let why =
      switch reason {
      case .ancestorOwner(let uid): "the directory \(path) on the way belongs to uid \(uid), neither root nor the owner"
      case .ancestorWritable(let mode): "others may write the directory \(path) on the way (mode \(octal(mode)))"
      case .rootDirectory: "\(path) is the root directory"
      }
    return Self(.notSecure, path: path, unsafe: reason, why)
  }

  /// The path (or a file expected to be regular) is something else: a link, a file, a FIFO.
  public static func notADirectory(path: String) -> Self {
    Self(.notADirectory, path: path, "\(path) is not a directory (or is a symbolic link)")
  }

  public static func foreignOwner(path: String, owner: UInt32) -> Self {
    Self(.foreignOwner, path: path, owner: owner, "\(path) belongs to uid \(owner)")
  }

  public static func insecureMode(path: String, mode: UInt32) -> Self {
    Self(.insecureMode, path: path, mode: mode, "\(path) has mode \(octal(mode))")
  }

  public static func cannotCreate(path: String, errno: Int32) -> Self {
    Self(.cannotCreate, path: path, errno: errno, "cannot create \(path): \(errorText(errno))")
  }

  public static func cannotOpen(path: String, errno: Int32) -> Self {
    Self(.cannotOpen, path: path, errno: errno, "cannot open \(path): \(errorText(errno))")
  }

  /// A file in the directory is not a regular file (a link, a FIFO, a device, a directory).
  public static func notARegularFile(path: String) -> Self {
    Self(.notARegularFile, path: path, "\(path) is not a regular file")
  }

  public static func fileForeignOwner(path: String, owner: UInt32) -> Self {
    Self(.fileForeignOwner, path: path, owner: owner, "\(path) belongs to uid \(owner)")
  }

  public static func fileInsecureMode(path: String, mode: UInt32) -> Self {
    Self(.fileInsecureMode, path: path, mode: mode, "\(path) has mode \(octal(mode))")
  }

  public static func tooLarge(path: String, limit: Int) -> Self {
    Self(.tooLarge, path: path, limit: limit, "\(path) is larger than \(limit) bytes")
  }

  public static func unreadable(path: String, errno: Int32) -> Self {
    Self(.unreadable, path: path, errno: errno, "cannot read \(path): \(errorText(errno))")
  }

  public static func cannotWrite(path: String, errno: Int32) -> Self {
    Self(.cannotWrite, path: path, errno: errno, "cannot write \(path): \(errorText(errno))")
  }

  /// A file that must not be replaced already exists.
  public static func exists(path: String) -> Self { Self(.exists, path: path, "\(path) exists") }

  public static func cannotLock(path: String, errno: Int32) -> Self {
    Self(.cannotLock, path: path, errno: errno, "cannot lock \(path): \(errorText(errno))")
  }
}

// Linux values (x86_64 and aarch64 agree), which Glibc's module does not import as constants.
// swift-format-ignore: AlwaysUseLowerCamelCase
let O_PATH_: Int32 = 0o10000000

/// An open ancestor of a state directory being walked: its descriptor and its path.
private struct OpenAncestor {
  var fd: Int32
  var path: String
}

/// The open ancestors of a state directory being walked, root first.
private struct AncestorChain {
  private var fds: [Int] = []
  private var paths: [String] = []

  var count: Int { fds.count }
  /// The innermost ancestor; the chain always holds at least the root.
  var last: OpenAncestor { OpenAncestor(fd: Int32(truncatingIfNeeded: fds[fds.count - 1]), path: paths[paths.count - 1]) }

  mutating func push(fd: Int32, path: String) {
    fds.append(Int(fd))
    paths.append(path)
  }

  /// Closes and drops the innermost ancestor.
  mutating func closeLast() {
    close(Int32(truncatingIfNeeded: fds.removeLast()))
    paths.removeLast()
  }

  func closeAll() {
    for fd in fds { close(Int32(truncatingIfNeeded: fd)) }
  }
}
