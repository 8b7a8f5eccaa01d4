import ProfileJSON

/// Typed reads of one callback's outputs, with errors that name the output: the one reader of
/// what AM sends, for every callback type, so one rule holds everywhere.
///
/// - An output that is absent or `null` takes the caller's default (an error when there is none).
/// - Flags are JSON booleans, or the numbers 0 and 1: AM's attribute collectors send `"required": 0`
///   (recorded in the iOS SDK's AttributeCollectorsNode page), which all three SDKs read as false;
///   any other number or a string is an error, not a guess.
/// - Integers are whole JSON numbers, or strings of decimal digits (AM sends TextOutputCallback's
///   `messageType` as "0"), within `0...maximumInteger`: no callback output of AM is negative,
///   and a bound keeps a hostile server's `"9223372036854775807"` from overflowing arithmetic
///   on it (a binding's `timeout` is added to the time of day for the JWS `exp`).
struct CallbackOutputs {
  /// The largest integer any output may carry (about 31 years of seconds).
  static let maximumInteger = 999_999_999

  var callback: Callback
  var type: String { callback.type ?? "" }

  func text(_ name: String, default fallback: String? = nil) throws(JourneyError) -> String {
    switch callback.output(name) {
    case .string(let value)?: return value
    case nil, .null?:
      if let fallback { return fallback }
      throw .malformedCallback(index: callback.index, reason: "\(type) has no output \"\(name)\"")
    default: throw .malformedCallback(index: callback.index, reason: "\(type) output \"\(name)\" is not a string")
    }
  }

  func integer(_ name: String, default fallback: Int) throws(JourneyError) -> Int {
    let range = 0...Self.maximumInteger
    switch callback.output(name) {
    case nil, .null?: return fallback
    case .number(let value)? where value == value.rounded() && value >= 0 && value <= Double(range.upperBound):
      return Int(value)
    case .string(let value)? where !value.isEmpty && value.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }):
      if let number = Int(value), range.contains(number) { return number }
      fallthrough
    default:
      throw .malformedCallback(
        index: callback.index, reason: "\(type) output \"\(name)\" is not a whole number from 0 to \(range.upperBound)")
    }
  }

  func flag(_ name: String, default fallback: Bool) throws(JourneyError) -> Bool {
    switch callback.output(name) {
    case nil, .null?: return fallback
    case .bool(let value)?: return value
    case .number(0)?: return false
    case .number(1)?: return true
    default: throw .malformedCallback(index: callback.index, reason: "\(type) output \"\(name)\" is not a boolean")
    }
  }

  /// A non-empty array of strings (with `allowEmpty`, possibly empty or absent). With
  /// `droppingNulls`, `null` items are left out: AM's ConsentMappingCallback lists a mapped
  /// field without a display name as `null` (the Android SDK's recorded page), which names
  /// nothing the user could consent to; any other non-string is still an error.
  func texts(_ name: String, allowEmpty: Bool = false, droppingNulls: Bool = false) throws(JourneyError) -> [String] {
    if allowEmpty, callback.output(name) == nil || callback.output(name) == .null { return [] }
    guard case .array(let items)? = callback.output(name) else {
      throw .malformedCallback(index: callback.index, reason: "\(type) output \"\(name)\" is not an array")
    }
    var strings: [String] = []
    for item in items {
      if droppingNulls, item == .null { continue }
      guard case .string(let value) = item else {
        throw .malformedCallback(index: callback.index, reason: "\(type) output \"\(name)\" holds a non-string")
      }
      strings.append(value)
    }
    guard !strings.isEmpty || allowEmpty else {
      throw .malformedCallback(index: callback.index, reason: "\(type) output \"\(name)\" is empty")
    }
    return strings
  }

  /// The callback has an input[0] object to write the answer in.
  func needsInput() throws(JourneyError) {
    guard case .array(let inputs)? = callback.json["input"], case .object? = inputs.first else {
      throw .malformedCallback(index: callback.index, reason: "\(type) has no input[0] to answer in")
    }
  }

  /// The callback has inputs whose names end with each of `suffixes`.
  func requireInputs(_ suffixes: [String]) throws(JourneyError) {
    let names = callback.inputNames
    for suffix in suffixes where !names.contains(where: { $0.hasSuffix(suffix) }) {
      throw .malformedCallback(index: callback.index, reason: "\(type) has no input named …\(suffix)")
    }
  }
}
