#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif
import ProfileJSON

/// A specialised path for replaying many stored profiles: it validates and matches the stored
/// JSON text in one pass, without building a tree, against an incoming profile prepared once.
///
/// It answers only the common case — a stored profile that is a plain JSON object whose keys
/// have no escapes, no array-index names and no duplicates, with numeric coordinates — and
/// returns `nil` for anything else (including any text that is not valid JSON), so the caller
/// uses the general path (`ProfileText` + `DeviceMatcher`), which stays the reference.
/// Tests check that both paths agree.
public final class FastMatcher {
  /// The outcome and the keys of the mismatching leaves, in visit order.
  public struct Result: Equatable {
    public var outcome: Outcome
    public var mismatchedKeys: [String]
  }

  /// The incoming profile, prepared for lookups by raw key bytes.
  final class Node {
    enum Kind { case object, array, string, number, bool, null }
    let kind: Kind
    var keys: [[UInt8]] = []
    var children: [Node] = []
    var bytes: [UInt8] = []
    var number = 0.0
    var bool = false

    init(_ json: JSON) {
      switch json {
      case .null: kind = .null
      case .bool(let value):
        kind = .bool
        bool = value
      case .number(let value):
        kind = .number
        number = value
      case .string(let value):
        kind = .string
        bytes = Array(value.utf8)
      case .array(let elements):
        kind = .array
        children = elements.map(Node.init)
      case .object(let object):
        kind = .object
        keys = object.members.map { Array($0.key.utf8) }
        children = object.members.map { Node($0.value) }
      }
    }

    /// JavaScript truthiness.
    var truthy: Bool {
      switch kind {
      case .null: false
      case .bool: bool
      case .number: number != 0 && !number.isNaN
      case .string: !bytes.isEmpty
      case .array, .object: true
      }
    }
  }

  let config: MatchConfig
  let weights: [([UInt8], Double)]
  let enabled: Bool
  let identifier: Node?
  let metadata: Node?
  let incomingLatitude: Double
  let incomingLongitude: Double

  public init(matcher: DeviceMatcher, incoming: JSON) {
    config = matcher.config
    weights = matcher.metadataMatcher.weights.members.map { (Array($0.key.utf8), $0.weight) }
    var enabled = true
    if case .object = incoming {} else { enabled = false }
    let value = JSValue.json(incoming)
    if case .json(let id) = JS.get(value, "identifier") { identifier = Node(id) } else { identifier = nil }
    switch JS.get(value, "metadata") {
    case .json(.array): enabled = false; metadata = nil
    case .json(let json): metadata = Node(json)
    default: metadata = nil
    }
    var latitude = Double.nan
    var longitude = Double.nan
    if config.matchLocation {
      let location = JS.get(value, "location")
      do {
        latitude = try Geolib.coordinate(location, keys: Geolib.latitudeKeys)
        longitude = try Geolib.coordinate(location, keys: Geolib.longitudeKeys)
      } catch {
        enabled = false
      }
    }
    incomingLatitude = latitude
    incomingLongitude = longitude
    self.enabled = enabled
  }

  /// The answer for one stored entry, or nil when the general path must decide.
  public func match(_ bytes: UnsafeBufferPointer<UInt8>) -> Result? {
    guard enabled, let base = bytes.baseAddress else { return nil }
    var scanner = Scanner(base: base, end: base + bytes.count, owner: self)
    return scanner.run()
  }

  /// Bails out of the fast path.
  struct Bail: Error {}

  struct Scanner {
    let base: UnsafePointer<UInt8>
    let end: UnsafePointer<UInt8>
    let owner: FastMatcher
    var p: UnsafePointer<UInt8>
    var sum = 0.0
    var mismatchedKeys: [String] = []
    /// Key ranges of the objects being scanned, for duplicate detection (one list per depth).
    var keyStack: [[(UnsafePointer<UInt8>, Int)]] = []
    var depth = 0

