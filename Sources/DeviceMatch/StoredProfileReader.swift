#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif
import ProfileJSON

/// The layouts a file of stored profiles may have.
public enum StoredLayout: String, Sendable {
  /// One profile (or one JSON string holding a serialised profile).
  case single
  /// A JSON array of profiles and/or strings holding serialised profiles.
  case array
  /// AM's REST listing: `{"result": [...], ...}`.
  case listing
  /// One JSON value per line.
  case jsonLines
}

/// One stored entry's raw JSON text and where it starts in the file.
public struct StoredEntryText {
  /// The entry's bytes (valid until the next call to `next()`).
  public var bytes: UnsafeBufferPointer<UInt8>
  /// 1-based line and column of its first byte.
  public var line: Int
  public var column: Int
  /// Byte offset of its first byte.
  public var offset: Int
  /// Whether it is an element of a JSON array (`array` and `listing` layouts), where a JSON
  /// string holds a serialised profile.
  public var isArrayElement: Bool
}

/// Why a stored file cannot be read any further.
public struct StoredReadError: Error, CustomStringConvertible {
  public var message: String
  public var line: Int
  public var column: Int
  public var description: String { "\(line):\(column): \(message)" }
}

/// Streams the entries of a stored-profiles file of any `StoredLayout` without holding more
/// than one entry (and a read buffer) in memory.
///
/// The layout is sniffed: JSON Lines when the first line holds one complete value and more
/// text follows (or when `jsonLinesHint` is set, e.g. for `.jsonl` names); otherwise one JSON
/// document, whose top-level array, or `result` array member, is streamed element by element.
/// Entries are not parsed here: each is handed out as bytes, with its position, for the
/// caller to parse (and skip, with a warning, when it is not JSON, as the script does).
public final class StoredProfileReader {
  /// Largest single entry accepted (AM itself rejects profiles over 3 KB).
  public static let maxEntryBytes = 64 << 20

  let fd: Int32
  var buffer: UnsafeMutableBufferPointer<UInt8>
  /// Bytes `start..<end` of `buffer` are unread data; `eof` once read() returned 0.
  var start = 0
  var end = 0
  var eof = false
  /// Absolute offset, line and column of `buffer[start]`.
  var offset = 0
  var line = 1
  var column = 1

  /// The layout, once sniffed (by `detectLayout()` or the first `next()`).
  public private(set) var layout: StoredLayout?
  let jsonLinesHint: Bool
  var state: State = .sniff

  enum State {
    case sniff
    case jsonLines
    case arrayElements(listing: Bool)
    case single
    case done
  }

  public init(fileDescriptor: Int32, jsonLinesHint: Bool = false, bufferSize: Int = 1 << 20) {
    fd = fileDescriptor
    self.jsonLinesHint = jsonLinesHint
    buffer = .allocate(capacity: bufferSize)
  }

  deinit { buffer.deallocate() }

  // MARK: Buffer

