import ProfileJSON

/// One posture fact: a value that is true, false or unknown (or, for a few facts, a string or a
/// number), and always the reason, in words, for that value: which file said what.
///
/// Unknown is JSON `null`, never a guess. `null` rather than a string "unknown": in the AM
/// script a test written `if (fact.value)` then fails closed on an unknown fact, where any
/// non-empty string would pass it.
public struct PostureFact: Sendable, Equatable {
  /// The fact's value: `.bool`, `.string` or `.number`, or `.null` when it cannot be told.
  public var value: JSON
  /// Why the value is what it is, naming the files read.
  public var reason: String
  /// Further members of the fact's object (e.g. `minimumLength`), in order.
  public var details: [(String, JSON)]

  public init(_ value: JSON, _ reason: String, details: [(String, JSON)] = []) {
    self.value = value
    self.reason = reason
    self.details = details
  }

  /// A yes/no fact that holds or not.
  public static func holds(_ holds: Bool, _ reason: String, details: [(String, JSON)] = []) -> PostureFact {
    PostureFact(.bool(holds), reason, details: details)
  }

  /// A fact that cannot be told here, and why.
  public static func unknown(_ reason: String, details: [(String, JSON)] = []) -> PostureFact {
    PostureFact(.null, reason, details: details)
  }

  /// true, false or nil (unknown) for a yes/no fact.
  public var holds: Bool? {
    if case .bool(let value) = value { return value }
    return nil
  }

  /// True when the value is unknown.
  public var isUnknown: Bool { value == .null }

  /// `{"value": …, "reason": …, details…}`.
  public var json: JSON {
    var object = JSONObject()
    object["value"] = value
    object["reason"] = .string(reason)
    for (key, detail) in details { object[key] = detail }
    return .object(object)
  }

  public static func == (a: PostureFact, b: PostureFact) -> Bool {
    a.value == b.value && a.reason == b.reason && a.details.map(\.0) == b.details.map(\.0)
      && zip(a.details, b.details).allSatisfy { $0.1 == $1.1 }
  }
}