    init(base: UnsafePointer<UInt8>, end: UnsafePointer<UInt8>, owner: FastMatcher) {
      self.base = base
      self.end = end
      self.owner = owner
      p = base
    }

    mutating func run() -> Result? {
      do { return try profile() } catch { return nil }
    }

    // MARK: Tokens

    @inline(__always) mutating func skipWhitespace() {
      while p < end {
        let byte = p.pointee
        if byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { p += 1 } else { return }
      }
    }

    @inline(__always) func peek() throws(Bail) -> UInt8 {
      guard p < end else { throw Bail() }
      return p.pointee
    }

    /// A string's raw bytes (validated, no escapes; escapes bail) after its opening quote.
    @inline(__always) mutating func string() throws(Bail) -> (UnsafePointer<UInt8>, Int) {
      p += 1
      let start = p
      while p < end {
        let byte = p.pointee
        if byte == 0x22 {
          let length = p - start
          p += 1
          return (start, length)
        }
        if byte == 0x5C || byte < 0x20 { throw Bail() }
        if byte >= 0x80 { try utf8Sequence() } else { p += 1 }
      }
      throw Bail()
    }

    mutating func utf8Sequence() throws(Bail) {
      let lead = p.pointee
      var low: UInt8 = 0x80
      var high: UInt8 = 0xBF
      let length: Int
      switch lead {
      case 0xC2...0xDF: length = 2
      case 0xE0: length = 3; low = 0xA0
      case 0xE1...0xEC, 0xEE...0xEF: length = 3
      case 0xED: length = 3; high = 0x9F
      case 0xF0: length = 4; low = 0x90
      case 0xF1...0xF3: length = 4
      case 0xF4: length = 4; high = 0x8F
      default: throw Bail()
      }
      guard end - p >= length else { throw Bail() }
      let second = p[1]
      guard second >= low && second <= high else { throw Bail() }
      for index in 2..<max(2, length) where p[index] & 0xC0 != 0x80 { throw Bail() }
      p += length
    }

    /// A number literal (validated) and its value.
    mutating func number() throws(Bail) -> Double {
      let start = p
      if p.pointee == UInt8(ascii: "-") { p += 1 }
      guard p < end else { throw Bail() }
      var mantissa: UInt64 = 0
      var digits = 0
      if p.pointee == UInt8(ascii: "0") {
        p += 1
      } else {
        guard p.pointee &- 0x30 < 10 else { throw Bail() }
        while p < end, p.pointee &- 0x30 < 10 {
          mantissa = mantissa &* 10 &+ UInt64(p.pointee &- 0x30)
          digits += 1
          p += 1
        }
      }
      var simple = true
      if p < end, p.pointee == UInt8(ascii: ".") {
        simple = false
        p += 1
        guard p < end, p.pointee &- 0x30 < 10 else { throw Bail() }
        while p < end, p.pointee &- 0x30 < 10 { p += 1 }
      }
      if p < end, p.pointee | 0x20 == UInt8(ascii: "e") {
        simple = false
        p += 1
        if p < end, p.pointee == UInt8(ascii: "+") || p.pointee == UInt8(ascii: "-") { p += 1 }
        guard p < end, p.pointee &- 0x30 < 10 else { throw Bail() }
        while p < end, p.pointee &- 0x30 < 10 { p += 1 }
      }
      if simple && digits <= 15 {
        let value = Double(mantissa)
        return start.pointee == UInt8(ascii: "-") ? -value : value
      }
      let length = p - start
      guard length < 128 else { throw Bail() }
      return withUnsafeTemporaryAllocation(of: CChar.self, capacity: length + 1) { buffer in
        for index in 0..<length { buffer[index] = CChar(bitPattern: start[index]) }
        buffer[length] = 0
        return strtod(buffer.baseAddress!, nil)
      }
    }

