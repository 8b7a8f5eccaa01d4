import ProfileJSON

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// One leaf where the stored and incoming metadata differ.
public struct Mismatch: Sendable, Equatable {
  /// Where the leaf is, JavaScript style: `metadata.hardware.display.width`, `metadata.list[2]`.
  public var path: String
  /// The key whose weight applied (`nil` for elements of a top-level array, which the script
  /// weighs as `attrWeights["undefined"]`).
  public var key: String?
  /// The stored value; `nil` is JavaScript `undefined`.
  public var stored: JSON?
  /// The incoming value at the same place; `nil` is `undefined` (missing).
  public var incoming: JSON?
  /// The weight added.
  public var weight: Double
  /// The sum after adding it.
  public var sum: Double

  public init(path: String, key: String?, stored: JSON?, incoming: JSON?, weight: Double, sum: Double) {
    self.path = path
    self.key = key
    self.stored = stored
    self.incoming = incoming
    self.weight = weight
    self.sum = sum
  }
}

/// The metadata half of a comparison.
public struct MetadataResult: Sendable, Equatable {
  /// `sum <= maxUnmatchedAttrs`.
  public var matches: Bool
  /// The summed weights of the mismatches visited (a double, in visit order).
  public var sum: Double
  public var maxUnmatchedAttrs: Double
  /// The mismatches in visit order (the walk stops once `sum` exceeds the maximum).
  public var mismatches: [Mismatch]
  /// Whether the walk stopped before visiting every stored leaf.
  public var stoppedEarly: Bool
}

/// The script's `metadataMatcher` (src/metadata.js).
///
/// Walks the **stored** metadata in JavaScript property order; at each leaf (string, number,
/// boolean, null) compares with `!==` against the incoming value at the same place, indexing
/// the incoming side as `incoming && incoming[key]` does; adds the leaf key's weight for each
/// mismatch and stops as soon as the sum exceeds `maxUnmatchedAttrs`.
public struct MetadataMatcher: Sendable {
  /// The largest summed weight that still matches.
  public let maxUnmatchedAttrs: Double
  let weights: Weights

  /// The script's `metadataMatcher(attrWeights, maxUnmatchedAttrs)`.
  public init(attrWeights: JSONObject = JSONObject(), maxUnmatchedAttrs: Double = 0) {
    self.maxUnmatchedAttrs = maxUnmatchedAttrs
    self.weights = Weights(attrWeights)
  }

  /// The weight of a mismatch at `key` (`getMultiplier`).
  public func weight(forKey key: String?) -> Double { weights.weight(key ?? "undefined") }

  /// Compares incoming with stored metadata (`nil` is a missing member). Throws where the
  /// script throws: stored metadata missing or `null`.
  public func match(incoming: JSON?, stored: JSON?) throws(ScriptError) -> MetadataResult {
    try match(incoming: incoming.map(JSValue.json) ?? .undefined, stored: stored.map(JSValue.json) ?? .undefined)
  }

  func match(incoming: JSValue, stored: JSValue, record: Bool = true) throws(ScriptError) -> MetadataResult {
    var walk = Walk(matcher: self, record: record)
    if case .json(.array) = incoming {
      try walk.arrayMatch(incoming, stored, key: nil)
    } else {
      try walk.objectMatch(incoming, stored)
    }
    return MetadataResult(
      matches: walk.sum <= maxUnmatchedAttrs, sum: walk.sum, maxUnmatchedAttrs: maxUnmatchedAttrs,
      mismatches: walk.mismatches, stoppedEarly: walk.stopped)
  }

  /// One walk with its running count (the script's closure variable, fresh per comparison).
  struct Walk {
    let matcher: MetadataMatcher
    let record: Bool
    var sum = 0.0
    var mismatches: [Mismatch] = []
    var stopped = false
    var path: [PathComponent] = [.key("metadata")]

    init(matcher: MetadataMatcher, record: Bool) {
      self.matcher = matcher
      self.record = record
    }

    var exceeded: Bool { sum > matcher.maxUnmatchedAttrs }

    mutating func check(_ incoming: JSValue, _ stored: JSValue, key: String?) throws(ScriptError) {
      switch stored {
      case .json(.array): try arrayMatch(incoming, stored, key: key)
      case .json(.object): try objectMatch(incoming, stored)
      default:
        if !JS.strictEquals(stored, incoming) {
          let weight = matcher.weights.weight(key ?? "undefined")
          sum += weight
          if record {
            mismatches.append(
              Mismatch(
                path: PathComponent.render(path), key: key, stored: stored.jsonValue, incoming: incoming.jsonValue,
                weight: weight, sum: sum))
          }
        }
      }
    }

    mutating func objectMatch(_ incoming: JSValue, _ stored: JSValue) throws(ScriptError) {
      if case .json(.object(let object)) = stored, !object.members.contains(where: { JS.arrayIndex($0.key) != nil }) {
        // The common case: no array-index keys, so property order is insertion order.
        for member in object.members {
          if exceeded {
            stopped = true
            break
          }
          let incomingValue = JS.truthy(incoming) ? JS.get(incoming, member.key) : incoming
          path.append(.key(member.key))
          try check(incomingValue, .json(member.value), key: member.key)
          path.removeLast()
        }
        return
      }
      guard let keys = JS.ownKeys(stored) else {
        throw ScriptError.storedMetadataMissing(isNull: stored == .json(.null))
      }
      for key in keys {
        if exceeded {
          stopped = true
          break
        }
        let storedValue = JS.get(stored, key)
        let incomingValue = JS.truthy(incoming) ? JS.get(incoming, key) : incoming
        path.append(.key(key))
        try check(incomingValue, storedValue, key: key)
        path.removeLast()
      }
    }

