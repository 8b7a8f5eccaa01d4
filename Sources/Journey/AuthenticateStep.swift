import ProfileJSON

/// One step of an AM authentication journey: the JSON body of a `/json/…/authenticate`
/// response, which a client fills in and posts back.
///
/// Only what a client answers is touched: every other member (`authId`, `_id`, `header`,
/// `stage`, unknown fields) stays as it came, in its order.
public struct AuthenticateStep: Sendable, Equatable {
  public var body: JSONObject

  public init(body: JSONObject) {
    self.body = body
  }

  /// Parses a response body; not JSON, or not an object, is an error.
  public init(parsing bytes: [UInt8]) throws(JourneyError) {
    let value: JSON
    do {
      value = try JSONParser.parse(bytes)
    } catch {
      throw .notJSON(error)
    }
    guard case .object(let object) = value else { throw .notAnObject }
    self.body = object
  }

  /// The callbacks of the step, in order; nil when the body has no `callbacks` array (a
  /// success or failure body, or something else).
  public var callbacks: [Callback]? {
    guard case .array(let items)? = body["callbacks"] else { return nil }
    return items.enumerated().map { Callback(index: $0.offset, json: $0.element) }
  }

  /// `tokenId` of a success body.
  public var tokenId: String? { body["tokenId"]?.stringValue }

  /// Sets `callbacks[callback].input[input].value`, keeping the input's name and everything else.
  public mutating func setInput(callback: Int, input: Int = 0, value: JSON) throws(JourneyError) {
    guard case .array(var items)? = body["callbacks"], items.indices.contains(callback),
      case .object(var object) = items[callback]
    else { throw .malformedCallback(index: callback, reason: "no such callback") }
    guard case .array(var inputs)? = object["input"], inputs.indices.contains(input),
      case .object(var field) = inputs[input]
    else { throw .malformedCallback(index: callback, reason: "it has no input[\(input)] object") }
    field["value"] = value
    inputs[input] = .object(field)
    object["input"] = .array(inputs)
    items[callback] = .object(object)
    body["callbacks"] = .array(items)
  }

  /// The body to post back, compact.
  public var text: String { JSONWriter.compact(.object(body)) }
}

/// A view of one callback: its `type`, `output` and `input` arrays.
public struct Callback: Sendable, Equatable {
  /// Position in the step's `callbacks` array.
  public var index: Int
  public var json: JSON

  public init(index: Int, json: JSON) {
    self.index = index
    self.json = json
  }

  public var type: String? { json["type"]?.stringValue }

  /// The value of the output named `name`, if present.
  public func output(_ name: String) -> JSON? {
    guard case .array(let outputs)? = json["output"] else { return nil }
    for output in outputs where output["name"]?.stringValue == name { return output["value"] }
    return nil
  }

  /// The `input` entries' names, in order.
  public var inputNames: [String] {
    guard case .array(let inputs)? = json["input"] else { return [] }
    return inputs.compactMap { $0["name"]?.stringValue }
  }
}

/// What is wrong with an authenticate body or one of its callbacks.
public enum JourneyError: Error, Equatable, CustomStringConvertible {
  case notJSON(JSONParseError)
  case notAnObject
  case noCallbacks
  case malformedCallback(index: Int, reason: String)

  public var description: String {
    switch self {
    case .notJSON(let error): "the body is not JSON: \(error)"
    case .notAnObject: "the body is not a JSON object"
    case .noCallbacks: "the body has no \"callbacks\" array: it is not an authenticate step"
    case .malformedCallback(let index, let reason): "callbacks[\(index)] is malformed: \(reason)"
    }
  }
}
