#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// Reads from `fd` until end of file or `limit` bytes, retrying interrupted reads. Returns nil
/// on a read error, with `errno` left as the failing `read` set it. The one read loop of the
/// package: SystemSource, the key store and the commands' input files all use it.
package func readAll(_ fd: Int32, limit: Int) -> [UInt8]? {
  var result: [UInt8] = []
  var chunk = 4096
  while result.count < limit {
    let want = min(chunk, limit - result.count)
    // Each read fills a new array's uninitialised capacity: no zero-filling first (appending
    // `repeatElement(0, count:)` went byte by byte, ~3 % of a whole collect).
    var failure: Int32 = 0
    let piece = [UInt8](unsafeUninitializedCapacity: want) { buffer, initialized in
      initialized = 0
      while true {
        let got = read(fd, buffer.baseAddress!, want)
        if got >= 0 {
          initialized = got
          return
        }
        if errno != EINTR {
          failure = errno
          return
        }
      }
    }
    if failure != 0 {
      errno = failure
      return nil
    }
    if piece.isEmpty { break }
    if result.isEmpty { result = piece } else { result.append(contentsOf: piece) }
    chunk = min(chunk * 2, 1 << 16)
  }
  return result
}

/// Writes all of `bytes` to `fd`, retrying interrupted and short writes. False on an error,
/// with `errno` left as the failing `write` set it.
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