    @inline(__always) mutating func literal(_ word: StaticString) throws(Bail) {
      let count = word.utf8CodeUnitCount
      guard end - p >= count else { throw Bail() }
      for index in 0..<count where p[index] != word.utf8Start[index] { throw Bail() }
      p += count
    }

    /// Reads a key and its colon; bails on array-index-like names and duplicates.
    mutating func key() throws(Bail) -> (UnsafePointer<UInt8>, Int) {
      guard try peek() == 0x22 else { throw Bail() }
      let key = try string()
      if key.1 > 0 && key.0.pointee &- 0x30 < 10 { throw Bail() }
      for previous in keyStack[depth - 1] where previous.1 == key.1 {
        if memcmp(previous.0, key.0, key.1) == 0 { throw Bail() }
      }
      keyStack[depth - 1].append(key)
      skipWhitespace()
      guard try peek() == UInt8(ascii: ":") else { throw Bail() }
      p += 1
      skipWhitespace()
      return key
    }

    mutating func enter() throws(Bail) {
      depth += 1
      if depth > 512 { throw Bail() }
      while keyStack.count < depth { keyStack.append([]) }
      keyStack[depth - 1].removeAll(keepingCapacity: true)
    }

    // MARK: Values

    /// Validates a value without comparing.
    mutating func skipValue() throws(Bail) {
      switch try peek() {
      case UInt8(ascii: "{"):
        p += 1
        try enter()
        skipWhitespace()
        if try peek() == UInt8(ascii: "}") {
          p += 1
        } else {
          while true {
            _ = try key()
            try skipValue()
            skipWhitespace()
            let byte = try peek()
            p += 1
            if byte == UInt8(ascii: "}") { break }
            guard byte == UInt8(ascii: ",") else { throw Bail() }
            skipWhitespace()
          }
        }
        depth -= 1
      case UInt8(ascii: "["):
        p += 1
        depth += 1
        if depth > 512 { throw Bail() }
        skipWhitespace()
        if try peek() == UInt8(ascii: "]") {
          p += 1
        } else {
          while true {
            try skipValue()
            skipWhitespace()
            let byte = try peek()
            p += 1
            if byte == UInt8(ascii: "]") { break }
            guard byte == UInt8(ascii: ",") else { throw Bail() }
            skipWhitespace()
          }
        }
        depth -= 1
      case UInt8(ascii: "\""): _ = try string()
      case UInt8(ascii: "t"): try literal("true")
      case UInt8(ascii: "f"): try literal("false")
      case UInt8(ascii: "n"): try literal("null")
      default: _ = try number()
      }
    }

    /// The incoming side at a place: `nil` is undefined.
    typealias Incoming = Node?

    /// `incoming && incoming[key]` for an object member; bails where JavaScript would index
    /// a string or an array by name.
    @inline(__always) func member(_ incoming: Incoming, _ key: (UnsafePointer<UInt8>, Int)) throws(Bail) -> Incoming {
      guard let node = incoming, node.truthy else { return incoming }
      switch node.kind {
      case .object:
        for (index, candidate) in node.keys.enumerated() where Self.same(candidate, key) {
          return node.children[index]
        }
        return nil
      case .number, .bool: return nil
      case .string, .array, .null: throw Bail()
      }
    }

    /// `incoming && incoming[index]` for an array element.
    @inline(__always) func element(_ incoming: Incoming, _ index: Int) throws(Bail) -> Incoming {
      guard let node = incoming, node.truthy else { return incoming }
      switch node.kind {
      case .array: return index < node.children.count ? node.children[index] : nil
      case .number, .bool: return nil
      case .string, .object, .null: throw Bail()
      }
    }

