import SystemCalls

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// The files posture reads in a user's home (~/.config/dconf/user, ~/.config/kscreenlockerrc),
/// read so that the user cannot make `posture --user` — run as root — read anything else, or
/// wait: whatever the user planted there gives an `untrusted` answer with the reason, never a
/// read of something else and never a hang.
///
/// The home directory is opened by its path: /etc/passwd's (root chose it), or the caller's own
/// `HOME`. Every component below it is opened relative to its parent's descriptor with
/// `O_NOFOLLOW` (a symbolic link is refused, not followed: ~/.config linked to /root reads
/// nothing) and checked with `fstat`: it must belong to the user, root or the caller — what
/// someone else owns, they could have swapped. The file itself is opened `O_NONBLOCK` (a FIFO
/// cannot hold the run) and `O_NOCTTY`, then must be a regular file no larger than the reader's
/// bound; one that is not the user's own must have a single link, since a hard link to a file of
/// root's (where the kernel's protected_hardlinks is off) would otherwise pass as root's.
struct HomeFiles {
  let system: SystemSource
  /// The home directory, inside the source's root ("/home/kim").
  let home: String
  /// The user whose home it is.
  let uid: UInt32

  /// What reading a file of the home found.
  enum Read {
    /// The file (or a directory on the way) does not exist.
    case missing
    /// It exists but is not to be trusted or cannot be read: why, naming the path.
    case untrusted(String)
    case bytes([UInt8])
  }

  /// The path of `relative` ([".config", "dconf", "user"]) for messages: "/home/kim/.config/dconf/user".
  func path(_ relative: [String]) -> String {
    ([home == "/" ? "" : home] + relative).joined(separator: "/")
  }

  /// Reads `relative`, below the home, with the checks the type describes; at most `limit` bytes
  /// (`limitText` names the bound in messages: "4 MiB").
  func read(_ relative: [String], limit: Int, limitText: String) -> Read {
    var here = home
    var directory = open(system.path(home), openPath | O_DIRECTORY | O_CLOEXEC)
    guard directory >= 0 else {
      let code = errno
      return code == ENOENT ? .missing : .untrusted("the home directory \(home) cannot be opened (\(errorText(code)))")
    }
    defer { close(directory) }
    for (index, name) in relative.enumerated() {
      let isFile = index == relative.count - 1
      here = path(Array(relative[...index]))
      let flags = isFile ? O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC : openPath | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC
      let fd: Int32
      do throws(SystemCallError) {
        fd = try systemCall("openat") { openat(directory, name, flags) }
      } catch {
        switch error.errno {
        case ENOENT: return .missing
        case ELOOP, ENOTDIR:
          // O_PATH | O_NOFOLLOW opens a link itself, which O_DIRECTORY then refuses (ENOTDIR).
          var info = stat()
          if fstatat(directory, name, &info, AT_SYMLINK_NOFOLLOW) == 0, info.st_mode & S_IFMT == S_IFLNK {
            return .untrusted("\(here) is a symbolic link, not followed")
          }
          return .untrusted("\(here) is not a directory")
        default: return .untrusted("\(here) cannot be opened (\(errorText(error.errno)))")
        }
      }
      close(directory)
      directory = fd
      var info = stat()
      do throws(SystemCallError) { _ = try systemCall("fstat") { fstat(fd, &info) } } catch {
        return .untrusted("\(here) cannot be examined (\(errorText(error.errno)))")
      }
      guard info.st_uid == uid || info.st_uid == 0 || info.st_uid == geteuid() else {
        return .untrusted("\(here) belongs to uid \(info.st_uid), not to uid \(uid) or root")
      }
      guard isFile else { continue }
      guard info.st_mode & S_IFMT == S_IFREG else { return .untrusted("\(here) is \(Self.kind(info.st_mode)), not a regular file") }
      guard info.st_uid == uid || info.st_nlink == 1 else {
        return .untrusted(
          "\(here) is uid \(info.st_uid)'s, not uid \(uid)'s, and has \(info.st_nlink) links (a hard link to a file elsewhere)")
      }
      let tooLarge = Read.untrusted("\(here) is larger than \(limitText)")
      guard info.st_size <= limit else { return tooLarge }
      do throws(SystemCallError) {
        let bytes = try readAll(fd, limit: limit + 1)
        return bytes.count <= limit ? .bytes(bytes) : tooLarge
      } catch {
        return .untrusted("\(here) cannot be read (\(errorText(error.errno)))")
      }
    }
    return .missing
  }

  /// What a file that is not regular is, in words.
  static func kind(_ mode: mode_t) -> String {
    switch mode & S_IFMT {
    case S_IFIFO: "a FIFO"
    case S_IFSOCK: "a socket"
    case S_IFCHR: "a character device"
    case S_IFBLK: "a block device"
    case S_IFDIR: "a directory"
    default: "of no known type"
    }
  }
}

/// `O_PATH` (Glibc's module does not export it): a descriptor that only names a directory on
/// the way, which needs search permission on it, not read.
private let openPath: Int32 = 0o10000000
