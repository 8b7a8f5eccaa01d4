@_spi(JSONTokenizer) import ProfileJSON

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// The replay engine's fast path: it validates and matches a stored profile's JSON text in
/// one pass of the shared tokenizer (`JSONScanner`), without building a tree, against an
/// incoming profile prepared once.
///
/// It answers only the common case — a stored profile that is a plain JSON object whose keys
/// have no escapes, no array-index names and no duplicates, with numeric coordinates — and
/// returns `nil` for anything else: any text that is not valid JSON, and every limit of its
/// own (nesting deeper than `maxDepth`, more than `maxKeys` open keys, more than
/// `maxMismatches` mismatches). The caller then uses the reference path (`ProfileText` +
/// `DeviceMatcher`), so a limit never truncates an answer. A seeded differential test
/// (DeviceMatchTests/DifferentialTests) holds both paths equal.
package final class FastMatcher {
  /// Nesting the fast path follows; deeper entries go to the reference path.
  package static let maxDepth = 512
  /// Keys of open objects it tracks (for duplicate detection); more go to the reference path.
  package static let maxKeys = 4096
  /// Mismatches it records per entry; more go to the reference path.
  package static let maxMismatches = 4096

  /// The outcome and the keys of the mismatching leaves, in visit order.
  package struct Result: Equatable {
    package var outcome: Outcome
    package var mismatchedKeys: [String]
  }

  /// Totals kept by `count(_:into:)`: outcomes, and per interned key how many profiles
  /// mismatched on it (once per profile).
  package struct Totals {
    package var outcomes: [Int] = [0, 0, 0, 0]
    package var keyCounts: [Int] = []

    package init() {}

    package subscript(outcome: Outcome) -> Int {
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
  let weights: Weights
  /// geolib's coordinate key names (`Geolib.latitudeKeys`, `.longitudeKeys`) as UTF-8; the
  /// first in each list that a location owns is the one read.
  let latitudeKeys: [[UInt8]]
  let longitudeKeys: [[UInt8]]
  /// Node indices of the incoming identifier and metadata (-1: undefined).
  let identifier: Int32
  let metadata: Int32
  let incomingLatitude: Double
  let incomingLongitude: Double
  /// Scratch for the scan: key ranges of the open objects, and the mismatched key ids.
  let keyStack: UnsafeMutableBufferPointer<(UnsafePointer<UInt8>, Int)>
  let mismatches: UnsafeMutableBufferPointer<Int32>
  /// Interned mismatching key names (by bytes), for `Totals.keyCounts`.
  package private(set) var keyNames: [String] = []
  var keyBytes: [[UInt8]] = []

  /// Prepares `incoming` for replays with `matcher`'s config.
  package init(matcher: DeviceMatcher, incoming: JSON) {
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
    weights = matcher.metadataMatcher.weights
    latitudeKeys = Geolib.latitudeKeys.map { Array($0.utf8) }
    longitudeKeys = Geolib.longitudeKeys.map { Array($0.utf8) }
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
    // Eight bytes of padding: `sameText` reads a whole word at any key or string start.
    pool = .allocate(capacity: bytes.count + 8)
    _ = pool.initialize(from: bytes + Array(repeating: 0, count: 8))
    keyStack = .allocate(capacity: FastMatcher.maxKeys)
    mismatches = .allocate(capacity: FastMatcher.maxMismatches)
  }

  deinit {
    nodes.deallocate()
    children.deallocate()
    pool.deallocate()
    keyStack.deallocate()
    mismatches.deallocate()
  }

  /// Whether the incoming profile allows the fast path at all (an object, not an array of
  /// metadata, with a readable location when locations are matched).
  package var isEnabled: Bool { enabled }

  /// The answer for one stored entry, or nil when the general path must decide.
  package func match(_ bytes: UnsafeBufferPointer<UInt8>) -> Result? {
    guard case .answered(let outcome, let count) = scan(bytes) else { return nil }
    return Result(outcome: outcome, mismatchedKeys: (0..<count).map { keyNames[Int(mismatches[$0])] })
  }

  /// How `count(_:into:handingOffMatch:)` dealt with a stored entry.
  package enum Counted: Equatable {
    /// Counted into the totals, with this outcome.
    case counted(Outcome)
    /// Not counted: the fast path cannot answer it, the general path must.
    case general
    /// Not counted: its identifier equals the incoming one, and the caller asked for such an
    /// entry to be handed off (the script's deciding entry is explained, and counted, by the
    /// reference path alone). The whole text was validated and its top-level keys checked
    /// (plain, unique), so this verdict is the reference's `identifier === identifier`.
    case identifierMatches
  }

  /// Counts one stored entry into `totals` and returns its outcome; nil (nothing counted)
  /// when the general path must decide.
  package func count(_ bytes: UnsafeBufferPointer<UInt8>, into totals: inout Totals) -> Outcome? {
    guard case .counted(let outcome) = count(bytes, into: &totals, handingOffMatch: false) else { return nil }
    return outcome
  }

  /// Counts one stored entry into `totals`, or leaves it uncounted to the general path; with
  /// `handingOffMatch`, also an entry whose identifier matches (its metadata and location are
  /// then only validated, not compared: the reference path does that once).
  package func count(_ bytes: UnsafeBufferPointer<UInt8>, into totals: inout Totals, handingOffMatch: Bool) -> Counted {
    let (outcome, count): (Outcome, Int)
    switch scan(bytes, handingOffMatch: handingOffMatch) {
    case .answered(let answer, let mismatches): (outcome, count) = (answer, mismatches)
    case .general: return .general
    case .identifierMatches: return .identifierMatches
    }
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
    return .counted(outcome)
  }

  enum Scan {
    case answered(Outcome, mismatches: Int)
    case general
    case identifierMatches
  }

  func scan(_ bytes: UnsafeBufferPointer<UInt8>, handingOffMatch: Bool = false) -> Scan {
    guard enabled else { return .general }
    var scanner = Scanner(bytes, owner: self, handingOffMatch: handingOffMatch)
    guard let outcome = scanner.run() else { return scanner.handedOff ? .identifierMatches : .general }
    return .answered(outcome, mismatches: scanner.mismatchCount)
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

  /// Bails out of the fast path.
  struct Bail: Error {}

  /// One entry's walk: the shared tokenizer plus the matching state.
  struct Scanner {
    var s: JSONScanner
    unowned(unsafe) let owner: FastMatcher
    let nodes: UnsafeMutablePointer<FlatNode>
    let children: UnsafeMutablePointer<FlatChild>
    let pool: UnsafeMutablePointer<UInt8>
    let keyStack: UnsafeMutablePointer<(UnsafePointer<UInt8>, Int)>
    let maximum: Double
    /// Whether an entry whose identifier matches is handed off (`handedOff`) instead of matched.
    let handingOffMatch: Bool
    var handedOff = false
    var sum = 0.0
    var mismatchCount = 0
    /// Keys of the open objects: `keyTop` entries on `keyStack`.
    var keyTop = 0
    var depth = 0

    init(_ bytes: UnsafeBufferPointer<UInt8>, owner: FastMatcher, handingOffMatch: Bool) {
      self.handingOffMatch = handingOffMatch
      s = JSONScanner(bytes)
      self.owner = owner
      nodes = owner.nodes.baseAddress!
      children = owner.children.baseAddress!
      pool = owner.pool.baseAddress!
      keyStack = owner.keyStack.baseAddress!
      maximum = owner.maxUnmatchedAttrs
    }

    mutating func run() -> Outcome? {
      do { return try profile() } catch { return nil }
    }

    typealias Key = (UnsafePointer<UInt8>, Int)

    /// Checks a key: escapes, array-index-like names (their property order differs) and
    /// duplicates (the last value wins) go to the reference path. `frame` is where the
    /// current object's keys start on the key stack.
    /// `seen` has one bit per (length, first byte) class of the object's keys so far: only a
    /// key whose class was seen is searched for on the key stack.
    @inline(__always) mutating func accept(_ token: JSONStringToken, _ frame: Int, _ seen: inout UInt64) throws(Bail)
      -> Key
    {
      guard !token.hasEscapes else { throw Bail() }
      let key = (token.start, token.count)
      if key.1 > 0 && key.0.pointee &- 0x30 < 10 { throw Bail() }
      let bit: UInt64 = 1 << ((UInt64(truncatingIfNeeded: key.1) &* 7 &+ UInt64(key.0.pointee)) & 63)
      var index = seen & bit != 0 ? frame : keyTop
      seen |= bit
      while index < keyTop {
        let previous = keyStack[index]
        if previous.1 == key.1 && previous.0.pointee == key.0.pointee && JSONScanner.sameBytes(previous.0, key.0, key.1) {
          throw Bail()
        }
        index += 1
      }
      guard keyTop < FastMatcher.maxKeys else { throw Bail() }
      keyStack[keyTop] = key
      keyTop += 1
      return key
    }

    @inline(__always) mutating func enter() throws(Bail) {
      depth += 1
      if depth > FastMatcher.maxDepth { throw Bail() }
    }

    // MARK: Values

    /// The members of the object at the cursor, calling `body` with each key while the
    /// cursor is at the member's value; `body` must consume the value.
    @inline(__always)
    mutating func members(_ body: (inout Scanner, Key) throws(Bail) -> Void) throws(Bail) {
      try enter()
      let frame = keyTop
      var seen: UInt64 = 0
      var token: JSONStringToken?
      do { token = try s.openObject() } catch { throw Bail() }
      while let current = token {
        try body(&self, try accept(current, frame, &seen))
        do { token = try s.nextKey() } catch { throw Bail() }
      }
      keyTop = frame
      depth -= 1
    }

    /// The elements of the array at the cursor, calling `body` with each index.
    @inline(__always)
    mutating func elements(_ body: (inout Scanner, Int) throws(Bail) -> Void) throws(Bail) {
      try enter()
      var index = 0
      var more = s.openArray()
      while more {
        try body(&self, index)
        index += 1
        do { more = try s.nextElement() } catch { throw Bail() }
      }
      depth -= 1
    }

    /// Validates a value without comparing.
    mutating func skipValue() throws(Bail) {
      do {
        try s.skipValue(maxDepth: FastMatcher.maxDepth - depth)
      } catch {
        throw Bail()
      }
    }

    @inline(__always) func start() throws(Bail) -> JSONValueStart {
      do { return try s.valueStart() } catch { throw Bail() }
    }

    @inline(__always) mutating func string() throws(Bail) -> JSONStringToken {
      do { return try s.string() } catch { throw Bail() }
    }

    @inline(__always) mutating func number() throws(Bail) -> Double {
      do { return try s.number() } catch { throw Bail() }
    }

    @inline(__always) mutating func literal(_ word: StaticString) throws(Bail) {
      do { try s.literal(word) } catch { throw Bail() }
    }

    /// The incoming side at a place: a node index, -1 for undefined.
    typealias Incoming = Int32

    /// Whether `count` bytes of the pool at `incoming` equal the stored text's at `stored`. A
    /// short text is compared as one masked word when eight bytes can be read at both (the
    /// pool is padded; the stored text must not end within them).
    @inline(__always) func sameText(_ incoming: UnsafePointer<UInt8>, _ stored: UnsafePointer<UInt8>, _ count: Int)
      -> Bool
    {
      if count < 8 && s.end - stored >= 8 {
        let a = UnsafeRawPointer(incoming).loadUnaligned(as: UInt64.self)
        let b = UnsafeRawPointer(stored).loadUnaligned(as: UInt64.self)
        let mask: UInt64 = (1 << UInt64(truncatingIfNeeded: count &* 8)) &- 1
        return UInt64(littleEndian: a ^ b) & mask == 0
      }
      return JSONScanner.sameBytes(incoming, stored, count)
    }

    /// `incoming && incoming[key]` for an object member; bails where JavaScript would index
    /// a string or an array by name. `hint` is where the previous member of the same stored
    /// object was found, plus one: stored profiles mostly list keys in the incoming order, so
    /// the search starts there and wraps around (the incoming object's keys are unique).
    @inline(__always) func member(_ incoming: Incoming, _ key: Key, hint: inout Int) throws(Bail) -> Incoming {
      guard incoming >= 0 else { return incoming }
      let node = nodes[Int(incoming)]
      guard node.truthy else { return incoming }
      switch node.kind {
      case .object:
        let count = node.childCount
        var position = hint < count ? hint : 0
        for _ in 0..<count {
          let child = children[node.firstChild + position]
          if child.keyLength == key.1 && sameText(pool + child.key, key.0, key.1) {
            hint = position + 1
            return child.node
          }
          position = position + 1 == count ? 0 : position + 1
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
    mutating func compare(_ incoming: Incoming, key leafKey: Key) throws(Bail) {
      if sum > maximum { return try skipValue() }
      switch try start() {
      case .object:
        var hint = 0
        try members { (scanner, name) throws(Bail) in
          if scanner.sum > scanner.maximum {
            try scanner.skipValue()
          } else {
            try scanner.compareValue(try scanner.member(incoming, name, hint: &hint), key: name)
          }
        }
      case .array:
        try elements { (scanner, index) throws(Bail) in
          if scanner.sum > scanner.maximum {
            try scanner.skipValue()
          } else {
            try scanner.compareValue(try scanner.element(incoming, index), key: leafKey)
          }
        }
      case let leaf:
        if try !leafEquals(incoming, leaf) { try mismatch(leafKey) }
      }
    }

    /// A member's or element's value (the caller checked the weight sum): a leaf is compared
    /// in place, a container by a recursive `compare` (one call less per leaf).
    @inline(__always) mutating func compareValue(_ incoming: Incoming, key: Key) throws(Bail) {
      let kind = try start()
      if kind == .object || kind == .array {
        try compare(incoming, key: key)
      } else if try !leafEquals(incoming, kind) {
        try mismatch(key)
      }
    }

    /// Reads a leaf that starts with `kind` and compares it with `!==`.
    mutating func leafEquals(_ incoming: Incoming, _ kind: JSONValueStart) throws(Bail) -> Bool {
      let node: FlatNode? = incoming >= 0 ? nodes[Int(incoming)] : nil
      switch kind {
      case .string:
        let text = try string()
        guard !text.hasEscapes else { throw Bail() }
        guard let node, node.kind == .string, node.length == text.count else { return false }
        return sameText(pool + node.bytes, text.start, text.count)
      case .true:
        try literal("true")
        return node?.kind == .bool && node!.bool
      case .false:
        try literal("false")
        return node?.kind == .bool && !node!.bool
      case .null:
        try literal("null")
        return node?.kind == .null
      case .number:
        let value = try number()
        return node?.kind == .number && node!.number == value
      case .object, .array:
        throw Bail()
      }
    }

    /// Adds the key's weight; more mismatches than it can record go to the reference path.
    mutating func mismatch(_ key: Key) throws(Bail) {
      guard mismatchCount < owner.mismatches.count else { throw Bail() }
      sum += owner.weights.weight(utf8: key.0, count: key.1)
      owner.mismatches[mismatchCount] = owner.intern(key)
      mismatchCount += 1
    }

    // MARK: The profile

    mutating func profile() throws(Bail) -> Outcome {
      s.skipWhitespace()
      guard try start() == .object else { throw Bail() }
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
        if Self.isName(name, "identifier") {
          identifierSeen = true
          identifierEqual = try scanner.identifierEquals(incomingIdentifier)
        } else if Self.isName(name, "metadata") {
          guard try scanner.start() == .object else { throw Bail() }
          metadataStart = scanner.s.p
          if identifierSeen && identifierEqual && config.matchMetadata && !scanner.handingOffMatch {
            try scanner.compare(incomingMetadata, key: name)
            metadataCompared = true
          } else {
            try scanner.skipValue()
          }
        } else if Self.isName(name, "location") && !scanner.handingOffMatch {
          locationSeen = true
          (latitude, longitude) = try scanner.location()
        } else {
          try scanner.skipValue()
        }
      }
      do { try s.expectEnd() } catch { throw Bail() }
      guard identifierEqual && (identifierSeen || incomingIdentifier < 0) else { return .unknownDevice }
      if handingOffMatch {
        handedOff = true
        throw Bail()
      }
      var matches = true
      if config.matchMetadata {
        // Missing stored metadata throws in the script: the reference path reports it.
        guard let metadataStart else { throw Bail() }
        if !metadataCompared {
          s.p = metadataStart
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

    /// `incoming.identifier === stored.identifier` for the stored value at the cursor.
    mutating func identifierEquals(_ incoming: Incoming) throws(Bail) -> Bool {
      switch try start() {
      case .object, .array:
        try skipValue()
        return false
      default:
        guard incoming >= 0, nodes[Int(incoming)].kind != .object, nodes[Int(incoming)].kind != .array else {
          try skipValue()
          return false
        }
        return try leafEquals(incoming, try start())
      }
    }

    /// A stored location object with plain numeric coordinates under geolib's keys.
    mutating func location() throws(Bail) -> (Double, Double) {
      guard try start() == .object else { throw Bail() }
      // Ranks in geolib's key lists (lower wins).
      var latitude = (rank: Int.max, value: Double.nan)
      var longitude = (rank: Int.max, value: Double.nan)
      let owner = owner
      try members { (scanner, name) throws(Bail) in
        let latitudeRank = Self.rank(name, owner.latitudeKeys)
        let longitudeRank = Self.rank(name, owner.longitudeKeys)
        if latitudeRank != nil || longitudeRank != nil {
          guard try scanner.start() == .number else { throw Bail() }
          let value = try scanner.number()
          if let latitudeRank, latitudeRank < latitude.rank { latitude = (latitudeRank, value) }
          if let longitudeRank, longitudeRank < longitude.rank { longitude = (longitudeRank, value) }
        } else {
          try scanner.skipValue()
        }
      }
      return (latitude.value, longitude.value)
    }

    static func rank(_ key: Key, _ names: [[UInt8]]) -> Int? {
      for (rank, name) in names.enumerated() where name.count == key.1 {
        if name.withUnsafeBufferPointer({ JSONScanner.sameBytes($0.baseAddress!, key.0, key.1) }) { return rank }
      }
      return nil
    }

    /// Whether a key is exactly `name`.
    @inline(__always) static func isName(_ key: Key, _ name: StaticString) -> Bool {
      key.1 == name.utf8CodeUnitCount && JSONScanner.sameBytes(key.0, name.utf8Start, key.1)
    }
  }
}

extension FastMatcher {
  /// A stored entry placed within its block, left to the general path.
  package struct Deferred {
    /// Position of the entry among the block's entries.
    package var ordinal: Int
    package var offset: Int
    package var length: Int
    /// 0-based line within the block and 1-based column.
    package var line: Int
    package var column: Int
  }

  /// What `scanLines` found in a block of JSON Lines.
  package struct BlockReport {
    package var entries = 0
    /// The entries left to the general path, in order.
    package var deferred: [Deferred] = []

    package init() {}
  }

  /// Matches every line of a block of JSON Lines (whole lines), splitting them the way
  /// `StoredProfileReader.next()` does: leading blank space and blank lines are skipped.
  /// With `handingOffMatch`, the block's first entry whose identifier matches is deferred
  /// uncounted (the caller's general path decides and counts it), later ones are counted.
  package func scanLines(_ block: UnsafeBufferPointer<UInt8>, totals: inout Totals, handingOffMatch: Bool = false)
    -> BlockReport
  {
    var report = BlockReport()
    var handingOff = handingOffMatch
    guard let base = block.baseAddress else { return report }
    let stop = base + block.count
    var cursor = base
    var line = 0
    var lineStart = base
    while cursor < stop {
      let blank = JSONFraming.blankCount(cursor, count: stop - cursor)
      if blank > 0 {
        // Line framing over the skipped blank run: its newlines and where the last line starts.
        let blankEnd = cursor + blank
        while let found = TextPosition.memoryChr(cursor, 0x0A, blankEnd - cursor) {
          line += 1
          cursor = found + 1
          lineStart = cursor
        }
        cursor = blankEnd
        continue
      }
      let lineEnd = TextPosition.memoryChr(cursor, 0x0A, stop - cursor) ?? stop
      let entry = UnsafeBufferPointer(start: cursor, count: lineEnd - cursor)
      func placed() -> Deferred {
        let column = 1 + TextPosition.characters(lineStart, cursor)
        return Deferred(ordinal: report.entries, offset: cursor - base, length: lineEnd - cursor, line: line, column: column)
      }
      switch count(entry, into: &totals, handingOffMatch: handingOff) {
      case .counted: break
      case .general: report.deferred.append(placed())
      case .identifierMatches:
        handingOff = false
        report.deferred.append(placed())
      }
      report.entries += 1
      cursor = lineEnd
    }
    return report
  }
}