  /// Reads more data, compacting or growing the buffer; false at end of file.
  func fill() throws(StoredReadError) -> Bool {
    if eof { return false }
    if start > 0 && (end - start) < buffer.count / 2 || end == buffer.count && start > 0 {
      let count = end - start
      if count > 0 {
        UnsafeMutableRawPointer(buffer.baseAddress!).copyMemory(
          from: UnsafeRawPointer(buffer.baseAddress! + start), byteCount: count)
      }
      start = 0
      end = count
    }
    if end == buffer.count {
      guard buffer.count < StoredProfileReader.maxEntryBytes else {
        throw StoredReadError(
          message: "an entry is larger than \(StoredProfileReader.maxEntryBytes >> 20) MiB", line: line, column: column)
      }
      let bigger = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: buffer.count * 2)
      UnsafeMutableRawPointer(bigger.baseAddress!).copyMemory(
        from: UnsafeRawPointer(buffer.baseAddress!), byteCount: end)
      buffer.deallocate()
      buffer = bigger
    }
    while true {
      let count = read(fd, buffer.baseAddress! + end, buffer.count - end)
      if count > 0 {
        end += count
        return true
      }
      if count == 0 {
        eof = true
        return false
      }
      if errno == EINTR { continue }
      throw StoredReadError(message: "read failed: \(String(cString: strerror(errno)))", line: line, column: column)
    }
  }

  /// Makes sure `buffer[start + index]` exists; false at end of file.
  @inline(__always) func available(_ index: Int) throws(StoredReadError) -> Bool {
    while start + index >= end {
      if try !fill() { return false }
    }
    return true
  }

  /// Consumes `count` bytes, keeping line and column (columns count characters).
  func advance(_ count: Int) {
    let base = UnsafePointer(buffer.baseAddress! + start)
    let stop = base + count
    var cursor = base
    var newlines = 0
    var lineStart: UnsafePointer<UInt8>?
    while cursor < stop, let found = memchr(cursor, 0x0A, stop - cursor) {
      newlines += 1
      cursor = UnsafePointer(found.assumingMemoryBound(to: UInt8.self)) + 1
      lineStart = cursor
    }
    if let lineStart {
      line += newlines
      column = 1 + Self.characters(lineStart, stop)
    } else {
      column += Self.characters(base, stop)
    }
    offset += count
    start += count
  }

  /// The number of UTF-8 lead bytes (characters) in `from..<to`, eight bytes at a time.
  static func characters(_ from: UnsafePointer<UInt8>, _ to: UnsafePointer<UInt8>) -> Int {
    var cursor = from
    var continuation = 0
    let high: UInt64 = 0x8080_8080_8080_8080
    while to - cursor >= 8 {
      let v = UnsafeRawPointer(cursor).loadUnaligned(as: UInt64.self)
      // A continuation byte is 10xxxxxx: high bit set, next bit clear.
      continuation += (v & high & ~(v << 1)).nonzeroBitCount
      cursor += 8
    }
    while cursor < to {
      if cursor.pointee & 0xC0 == 0x80 { continuation += 1 }
      cursor += 1
    }
    return (to - from) - continuation
  }

  func skipWhitespace() throws(StoredReadError) {
    while try available(0) {
      switch buffer[start] {
      case 0x20, 0x09, 0x0A, 0x0D: advance(1)
      default: return
      }
    }
  }

  func error(_ message: String) -> StoredReadError {
    StoredReadError(message: message, line: line, column: column)
  }

  /// Length of the JSON value starting at `start` by structure alone (brackets outside
  /// strings); invalid text still gets an extent, which the parser then rejects.
  func valueLength() throws(StoredReadError) -> Int {
    guard try available(0) else { return 0 }
    let first = buffer[start]
    if first == UInt8(ascii: "{") || first == UInt8(ascii: "[") {
      var index = 0
      var depth = 0
      var inString = false
      while true {
        if start + index >= end {
          if try !fill() { return end - start }
          continue
        }
        // Scan what is buffered without further bounds calls (fill() may move the data).
        let base = buffer.baseAddress! + start
        let limit = end - start
        while index < limit {
          let byte = base[index]
          index += 1
          if inString {
            if byte == UInt8(ascii: "\\") {
              index += 1
            } else if byte == UInt8(ascii: "\"") {
              inString = false
            }
            continue
          }
          switch byte {
          case UInt8(ascii: "\""): inString = true
          case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
          case UInt8(ascii: "}"), UInt8(ascii: "]"):
            depth -= 1
            if depth == 0 { return index }
          default: break
          }
        }
      }
    }
    var index = 0
    if first == UInt8(ascii: "\"") {
      index = 1
      while try available(index) {
        let byte = buffer[start + index]
        index += 1
        if byte == UInt8(ascii: "\\") {
          index += 1
        } else if byte == UInt8(ascii: "\"") {
          return min(index, end - start)
        }
      }
      return min(index, end - start)
    }
    while try available(index) {
      switch buffer[start + index] {
      case 0x20, 0x09, 0x0A, 0x0D, UInt8(ascii: ","), UInt8(ascii: "]"), UInt8(ascii: "}"):
        return max(index, 1)
      default: index += 1
      }
    }
    return max(index, min(1, end - start))
  }

  func entry(length: Int) -> StoredEntryText {
    StoredEntryText(
      bytes: UnsafeBufferPointer(start: buffer.baseAddress! + start, count: length), line: line, column: column,
      offset: offset, isArrayElement: layout == .array || layout == .listing)
  }

  // MARK: Entries

  /// Bytes of an entry handed out last, consumed on the next call; `pendingLine` when it is
  /// a whole JSON Lines line (then its newline is consumed too, without rescanning it).
  var pending = 0
  var pendingLine = false
  var afterElement = false

  /// The next entry, or nil at the end. Throws when the file cannot be read any further
  /// (entries already returned stand).
  public func next() throws(StoredReadError) -> StoredEntryText? {
    if pendingLine {
      // A JSON Lines entry: no newline inside, so only the column needs no update.
      offset += pending
      start += pending
      if start < end {
        start += 1
        offset += 1
        line += 1
        column = 1
      }
      pending = 0
      pendingLine = false
    } else if pending > 0 {
      advance(pending)
      pending = 0
    }
    while true {
      switch state {
      case .done:
        return nil
      case .sniff:
        try sniff()
      case .jsonLines:
        // Skip blank lines; an entry is the rest of the line.
        while true {
          guard try available(0) else {
            state = .done
            return nil
          }
          let byte = buffer[start]
          if byte == 0x0A || byte == 0x0D || byte == 0x20 || byte == 0x09 { advance(1) } else { break }
        }
        var length = 0
        while true {
          let searched = start + length
          if searched < end, let found = memchr(buffer.baseAddress! + searched, 0x0A, end - searched) {
            length = UnsafeMutablePointer<UInt8>(found.assumingMemoryBound(to: UInt8.self)) - (buffer.baseAddress! + start)
            break
          }
          length = end - start
          if length > StoredProfileReader.maxEntryBytes { throw error("a line is longer than 64 MiB") }
          if try !fill() { break }
        }
        pending = length
        pendingLine = true
        return entry(length: length)
      case .single:
        // The whole rest of the file is the one entry (trailing text makes it invalid JSON).
        while try fill() {}
        state = .done
        pending = end - start
        return entry(length: end - start)
      case .arrayElements(let listing):
        try skipWhitespace()
        guard try available(0) else { throw error("unexpected end of input in the \(listing ? "result " : "")array") }
        if buffer[start] == UInt8(ascii: "]") {
          advance(1)
          state = .done
          if listing { try skipRestOfObject() }
          try expectEnd()
          return nil
        }
        if afterElement {
          guard buffer[start] == UInt8(ascii: ",") else { throw error("expected ',' or ']' after a stored profile") }
          advance(1)
          try skipWhitespace()
          guard try available(0) else { throw error("unexpected end of input in the array") }
          if buffer[start] == UInt8(ascii: "]") { throw error("trailing ',' in the array") }
        }
        let length = try valueLength()
        if length == 0 { throw error("unexpected end of input in the array") }
        afterElement = true
        pending = length
        return entry(length: length)
      }
    }
  }

  /// Sniffs the layout without consuming an entry.
  public func detectLayout() throws(StoredReadError) -> StoredLayout {
    if case .sniff = state { try sniff() }
    return layout ?? .single
  }

  /// For JSON Lines: appends whole lines, about `limit` bytes, to `block` (cleared first) and
  /// returns the line number and offset of its first byte; nil at the end. Lets callers
  /// split and match lines in parallel; do not mix with `next()` on the same reader.
  public func nextLines(into block: inout [UInt8], limit: Int) throws(StoredReadError) -> (line: Int, offset: Int)? {
    guard case .jsonLines = state else { return nil }
    block.removeAll(keepingCapacity: true)
    while end - start < limit {
      if try !fill() { break }
    }
    guard end > start else {
      state = .done
      return nil
    }
    var length = end - start
    if !eof || length > limit {
      // Cut after the last newline (a line longer than the buffer keeps growing it).
      let window = min(length, limit)
      var cut = window
      while cut > 0 && buffer[start + cut - 1] != 0x0A { cut -= 1 }
      if cut == 0 {
        while true {
          if let found = memchr(buffer.baseAddress! + start, 0x0A, end - start) {
            cut = UnsafeMutablePointer<UInt8>(found.assumingMemoryBound(to: UInt8.self)) - (buffer.baseAddress! + start) + 1
            break
          }
          if end - start > StoredProfileReader.maxEntryBytes { throw error("a line is longer than 64 MiB") }
          if try !fill() {
            cut = end - start
            break
          }
        }
      }
      length = cut
    }
    block.append(contentsOf: UnsafeBufferPointer(start: buffer.baseAddress! + start, count: length))
    let first = (line, offset)
    var newlines = 0
    block.withUnsafeBufferPointer { bytes in
      var cursor = bytes.baseAddress!
      let stop = cursor + bytes.count
      while cursor < stop, let found = memchr(cursor, 0x0A, stop - cursor) {
        newlines += 1
        cursor = UnsafePointer(found.assumingMemoryBound(to: UInt8.self)) + 1
      }
    }
    line += newlines
    column = 1
    offset += length
    start += length
    return first
  }

  /// Decides the layout from the first bytes.
  func sniff() throws(StoredReadError) {
    try skipWhitespace()
    guard try available(0) else {
      layout = .single
      state = .done
      return
    }
    let firstLineIsAValue = try firstLineHoldsOneValueAndMoreFollows()
    let damagedFirstLine = firstLineIsAValue ? false : try brokenFirstLineOfJSONLines()
    if jsonLinesHint || firstLineIsAValue || damagedFirstLine {
      layout = .jsonLines
      state = .jsonLines
      return
    }
    switch buffer[start] {
    case UInt8(ascii: "["):
      layout = .array
      advance(1)
      state = .arrayElements(listing: false)
    case UInt8(ascii: "{"):
      if try enterResultArray() {
        layout = .listing
        state = .arrayElements(listing: true)
      } else {
        layout = .single
        state = .single
      }
    default:
      layout = .single
      state = .single
    }
  }

  /// Whether the first line is exactly one complete JSON value (by structure) and non-blank
  /// text follows it: then the file is JSON Lines. Looks no further than the first line, and
  /// no further than `sniffLimit` bytes (a one-line AM listing can be huge; a profile is not).
  func firstLineHoldsOneValueAndMoreFollows() throws(StoredReadError) -> Bool {
    let sniffLimit = 1 << 20
    var index = 0
    var depth = 0
    var inString = false
    var started = false
    // Find where the first value ends, giving up at the first newline.
    scan: while try available(index) {
      if index >= sniffLimit { return false }
      let byte = buffer[start + index]
      index += 1
      if byte == 0x0A { return false }
      if inString {
        if byte == UInt8(ascii: "\\") {
          index += 1
        } else if byte == UInt8(ascii: "\"") {
          inString = false
          if depth == 0 { break scan }
        }
        continue
      }
      switch byte {
      case UInt8(ascii: "\""):
        inString = true
        started = true
      case UInt8(ascii: "{"), UInt8(ascii: "["):
        depth += 1
        started = true
      case UInt8(ascii: "}"), UInt8(ascii: "]"):
        depth -= 1
        if depth <= 0 { break scan }
      case 0x20, 0x09, 0x0D:
        if started && depth == 0 { break scan }
      default:
        started = true
      }
    }
    // The rest of the first line must be blank.
    while try available(index) {
      if index >= sniffLimit { return false }
      let byte = buffer[start + index]
      if byte == 0x0A { break }
      if byte != 0x20 && byte != 0x09 && byte != 0x0D { return false }
      index += 1
    }
    // More non-blank text after the line?
    while try available(index) {
      switch buffer[start + index] {
      case 0x20, 0x09, 0x0A, 0x0D: index += 1
      default: return true
      }
    }
    return false
  }

  /// A damaged first line of a JSON Lines file: the text cannot be one multi-line document
  /// because its first line does not open a container, or it opens an object and the next
  /// non-blank line starts with another `{` (a document would continue with a key).
  func brokenFirstLineOfJSONLines() throws(StoredReadError) -> Bool {
    let first = buffer[start]
    var index = 0
    while try available(index), buffer[start + index] != 0x0A {
      index += 1
      if index >= 1 << 20 { return false }
    }
    while try available(index) {
      let byte = buffer[start + index]
      if byte == 0x0A || byte == 0x0D || byte == 0x20 || byte == 0x09 {
        index += 1
        if index >= 2 << 20 { return false }
        continue
      }
      if first == UInt8(ascii: "[") { return false }
      if first == UInt8(ascii: "{") { return byte == UInt8(ascii: "{") && buffer[start + index - 1] == 0x0A }
      return true
    }
    return false
  }

  /// At a top-level `{`: if a `"result"` member holding an array comes before the object
  /// ends, consumes up to that array's `[` and returns true; otherwise consumes nothing.
  /// Only the members before `"result"` are buffered (AM lists it first).
  func enterResultArray() throws(StoredReadError) -> Bool {
    var index = 1
    func skipBlank() throws(StoredReadError) {
      while try available(index) {
        switch buffer[start + index] {
        case 0x20, 0x09, 0x0A, 0x0D: index += 1
        default: return
        }
      }
    }
    while true {
      try skipBlank()
      guard try available(index), buffer[start + index] == UInt8(ascii: "\"") else { return false }
      let keyStart = index
      index += 1
      while try available(index), buffer[start + index] != UInt8(ascii: "\"") {
        if buffer[start + index] == UInt8(ascii: "\\") { index += 1 }
        index += 1
      }
      guard try available(index) else { return false }
      let isResult = index - keyStart - 1 == 6 && Array(UnsafeBufferPointer(
        start: buffer.baseAddress! + start + keyStart + 1, count: 6)) == Array("result".utf8)
      index += 1
      try skipBlank()
      guard try available(index), buffer[start + index] == UInt8(ascii: ":") else { return false }
      index += 1
      try skipBlank()
      guard try available(index) else { return false }
      if isResult && buffer[start + index] == UInt8(ascii: "[") {
        advance(index + 1)
        return true
      }
      // Skip this member's value by structure.
      let saveStart = start
      start += index
      let length = try valueLength()
      index = start - saveStart + length
      start = saveStart
      if length == 0 { return false }
      try skipBlank()
      guard try available(index), buffer[start + index] == UInt8(ascii: ",") else { return false }
      index += 1
    }
  }

  /// After the listing's array: the rest of the enclosing object, skipped by structure.
  func skipRestOfObject() throws(StoredReadError) {
    var depth = 1
    var inString = false
    while try available(0) {
      let byte = buffer[start]
      advance(1)
      if inString {
        if byte == UInt8(ascii: "\\") {
          if try available(0) { advance(1) }
        } else if byte == UInt8(ascii: "\"") {
          inString = false
        }
        continue
      }
      switch byte {
      case UInt8(ascii: "\""): inString = true
      case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
      case UInt8(ascii: "}"), UInt8(ascii: "]"):
        depth -= 1
        if depth == 0 { return }
      default: break
      }
    }
    throw error("unexpected end of input in the listing object")
  }

  func expectEnd() throws(StoredReadError) {
    try skipWhitespace()
    if try available(0) { throw error("unexpected text after the stored profiles") }
  }

}
