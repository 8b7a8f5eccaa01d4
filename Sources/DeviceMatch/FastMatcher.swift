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

  /// Totals kept by `count(_:into:)`: outcomes, and per interned key how many profiles
  /// mismatched on it (once per profile).
  public struct Totals {
    public var outcomes: [Int] = [0, 0, 0, 0]
    public var keyCounts: [Int] = []

    public init() {}

    public subscript(outcome: Outcome) -> Int {
      switch outcome {
      case .true: outcomes[0]
      case .false: outcomes[1]
      case .unknownDevice: outcomes[2]
      case .error: outcomes[3]
      }
    }
  }

  /// The incoming profile flattened for lookups by raw key bytes without reference counting:
  /// node `i` has a kind, a number or boolean, a byte range (string), and a child range; an
  /// object's children carry their key's byte range.
  enum Kind: UInt8 { case object, array, string, number, bool, null }
  struct FlatNode {
    var kind: Kind
    var truthy: Bool
    var bool: Bool
    var number: Double
    var bytes: Int  // offset in `pool`
    var length: Int
    var firstChild: Int  // index in `children`
    var childCount: Int
  }
  struct FlatChild {
    var node: Int32
    var key: Int  // offset in `pool`
    var keyLength: Int
  }

  let config: MatchConfig
  let maxUnmatchedAttrs: Double
  let enabled: Bool
  let nodes: UnsafeMutableBufferPointer<FlatNode>
  let children: UnsafeMutableBufferPointer<FlatChild>
  let pool: UnsafeMutableBufferPointer<UInt8>
  let weightKeys: UnsafeMutableBufferPointer<(Int, Int, Double)>  // pool offset, length, weight
  /// Node indices of the incoming identifier and metadata (-1: undefined).
  let identifier: Int32
  let metadata: Int32
  let incomingLatitude: Double
  let incomingLongitude: Double
  /// Scratch for the scan: key ranges of the open objects, and the mismatched key ids.
  let keyStack: UnsafeMutableBufferPointer<(UnsafePointer<UInt8>, Int)>
  let mismatches: UnsafeMutableBufferPointer<Int32>
  /// Interned mismatching key names (by bytes), for `Totals.keyCounts`.
  public private(set) var keyNames: [String] = []
  var keyBytes: [[UInt8]] = []

  /// Prepares `incoming` for replays with `matcher`'s config.
  public init(matcher: DeviceMatcher, incoming: JSON) {
    config = matcher.config
    maxUnmatchedAttrs = config.maxUnmatchedAttrs
    var flatNodes: [FlatNode] = []
    var flatChildren: [FlatChild] = []
    var bytes: [UInt8] = []
    func flatten(_ json: JSON) -> Int32 {
      let index = flatNodes.count
      flatNodes.append(FlatNode(kind: .null, truthy: false, bool: false, number: 0, bytes: 0, length: 0, firstChild: 0, childCount: 0))
      var node = flatNodes[index]
      switch json {
      case .null: break
      case .bool(let value):
        node.kind = .bool
        node.bool = value
        node.truthy = value
      case .number(let value):
        node.kind = .number
        node.number = value
        node.truthy = value != 0 && !value.isNaN
      case .string(let value):
        node.kind = .string
        node.bytes = bytes.count
        bytes.append(contentsOf: value.utf8)
        node.length = bytes.count - node.bytes
        node.truthy = node.length > 0
      case .array(let elements):
        node.kind = .array
        node.truthy = true
        let ids = elements.map(flatten)
        node.firstChild = flatChildren.count
        node.childCount = ids.count
        flatChildren.append(contentsOf: ids.map { FlatChild(node: $0, key: 0, keyLength: 0) })
      case .object(let object):
        node.kind = .object
        node.truthy = true
        var entries: [FlatChild] = []
        for member in object.members {
          let id = flatten(member.value)
          let key = bytes.count
          bytes.append(contentsOf: member.key.utf8)
          entries.append(FlatChild(node: id, key: key, keyLength: bytes.count - key))
        }
        node.firstChild = flatChildren.count
        node.childCount = entries.count
        flatChildren.append(contentsOf: entries)
      }
      flatNodes[index] = node
      return Int32(index)
    }

    var enabled = true
    if case .object = incoming {} else { enabled = false }
    let value = JSValue.json(incoming)
    if case .json(let id) = JS.get(value, "identifier") { identifier = flatten(id) } else { identifier = -1 }
    switch JS.get(value, "metadata") {
    case .json(.array):
      enabled = false
      metadata = -1
    case .json(let json): metadata = flatten(json)
    default: metadata = -1
    }
    var weightEntries: [(Int, Int, Double)] = []
    for member in matcher.metadataMatcher.weights.members {
      let key = bytes.count
      bytes.append(contentsOf: member.key.utf8)
      weightEntries.append((key, bytes.count - key, member.weight))
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
    nodes = .allocate(capacity: max(1, flatNodes.count))
    _ = nodes.initialize(from: flatNodes)
    children = .allocate(capacity: max(1, flatChildren.count))
    _ = children.initialize(from: flatChildren)
    pool = .allocate(capacity: max(1, bytes.count))
    _ = pool.initialize(from: bytes)
    weightKeys = .allocate(capacity: max(1, weightEntries.count))
    _ = weightKeys.initialize(from: weightEntries)
    keyStack = .allocate(capacity: 4096)
    mismatches = .allocate(capacity: 4096)
  }

  deinit {
    nodes.deallocate()
    children.deallocate()
    pool.deallocate()
    weightKeys.deallocate()
    keyStack.deallocate()
    mismatches.deallocate()
  }

  /// Whether the incoming profile allows the fast path at all (an object, not an array of
  /// metadata, with a readable location when locations are matched).
  public var isEnabled: Bool { enabled }

  /// The answer for one stored entry, or nil when the general path must decide.
  public func match(_ bytes: UnsafeBufferPointer<UInt8>) -> Result? {
    guard let (outcome, count) = scan(bytes) else { return nil }
    return Result(outcome: outcome, mismatchedKeys: (0..<count).map { keyNames[Int(mismatches[$0])] })
  }

  /// Counts one stored entry into `totals` and returns its outcome; nil (nothing counted)
  /// when the general path must decide.
  public func count(_ bytes: UnsafeBufferPointer<UInt8>, into totals: inout Totals) -> Outcome? {
    guard let (outcome, count) = scan(bytes) else { return nil }
    switch outcome {
    case .true: totals.outcomes[0] += 1
    case .false: totals.outcomes[1] += 1
    case .unknownDevice: totals.outcomes[2] += 1
    case .error: totals.outcomes[3] += 1
    }
    if totals.keyCounts.count < keyNames.count {
      totals.keyCounts += Array(repeating: 0, count: keyNames.count - totals.keyCounts.count)
    }
    for index in 0..<count {
      let id = mismatches[index]
      var seen = false
      for earlier in 0..<index where mismatches[earlier] == id {
        seen = true
        break
      }
      if !seen { totals.keyCounts[Int(id)] += 1 }
    }
    return outcome
  }

  func scan(_ bytes: UnsafeBufferPointer<UInt8>) -> (Outcome, Int)? {
    guard enabled, let base = bytes.baseAddress else { return nil }
    var scanner = Scanner(base: base, end: base + bytes.count, owner: self)
    guard let outcome = scanner.run() else { return nil }
    return (outcome, scanner.mismatchCount)
  }

  /// The id of a mismatching key name, interning it on first sight.
  func intern(_ key: (UnsafePointer<UInt8>, Int)) -> Int32 {
    for (id, known) in keyBytes.enumerated() where known.count == key.1 {
      if key.1 == 0 || known.withUnsafeBufferPointer({ memcmp($0.baseAddress!, key.0, key.1) }) == 0 {
        return Int32(id)
      }
    }
    let bytes = Array(UnsafeBufferPointer(start: key.0, count: key.1))
    keyBytes.append(bytes)
    keyNames.append(String(decoding: bytes, as: UTF8.self))
    return Int32(keyBytes.count - 1)
  }

  /// 10^0 … 10^22, all exact doubles.
  static let powersOfTen: [Double] = (0...22).map { exponent in
    var value = 1.0
    for _ in 0..<exponent { value *= 10 }
    return value
  }

  /// Bails out of the fast path.
  struct Bail: Error {}

  struct Scanner {
    let base: UnsafePointer<UInt8>
    let end: UnsafePointer<UInt8>
    unowned(unsafe) let owner: FastMatcher
    let nodes: UnsafeMutablePointer<FlatNode>
    let children: UnsafeMutablePointer<FlatChild>
    let pool: UnsafeMutablePointer<UInt8>
    let keyStack: UnsafeMutablePointer<(UnsafePointer<UInt8>, Int)>
    let maximum: Double
    var p: UnsafePointer<UInt8>
    var sum = 0.0
    var mismatchCount = 0
    /// Keys of the open objects: `keyTop` entries on `keyStack`.
    var keyTop = 0
    var depth = 0

    init(base: UnsafePointer<UInt8>, end: UnsafePointer<UInt8>, owner: FastMatcher) {
      self.base = base
      self.end = end
      self.owner = owner
      nodes = owner.nodes.baseAddress!
      children = owner.children.baseAddress!
      pool = owner.pool.baseAddress!
      keyStack = owner.keyStack.baseAddress!
      maximum = owner.maxUnmatchedAttrs
      p = base
    }

    mutating func run() -> Outcome? {
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
      // Eight bytes at a time while none is a quote, a backslash, a control or a non-ASCII byte.
      let ones: UInt64 = 0x0101_0101_0101_0101
      while end - p >= 8 {
        let v = UnsafeRawPointer(p).loadUnaligned(as: UInt64.self)
        let quote = v ^ (ones &* 0x22)
        let backslash = v ^ (ones &* 0x5C)
        let special = ((quote &- ones) & ~quote) | ((backslash &- ones) & ~backslash) | ((v &- ones &* 0x20) & ~v) | v
        if special & (ones &* 0x80) != 0 { break }
        p += 8
      }
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
      guard let (length, low, high) = utf8LeadByte(p.pointee) else { throw Bail() }
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
      var fractionDigits = 0
      if p < end, p.pointee == UInt8(ascii: ".") {
        p += 1
        guard p < end, p.pointee &- 0x30 < 10 else { throw Bail() }
        while p < end, p.pointee &- 0x30 < 10 {
          mantissa = mantissa &* 10 &+ UInt64(p.pointee &- 0x30)
          digits += 1
          fractionDigits += 1
          p += 1
        }
      }
      if p < end, p.pointee | 0x20 == UInt8(ascii: "e") {
        simple = false
        p += 1
        if p < end, p.pointee == UInt8(ascii: "+") || p.pointee == UInt8(ascii: "-") { p += 1 }
        guard p < end, p.pointee &- 0x30 < 10 else { throw Bail() }
        while p < end, p.pointee &- 0x30 < 10 { p += 1 }
      }
      if simple && digits <= 15 && fractionDigits <= 22 {
        // Clinger's fast path: both operands are exact doubles, so one IEEE division is the
        // correctly rounded value of the literal.
        let value = fractionDigits == 0 ? Double(mantissa) : Double(mantissa) / FastMatcher.powersOfTen[fractionDigits]
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
    /// `frame` is where the current object's keys start on the key stack.
    @inline(__always) mutating func key(_ frame: Int) throws(Bail) -> (UnsafePointer<UInt8>, Int) {
      guard try peek() == 0x22 else { throw Bail() }
      let key = try string()
      if key.1 > 0 && key.0.pointee &- 0x30 < 10 { throw Bail() }
      var index = frame
      while index < keyTop {
        let previous = keyStack[index]
        if previous.1 == key.1 && (key.1 == 0 || (previous.0.pointee == key.0.pointee && memcmp(previous.0, key.0, key.1) == 0)) {
          throw Bail()
        }
        index += 1
      }
      guard keyTop < 4096 else { throw Bail() }
      keyStack[keyTop] = key
      keyTop += 1
      skipWhitespace()
      guard try peek() == UInt8(ascii: ":") else { throw Bail() }
      p += 1
      skipWhitespace()
      return key
    }

    /// Opens an object or array level.
    @inline(__always) mutating func enter() throws(Bail) {
      depth += 1
      if depth > 512 { throw Bail() }
    }

    // MARK: Values

    /// Scans the members of an object after its `{`, calling `body` with each key while the
    /// cursor is at the member's value; `body` must consume the value.
    @inline(__always)
    mutating func members(_ body: (inout Scanner, (UnsafePointer<UInt8>, Int)) throws(Bail) -> Void) throws(Bail) {
      try enter()
      let frame = keyTop
      skipWhitespace()
      if try peek() == UInt8(ascii: "}") {
        p += 1
      } else {
        while true {
          let name = try key(frame)
          try body(&self, name)
          skipWhitespace()
          let byte = try peek()
          p += 1
          if byte == UInt8(ascii: "}") { break }
          guard byte == UInt8(ascii: ",") else { throw Bail() }
          skipWhitespace()
        }
      }
      keyTop = frame
      depth -= 1
    }

    /// Scans the elements of an array after its `[`, calling `body` with each index.
    @inline(__always)
    mutating func elements(_ body: (inout Scanner, Int) throws(Bail) -> Void) throws(Bail) {
      try enter()
      skipWhitespace()
      if try peek() == UInt8(ascii: "]") {
        p += 1
      } else {
        var index = 0
        while true {
          try body(&self, index)
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
    }

    /// Validates a value without comparing.
    mutating func skipValue() throws(Bail) {
      switch try peek() {
      case UInt8(ascii: "{"):
        p += 1
        try members { (scanner, _) throws(Bail) in try scanner.skipValue() }
      case UInt8(ascii: "["):
        p += 1
        try elements { (scanner, _) throws(Bail) in try scanner.skipValue() }
      case UInt8(ascii: "\""): _ = try string()
      case UInt8(ascii: "t"): try literal("true")
      case UInt8(ascii: "f"): try literal("false")
      case UInt8(ascii: "n"): try literal("null")
      default: _ = try number()
      }
    }

    /// The incoming side at a place: a node index, -1 for undefined.
    typealias Incoming = Int32

    /// `incoming && incoming[key]` for an object member; bails where JavaScript would index
    /// a string or an array by name.
    @inline(__always) func member(_ incoming: Incoming, _ key: (UnsafePointer<UInt8>, Int)) throws(Bail) -> Incoming {
      guard incoming >= 0 else { return incoming }
      let node = nodes[Int(incoming)]
      guard node.truthy else { return incoming }
      switch node.kind {
      case .object:
        var index = node.firstChild
        let stop = index + node.childCount
        while index < stop {
          let child = children[index]
          if child.keyLength == key.1 && (key.1 == 0 || memcmp(pool + child.key, key.0, key.1) == 0) { return child.node }
          index += 1
        }
        return -1
      case .number, .bool: return -1
      case .string, .array, .null: throw Bail()
      }
    }

    /// `incoming && incoming[index]` for an array element.
    @inline(__always) func element(_ incoming: Incoming, _ index: Int) throws(Bail) -> Incoming {
      guard incoming >= 0 else { return incoming }
      let node = nodes[Int(incoming)]
      guard node.truthy else { return incoming }
      switch node.kind {
      case .array: return index < node.childCount ? children[node.firstChild + index].node : -1
      case .number, .bool: return -1
      case .string, .object, .null: throw Bail()
      }
    }

    /// Walks a stored value against the incoming one, as `checkValueOrCallNext` does.
    mutating func compare(_ incoming: Incoming, key leafKey: (UnsafePointer<UInt8>, Int)) throws(Bail) {
      if sum > maximum { return try skipValue() }
      switch try peek() {
      case UInt8(ascii: "{"):
        p += 1
        try members { (scanner, name) throws(Bail) in
          if scanner.sum > scanner.maximum {
            try scanner.skipValue()
          } else {
            try scanner.compare(try scanner.member(incoming, name), key: name)
          }
        }
      case UInt8(ascii: "["):
        p += 1
        try elements { (scanner, index) throws(Bail) in
          if scanner.sum > scanner.maximum {
            try scanner.skipValue()
          } else {
            try scanner.compare(try scanner.element(incoming, index), key: leafKey)
          }
        }
      default:
        if try !leafEquals(incoming) { mismatch(leafKey) }
      }
    }

    /// Reads a leaf and compares it with `!==`.
    mutating func leafEquals(_ incoming: Incoming) throws(Bail) -> Bool {
      let node: FlatNode? = incoming >= 0 ? nodes[Int(incoming)] : nil
      switch try peek() {
      case UInt8(ascii: "\""):
        let text = try string()
        guard let node, node.kind == .string, node.length == text.1 else { return false }
        return text.1 == 0 || memcmp(pool + node.bytes, text.0, text.1) == 0
      case UInt8(ascii: "t"):
        try literal("true")
        return node?.kind == .bool && node!.bool
      case UInt8(ascii: "f"):
        try literal("false")
        return node?.kind == .bool && !node!.bool
      case UInt8(ascii: "n"):
        try literal("null")
        return node?.kind == .null
      case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
        let value = try number()
        return node?.kind == .number && node!.number == value
      default:
        throw Bail()
      }
    }

    mutating func mismatch(_ key: (UnsafePointer<UInt8>, Int)) {
      var weight = 1.0
      for entry in owner.weightKeys where entry.1 == key.1 {
        if key.1 == 0 || memcmp(pool + entry.0, key.0, key.1) == 0 {
          weight = entry.2
          break
        }
      }
      sum += weight
      if mismatchCount < owner.mismatches.count {
        owner.mismatches[mismatchCount] = owner.intern(key)
        mismatchCount += 1
      }
    }

    // MARK: The profile

    mutating func profile() throws(Bail) -> Outcome {
      skipWhitespace()
      guard try peek() == UInt8(ascii: "{") else { throw Bail() }
      p += 1
      let config = owner.config
      let incomingIdentifier = owner.identifier
      let incomingMetadata = owner.metadata
      var identifierSeen = false
      var identifierEqual = incomingIdentifier < 0  // undefined === undefined
      var metadataStart: UnsafePointer<UInt8>?
      var metadataCompared = false
      var latitude = Double.nan
      var longitude = Double.nan
      var locationSeen = false
      try members { (scanner, name) throws(Bail) in
        if name.1 == 10 && memcmp(name.0, "identifier", 10) == 0 {
          identifierSeen = true
          identifierEqual = try scanner.identifierEquals(incomingIdentifier)
        } else if name.1 == 8 && memcmp(name.0, "metadata", 8) == 0 {
          guard try scanner.peek() == UInt8(ascii: "{") else { throw Bail() }
          metadataStart = scanner.p
          if identifierSeen && identifierEqual && config.matchMetadata {
            try scanner.compare(incomingMetadata, key: name)
            metadataCompared = true
          } else {
            try scanner.skipValue()
          }
        } else if name.1 == 8 && memcmp(name.0, "location", 8) == 0 {
          locationSeen = true
          (latitude, longitude) = try scanner.location()
        } else {
          try scanner.skipValue()
        }
      }
      skipWhitespace()
      guard p == end else { throw Bail() }
      guard identifierEqual && (identifierSeen || incomingIdentifier < 0) else { return .unknownDevice }
      var matches = true
      if config.matchMetadata {
        // Missing stored metadata throws in the script: the general path reports it.
        guard let metadataStart else { throw Bail() }
        if !metadataCompared {
          p = metadataStart
          try compare(incomingMetadata, key: (metadataStart, 0))
        }
        matches = sum <= maximum
      }
      if config.matchLocation {
        guard locationSeen else { throw Bail() }
        let distance = Geolib.distance(
          fromLatitude: owner.incomingLatitude, fromLongitude: owner.incomingLongitude, toLatitude: latitude,
          toLongitude: longitude)
        matches = matches && distance < config.allowedRadius
      }
      return matches ? .true : .false
    }

    /// `incoming.identifier === stored.identifier` for the stored value at `p`.
    mutating func identifierEquals(_ incoming: Incoming) throws(Bail) -> Bool {
      switch try peek() {
      case UInt8(ascii: "{"), UInt8(ascii: "["):
        try skipValue()
        return false
      default:
        guard incoming >= 0, nodes[Int(incoming)].kind != .object, nodes[Int(incoming)].kind != .array else {
          try skipValue()
          return false
        }
        return try leafEquals(incoming)
      }
    }

    /// A stored location object with plain numeric coordinates under geolib's keys.
    mutating func location() throws(Bail) -> (Double, Double) {
      guard try peek() == UInt8(ascii: "{") else { throw Bail() }
      p += 1
      // Ranks in geolib's key lists (lower wins): lat 0, latitude 1; lng 0, lon 1, longitude 2.
      var latitude = (rank: 9, value: Double.nan)
      var longitude = (rank: 9, value: Double.nan)
      try members { (scanner, name) throws(Bail) in
        let latitudeRank = Self.rank(name, ["lat", "latitude"])
        let longitudeRank = Self.rank(name, ["lng", "lon", "longitude"])
        if latitudeRank != nil || longitudeRank != nil {
          let first = try scanner.peek()
          guard first == UInt8(ascii: "-") || first &- 0x30 < 10 else { throw Bail() }
          let value = try scanner.number()
          if let latitudeRank, latitudeRank < latitude.rank { latitude = (latitudeRank, value) }
          if let longitudeRank, longitudeRank < longitude.rank { longitude = (longitudeRank, value) }
        } else {
          try scanner.skipValue()
        }
      }
      return (latitude.value, longitude.value)
    }

    static func rank(_ key: (UnsafePointer<UInt8>, Int), _ names: [StaticString]) -> Int? {
      for (rank, name) in names.enumerated() where name.utf8CodeUnitCount == key.1 {
        if memcmp(name.utf8Start, key.0, key.1) == 0 { return rank }
      }
      return nil
    }
  }
}

extension FastMatcher {
  /// A stored entry placed within its block (one the fast path left to the general path, or
  /// the first one it decided).
  public struct Deferred {
    /// Position of the entry among the block's entries.
    public var ordinal: Int
    public var offset: Int
    public var length: Int
    /// 0-based line within the block and 1-based column.
    public var line: Int
    public var column: Int
  }

  /// What `scanLines` found in a block of JSON Lines.
  public struct BlockReport {
    public var entries = 0
    /// The first entry the fast path answered true/false, if any.
    public var firstDecided: Deferred?
    public var deferred: [Deferred] = []

    public init() {}
  }

  /// Matches every line of a block of JSON Lines (whole lines), splitting them the way
  /// `StoredProfileReader.next()` does: leading blank space and blank lines are skipped.
  public func scanLines(_ block: UnsafeBufferPointer<UInt8>, totals: inout Totals) -> BlockReport {
    var report = BlockReport()
    guard let base = block.baseAddress else { return report }
    let stop = base + block.count
    var cursor = base
    var line = 0
    var lineStart = base
    while cursor < stop {
      let byte = cursor.pointee
      if byte == 0x0A {
        line += 1
        cursor += 1
        lineStart = cursor
        continue
      }
      if byte == 0x0D || byte == 0x20 || byte == 0x09 {
        cursor += 1
        continue
      }
      let lineEnd: UnsafePointer<UInt8>
      if let found = memchr(cursor, 0x0A, stop - cursor) {
        lineEnd = UnsafePointer(found.assumingMemoryBound(to: UInt8.self))
      } else {
        lineEnd = stop
      }
      let entry = UnsafeBufferPointer(start: cursor, count: lineEnd - cursor)
      func placed() -> Deferred {
        var column = 1
        var scan = lineStart
        while scan < cursor {
          if scan.pointee & 0xC0 != 0x80 { column += 1 }
          scan += 1
        }
        return Deferred(ordinal: report.entries, offset: cursor - base, length: lineEnd - cursor, line: line, column: column)
      }
      if let outcome = count(entry, into: &totals) {
        if report.firstDecided == nil && outcome != .unknownDevice { report.firstDecided = placed() }
      } else {
        report.deferred.append(placed())
      }
      report.entries += 1
      cursor = lineEnd
    }
    return report
  }
}
