import DeviceMatch
import ProfileJSON
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// The streaming reader: one size limit for every layout, entries placed by line and column.
@Suite(.timeLimit(.minutes(10))) struct StoredProfileReaderTests {
  /// Reads every entry of `text` (through a pipe) with a tiny buffer and entry limit.
  func entries(_ text: String, limit: Int, hint: Bool = false) throws -> [(text: String?, line: Int, column: Int)] {
    var fds: [Int32] = [0, 0]
    #expect(pipe(&fds) == 0)
    let bytes = Array(text.utf8)
    #expect(bytes.count < 60_000)
    #expect(write(fds[1], bytes, bytes.count) == bytes.count)
    close(fds[1])
    defer { close(fds[0]) }
    let reader = StoredProfileReader(fileDescriptor: fds[0], jsonLinesHint: hint, bufferSize: 16, maxEntryBytes: limit)
    var found: [(text: String?, line: Int, column: Int)] = []
    while let entry = try reader.next() {
      found.append((entry.oversize ? nil : String(decoding: entry.bytes, as: UTF8.self), entry.line, entry.column))
    }
    return found
  }

  static let small = #"{"identifier": "a"}"#
  static let large = #"{"identifier": ""# + String(repeating: "é", count: 40) + #""}"#

  @Test("an entry over the limit is skipped as oversize, the next one is read, in every layout")
  func oversizeEntriesAreSkipped() throws {
    let lines = try entries("\(Self.small)\n\(Self.large)\n\(Self.small)\n", limit: 64)
    #expect(lines.map(\.text) == [Self.small, nil, Self.small])
    #expect(lines.map(\.line) == [1, 2, 3])
    let array = try entries("[\(Self.small),\n  \(Self.large), \(Self.small)]", limit: 64)
    #expect(array.map(\.text) == [Self.small, nil, Self.small])
    #expect(array.map(\.line) == [1, 2, 2])
    #expect(array.map(\.column) == [2, 3, 3 + Self.large.count + 2])
    let listing = try entries("{\"result\": [\(Self.large), \(Self.small)], \"resultCount\": 2}", limit: 64)
    #expect(listing.map(\.text) == [nil, Self.small])
    let single = try entries(Self.large, limit: 64)
    #expect(single.count == 1 && single[0].text == nil)
    #expect(try entries(Self.large, limit: 1 << 20).map(\.text) == [Self.large])
  }

  /// Reads `text` from a regular file: the entries handed out before an error, and the error.
  func readFile(_ text: String) -> (entries: Int, error: StoredReadError?, lookahead: StoredReadError?) {
    var template = Array("/tmp/fr-profile-reader-XXXXXX".utf8CString)
    let fd = mkstemp(&template)
    unlink(template)
    defer { close(fd) }
    let bytes = Array(text.utf8)
    #expect(write(fd, bytes, bytes.count) == bytes.count)
    #expect(lseek(fd, 0, SEEK_SET) == 0)
    let reader = StoredProfileReader(fileDescriptor: fd, bufferSize: 16)
    var entries = 0
    // The lookahead is taken after the layout was sniffed (the file position has moved).
    _ = try? reader.detectLayout()
    let ahead = reader.lookahead()
    #expect(ahead != nil)
    var lookaheadError: StoredReadError?
    do { while try ahead?.next() != nil {} } catch { lookaheadError = error }
    do {
      while try reader.next() != nil { entries += 1 }
    } catch {
      return (entries, error, lookaheadError)
    }
    return (entries, nil, lookaheadError)
  }

  @Test("a broken array or listing throws a framing error after the entries before the break; the lookahead finds it first")
  func framingErrors() {
    let a = Self.small
    for text in ["[\(a), \(a)", "[\(a), \(a)]x", "[\(a)", "[\(a) \(a)]", "{\"result\": [\(a), \(a)", "{\"result\": [\(a)], \"n\": 1"] {
      let read = readFile(text)
      #expect(read.error?.kind == .framing, "\(text)")
      #expect(read.lookahead?.kind == .framing, "\(text)")
      #expect(read.lookahead?.line == read.error?.line && read.lookahead?.column == read.error?.column, "\(text)")
      #expect(read.entries >= 1, "\(text)")
    }
    // JSON Lines and one profile have no framing beyond their entries.
    for text in ["\(a)\n\(a.dropLast(3))", "\(a)x", "[\(a), \(a)]", "{\"result\": [\(a)]}\n"] {
      let read = readFile(text)
      #expect(read.error == nil && read.lookahead == nil, "\(text)")
    }
  }

  @Test("a pipe has no lookahead")
  func pipeHasNoLookahead() {
    var fds: [Int32] = [0, 0]
    #expect(pipe(&fds) == 0)
    defer {
      close(fds[0])
      close(fds[1])
    }
    #expect(StoredProfileReader(fileDescriptor: fds[0]).lookahead() == nil)
  }

  @Test("the default limit is the one profile limit, 16 MiB")
  func oneLimit() {
    let reader = StoredProfileReader(fileDescriptor: -1)
    #expect(reader.maxEntryBytes == ProfileLimits.maxProfileBytes)
    #expect(ProfileLimits.maxProfileBytes == 16 << 20)
  }
}
