import ProfileJSON
import Testing

@testable import DeviceMatch

#if canImport(Glibc)
  import Glibc
#endif

/// The streaming reader: one size limit for every layout, entries placed by line and column.
@Suite struct StoredProfileReaderTests {
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

  @Test("the default limit is the one profile limit, 16 MiB")
  func oneLimit() {
    let reader = StoredProfileReader(fileDescriptor: -1)
    #expect(reader.maxEntryBytes == ProfileLimits.maxProfileBytes)
    #expect(ProfileLimits.maxProfileBytes == 16 << 20)
  }
}
