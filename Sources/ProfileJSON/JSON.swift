/// A JSON value with JavaScript's data model: every number is an IEEE double, objects keep
/// their members in document (insertion) order, and `null` is a value distinct from absence.
///
/// Collectors build profiles with literals (`["cpu": 4, "manufacturer": "Dell Inc."]`); there is
/// deliberately no `nil` literal: `nil` must mean "absent" (Optional), never JSON `null`.
/// the matcher reads stored and incoming profiles into the same type.
///
/// Equality is JavaScript's: strings and keys are equal when their code units are (`"é"` is
/// not `"e\u{301}"`, though Swift's `String ==` says so), numbers compare as doubles (`NaN`
/// differs from itself, `0 == -0`), and objects are equal when their members are, in order.
public enum JSON: Sendable, Equatable {
  case null
  case bool(Bool)
  case number(Double)
  case string(String)
  case array([JSON])
  case object(JSONObject)

  public static func == (lhs: JSON, rhs: JSON) -> Bool {
    switch (lhs, rhs) {
    case (.null, .null): true
    case (.bool(let a), .bool(let b)): a == b
    case (.number(let a), .number(let b)): a == b
    case (.string(let a), .string(let b)): sameCodeUnits(a, b)
    case (.array(let a), .array(let b)): a == b
    case (.object(let a), .object(let b)): a == b
    default: false
    }
  }
}

/// A JSON object whose members keep the order they were added or parsed in.
///
/// Lookup is linear: profiles have a handful of members per object, where a scan beats hashing.
public struct JSONObject: Sendable, Equatable {
  public var members: [(key: String, value: JSON)]

  public init() { members = [] }
  public init(_ members: [(key: String, value: JSON)]) { self.members = members }

  public var isEmpty: Bool { members.isEmpty }
  public var count: Int { members.count }
  public var keys: [String] { members.map(\.key) }

  /// The member's value, `nil` when absent. Setting `nil` removes the member; setting a
  /// new key appends it, setting an existing key replaces its value in place. Keys match by
  /// code units, as in JavaScript.
  public subscript(key: String) -> JSON? {
    get {
      for member in members where sameCodeUnits(member.key, key) { return member.value }
      return nil
    }
    set {
      if let index = members.firstIndex(where: { sameCodeUnits($0.key, key) }) {
        if let newValue { members[index].value = newValue } else { members.remove(at: index) }
      } else if let newValue {
        members.append((key, newValue))
      }
    }
  }

  public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
    lhs.members.count == rhs.members.count
      && zip(lhs.members, rhs.members).allSatisfy { sameCodeUnits($0.key, $1.key) && $0.value == $1.value }
  }
}

extension JSON {
  public subscript(key: String) -> JSON? {
    if case .object(let object) = self { return object[key] }
    return nil
  }

  public var objectValue: JSONObject? {
    if case .object(let object) = self { return object }
    return nil
  }
  public var stringValue: String? {
    if case .string(let string) = self { return string }
    return nil
  }
  public var numberValue: Double? {
    if case .number(let number) = self { return number }
    return nil
  }
  public var boolValue: Bool? {
    if case .bool(let bool) = self { return bool }
    return nil
  }
  public var arrayValue: [JSON]? {
    if case .array(let array) = self { return array }
    return nil
  }
}

extension JSON: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
  ExpressibleByBooleanLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
{
  public init(stringLiteral value: String) { self = .string(value) }
  public init(integerLiteral value: Int) { self = .number(Double(value)) }
  public init(floatLiteral value: Double) { self = .number(value) }
  public init(booleanLiteral value: Bool) { self = .bool(value) }
  public init(arrayLiteral elements: JSON...) { self = .array(elements) }
  public init(dictionaryLiteral elements: (String, JSON)...) {
    self = .object(JSONObject(elements.map { (key: $0.0, value: $0.1) }))
  }
}

extension JSONObject: ExpressibleByDictionaryLiteral {
  public init(dictionaryLiteral elements: (String, JSON)...) {
    self.init(elements.map { (key: $0.0, value: $0.1) })
  }
}
