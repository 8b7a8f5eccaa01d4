import Collectors
import DeviceFacts
import DeviceIdentity
import ProfileJSON
import StateStore
import SystemCalls
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// The collect path was rewritten for speed: loops instead of `split`, `map` and
/// string interpolation. Each rewrite is held here to the straightforward form it replaced, on
/// edge cases and on seeded random inputs (the seed is printed on failure).
@Suite(.timeLimit(.minutes(10))) struct CollectPathEquivalenceTests {
  /// The straightforward forms, as they were before collect was made lean.
  enum Reference {
    static func normalizeLocale(_ value: String) -> String? {
      let name = value.split(separator: ".", maxSplits: 1).first.map(String.init) ?? value
      let base = name.split(separator: "@", maxSplits: 1).first.map(String.init) ?? name
      if base.isEmpty || base == "C" || base == "POSIX" { return nil }
      let valid = base.allSatisfy { $0.isASCII && ($0.isLetter || $0 == "_" || $0 == "-") }
      return valid ? String(base.map { $0 == "-" ? "_" : $0 }) : nil
    }

    static func parseCPUListCount(_ text: String) -> Int? {
      var count = 0
      for range in trimmed(text).split(separator: ",") {
        let bounds = range.split(separator: "-", omittingEmptySubsequences: false)
        if bounds.count == 1, let cpu = Int(bounds[0]), cpu >= 0 {
          count += 1
        } else if bounds.count == 2, let low = Int(bounds[0]), let high = Int(bounds[1]), high >= low, low >= 0,
          high < 1 << 16
        {
          count += high - low + 1
        } else {
          return nil
        }
      }
      return count > 0 && count <= 1 << 16 ? count : nil
    }

    static func fileIdentityText(_ identity: FileIdentity) -> String {
      "\(identity.device):\(identity.inode):\(identity.size):\(identity.modifiedSeconds).\(identity.modifiedNanoseconds)"
    }

    static func binding(machineID: [UInt8]?, key: FileIdentity, publicKey: FileIdentity) -> String {
      let machine = machineID.map { Hex.encode($0) } ?? "none"
      return "fr-profile identifier cache 1\nmachine-id \(machine)\nkey \(fileIdentityText(key))\npub \(fileIdentityText(publicKey))\n"
    }
  }

  /// A small deterministic generator (SplitMix64), so a failure can be replayed from its seed.
  struct Generator: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
      state &+= 0x9E37_79B9_7F4A_7C15
      var z = state
      z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
      z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
      return z ^ (z >> 31)
    }
  }

  static let seed: UInt64 = 0x0008_2026_1122

  /// Random short strings over an alphabet that hits the separators and edge characters.
  static func randomText(_ alphabet: [String], _ generator: inout Generator) -> String {
    let length = Int.random(in: 0...9, using: &generator)
    return (0..<length).map { _ in alphabet.randomElement(using: &generator)! }.joined()
  }

  @Test func normalizeLocaleMatchesTheSplitForm() {
    let edges = [
      "", ".", "..", "@", "@@", ".@", "@.", "de_DE.UTF-8@euro", ".UTF-8", "de_DE.", "..de", "de..x", "@euro",
      "de@euro.UTF-8", "C", "C.UTF-8", "POSIX", "en-US", "en US", "é_FR", "de_DE@", "x.y.z", "\u{301}.a",
    ]
    for value in edges {
      #expect(normalizeLocale(value) == Reference.normalizeLocale(value), "\(value.debugDescription)")
    }
    var generator = Generator(state: Self.seed)
    let alphabet = ["d", "e", "_", "D", "E", ".", "@", "-", "C", "P", "O", "S", "I", "X", "U", "8", " ", "é", "\u{301}"]
    for _ in 0..<20_000 {
      let value = Self.randomText(alphabet, &generator)
      #expect(
        normalizeLocale(value) == Reference.normalizeLocale(value), "seed \(Self.seed): \(value.debugDescription)")
    }
  }

  @Test func parseCPUListCountMatchesTheSplitForm() {
    let edges = [
      "", "0", "0-3", "0-3,8-11", ",", ",,0", "0,", "0-", "-0", "0--1", "3-1", "0-3-5", " 0-1 ", "+1", "1-+2",
      "0-65535", "0-65536", "00-01", "1,1", "x", "0 ,1",
    ]
    for text in edges {
      #expect(parseCPUListCount(text) == Reference.parseCPUListCount(text), "\(text.debugDescription)")
    }
    var generator = Generator(state: Self.seed)
    let alphabet = ["0", "1", "2", "9", "-", ",", "+", " ", "\n", "65", "536", "a"]
    for _ in 0..<20_000 {
      let text = Self.randomText(alphabet, &generator)
      #expect(
        parseCPUListCount(text) == Reference.parseCPUListCount(text), "seed \(Self.seed): \(text.debugDescription)")
    }
  }

  @Test func fileIdentityTextAndBindingMatchInterpolation() {
    var generator = Generator(state: Self.seed)
    let specials: [Int64] = [0, 1, -1, 9, 10, 99, 100, Int64.max, Int64.min, -999_999_999, 999_999_999]
    for round in 0..<5_000 {
      func pick() -> Int64 {
        round % 3 == 0
          ? specials.randomElement(using: &generator)! : Int64(bitPattern: generator.next()) >> Int.random(in: 0...63, using: &generator)
      }
      let identity = FileIdentity(
        device: UInt64(bitPattern: pick()), inode: UInt64(bitPattern: pick()), size: pick(), modifiedSeconds: pick(),
        modifiedNanoseconds: pick())
      var written: [UInt8] = []
      identity.append(to: &written)
      #expect(String(decoding: written, as: UTF8.self) == Reference.fileIdentityText(identity), "seed \(Self.seed), round \(round)")
      let machineID: [UInt8]? =
        round % 5 == 0 ? nil : (0..<Int.random(in: 0...32, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
      #expect(
        DeviceKeyStore.binding(machineID: machineID, key: identity, publicKey: identity)
          == Reference.binding(machineID: machineID, key: identity, publicKey: identity),
        "seed \(Self.seed), round \(round)")
    }
  }

  @Test func tamperScoreEqualsTheReportsMaximum() {
    struct Fixed: TamperDetector {
      let name: String
      let score: Double
      func analyze(_ context: TamperContext) -> TamperFinding {
        var finding = TamperFinding.clean
        finding.score = score  // set directly: also the unclamped values an embedder may set
        return finding
      }
    }
    let context = CollectionContext(system: SystemSource(root: "/nonexistent", environment: [:]))
    let cases: [[Double]] = [[], [0], [0.5], [0.2, 0.7, 0.1], [1, 1], [-1], [-1, -2], [.nan], [.nan, 0.5], [0.5, .nan]]
    for scores in cases {
      let detectors = scores.enumerated().map { Fixed(name: "d\($0.offset)", score: $0.element) as any TamperDetector }
      let direct = TamperScore.score(detectors, context)
      let report = TamperScore.evaluate(detectors, context).score
      let reference = scores.max() ?? 0
      #expect(direct.bitPattern == reference.bitPattern, "\(scores)")
      #expect(report.bitPattern == reference.bitPattern, "\(scores)")
    }
  }

  @Test func readAllReturnsEveryByteAcrossChunkBoundaries() throws {
    var generator = Generator(state: Self.seed)
    for size in [0, 1, 4095, 4096, 4097, 12_287, 12_288, 12_289, 70_000, 200_001] {
      let bytes = (0..<size).map { _ in UInt8.random(in: 0...255, using: &generator) }
      var fds: [Int32] = [0, 0]
      #expect(pipe(&fds) == 0)
      // A writer thread feeds the pipe in odd-sized pieces, so reads come back short.
      let writer = PipeWriter(bytes: bytes, fd: fds[1])
      writer.start()
      #expect(try readAll(fds[0], limit: size + 1) == bytes, "size \(size)")
      writer.join()
      close(fds[0])
    }
    // The limit cuts: never more than `limit` bytes.
    var fds: [Int32] = [0, 0]
    #expect(pipe(&fds) == 0)
    let bytes = [UInt8](repeating: 7, count: 10_000)
    let writer = PipeWriter(bytes: bytes, fd: fds[1])
    writer.start()
    #expect(try readAll(fds[0], limit: 5_000) == Array(bytes.prefix(5_000)))
    writer.join()  // 10,000 bytes fit in the pipe: the writer is done before the read end closes
    close(fds[0])
  }

  /// A thread that writes `bytes` to `fd` in pieces of varying size, then closes it.
  final class PipeWriter: @unchecked Sendable {
    let bytes: [UInt8]
    let fd: Int32
    var handle = pthread_t()
    init(bytes: [UInt8], fd: Int32) {
      self.bytes = bytes
      self.fd = fd
    }
    func start() {
      let context = Unmanaged.passRetained(self).toOpaque()
      pthread_create(
        &handle, nil,
        { raw in
          let thread = Unmanaged<PipeWriter>.fromOpaque(raw!).takeRetainedValue()
          var offset = 0
          var piece = 1
          thread.bytes.withUnsafeBytes { buffer in
            while offset < buffer.count {
              let count = min(piece, buffer.count - offset)
              let written = write(thread.fd, buffer.baseAddress! + offset, count)
              if written <= 0 { break }  // the reader closed early (the limit test)
              offset += written
              piece = piece * 3 % 9_973 + 1
            }
          }
          close(thread.fd)
          return nil
        }, context)
    }
    func join() { pthread_join(handle, nil) }
  }
}
