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
    let start = result.count
    result.append(contentsOf: repeatElement(0, count: want))
    let got = result.withUnsafeMutableBufferPointer { buffer in
      read(fd, buffer.baseAddress! + start, want)
    }
    if got < 0 {
      let code = errno
      result.removeLast(want)
      if code == EINTR { continue }
      errno = code
      return nil
    }
    result.removeLast(want - got)
    if got == 0 { break }
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
