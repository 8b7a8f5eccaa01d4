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
///
/// The file is another user's to write (`posture --user` as root), so nothing is built in
/// proportion to what it claims, only to its bytes: a table's counts are checked against the
/// table's own bytes before use, the items (at most one per 24 bytes) keep their keys as ranges
/// of the file, a table's keys together may be no longer than the file (gvdb writes each once;
/// a crafted file of 1 MiB whose items all named one 64 KiB key made gigabytes of names), a
/// chain of parents ends within 64 items (no recursion), and a name is looked up by comparing it
/// with each item's chain of keys, never by building full names.
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

  /// The largest database posture reads: dconf's databases hold a few kilobytes (a key and its
  /// value take tens of bytes; a desktop of many applications' settings, tens of kilobytes).
  package static let maximumSize = 4 << 20
  /// `maximumSize` in words.
  package static let maximumSizeText = "4 MiB"
  /// The deepest chain of parent items: a dconf path of 64 levels is far beyond any schema's.
  static let maximumDepth = 64

  /// A key and where its value lies: ranges of the file.
  struct Item {
    var parent: UInt32
    var key: Range<Int>
    var type: UInt8
    var value: Range<Int>
  }

  let bytes: [UInt8]
  /// The root table's items.
  let items: [Item]

  package init(_ bytes: [UInt8]) throws(Failure) {
    self.bytes = bytes
    guard bytes.count >= 24 else { throw .notGVDB }
    if Array(bytes[0..<8]) == Array("raVGtnai".utf8) { throw .bigEndian }
    guard Array(bytes[0..<8]) == Array("GVariant".utf8) else { throw .notGVDB }
    items = try Self.table(bytes, try Self.pointer(bytes, at: 16))
  }

  /// The items of the table stored at `range`, checked: keys and values inside the file, parents
  /// inside the table, and every chain of parents ending.
  static func table(_ bytes: [UInt8], _ range: Range<Int>) throws(Failure) -> [Item] {
    guard range.count >= 8 else { throw .malformed("a hash table shorter than its header") }
    let bloomWords = Int(word32(bytes, range.lowerBound) & ((1 << 27) - 1))
    let buckets = Int(word32(bytes, range.lowerBound + 4))
    let words = (range.count - 8) / 4
    guard bloomWords <= words, buckets <= words - bloomWords else { throw .malformed("hash table sizes that do not fit its space") }
    let itemsStart = range.lowerBound + 8 + 4 * (bloomWords + buckets)
    guard (range.upperBound - itemsStart) % 24 == 0 else { throw .malformed("hash table sizes that do not fit its space") }
    let count = (range.upperBound - itemsStart) / 24
    var items: [Item] = []
    items.reserveCapacity(count)  // one per 24 bytes of the table
    var keyBytes = 0
    for index in 0..<count {
      let at = itemsStart + 24 * index
      let parent = word32(bytes, at + 4)
      guard parent == UInt32.max || Int(parent) < count else { throw .malformed("a parent index outside the table") }
      let keyStart = Int(word32(bytes, at + 8))
      let keySize = Int(UInt16(bytes[at + 12]) | UInt16(bytes[at + 13]) << 8)
      guard keyStart <= bytes.count, keySize <= bytes.count - keyStart else { throw .malformed("a key outside the file") }
      keyBytes += keySize
      guard keyBytes <= bytes.count else { throw .malformed("keys longer together than the file: they overlap") }
      let type = bytes[at + 14]
      // Only 'v', 'H' and 'L' items point at a value; others carry it in place.
      let value =
        type == UInt8(ascii: "v") || type == UInt8(ascii: "H") || type == UInt8(ascii: "L") ? try pointer(bytes, at: at + 16) : 0..<0
      items.append(Item(parent: parent, key: keyStart..<(keyStart + keySize), type: type, value: value))
    }
    for index in items.indices {
      var at = index
      for depth in 0... {
        let parent = items[at].parent
        if parent == UInt32.max { break }
        guard depth < maximumDepth else { throw .malformed("a cycle of parent items, or a chain deeper than \(maximumDepth)") }
        at = Int(parent)
      }
    }
    return items
  }

  /// The item of `items` whose full name is `name`: its key ends the name, its parent's key
  /// comes before that, and so on to an item without a parent at the name's start.
  func item(_ name: String, in items: [Item]) -> Item? {
    let name = Array(name.utf8)
    return items.first { item in
      var end = name.count
      var current = item
      while true {
        guard current.key.count <= end, bytes[current.key].elementsEqual(name[(end - current.key.count)..<end]) else { return false }
        end -= current.key.count
        if current.parent == UInt32.max { return end == 0 }
        current = items[Int(current.parent)]  // checked by `table`: inside it, and the chain ends
      }
    }
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
    guard let item = item(key, in: items), item.type == UInt8(ascii: "v") else { return nil }
    return GVariantValue(variant: Array(bytes[item.value]))
  }

  /// Whether a system database locks `key` (names it in its ".locks" table).
  package func isLocked(_ key: String) -> Bool {
    guard let locks = item(".locks", in: items), locks.type == UInt8(ascii: "H"), let table = try? Self.table(bytes, locks.value) else {
      return false
    }
    return item(key, in: table) != nil
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
