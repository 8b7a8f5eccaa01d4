import FuzzSupport
@_spi(JSONTokenizer) import ProfileJSON

// Fuzz target: the JSON tokenizer and parser (ProfileJSON).
// Invariants: parsing never crashes; the tokenizer's validating skip accepts exactly what the
// parser accepts; the structural extent of an accepted container is the whole value; a parsed
// value survives writing and re-parsing unchanged.
#if canImport(Glibc)
  import Glibc
#endif

func fuzzJSON(_ input: UnsafeBufferPointer<UInt8>) {
  let parsed = try? JSONParser.parse(input)

  var scanner = JSONScanner(input)
  scanner.skipWhitespace()
  var skipped = true
  do {
    try scanner.skipValue(maxDepth: JSONParser.defaultMaxDepth)
    try scanner.expectEnd()
  } catch {
    skipped = false
  }
  fuzzCheck(skipped == (parsed != nil), "tokenizer skip (\(skipped)) and parser (\(parsed != nil)) disagree")

  guard let parsed else { return }
  if case .object = parsed, let base = input.baseAddress {
    // The extent finder ends an accepted container exactly where the parser did.
    var leading = 0
    while leading < input.count, [0x20, 0x09, 0x0A, 0x0D].contains(input[leading]) { leading += 1 }
    var trailing = input.count
    while trailing > leading, [0x20, 0x09, 0x0A, 0x0D].contains(input[trailing - 1]) { trailing -= 1 }
    var extent = JSONExtent()
    let found = extent.scan(base + leading, count: input.count - leading)
    fuzzCheck(found == trailing - leading, "extent \(String(describing: found)) != value length \(trailing - leading)")
  }
  // Infinities (`1e400`) are written as null, as JavaScript's JSON.stringify does.
  guard allFinite(parsed) else { return }
  let written = JSONWriter.compact(parsed)
  guard let again = try? JSONParser.parse(written) else {
    fuzzCheck(false, "written JSON does not parse: \(written.prefix(200))")
    return
  }
  fuzzCheck(again == parsed, "round trip changed the value: \(written.prefix(200))")
}

func allFinite(_ value: JSON) -> Bool {
  switch value {
  case .number(let number): number.isFinite
  case .array(let elements): elements.allSatisfy(allFinite)
  case .object(let object): object.members.allSatisfy { allFinite($0.value) }
  default: true
  }
}

@main enum Main {
  static func main() { runTarget(name: "fuzz-json", fuzzJSON) }
}

#if Fuzzing
  // A debug build renames the executable's `main` (SwiftPM's testable entry point), so
  // libFuzzer's own `main` runs and calls this directly.
  @_cdecl("LLVMFuzzerTestOneInput") func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    fuzzJSON(UnsafeBufferPointer(start: data, count: size))
    return 0
  }
#endif
