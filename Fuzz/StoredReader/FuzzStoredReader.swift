import DeviceMatch
import FuzzSupport
import ProfileJSON

// Fuzz target: the streaming stored-profile reader (DeviceMatch), with a tiny read buffer
// and entry limit so that refills, growth and oversize skipping happen on short inputs.
// Invariants: no crash; entries come in file order without overlap; each entry's line and
// column are what `TextPosition` computes for its offset; each kept entry's bytes are the
// file's bytes at that offset. The same text read as JSON Lines blocks (`nextLines`, the
// parallel summary's reader) covers the same bytes in the same order.
#if canImport(Glibc)
  import Glibc
#endif

/// One scratch file (on tmpfs when there is one), unlinked at once, reused for every input.
let scratch: Int32 = {
  var template = Array(((access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp") + "/fuzz-stored-XXXXXX").utf8CString)
  let fd = mkstemp(&template)
  fuzzCheck(fd >= 0, "cannot create a scratch file")
  unlink(template)
  return fd
}()

/// The scratch file holding `input`, positioned at its start.
func memoryFile(_ input: UnsafeBufferPointer<UInt8>) -> Int32 {
  fuzzCheck(ftruncate(scratch, 0) == 0, "ftruncate failed")
  var done = 0
  while done < input.count {
    let count = pwrite(scratch, input.baseAddress! + done, input.count - done, off_t(done))
    fuzzCheck(count > 0, "write to the scratch file failed")
    done += count
  }
  lseek(scratch, 0, SEEK_SET)
  return scratch
}

func fuzzStoredReader(_ input: UnsafeBufferPointer<UInt8>) {
  guard let selector = input.first else { return }
  let text = UnsafeBufferPointer(rebasing: input[1...])
  let bufferSize = 16 << Int(selector & 3)
  let limit = 64 << Int((selector >> 2) & 3)
  let hint = selector & 0x10 != 0

  let fd = memoryFile(text)
  let reader = StoredProfileReader(fileDescriptor: fd, jsonLinesHint: hint, bufferSize: bufferSize, maxEntryBytes: limit)
  var lastEnd = 0
  var entries = 0
  while entries < 100_000 {
    let entry: StoredEntryText?
    do { entry = try reader.next() } catch { break }
    guard let entry else { break }
    entries += 1
    fuzzCheck(entry.offset >= lastEnd, "entry at \(entry.offset) overlaps the previous one ending at \(lastEnd)")
    let (line, column) = TextPosition.locate(entry.offset, in: text)
    fuzzCheck(
      line == entry.line && column == entry.column, "entry at \(entry.offset): \(entry.line):\(entry.column), expected \(line):\(column)")
    if entry.oversize {
      lastEnd = entry.offset + 1
      continue
    }
    fuzzCheck(entry.bytes.count <= limit, "entry of \(entry.bytes.count) bytes kept over the \(limit)-byte limit")
    fuzzCheck(entry.offset + entry.bytes.count <= text.count, "entry runs past the input")
    fuzzCheck(
      entry.bytes.elementsEqual(text[entry.offset..<entry.offset + entry.bytes.count]),
      "entry bytes at \(entry.offset) differ from the input")
    lastEnd = entry.offset + entry.bytes.count
  }

  // JSON Lines blocks: consecutive (blank space aside), and each line placed where TextPosition says.
  let fd2 = memoryFile(text)
  let blocks = StoredProfileReader(fileDescriptor: fd2, jsonLinesHint: true, bufferSize: bufferSize, maxEntryBytes: limit)
  guard (try? blocks.detectLayout()) == .jsonLines else { return }
  var block: [UInt8] = []
  var expectedOffset = 0
  while let start = try? blocks.nextLines(into: &block, limit: 3 * bufferSize) {
    // Only blank text (skipped while sniffing the layout) may lie between blocks.
    fuzzCheck(start.offset >= expectedOffset, "block at \(start.offset) before \(expectedOffset)")
    fuzzCheck(
      text[expectedOffset..<start.offset].allSatisfy { [0x20, 0x09, 0x0A, 0x0D].contains($0) },
      "non-blank bytes skipped between blocks at \(expectedOffset)..<\(start.offset)")
    fuzzCheck(start.line == TextPosition.locate(start.offset, in: text).line, "block line \(start.line) is off")
    if start.oversize {
      guard let newline = text[start.offset...].firstIndex(of: 0x0A) else { break }
      expectedOffset = newline + 1
    } else {
      fuzzCheck(
        block.elementsEqual(text[start.offset..<min(text.count, start.offset + block.count)]),
        "block bytes at \(start.offset) differ from the input")
      expectedOffset = start.offset + block.count
    }
  }
}

@main enum Main {
  static func main() { runTarget(name: "fuzz-stored-reader", fuzzStoredReader) }
}

#if Fuzzing
  // A debug build renames the executable's `main` (SwiftPM's testable entry point), so
  // libFuzzer's own `main` runs and calls this directly.
  @_cdecl("LLVMFuzzerTestOneInput") func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    fuzzStoredReader(UnsafeBufferPointer(start: data, count: size))
    return 0
  }
#endif
