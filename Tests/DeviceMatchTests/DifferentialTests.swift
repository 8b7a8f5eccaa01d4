import ProfileJSON
import Testing

@testable import DeviceMatch

#if canImport(Glibc)
  import Glibc
#endif

/// The replay fast path (`FastMatcher`) against the reference port (`DeviceMatcher`) on
/// generated stored/incoming pairs, adversarial shapes included. Seeded: a failure prints
/// the seed, and `FR_PROFILE_SEED=<seed> swift test --filter DifferentialTests` replays it.
@Suite struct DifferentialTests {
  /// SplitMix64: small, fast, and the same sequence on every platform for a seed.
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

  /// A JSON text tree: keys and number literals are kept as written, so duplicates, escapes
  /// and odd literals reach both paths exactly as generated.
  indirect enum Node {
    case literal(String)  // number, true, false, null, or a string literal with its quotes
    case array([Node])
    case object([(String, Node)])  // keys as literal text, quotes included

    var text: String {
      switch self {
      case .literal(let text): text
      case .array(let elements): "[" + elements.map(\.text).joined(separator: ",") + "]"
      case .object(let members): "{" + members.map { "\($0.0):\($0.1.text)" }.joined(separator: ", ") + "}"
      }
    }
  }

  static let keys = [
    "a", "b", "c", "x", "list", "cpu", "version", "tz", "flag", "none", "undefined", "length", "é", "e\u{301}",
    "lat", "lng", "latitude", "longitude", "metadata", "identifier", "", "a", "b", "c", "x",
  ]
  /// Array-index names, whose property order differs in JavaScript (rarer).
  static let indexKeys = ["0", "1", "10"]
  static let oddNumbers = [
    "0", "-0", "1", "-1", "0.1", "1e0", "10E-1", "1e400", "-1e400", "1e-400", "123456789012345678901234567890",
    "9007199254740993", "0.30000000000000004", "5e-324", "1.7976931348623157e308", "52.520008", "13.404954",
    "-52.52", "193.405", "3", "16", "16.0", "2", "0.5",
  ]
  static let strings = [
    #""""#, #""x""#, #""6.8""#, #""UTC""#, #""é""#, #""e\u0301""#, #""\u00e9""#, #""a\"b""#, #""\ud800""#,
    #""😀""#, #""52.52""#, #""13.405""#, #""52° 31' 12\" N""#, #""0x10""#, #"" 1 ""#, #""null""#,
  ]

  struct Case {
    var incoming: String
    var stored: String
    var config: MatchConfig
  }

  static func pick<T>(_ items: [T], _ random: inout Generator) -> T { items[Int(random.next() % UInt64(items.count))] }

  static func key(_ random: inout Generator) -> String {
    let name = random.next() % 30 == 0 ? pick(indexKeys, &random) : pick(keys, &random)
    // Sometimes spell a key with an escape (the fast path hands those to the reference).
    if random.next() % 20 == 0, let first = name.unicodeScalars.first, first.isASCII {
      return "\"\\u00" + String(first.value, radix: 16) + name.unicodeScalars.dropFirst().map(String.init).joined() + "\""
    }
    return "\"" + name + "\""
  }

