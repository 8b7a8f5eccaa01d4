/// The CBOR CTAP2 speaks (RFC 8949 with CTAP2's canonical form): unsigned and negative
/// integers, byte and text strings, arrays, maps, booleans and null, all of definite length.
/// Maps are encoded with their keys sorted as CTAP2 demands (shorter encoding first, then
/// bytewise), so integer keys come before text keys.
public indirect enum CBOR: Sendable, Equatable {
  case unsigned(UInt64)
  /// The integer -1 - n.
  case negative(UInt64)
  case bytes([UInt8])
  case text(String)
  case array([CBOR])
  case map([CBORPair])
  case bool(Bool)
  case null

  public static func int(_ value: Int) -> CBOR {
    value >= 0 ? .unsigned(UInt64(value)) : .negative(UInt64(-1 - value))
  }

  /// The value as an `Int`, when it is an integer that fits.
  public var intValue: Int? {
    switch self {
    case .unsigned(let n): n <= UInt64(Int.max) ? Int(n) : nil
    case .negative(let n): n <= UInt64(Int.max) ? -1 - Int(n) : nil
    default: nil
    }
  }
  public var bytesValue: [UInt8]? { if case .bytes(let b) = self { b } else { nil } }
  public var textValue: String? { if case .text(let t) = self { t } else { nil } }
  public var boolValue: Bool? { if case .bool(let b) = self { b } else { nil } }
  public var arrayValue: [CBOR]? { if case .array(let a) = self { a } else { nil } }
  public var mapValue: [CBORPair]? { if case .map(let m) = self { m } else { nil } }

  /// The value of a map's member, `nil` when this is not a map or has no such key.
  public subscript(key: CBOR) -> CBOR? {
    mapValue?.first { $0.key == key }?.value
  }
  public subscript(key: Int) -> CBOR? { self[.int(key)] }
  public subscript(key: String) -> CBOR? { self[.text(key)] }
}

public struct CBORPair: Sendable, Equatable {
  public var key: CBOR
  public var value: CBOR
  public init(_ key: CBOR, _ value: CBOR) {
    self.key = key
    self.value = value
  }
}

public struct CBORError: Error, Sendable, Equatable, CustomStringConvertible {
  public var description: String
}

extension CBOR {
  /// The canonical encoding.
  public var encoded: [UInt8] {
    var out: [UInt8] = []
    encode(into: &out)
    return out
  }

  func encode(into out: inout [UInt8]) {
    switch self {
    case .unsigned(let n): Self.head(0, n, into: &out)
    case .negative(let n): Self.head(1, n, into: &out)
    case .bytes(let b):
      Self.head(2, UInt64(b.count), into: &out)
      out += b
    case .text(let t):
      Self.head(3, UInt64(t.utf8.count), into: &out)
      out += Array(t.utf8)
    case .array(let items):
      Self.head(4, UInt64(items.count), into: &out)
      for item in items { item.encode(into: &out) }
    case .map(let pairs):
      Self.head(5, UInt64(pairs.count), into: &out)
      let sorted = pairs.map { (key: $0.key.encoded, value: $0.value.encoded) }.sorted { a, b in
        a.key.count != b.key.count ? a.key.count < b.key.count : a.key.lexicographicallyPrecedes(b.key)
      }
      for pair in sorted { out += pair.key + pair.value }
    case .bool(let b): out.append(b ? 0xF5 : 0xF4)
    case .null: out.append(0xF6)
    }
  }

  static func head(_ major: UInt8, _ argument: UInt64, into out: inout [UInt8]) {
    let m = major << 5
    switch argument {
    case 0..<24: out.append(m | UInt8(argument))
    case 24...0xFF: out += [m | 24, UInt8(argument)]
    case 0x100...0xFFFF: out += [m | 25] + bigEndian(argument, bytes: 2)
    case 0x1_0000...0xFFFF_FFFF: out += [m | 26] + bigEndian(argument, bytes: 4)
    default: out += [m | 27] + bigEndian(argument, bytes: 8)
    }
  }

  static func bigEndian(_ value: UInt64, bytes: Int) -> [UInt8] {
    (0..<bytes).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) }
  }

  /// Decodes exactly one item filling `bytes`.
  public static func decode(_ bytes: [UInt8]) throws(CBORError) -> CBOR {
    var reader = Reader(bytes: bytes)
    let value = try reader.item(depth: 0)
    guard reader.offset == bytes.count else { throw CBORError(description: "trailing bytes after the item") }
    return value
  }

  struct Reader {
    let bytes: [UInt8]
    var offset = 0

    mutating func take(_ count: Int) throws(CBORError) -> ArraySlice<UInt8> {
      guard count >= 0, bytes.count - offset >= count else { throw CBORError(description: "truncated item") }
      defer { offset += count }
      return bytes[offset..<offset + count]
    }

    mutating func item(depth: Int) throws(CBORError) -> CBOR {
      guard depth < 16 else { throw CBORError(description: "nested too deeply") }
      let initial = try take(1).first!
      let major = initial >> 5
      let info = initial & 0x1F
      let argument: UInt64
      switch info {
      case 0..<24: argument = UInt64(info)
      case 24...27:
        argument = try take(1 << Int(info - 24)).reduce(0) { $0 << 8 | UInt64($1) }
      default: throw CBORError(description: "indefinite or reserved length \(info)")
      }
      switch major {
      case 0: return .unsigned(argument)
      case 1: return .negative(argument)
      case 2: return .bytes(Array(try take(try length(argument))))
      case 3:
        let raw = Array(try take(try length(argument)))
        guard let text = String(validating: raw, as: UTF8.self) else { throw CBORError(description: "text is not UTF-8") }
        return .text(text)
      case 4:
        var items: [CBOR] = []
        for _ in 0..<(try length(argument)) { items.append(try item(depth: depth + 1)) }
        return .array(items)
      case 5:
        var pairs: [CBORPair] = []
        for _ in 0..<(try length(argument)) {
          let key = try item(depth: depth + 1)
          pairs.append(CBORPair(key, try item(depth: depth + 1)))
        }
        return .map(pairs)
      case 7:
        switch info {
        case 20: return .bool(false)
        case 21: return .bool(true)
        case 22: return .null
        default: throw CBORError(description: "unsupported simple value \(info)")
        }
      default: throw CBORError(description: "unsupported major type \(major)")
      }
    }

    func length(_ argument: UInt64) throws(CBORError) -> Int {
      guard argument <= UInt64(bytes.count - offset) else { throw CBORError(description: "length past the end") }
      return Int(argument)
    }
  }
}