    mutating func arrayMatch(_ incoming: JSValue, _ stored: JSValue, key: String?) throws(ScriptError) {
      let length: Double
      var extent: Int
      switch stored {
      case .json(.array(let elements)):
        length = Double(elements.count)
        extent = elements.count
      case .undefined, .json(.null):
        throw ScriptError.storedMetadataMissing(isNull: stored == .json(.null))
      default:
        // Only reachable at the top (incoming metadata is an array, stored is not): the loop
        // runs to `stored.length`, whatever that converts to.
        length = JS.toNumber(JS.get(stored, "length"))
        extent = MetadataMatcher.extent(of: stored)
      }
      extent = max(extent, MetadataMatcher.extent(of: incoming))
      // Past both values' last index every comparison is undefined !== undefined (equal), so
      // the script's remaining iterations cannot change the sum.
      var index = 0
      while Double(index) < length && index < extent {
        if exceeded {
          stopped = true
          break
        }
        let storedValue = JS.get(stored, index: index)
        let incomingValue = JS.truthy(incoming) ? JS.get(incoming, index: index) : incoming
        path.append(.index(index))
        try check(incomingValue, storedValue, key: key)
        path.removeLast()
        index += 1
      }
      if !exceeded && index == extent && length > 9_007_199_254_740_992 {
        // `for (i = 0; i < len; i++)` never ends once i reaches 2^53 (i + 1 == i).
        throw ScriptError.neverTerminates
      }
    }
  }

  /// One past the highest index `value[i]` can be defined at.
  static func extent(of value: JSValue) -> Int {
    switch value {
    case .json(.array(let elements)): return elements.count
    case .json(.string(let string)): return string.utf16.count
    case .loneSurrogate: return 1
    case .json(.object(let object)):
      return object.members.reduce(0) { partial, member in max(partial, (JS.arrayIndex(member.key) ?? -1) + 1) }
    default: return 0
    }
  }
}

/// `attrWeights` lookups by exact key (code units): the one weights table, used by the
/// reference walk (by `String`) and the replay fast path (by raw key bytes).
struct Weights: Sendable {
  let members: [(key: String, weight: Double)]
  let index: [String: Double]?
  /// Each member's key as UTF-8, for lookups by bytes.
  let utf8Keys: [[UInt8]]

  init(_ object: JSONObject) {
    members = object.members.map { member in
      if case .number(let number) = member.value { (member.key, number) } else { (member.key, 1) }
    }
    utf8Keys = members.map { Array($0.key.utf8) }
    // A hash index when no two keys are canonically equivalent (Swift's == would merge them).
    var built: [String: Double] = [:]
    var usable = true
    for member in members {
      if built.updateValue(member.weight, forKey: member.key) != nil { usable = false }
    }
    index = usable ? built : nil
  }

  @inline(__always)
  func weight(_ key: String) -> Double {
    // A hash miss means no canonically equivalent key, so certainly no identical one.
    if let index, index[key] == nil { return 1 }
    return members.first { sameCodeUnits($0.key, key) }?.weight ?? 1
  }

  /// The weight of the key whose UTF-8 bytes are `count` bytes at `key` (1 when absent).
  /// The first member with those bytes wins, as in `weight(_:)` (the parser keeps keys unique).
  @inline(__always)
  func weight(utf8 key: UnsafePointer<UInt8>, count: Int) -> Double {
    for (position, bytes) in utf8Keys.enumerated() where bytes.count == count {
      if count == 0 || bytes.withUnsafeBufferPointer({ memcmp($0.baseAddress!, key, count) }) == 0 {
        return members[position].weight
      }
    }
    return 1
  }
}

/// A step of a JSON path.
enum PathComponent {
  case key(String)
  case index(Int)

  static func render(_ path: [PathComponent]) -> String {
    var text = ""
    for (position, component) in path.enumerated() {
      switch component {
      case .index(let index): text += "[\(index)]"
      case .key(let key):
        if isIdentifier(key) {
          text += position == 0 ? key : "." + key
        } else {
          var out: [UInt8] = []
          JSONWriter.writeString(key, into: &out)
          text += "[" + String(decoding: out, as: UTF8.self) + "]"
        }
      }
    }
    return text
  }

  /// Whether `key` can be written as a JavaScript identifier in a rendered path (`a.b`
  /// rather than `a["b"]`): output formatting, not JSON scanning.
  static func isIdentifier(_ key: String) -> Bool {
    guard let first = key.utf8.first, !(first >= 0x30 && first <= 0x39) else { return false }
    return key.utf8.allSatisfy { byte in
      (byte >= 0x30 && byte <= 0x39) || (byte | 0x20 >= 0x61 && byte | 0x20 <= 0x7A) || byte == 0x5F || byte == 0x24
    }
  }
}
