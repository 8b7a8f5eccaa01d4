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

  /// The most callbacks a step may have before a client refuses it (`tooManyCallbacks`): AM's
  /// nodes send a handful; a hostile server could send 10⁵ to exhaust the client.
  public static let defaultMaximumCallbacks = 256

  /// Sets `callbacks[callback].input[input].value`, keeping the input's name and everything else.
  public mutating func setInput(callback: Int, input: Int = 0, value: JSON) throws(JourneyError) {
    try setInputs([(callback, value)], input: input)
  }

  /// Sets `input[input].value` of several callbacks in one pass, in time linear in the step:
  /// the callbacks array is taken out of the body while it is changed, so nothing is copied.
  /// Throws before changing anything when one of them has no such input.
  public mutating func setInputs(_ values: [(callback: Int, value: JSON)], input: Int = 0) throws(JourneyError) {
    guard let position = body.members.firstIndex(where: { $0.key == "callbacks" }),
      case .array(var items) = body.members[position].value
    else { throw .malformedCallback(index: values.first?.callback ?? 0, reason: "no such callback") }
    for (callback, _) in values {
      guard items.indices.contains(callback), case .object(let object) = items[callback] else {
        throw .malformedCallback(index: callback, reason: "no such callback")
      }
      guard case .array(let inputs)? = object["input"], inputs.indices.contains(input), case .object = inputs[input] else {
        throw .malformedCallback(index: callback, reason: "it has no input[\(input)] object")
      }
    }
    body.members[position].value = .null  // the only reference to the array is now `items`
    for (callback, value) in values {
      guard case .object(var object) = items[callback] else { continue }
      items[callback] = .null
      guard case .array(var inputs)? = object["input"], case .object(var field) = inputs[input] else { continue }
      object["input"] = .null
      inputs[input] = .null
      field["value"] = value
      inputs[input] = .object(field)
      object["input"] = .array(inputs)
      items[callback] = .object(object)
    }
    body.members[position].value = .array(items)
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
  /// A callback type the client cannot answer (`type` nil when the callback has none).
  case unsupportedCallback(index: Int, type: String?)
  /// The server answered with a status other than 200 (a step or success) or 401 (failure).
  case unexpectedStatus(status: Int, message: String)
  /// A 200 body that is neither a step (`callbacks`) nor a success (`tokenId`, `successUrl`).
  case notAStep
  /// The journey did not end within this many steps.
  case tooManySteps(Int)
  /// A step has more callbacks than the client answers.
  case tooManyCallbacks(count: Int, limit: Int)
  /// The journey did not end within this many seconds.
  case timeLimit(seconds: Double)

  public var description: String {
    switch self {
    case .notJSON(let error): "the body is not JSON: \(error)"
    case .notAnObject: "the body is not a JSON object"
    case .noCallbacks: "the body has no \"callbacks\" array: it is not an authenticate step"
    case .malformedCallback(let index, let reason): "callbacks[\(index)] is malformed: \(reason)"
    case .unsupportedCallback(let index, let type):
      "the journey asks for a \(type.map { "\"\($0)\"" } ?? "callback without a type") (callbacks[\(index)]), which "
        + "this client cannot answer; it answers \(CallbackRequest.supportedTypes.joined(separator: ", "))"
    case .unexpectedStatus(let status, let message):
      "the server answered HTTP \(status)\(message.isEmpty ? "" : ": \(PrintableText.line(message))"); expected an AM authenticate response"
    case .notAStep: "the server's answer has neither \"callbacks\" nor \"tokenId\": it is not an AM authenticate response"
    case .tooManySteps(let count): "the journey did not end within \(count) steps"
    case .tooManyCallbacks(let count, let limit): "the step has \(count) callbacks, more than the \(limit) a client answers"
    case .timeLimit(let seconds):
      "the journey did not end within \(seconds == seconds.rounded() ? String(Int(seconds)) : String(seconds)) s"
    }
  }
}
