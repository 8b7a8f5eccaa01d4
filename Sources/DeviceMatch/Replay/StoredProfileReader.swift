import ProfileJSON
import SystemCalls

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// The layouts a file of stored profiles may have.
package enum StoredLayout: String, Sendable {
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
package struct StoredEntryText {
  /// The entry's bytes (valid until the next call to `next()`); empty when `oversize`.
  package var bytes: UnsafeBufferPointer<UInt8>
  /// 1-based line and column of its first byte.
  package var line: Int
  package var column: Int
  /// Byte offset of its first byte.
  package var offset: Int
  /// Whether it is an element of a JSON array (`array` and `listing` layouts), where a JSON
  /// string holds a serialised profile.
  package var isArrayElement: Bool
  /// Whether the entry was larger than `ProfileLimits.maxProfileBytes` and was skipped
  /// unread (its bytes are not kept).
  package var oversize = false
}

/// Why a stored file cannot be read any further.
package struct StoredReadError: Error, CustomStringConvertible {
  package enum Kind: Sendable {
    /// The text of a stored array or listing is not JSON around its elements (`]` missing,
    /// a missing `,`, text after the end): `JSON.parse` would reject the whole file.
    case framing
    /// The file could not be read (a read error, or the buffer guard).
    case io
  }
  package var message: String
  package var line: Int
  package var column: Int
  package var kind: Kind = .framing
  package var description: String { "\(line):\(column): \(message)" }
}

/// Streams the entries of a stored-profiles file of any `StoredLayout` without holding more
/// than one entry (and a read buffer) in memory.
///
/// The layout is sniffed: JSON Lines when the first line holds one complete value and more
/// text follows (or when `jsonLinesHint` is set, e.g. for `.jsonl` names); otherwise one JSON
/// document, whose top-level array, or `result` array member, is streamed element by element.
/// Entries are not parsed here: each is handed out as bytes, with its position, for the
/// caller to parse (and skip, with a warning, when it is not JSON, as the script does).
/// The framing of an array or listing is checked as it is read: a break (`]` or `,` missing,
/// text after the end) throws a `.framing` error after the entries before it were handed
/// out, and only reaching the end (`next()` returning nil) validates them — the caller must
/// not answer from a framed layout before that (the whole file is then one entry the script
/// skips). JSON Lines and a single profile have no framing beyond their entries.
/// Entry boundaries are found with the shared tokenizer's `JSONExtent`; an entry larger than
/// `maxEntryBytes` is read past without being kept and handed out as `oversize`.
package final class StoredProfileReader {
  /// Largest single entry kept (the one profile size limit).
  package let maxEntryBytes: Int

  let fd: Int32
  /// Where the file was when the reader was made (nil unless `fd` is a regular file), and
  /// for a lookahead reader (`lookahead()`), where it reads next with `pread`.
  let startPosition: off_t?
  var readPosition: off_t?
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
  package private(set) var layout: StoredLayout?
  let jsonLinesHint: Bool
  var state: State = .sniff

  enum State {
    case sniff
    case jsonLines
    case arrayElements(listing: Bool)
    case single
    case done
  }

  package init(
    fileDescriptor: Int32, jsonLinesHint: Bool = false, bufferSize: Int = 1 << 20,
    maxEntryBytes: Int = ProfileLimits.maxProfileBytes
  ) {
    fd = fileDescriptor
    self.jsonLinesHint = jsonLinesHint
    self.maxEntryBytes = maxEntryBytes
    buffer = .allocate(capacity: max(16, bufferSize))
    var status = stat()
    let position = fstat(fileDescriptor, &status) == 0 && (status.st_mode & S_IFMT) == S_IFREG ? lseek(fd, 0, SEEK_CUR) : -1
    startPosition = position >= 0 ? position : nil
  }

  /// A second reader of the same regular file from its start, reading with `pread` (the
  /// file position is left alone): it lets the framing of an array or listing be checked to
  /// its end before any entry is answered. Nil for a pipe or terminal.
  package func lookahead() -> StoredProfileReader? {
    guard let startPosition else { return nil }
    let reader = StoredProfileReader(
      fileDescriptor: fd, jsonLinesHint: jsonLinesHint, bufferSize: buffer.count, maxEntryBytes: maxEntryBytes)
    reader.readPosition = startPosition
    return reader
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
      // Entries over the limit are discarded as they are read, so the buffer stays below
      // twice the limit (plus a sniffing window); more means a bug, not big input.
      guard buffer.count < 2 * maxEntryBytes + (4 << 20) else {
        throw StoredReadError(message: "read buffer limit reached", line: line, column: column, kind: .io)
      }
      let bigger = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: buffer.count * 2)
      UnsafeMutableRawPointer(bigger.baseAddress!).copyMemory(
        from: UnsafeRawPointer(buffer.baseAddress!), byteCount: end)
      buffer.deallocate()
      buffer = bigger
    }
    let count: Int
    do {
      count = try readSome(
        fd, into: UnsafeMutableRawBufferPointer(rebasing: UnsafeMutableRawBufferPointer(buffer)[end...]),
        at: readPosition.map(Int64.init))
    } catch {
      throw StoredReadError(message: "read failed: \(errorText(error.errno))", line: line, column: column, kind: .io)
    }
    if count == 0 {
      eof = true
      return false
    }
    end += count
    readPosition? += off_t(count)
    return true
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
    TextPosition.advance(line: &line, column: &column, over: UnsafePointer(buffer.baseAddress! + start), count: count)
    offset += count
    start += count
  }

  /// Consumes JSON whitespace (the tokenizer's `JSONFraming` says how much), refilling as needed.
  func skipWhitespace() throws(StoredReadError) {
    while try available(0) {
      let window = end - start
      let blank = JSONFraming.blankCount(buffer.baseAddress! + start, count: window)
      advance(blank)
      if blank < window { return }
    }
  }

  /// The index of the first non-blank byte at or after `buffer[start + index]`, looking no
  /// further than `limit` bytes from `start` (the result is then `limit`, or less at the end
  /// of the file).
  func afterBlanks(from index: Int, limit: Int = .max) throws(StoredReadError) -> Int {
    var index = index
    while index < limit, try available(index) {
      let window = min(end - start, limit) - index
      let blank = JSONFraming.blankCount(buffer.baseAddress! + start + index, count: window)
      index += blank
      if blank < window { return index }
    }
    return index
  }

  /// What starts at `buffer[start + index]` (nil at the end of the file).
  func token(at index: Int) throws(StoredReadError) -> JSONFraming.Token? {
    try available(index) ? JSONFraming.token(buffer[start + index]) : nil
  }

  func error(_ message: String) -> StoredReadError {
    StoredReadError(message: message, line: line, column: column)
  }

  /// Where the value at `start` ends: its length, or (for a value over the size limit, read
  /// past without keeping it) `nil`, with `start` already after it. By structure alone
  /// (`JSONExtent`); invalid text still gets an extent, which the parser then rejects.
  func valueLength() throws(StoredReadError) -> Int? {
    var finder = JSONExtent()
    var scanned = 0
    var discarded = false
    while true {
      if start + scanned >= end {
        if try !fill() {
          if discarded {
            advance(end - start)
            return nil
          }
          return end - start
        }
        continue
      }
      if let found = finder.scan(buffer.baseAddress! + start + scanned, count: end - start - scanned) {
        let length = scanned + found
        if discarded || length > maxEntryBytes {
          advance(length)
          return nil
        }
        return length
      }
      scanned = end - start
      if scanned > maxEntryBytes {
        advance(scanned)
        scanned = 0
        discarded = true
      }
    }
  }

  /// The length of the value at `buffer[start + index]` by structure, within `limit` bytes
  /// of `start` (nil when it does not end there).
  func extent(at index: Int, limit: Int) throws(StoredReadError) -> Int? {
    var finder = JSONExtent()
    var scanned = index
    while scanned < limit {
      if start + scanned >= end {
        if try !fill() { return nil }
        continue
      }
      let count = min(end - start, limit) - scanned
      if let found = finder.scan(buffer.baseAddress! + start + scanned, count: count) { return scanned + found - index }
      scanned += count
    }
    return nil
  }

  func entry(length: Int) -> StoredEntryText {
    StoredEntryText(
      bytes: UnsafeBufferPointer(start: buffer.baseAddress! + start, count: length), line: line, column: column,
      offset: offset, isArrayElement: layout == .array || layout == .listing)
  }

  /// An entry that was read past for its size, placed at its first byte.
  func oversizeEntry(line: Int, column: Int, offset: Int) -> StoredEntryText {
    StoredEntryText(
      bytes: UnsafeBufferPointer(start: buffer.baseAddress!, count: 0), line: line, column: column, offset: offset,
      isArrayElement: layout == .array || layout == .listing, oversize: true)
  }

  // MARK: Entries

  /// Bytes of an entry handed out last, consumed on the next call; `pendingLine` when it is
  /// a whole JSON Lines line (then its newline is consumed too, without rescanning it).
  var pending = 0
  var pendingLine = false
  var afterElement = false

  /// The next entry, or nil at the end. Throws when the file cannot be read any further
  /// (entries already returned stand).
  package func next() throws(StoredReadError) -> StoredEntryText? {
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
        // Skip blank lines (and leading blanks); an entry is the rest of the line.
        try skipWhitespace()
        guard try available(0) else {
          state = .done
          return nil
        }
        let (entryLine, entryColumn, entryOffset) = (line, column, offset)
        var length = 0
        var discarded = false
        while true {
          let searched = start + length
          if searched < end, let found = TextPosition.memoryChr(buffer.baseAddress! + searched, 0x0A, end - searched) {
            length = found - UnsafePointer(buffer.baseAddress! + start)
            break
          }
          length = end - start
          if length > maxEntryBytes {
            // Too large to keep: read past it up to its newline.
            advance(length)
            length = 0
            discarded = true
          }
          if try !fill() { break }
        }
        pending = length
        pendingLine = true
        if discarded || length > maxEntryBytes {
          return oversizeEntry(line: entryLine, column: entryColumn, offset: entryOffset)
        }
        return entry(length: length)
      case .single:
        // The whole rest of the file is the one entry (trailing text makes it invalid JSON).
        let (entryLine, entryColumn, entryOffset) = (line, column, offset)
        var discarded = false
        while try fill() {
          if end - start > maxEntryBytes {
            advance(end - start)
            discarded = true
          }
        }
        state = .done
        if discarded || end - start > maxEntryBytes {
          advance(end - start)
          return oversizeEntry(line: entryLine, column: entryColumn, offset: entryOffset)
        }
        pending = end - start
        return entry(length: end - start)
      case .arrayElements(let listing):
        try skipWhitespace()
        guard let punctuation = try token(at: 0) else {
          throw error("unexpected end of input in the \(listing ? "result " : "")array")
        }
        if punctuation == .arrayEnd {
          advance(1)
          state = .done
          if listing { try skipRestOfObject() }
          try expectEnd()
          return nil
        }
        if afterElement {
          guard punctuation == .comma else { throw error("expected ',' or ']' after a stored profile") }
          advance(1)
          try skipWhitespace()
          guard let next = try token(at: 0) else { throw error("unexpected end of input in the array") }
          if next == .arrayEnd { throw error("trailing ',' in the array") }
        }
        let (entryLine, entryColumn, entryOffset) = (line, column, offset)
        guard let length = try valueLength() else {
          afterElement = true
          return oversizeEntry(line: entryLine, column: entryColumn, offset: entryOffset)
        }
        if length == 0 { throw error("unexpected end of input in the array") }
        afterElement = true
        pending = length
        return entry(length: length)
      }
    }
  }

  /// Sniffs the layout without consuming an entry.
  package func detectLayout() throws(StoredReadError) -> StoredLayout {
    if case .sniff = state { try sniff() }
    return layout ?? .single
  }

  /// For JSON Lines: appends whole lines, about `limit` bytes, to `block` (cleared first) and
  /// returns the line number and offset of its first byte; nil at the end. Lets callers
  /// split and match lines in parallel; do not mix with `next()` on the same reader.
  /// A line over `maxEntryBytes` is read past and comes back alone, as a block holding one
  /// NUL byte (and its newline), with `oversize` set.
  package func nextLines(into block: inout [UInt8], limit: Int) throws(StoredReadError)
    -> (line: Int, offset: Int, oversize: Bool)?
  {
    guard case .jsonLines = state else { return nil }
    block.removeAll(keepingCapacity: true)
    while end - start < limit {
      if try !fill() { break }
    }
    guard end > start else {
      state = .done
      return nil
    }
    let first = (line, offset)
    var length = end - start
    if !eof || length > limit {
      // Cut after the last newline in the window.
      let window = min(length, limit)
      var cut = window
      while cut > 0 && buffer[start + cut - 1] != 0x0A { cut -= 1 }
      if cut == 0 {
        // One line longer than the window: find its end, reading past it if it is too large.
        var discarded = false
        while true {
          if let found = TextPosition.memoryChr(buffer.baseAddress! + start, 0x0A, end - start) {
            cut = found - UnsafePointer(buffer.baseAddress! + start) + 1
            break
          }
          if end - start > maxEntryBytes {
            offset += end - start
            start = end
            discarded = true
          }
          if try !fill() {
            cut = end - start
            break
          }
        }
        let newline = cut > 0 && buffer[start + cut - 1] == 0x0A
        if discarded || cut - (newline ? 1 : 0) > maxEntryBytes {
          block.append(0)
          if newline {
            block.append(0x0A)
            line += 1
          }
          column = 1
          offset += cut
          start += cut
          return (first.0, first.1, true)
        }
      }
      length = cut
    }
    block.append(contentsOf: UnsafeBufferPointer(start: buffer.baseAddress! + start, count: length))
    line += TextPosition.newlines(in: UnsafePointer(buffer.baseAddress! + start), count: length)
    column = 1
    offset += length
    start += length
    return (first.0, first.1, false)
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
    switch JSONFraming.token(buffer[start]) {
    case .arrayStart:
      layout = .array
      advance(1)
      state = .arrayElements(listing: false)
    case .objectStart:
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
    // The first line's length (within the limit).
    var lineLength = 0
    while true {
      if try !available(lineLength) { break }
      let window = min(end - start, sniffLimit)
      if let found = TextPosition.memoryChr(buffer.baseAddress! + start + lineLength, 0x0A, window - lineLength) {
        lineLength = found - UnsafePointer(buffer.baseAddress! + start)
        break
      }
      lineLength = window
      if lineLength >= sniffLimit { return false }
    }
    // Where the first value ends, by structure, within the line.
    guard let length = try extent(at: 0, limit: lineLength) else { return false }
    // The rest of the first line must be blank (it holds no newline).
    guard try afterBlanks(from: length, limit: lineLength) == lineLength else { return false }
    // More non-blank text after the line?
    let next = try afterBlanks(from: lineLength, limit: 2 * sniffLimit)
    guard next < 2 * sniffLimit else { return false }
    return try available(next)
  }

  /// A damaged first line of a JSON Lines file: the text cannot be one multi-line document
  /// because its first line does not open a container, or it opens an object and the next
  /// non-blank line starts with another `{` (a document would continue with a key).
  func brokenFirstLineOfJSONLines() throws(StoredReadError) -> Bool {
    let first = JSONFraming.token(buffer[start])
    // The first line's end (line framing).
    var index = 0
    while try available(index), buffer[start + index] != 0x0A {
      index += 1
      if index >= 1 << 20 { return false }
    }
    // The next non-blank byte, within 2 MiB.
    index = try afterBlanks(from: index, limit: 2 << 20)
    guard index < 2 << 20, let next = try token(at: index) else { return false }
    switch first {
    case .arrayStart: return false
    case .objectStart: return next == .objectStart && buffer[start + index - 1] == 0x0A
    default: return true
    }
  }

  /// At a top-level `{`: if a `"result"` member holding an array comes before the object
  /// ends, consumes up to that array's `[` and returns true; otherwise consumes nothing.
  /// Only the members before `"result"` are buffered (AM lists it first), at most 4 MiB.
  func enterResultArray() throws(StoredReadError) -> Bool {
    let limit = 4 << 20
    var index = 1
    while true {
      index = try afterBlanks(from: index)
      guard try token(at: index) == .string else { return false }
      guard let keyLength = try extent(at: index, limit: limit) else { return false }
      let isResult = JSONFraming.isKey(buffer.baseAddress! + start + index, count: keyLength, "result")
      index = try afterBlanks(from: index + keyLength)
      guard try token(at: index) == .colon else { return false }
      index = try afterBlanks(from: index + 1)
      guard let value = try token(at: index) else { return false }
      if isResult && value == .arrayStart {
        advance(index + 1)
        return true
      }
      // Skip this member's value by structure.
      guard let length = try extent(at: index, limit: limit) else { return false }
      index = try afterBlanks(from: index + length)
      guard try token(at: index) == .comma else { return false }
      index += 1
    }
  }

  /// After the listing's array: the rest of the enclosing object, skipped by structure.
  func skipRestOfObject() throws(StoredReadError) {
    var finder = JSONExtent(openContainers: 1)
    while try available(0) {
      let count = end - start
      if let found = finder.scan(buffer.baseAddress! + start, count: count) {
        advance(found)
        return
      }
      advance(count)
    }
    throw error("unexpected end of input in the listing object")
  }

  func expectEnd() throws(StoredReadError) {
    try skipWhitespace()
    if try available(0) { throw error("unexpected text after the stored profiles") }
  }
}