    /// Walks a stored value against the incoming one, as `checkValueOrCallNext` does.
    mutating func compare(_ incoming: Incoming, key leafKey: (UnsafePointer<UInt8>, Int)) throws(Bail) {
      if sum > owner.config.maxUnmatchedAttrs { return try skipValue() }
      switch try peek() {
      case UInt8(ascii: "{"):
        p += 1
        try enter()
        skipWhitespace()
        if try peek() == UInt8(ascii: "}") {
          p += 1
        } else {
          while true {
            let name = try key()
            if sum > owner.config.maxUnmatchedAttrs {
              try skipValue()
            } else {
              try compare(try member(incoming, name), key: name)
            }
            skipWhitespace()
            let byte = try peek()
            p += 1
            if byte == UInt8(ascii: "}") { break }
            guard byte == UInt8(ascii: ",") else { throw Bail() }
            skipWhitespace()
          }
        }
        depth -= 1
      case UInt8(ascii: "["):
        p += 1
        depth += 1
        if depth > 512 { throw Bail() }
        skipWhitespace()
        if try peek() == UInt8(ascii: "]") {
          p += 1
        } else {
          var index = 0
          while true {
            if sum > owner.config.maxUnmatchedAttrs {
              try skipValue()
            } else {
              try compare(try element(incoming, index), key: leafKey)
            }
            index += 1
            skipWhitespace()
            let byte = try peek()
            p += 1
            if byte == UInt8(ascii: "]") { break }
            guard byte == UInt8(ascii: ",") else { throw Bail() }
            skipWhitespace()
          }
        }
        depth -= 1
      default:
        if try !leafEquals(incoming) { mismatch(leafKey) }
      }
    }

    /// Reads a leaf and compares it with `!==`.
    mutating func leafEquals(_ incoming: Incoming) throws(Bail) -> Bool {
      switch try peek() {
      case UInt8(ascii: "\""):
        let text = try string()
        guard let node = incoming, node.kind == .string, node.bytes.count == text.1 else { return false }
        return Self.same(node.bytes, text)
      case UInt8(ascii: "t"):
        try literal("true")
        return incoming?.kind == .bool && incoming!.bool
      case UInt8(ascii: "f"):
        try literal("false")
        return incoming?.kind == .bool && !incoming!.bool
      case UInt8(ascii: "n"):
        try literal("null")
        return incoming?.kind == .null
      case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
        let value = try number()
        return incoming?.kind == .number && incoming!.number == value
      default:
        throw Bail()
      }
    }

    mutating func mismatch(_ key: (UnsafePointer<UInt8>, Int)) {
      var weight = 1.0
      for (name, value) in owner.weights where Self.same(name, key) {
        weight = value
        break
      }
      sum += weight
      mismatchedKeys.append(String(decoding: UnsafeBufferPointer(start: key.0, count: key.1), as: UTF8.self))
    }

    // MARK: The profile

    mutating func profile() throws(Bail) -> Result {
      skipWhitespace()
      guard try peek() == UInt8(ascii: "{") else { throw Bail() }
      p += 1
      try enter()
      var identifierSeen = false
      var identifierEqual = owner.identifier == nil  // undefined === undefined
      var metadataStart: UnsafePointer<UInt8>?
      var metadataCompared = false
      var latitude = Double.nan
      var longitude = Double.nan
      var locationSeen = false
      skipWhitespace()
      if try peek() == UInt8(ascii: "}") {
        p += 1
      } else {
        while true {
          let name = try key()
          if name.1 == 10 && memcmp(name.0, "identifier", 10) == 0 {
            identifierSeen = true
            identifierEqual = try identifierEquals()
          } else if name.1 == 8 && memcmp(name.0, "metadata", 8) == 0 {
            guard try peek() == UInt8(ascii: "{") else { throw Bail() }
            metadataStart = p
            if identifierSeen && identifierEqual && owner.config.matchMetadata {
              try compare(owner.metadata, key: name)
              metadataCompared = true
            } else {
              try skipValue()
            }
          } else if name.1 == 8 && memcmp(name.0, "location", 8) == 0 {
            locationSeen = true
            (latitude, longitude) = try location()
          } else {
            try skipValue()
          }
          skipWhitespace()
          let byte = try peek()
          p += 1
          if byte == UInt8(ascii: "}") { break }
          guard byte == UInt8(ascii: ",") else { throw Bail() }
          skipWhitespace()
        }
      }
      depth -= 1
      skipWhitespace()
      guard p == end else { throw Bail() }
      guard identifierEqual && (identifierSeen || owner.identifier == nil) else {
        return Result(outcome: .unknownDevice, mismatchedKeys: [])
      }
      var matches = true
      if owner.config.matchMetadata {
        // Missing stored metadata throws in the script: the general path reports it.
        guard let metadataStart else { throw Bail() }
        if !metadataCompared {
          p = metadataStart
          depth = 1
          try compare(owner.metadata, key: (metadataStart, 0))
        }
        matches = sum <= owner.config.maxUnmatchedAttrs
      }
      if owner.config.matchLocation {
        guard locationSeen else { throw Bail() }
        let distance = Geolib.distance(
          fromLatitude: owner.incomingLatitude, fromLongitude: owner.incomingLongitude, toLatitude: latitude,
          toLongitude: longitude)
        matches = matches && distance < owner.config.allowedRadius
      }
      return Result(outcome: matches ? .true : .false, mismatchedKeys: mismatchedKeys)
    }

