/// A reader of GVDB files, the format of dconf databases (~/.config/dconf/user and the system
/// databases /etc/dconf/db/NAME compiled by `dconf update`): enough to look up a key's value.
/// Little-endian files only (what dconf writes on x86 and ARM); anything else is refused.
///
/// Layout (glib's gvdb, gvdb-format.h): a 24-byte header — the signature "GVariant", version,
/// options, and a pointer (start, end) to the root hash table. A hash table is two 32-bit words
/// (the bloom-filter word count in the low 27 bits, the bucket count), the bloom words, the
/// buckets, then 24-byte items to its end: hash, parent item index (0xffffffff: none), key
/// start (32 bits), key size (16 bits), type ('v' a value, 'H' a nested table, 'L' a list),
/// a spare byte, and a pointer to the value. An item's full name is its parent's name followed
/// by its own key ("/" + "org/" + "gnome/" + … + "lock-enabled"), so the table is read by walking
/// the items rather than by hashing.
package struct GVDBFile {
  package enum Failure: Error, Equatable, CustomStringConvertible {
    case notGVDB
    case bigEndian
    case malformed(String)

    package var description: String {
      switch self {
      case .notGVDB: "not a GVDB file (no \"GVariant\" signature)"
      case .bigEndian: "a big-endian GVDB file, which fr-profile does not read"
      case .malformed(let what): "a malformed GVDB file (\(what))"
      }
    }
  }

  /// A key and where its value lies.
  struct Item {
    var name: String
    var type: UInt8
    var value: Range<Int>
  }

  let bytes: [UInt8]
  /// The root table's items by full name.
  let items: [String: Item]

  package init(_ bytes: [UInt8]) throws(Failure) {
    self.bytes = bytes
    guard bytes.count >= 24 else { throw .notGVDB }
    if Array(bytes[0..<8]) == Array("raVGtnai".utf8) { throw .bigEndian }
    guard Array(bytes[0..<8]) == Array("GVariant".utf8) else { throw .notGVDB }
    items = try Self.table(bytes, try Self.pointer(bytes, at: 16))
  }

  /// The items of the table stored at `range`, by full name.
  static func table(_ bytes: [UInt8], _ range: Range<Int>) throws(Failure) -> [String: Item] {
    guard range.count >= 8 else { throw .malformed("a hash table shorter than its header") }
    let bloomWords = Int(word32(bytes, range.lowerBound) & ((1 << 27) - 1))
    let buckets = Int(word32(bytes, range.lowerBound + 4))
    let itemsStart = range.lowerBound + 8 + 4 * bloomWords + 4 * buckets
    guard bloomWords < 1 << 20, buckets < 1 << 20, itemsStart <= range.upperBound, (range.upperBound - itemsStart) % 24 == 0 else {
      throw .malformed("hash table sizes that do not fit its space")
    }
    let count = (range.upperBound - itemsStart) / 24
    var raw: [(parent: UInt32, key: String, type: UInt8, value: Range<Int>)] = []
    for index in 0..<count {
      let at = itemsStart + 24 * index
      let keyStart = Int(word32(bytes, at + 8))
      let keySize = Int(UInt16(bytes[at + 12]) | UInt16(bytes[at + 13]) << 8)
      guard keyStart <= bytes.count, keySize <= bytes.count - keyStart else { throw .malformed("a key outside the file") }
      let type = bytes[at + 14]
      // Only 'v', 'H' and 'L' items point at a value; others carry it in place.
      let value =
        type == UInt8(ascii: "v") || type == UInt8(ascii: "H") || type == UInt8(ascii: "L") ? try pointer(bytes, at: at + 16) : 0..<0
      raw.append((word32(bytes, at + 4), String(decoding: bytes[keyStart..<(keyStart + keySize)], as: UTF8.self), type, value))
    }
    var names: [String?] = Array(repeating: nil, count: count)
    func name(_ index: Int, _ depth: Int) throws(Failure) -> String {
      if let known = names[index] { return known }
      guard depth < 64 else { throw .malformed("a cycle of parent items") }
      let parent = raw[index].parent
      var full = raw[index].key
      if parent != UInt32.max {
        guard Int(parent) < count else { throw .malformed("a parent index outside the table") }
        full = try name(Int(parent), depth + 1) + full
      }
      names[index] = full
      return full
    }
    var result: [String: Item] = [:]
    for index in 0..<count {
      let full = try name(index, 0)
      result[full] = Item(name: full, type: raw[index].type, value: raw[index].value)
    }
    return result
  }

  /// A (start, end) pointer at `offset`, checked against the file.
  static func pointer(_ bytes: [UInt8], at offset: Int) throws(Failure) -> Range<Int> {
    guard offset + 8 <= bytes.count else { throw .malformed("a pointer past the end") }
    let start = Int(word32(bytes, offset))
    let end = Int(word32(bytes, offset + 4))
    guard start <= end, end <= bytes.count else { throw .malformed("a pointer outside the file") }
    return start..<end
  }

  static func word32(_ bytes: [UInt8], _ offset: Int) -> UInt32 {
    guard offset + 4 <= bytes.count else { return 0 }
    return UInt32(bytes[offset]) | UInt32(bytes[offset + 1]) << 8 | UInt32(bytes[offset + 2]) << 16 | UInt32(bytes[offset + 3]) << 24
  }

  /// The value stored under `key` ("/org/gnome/desktop/screensaver/lock-enabled"), or nil.
  package func value(_ key: String) -> GVariantValue? {
    guard let item = items[key], item.type == UInt8(ascii: "v") else { return nil }
    return GVariantValue(variant: Array(bytes[item.value]))
  }

  /// The keys a system database locks (its ".locks" table), or none.
  package func locks() -> Set<String> {
    guard let item = items[".locks"], item.type == UInt8(ascii: "H"), let table = try? Self.table(bytes, item.value) else { return [] }
    return Set(table.keys)
  }
}

/// A serialized GVariant of type "v" (the value's bytes, a zero byte, the value's type string),
/// decoded for the types the screen-lock keys use.
package enum GVariantValue: Equatable {
  case boolean(Bool)
  case uint32(UInt32)
  case int32(Int32)
  case other(String)

  init?(variant bytes: [UInt8]) {
    guard let zero = bytes.lastIndex(of: 0) else { return nil }
    let type = String(decoding: bytes[(zero + 1)...], as: UTF8.self)
    let data = Array(bytes[..<zero])
    switch type {
    case "b":
      guard data.count == 1, data[0] <= 1 else { return nil }
      self = .boolean(data[0] == 1)
    case "u", "i":
      guard data.count == 4 else { return nil }
      let word = GVDBFile.word32(data, 0)
      self = type == "u" ? .uint32(word) : .int32(Int32(bitPattern: word))
    default:
      self = .other(type)
    }
  }
}
