#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// Every read of /proc, /sys, /etc and the environment goes through here, below `root`.
///
/// Tests point `root` at a fixture tree (`Tests/CollectorsTests/Fixtures/<machine>/`) and pass
/// an explicit environment, so a fixture machine is collected exactly like the real one.
/// Reads are plain `open`/`read` on bytes: collection runs at every login and must stay lean.
public struct SystemSource: Sendable {
  /// The directory that stands for `/`. "/" on a live machine.
  public var root: String
  /// The given environment, or nil for this process's own, read with `getenv` (see `variable`).
  private var givenEnvironment: [String: String]?

  /// The environment the collectors see (`LANG`, `TZ`, `LD_PRELOAD`, …). Collectors look
  /// variables up with `variable(_:)`; reading this property for a source made with
  /// `init(root:)` copies this process's environment into a dictionary.
  public var environment: [String: String] {
    get { givenEnvironment ?? processEnvironment() }
    set { givenEnvironment = newValue }
  }

  /// A source that sees `environment` instead of this process's.
  public init(root: String = "/", environment: [String: String]) {
    self.root = root.count > 1 && root.hasSuffix("/") ? String(root.dropLast()) : root
    self.givenEnvironment = environment
  }

  /// A source that sees this process's environment. Variables are looked up one by one with
  /// `getenv`: no dictionary of the whole environment is built (at every login, that and the
  /// runtime's conformance lookup for `Dictionary<String, String>` cost more than the reads).
  public init(root: String = "/") {
    self.root = root.count > 1 && root.hasSuffix("/") ? String(root.dropLast()) : root
    self.givenEnvironment = nil
  }

  /// The live machine: root "/" and this process's environment.
  public static func live() -> SystemSource {
    SystemSource(root: "/")
  }

  /// The value of an environment variable, or nil when it is not set.
  public func variable(_ name: String) -> String? {
    if let givenEnvironment { return givenEnvironment[name] }
    return getenv(name).map { String(cString: $0) }
  }

  /// True when reading the machine this process runs on (not a fixture tree).
  public var isLive: Bool { root == "/" }

  /// The host path for an absolute path inside the source's root.
  public func path(_ absolute: String) -> String {
    isLive ? absolute : root + absolute
  }

  /// The file's bytes, or nil if it cannot be opened or read. At most `limit` bytes.
  public func readBytes(_ absolute: String, limit: Int = 1 << 20) -> [UInt8]? {
    let fd = open(path(absolute), O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    return try? readAll(fd, limit: limit)
  }

  /// The file as text, or nil if it cannot be read.
  public func readText(_ absolute: String, limit: Int = 1 << 20) -> String? {
    readBytes(absolute, limit: limit).map { String(decoding: $0, as: UTF8.self) }
  }

  /// The file's first line with surrounding white space removed; nil if unreadable or empty.
  /// The shape of sysfs attributes and /etc/hostname.
  public func readLine(_ absolute: String) -> String? {
    guard let bytes = readBytes(absolute, limit: 4096) else { return nil }
    return bytes.withUnsafeBufferPointer { bytes in
      let line = trimRange(bytes, 0..<(firstIndex(of: 0x0A, in: bytes, 0..<bytes.count) ?? bytes.count))
      return line.isEmpty ? nil : decode(bytes, line)
    }
  }

  /// Whether anything exists at the path (following links), by one `stat`.
  public func exists(_ absolute: String) -> Bool {
    var info = stat()
    return stat(path(absolute), &info) == 0
  }

  /// The target of a symbolic link, or nil if it is not one.
  public func readLink(_ absolute: String) -> String? {
    let target = [UInt8](unsafeUninitializedCapacity: 4096) { buffer, count in
      let got = buffer.withMemoryRebound(to: CChar.self) { readlink(path(absolute), $0.baseAddress!, $0.count - 1) }
      count = max(got, 0)
    }
    return target.isEmpty ? nil : String(decoding: target, as: UTF8.self)
  }

  /// Names in a directory, sorted, without "." and ".."; empty if it cannot be read.
  public func listDirectory(_ absolute: String) -> [String] {
    guard let dir = opendir(path(absolute)) else { return [] }
    defer { closedir(dir) }
    var names: [String] = []
    while let entry = readdir(dir) {
      let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
        String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
      }
      if name != "." && name != ".." { names.append(name) }
    }
    return names.sorted()
  }

  /// File metadata without following a final symbolic link.
  public struct FileStatus: Sendable, Equatable {
    public var mode: UInt32
    public var uid: UInt32
    public var gid: UInt32
    public var size: Int64

    package init(mode: UInt32, uid: UInt32, gid: UInt32, size: Int64) {
      self.mode = mode
      self.uid = uid
      self.gid = gid
      self.size = size
    }