    /// `incoming.identifier === stored.identifier` for the stored value at `p`.
    mutating func identifierEquals() throws(Bail) -> Bool {
      switch try peek() {
      case UInt8(ascii: "{"), UInt8(ascii: "["):
        try skipValue()
        return false
      default:
        guard let node = owner.identifier, node.kind != .object, node.kind != .array else {
          try skipValue()
          return false
        }
        return try leafEquals(node)
      }
    }

    /// A stored location object with plain numeric coordinates under geolib's keys.
    mutating func location() throws(Bail) -> (Double, Double) {
      guard try peek() == UInt8(ascii: "{") else { throw Bail() }
      p += 1
      try enter()
      // Ranks in geolib's key lists (lower wins): lat 0, latitude 1; lng 0, lon 1, longitude 2.
      var latitude = (rank: 9, value: Double.nan)
      var longitude = (rank: 9, value: Double.nan)
      skipWhitespace()
      if try peek() == UInt8(ascii: "}") {
        p += 1
      } else {
        while true {
          let name = try key()
          let latitudeRank = Self.rank(name, ["lat", "latitude"])
          let longitudeRank = Self.rank(name, ["lng", "lon", "longitude"])
          if latitudeRank != nil || longitudeRank != nil {
            let first = try peek()
            guard first == UInt8(ascii: "-") || first &- 0x30 < 10 else { throw Bail() }
            let value = try number()
            if let latitudeRank, latitudeRank < latitude.rank { latitude = (latitudeRank, value) }
            if let longitudeRank, longitudeRank < longitude.rank { longitude = (longitudeRank, value) }
          } else {
            try skipValue()
          }
          skipWhitespace()
          let byte = try peek()
          p += 1
          if byte == UInt8(ascii: "}") { break }
          guard byte == UInt8(ascii: ",") else { throw Bail() }
          skipWhitespace()
        }
      }
      depth -= 1
      return (latitude.value, longitude.value)
    }

    /// Whether `bytes` equals the raw text `key`.
    @inline(__always) static func same(_ bytes: [UInt8], _ key: (UnsafePointer<UInt8>, Int)) -> Bool {
      guard bytes.count == key.1 else { return false }
      if key.1 == 0 { return true }
      return bytes.withUnsafeBufferPointer { memcmp($0.baseAddress!, key.0, key.1) == 0 }
    }

    static func rank(_ key: (UnsafePointer<UInt8>, Int), _ names: [StaticString]) -> Int? {
      for (rank, name) in names.enumerated() where name.utf8CodeUnitCount == key.1 {
        if memcmp(name.utf8Start, key.0, key.1) == 0 { return rank }
      }
      return nil
    }
  }
}