  /// A string of 0–19 bytes over a two-letter alphabet (so that equal and nearly equal
  /// strings of every length meet), sometimes with an escape, a non-ASCII character or a raw
  /// control byte at any position: the tokenizer's eight-byte steps meet each at every
  /// position mod 8.
  static func generatedString(_ random: inout Generator) -> String {
    var text = String((0..<Int(random.next() % 20)).map { _ in random.next() % 2 == 0 ? "a" : "b" })
    if random.next() % 3 == 0 {
      let special = pick([#"\n"#, #"\u00e9"#, #"\""#, "é", "\u{01}", #"\u0061"#], &random)
      let position = text.index(text.startIndex, offsetBy: Int(random.next() % UInt64(text.count + 1)))
      text.insert(contentsOf: special, at: position)
    }
    return "\"" + text + "\""
  }

  static func leaf(_ random: inout Generator) -> Node {
    switch random.next() % 6 {
    case 0, 1: .literal(pick(oddNumbers, &random))
    case 2: .literal(pick(strings, &random))
    case 3: .literal(random.next() % 2 == 0 ? pick(strings, &random) : generatedString(&random))
    case 4: .literal(pick(["true", "false"], &random))
    default: .literal("null")
    }
  }

  static func value(_ random: inout Generator, depth: Int) -> Node {
    let roll = random.next() % 10
    if depth <= 0 || roll < 5 { return leaf(&random) }
    if roll < 7 {
      return .array((0..<Int(random.next() % 4)).map { _ in value(&random, depth: depth - 1) })
    }
    var members: [(String, Node)] = []
    for _ in 0..<Int(random.next() % 5) { members.append((key(&random), value(&random, depth: depth - 1))) }
    if random.next() % 25 == 0, let first = members.first { members.append((first.0, leaf(&random))) }  // duplicate key
    return .object(members)
  }

  /// A copy of `node` with some leaves changed, members dropped or added, shapes swapped.
  static func mutate(_ node: Node, _ random: inout Generator, depth: Int) -> Node {
    if random.next() % 8 == 0 { return random.next() % 2 == 0 ? leaf(&random) : value(&random, depth: depth) }
    switch node {
    case .literal: return random.next() % 4 == 0 ? leaf(&random) : node
    case .array(let elements):
      var changed = elements.map { mutate($0, &random, depth: depth - 1) }
      if random.next() % 4 == 0 { changed.append(leaf(&random)) }
      if random.next() % 4 == 0 && !changed.isEmpty { changed.removeLast() }
      return .array(changed)
    case .object(let members):
      var changed = members.map { ($0.0, mutate($0.1, &random, depth: depth - 1)) }
      if random.next() % 4 == 0 { changed.append((key(&random), value(&random, depth: 2))) }
      if random.next() % 4 == 0 && !changed.isEmpty { changed.remove(at: Int(random.next() % UInt64(changed.count))) }
      if random.next() % 6 == 0 { changed.shuffle(using: &random) }
      return .object(changed)
    }
  }

  static func location(_ random: inout Generator) -> Node {
    switch random.next() % 20 {
    case 0: return .literal("null")
    case 1: return .object([("\"latitude\"", .literal(#""52.52""#)), ("\"longitude\"", .literal(#""13.405""#))])  // strings
    case 2: return .object([("\"lat\"", .literal("52.5201")), ("\"lng\"", .literal("13.405")), ("\"latitude\"", .literal("0"))])
    case 3: return .array([.literal("13.405"), .literal("52.52")])
    case 4: return .object([("\"lat\"", .literal("null")), ("\"lon\"", .literal("1"))])
    case 5: return .literal(#""here""#)
    default:
      return .object([
        ("\"latitude\"", .literal(pick(["52.52", "52.520008", "52.5205", "-52.52", "1e400", "91"], &random))),
        ("\"longitude\"", .literal(pick(["13.405", "13.404954", "193.405", "-0", "13.4051"], &random))),
      ])
    }
  }

  static func profile(identifier: Node?, metadata: Node?, location: Node?, _ random: inout Generator) -> Node {
    var members: [(String, Node)] = []
    if let identifier { members.append(("\"identifier\"", identifier)) }
    if let metadata { members.append(("\"metadata\"", metadata)) }
    if let location { members.append(("\"location\"", location)) }
    if random.next() % 5 == 0 { members.shuffle(using: &random) }
    if random.next() % 10 == 0 { members.append(("\"extra\"", value(&random, depth: 2))) }
    return .object(members)
  }

  /// A stored/incoming pair; shapes are chosen so that every fast-path limit and every
  /// odd corner of the script is reached by some cases.
  static func makeCase(_ random: inout Generator) -> Case {
    let configs: [MatchConfig] = [
      MatchConfig(),
      MatchConfig(attrWeights: ["version": 0.5, "cpu": 3, "tz": "x"], maxUnmatchedAttrs: 2),
      MatchConfig(attrWeights: ["list": 0, "a": 0, "undefined": 0], maxUnmatchedAttrs: 1),
      MatchConfig(attrWeights: ["a": -1, "b": -0.5, "x": 2], maxUnmatchedAttrs: 0),
      MatchConfig(maxUnmatchedAttrs: 1e9, allowedRadius: 1e9),
      MatchConfig(maxUnmatchedAttrs: -1),
      MatchConfig(attrWeights: ["é": 5, "e\u{301}": 0], maxUnmatchedAttrs: 4, matchLocation: false),
      MatchConfig(matchMetadata: false),
      MatchConfig(allowedRadius: 1000, matchMetadata: true, matchLocation: true),
    ]
    let config = pick(configs, &random)
    let identifier: Node? =
      random.next() % 12 == 0 ? nil : .literal(pick([#""d""#, #""d""#, #""d""#, #""e""#, "7", "null", "true"], &random))
    let shape = random.next() % 100
    var incomingMetadata = value(&random, depth: 4)
    if case .literal = incomingMetadata, random.next() % 3 != 0 { incomingMetadata = .object([("\"a\"", leaf(&random))]) }
    var storedMetadata = mutate(incomingMetadata, &random, depth: 4)
    switch shape {
    case 0..<4:
      // Many mismatches: a long array against a short one (beyond the fast path's record).
      let count = Int(random.next() % 2) == 0 ? 5000 : Int(random.next() % 200)
      storedMetadata = .object([
        ("\"list\"", .array(Array(repeating: .literal("0"), count: count))), ("\"last\"", .literal("1")),
      ])
      incomingMetadata = .object([("\"list\"", .array([])), ("\"last\"", .literal("2"))])
    case 4..<6:
      // Nesting around the fast path's depth limit.
      let depth = FastMatcher.maxDepth - 3 + Int(random.next() % 6)
      var nested: Node = leaf(&random)
      for _ in 0..<depth { nested = random.next() % 2 == 0 ? .array([nested]) : .object([("\"a\"", nested)]) }
      storedMetadata = .object([("\"deep\"", nested)])
    case 6..<8:
      // Strings where objects are expected, and the reverse.
      storedMetadata = .object([("\"a\"", .object([("\"b\"", leaf(&random))])), ("\"s\"", .literal(#""text""#))])
      incomingMetadata = .object([("\"a\"", .literal(#""ab""#)), ("\"s\"", .object([("\"length\"", .literal("4"))]))])
    case 8..<10:
      // Metadata that is not an object on one side.
      if random.next() % 2 == 0 { storedMetadata = leaf(&random) } else { incomingMetadata = .array([leaf(&random)]) }
    default: break
    }
    let incomingLocation = location(&random)
    let storedLocation = random.next() % 3 == 0 ? location(&random) : incomingLocation
    let incoming = profile(identifier: identifier, metadata: incomingMetadata, location: incomingLocation, &random)
    let storedIdentifier = random.next() % 10 == 0 ? .literal(pick([#""d""#, #""e""#, "7"], &random)) : identifier
    let stored = profile(
      identifier: storedIdentifier, metadata: random.next() % 30 == 0 ? nil : storedMetadata,
      location: random.next() % 30 == 0 ? nil : storedLocation, &random)
    var storedText = stored.text
    if random.next() % 50 == 0 { storedText += pick([" ", "\n", " x", ",", "}"], &random) }  // trailing text
    if random.next() % 50 == 0 { storedText = String(storedText.dropLast(Int(random.next() % 4))) }  // cut short
    return Case(incoming: incoming.text, stored: storedText, config: config)
  }

  static var seed: UInt64 {
    if let text = ProcessInfo.environmentValue("FR_PROFILE_SEED"), let seed = UInt64(text) { return seed }
    return UInt64.random(in: 0...UInt64.max)
  }

  @Test("the fast path equals the reference on 24,000 generated pairs (outcome, ordered mismatches, summary counts)")
  func fastPathEqualsReference() throws {
    let seed = Self.seed
    var random = Generator(state: seed)
    var answered = 0
    var bailed = 0
    var outcomes: [Outcome: Int] = [:]
    var failures = 0
    for index in 0..<24_000 {
      let pair = Self.makeCase(&random)
      guard let incoming = try? JSONParser.parse(pair.incoming) else { continue }
      let matcher = DeviceMatcher(config: pair.config)
      let fast = FastMatcher(matcher: matcher, incoming: incoming)
      let bytes = Array(pair.stored.utf8)
      let problem = bytes.withUnsafeBufferPointer { stored in
        ReplayCheck.disagreement(fast: fast, matcher: matcher, incoming: incoming, stored: stored)
      }
      if let problem {
        failures += 1
        if failures <= 3 {
          Issue.record(
            "seed \(seed), case \(index): \(problem)\nincoming: \(pair.incoming.prefix(500))\nstored: \(pair.stored.prefix(500))\nconfig: \(pair.config)"
          )
        }
      }
      if let quick = bytes.withUnsafeBufferPointer({ fast.match($0) }) {
        answered += 1
        outcomes[quick.outcome, default: 0] += 1
      } else {
        bailed += 1
      }
    }
    #expect(failures == 0, "seed \(seed): \(failures) disagreements (replay with FR_PROFILE_SEED=\(seed))")
    // The comparison means something only if both paths and every outcome are exercised.
    #expect(answered > 6000, "seed \(seed): the fast path answered only \(answered)")
    #expect(bailed > 1000, "seed \(seed): the reference took only \(bailed)")
    for outcome in [Outcome.true, .false, .unknownDevice] {
      #expect((outcomes[outcome] ?? 0) > 100, "seed \(seed): \(outcome) \(outcomes[outcome] ?? 0)")
    }
  }
}

enum ProcessInfo {
  static func environmentValue(_ name: String) -> String? {
    guard let value = getenv(name) else { return nil }
    return String(cString: value)
  }
}