    public var isDirectory: Bool { mode & UInt32(S_IFMT) == UInt32(S_IFDIR) }
    public var isRegularFile: Bool { mode & UInt32(S_IFMT) == UInt32(S_IFREG) }
    public var isSymbolicLink: Bool { mode & UInt32(S_IFMT) == UInt32(S_IFLNK) }
    public var permissions: UInt32 { mode & 0o7777 }
  }

  /// `lstat` of a path inside the root; nil if it does not exist or cannot be examined.
  public func status(_ absolute: String, followLinks: Bool = false) -> FileStatus? {
    var info = stat()
    let result = followLinks ? stat(path(absolute), &info) : lstat(path(absolute), &info)
    guard result == 0 else { return nil }
    return FileStatus(mode: info.st_mode, uid: info.st_uid, gid: info.st_gid, size: Int64(info.st_size))
  }

  /// The status of those `names` that exist in `directory`, following links, in the order
  /// given: the directory is opened once and each name is an `fstatat` relative to it, so a
  /// probe for a missing name costs one lookup in one directory, not a whole path walk.
  public func statuses(in directory: String, names: [String]) -> [(name: String, status: FileStatus)] {
    var found: [(name: String, status: FileStatus)] = []
    forEachStatus(in: directory, names: names) { name, status in found.append((name, status)) }
    return found
  }

  /// `statuses(in:names:)` handed to `body` one by one: no array of tuples (which costs collect
  /// a runtime metadata instantiation at every login).
  package func forEachStatus(in directory: String, names: [String], _ body: (String, FileStatus) -> Void) {
    let fd = open(path(directory), O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    guard fd >= 0 else { return }
    defer { close(fd) }
    var info = stat()
    for var name in names {
      let exists = name.withUTF8 { utf8 in
        // Names are short: copied NUL-terminated onto the stack, no allocation per probe.
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: utf8.count + 1) { cName in
          utf8.withMemoryRebound(to: CChar.self) { _ = cName.initialize(fromContentsOf: $0) }
          cName[utf8.count] = 0
          return fstatat(fd, cName.baseAddress!, &info, 0) == 0
        }
      }
      if exists { body(name, FileStatus(mode: info.st_mode, uid: info.st_uid, gid: info.st_gid, size: Int64(info.st_size))) }
    }
  }

  /// The last change of a file's contents (`st_mtim`, seconds since the epoch), following links;
  /// nil if it cannot be examined. Not on collect's path: `fr-profile posture` ages the package
  /// database with it.
  public func modificationTime(_ absolute: String) -> Int64? {
    var info = stat()
    guard stat(path(absolute), &info) == 0 else { return nil }
    return Int64(info.st_mtim.tv_sec)
  }

  /// Total bytes of the file system holding `absolute` (statvfs `f_blocks × f_frsize`).
  public func fileSystemSize(_ absolute: String) -> UInt64? {
    var info = statvfs()
    guard statvfs(path(absolute), &info) == 0 else { return nil }
    return UInt64(info.f_blocks) * UInt64(info.f_frsize)
  }

  /// The kernel's machine field of `uname` (x86_64, aarch64), live machines only.
  public func unameMachine() -> String? {
    guard isLive else { return nil }
    var name = utsname()
    guard uname(&name) == 0 else { return nil }
    return withUnsafeBytes(of: name.machine) { String(decoding: $0.prefix(while: { $0 != 0 }), as: UTF8.self) }
  }
}

/// This process's environment as a dictionary. Scans `environ` as bytes: values such as
/// LS_COLORS run to kilobytes, and this runs at every collect.
package func processEnvironment() -> [String: String] {
  var result: [String: String] = [:]
  var cursor = environ
  while let entry = cursor.pointee {
    let length = strlen(entry)
    entry.withMemoryRebound(to: UInt8.self, capacity: length) { start in
      let bytes = UnsafeBufferPointer(start: start, count: length)
      if let equals = firstIndex(of: UInt8(ascii: "="), in: bytes, 0..<length) {
        result[decode(bytes, 0..<equals)] = decode(bytes, (equals + 1)..<length)
      }
    }
    cursor += 1
  }
  return result
}

/// Removes ASCII white space (space, tab, CR, LF, NUL) at both ends. Inlinable, so each caller
/// gets a copy specialized to its string type: called unspecialized from another module, the
/// generic `some StringProtocol` makes the runtime look its conformances up (a scan of every
/// conformance record of the binary: 0.26 M instructions of collect, measured with callgrind).
@inlinable
package func trimmed(_ text: some StringProtocol) -> String {
  let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" || $0 == "\0" }
  guard let first = text.firstIndex(where: { !isSpace($0) }) else { return "" }
  let last = text.lastIndex(where: { !isSpace($0) })!
  return String(text[first...last])
}

/// A file mode as four octal digits ("0644", "4755"): the one spelling of a mode in every message.
package func octal(_ mode: UInt32) -> String {
  let digits = String(mode, radix: 8)
  return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
}
