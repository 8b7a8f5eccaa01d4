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

/// What is wrong with an authenticate body or one of its callbacks, or why a walk ended without
/// an outcome.
///
/// A struct, not an enum, so that a release can add a failure without breaking an embedder's
/// `switch`: new codes may be added in any release. Match on ``code`` (`error.code ==
/// .unsupportedCallback`, or `switch error.code` with a `default:`); the values callers act on
/// are the optional properties (`nil` where a code has none), ``description`` is the message.
public struct JourneyError: Error, Sendable, Hashable, CustomStringConvertible {
  /// What kind of failure it is. New codes may be added in any release: switch with a
  /// `default:`.
  public struct Code: Hashable, Sendable, CustomStringConvertible {
    private enum Backing: Hashable, Sendable {
      case notJSON, notAnObject, noCallbacks, malformedCallback, unsupportedCallback, unexpectedStatus, notAStep
      case tooManySteps, tooManyCallbacks, timeLimit
    }

    private var backing: Backing
    private init(_ backing: Backing) { self.backing = backing }

    /// The body is not JSON.
    public static let notJSON = Code(.notJSON)
    /// The body is JSON but not an object.
    public static let notAnObject = Code(.notAnObject)
    /// The body has no `callbacks` array: it is not an authenticate step.
    public static let noCallbacks = Code(.noCallbacks)
    /// The callback at ``index`` is not what its type says (``reason``).
    public static let malformedCallback = Code(.malformedCallback)
    /// The callback at ``index`` has a type the client cannot answer (``type``, nil when the
    /// callback has none).
    public static let unsupportedCallback = Code(.unsupportedCallback)
    /// The server answered with a ``status`` other than 200 (a step or success) or 401
    /// (failure).
    public static let unexpectedStatus = Code(.unexpectedStatus)
    /// A 200 body that is neither a step (`callbacks`) nor a success (`tokenId`, `successUrl`).
    public static let notAStep = Code(.notAStep)
    /// The journey did not end within ``limit`` steps.
    public static let tooManySteps = Code(.tooManySteps)
    /// A step has more callbacks (``count``) than the client answers (``limit``).
    public static let tooManyCallbacks = Code(.tooManyCallbacks)
    /// The journey did not end within ``seconds``.
    public static let timeLimit = Code(.timeLimit)

    public var description: String { String(describing: backing) }
  }

  /// What kind of failure it is.
  public let code: Code
  /// The index of the callback concerned in the step's `callbacks` (``Code/malformedCallback``,
  /// ``Code/unsupportedCallback``).
  public let index: Int?
  /// The type of the callback the client cannot answer (``Code/unsupportedCallback``; nil also
  /// when that callback has no type).
  public let type: String?
  /// What is wrong with the callback (``Code/malformedCallback``).
  public let reason: String?
  /// The HTTP status the server answered (``Code/unexpectedStatus``).
  public let status: Int?
  /// How many callbacks the step has (``Code/tooManyCallbacks``).
  public let count: Int?
  /// The most steps (``Code/tooManySteps``) or callbacks (``Code/tooManyCallbacks``) a walk
  /// accepts.
  public let limit: Int?
  /// The seconds the journey had (``Code/timeLimit``).
  public let seconds: Double?
  /// One line saying what is wrong.
  public let description: String

  private init(
    _ code: Code, index: Int? = nil, type: String? = nil, reason: String? = nil, status: Int? = nil, count: Int? = nil,
    limit: Int? = nil, seconds: Double? = nil, _ description: String
  ) {
    self.code = code
    self.index = index
    self.type = type
    self.reason = reason
    self.status = status
    self.count = count
    self.limit = limit
    self.seconds = seconds
    self.description = description
  }

  /// The body is not JSON.
  public static func notJSON(_ error: JSONParseError) -> Self { Self(.notJSON, "the body is not JSON: \(error)") }

  /// The body is JSON but not an object.
  public static var notAnObject: Self { Self(.notAnObject, "the body is not a JSON object") }

  /// The body has no `callbacks` array: it is not an authenticate step.
  public static var noCallbacks: Self {
    Self(.noCallbacks, "the body has no \"callbacks\" array: it is not an authenticate step")
  }

  /// The callback at `index` is not what its type says.
  public static func malformedCallback(index: Int, reason: String) -> Self {
    Self(.malformedCallback, index: index, reason: reason, "callbacks[\(index)] is malformed: \(reason)")
  }

  /// A callback type the client cannot answer (`type` nil when the callback has none).
  public static func unsupportedCallback(index: Int, type: String?) -> Self {
    Self(
      .unsupportedCallback, index: index, type: type,
      "the journey asks for a \(type.map { "\"\($0)\"" } ?? "callback without a type") (callbacks[\(index)]), which "
        + "this client cannot answer; it answers \(CallbackRequest.supportedTypes.joined(separator: ", "))")
  }

  /// The server answered with a status other than 200 (a step or success) or 401 (failure);
  /// `message` is its body or AM's message, in the description only.
  public static func unexpectedStatus(status: Int, message: String) -> Self {
    Self(
      .unexpectedStatus, status: status,
      "the server answered HTTP \(status)\(message.isEmpty ? "" : ": \(PrintableText.line(message))"); expected an AM authenticate response"
    )
  }

  /// A 200 body that is neither a step (`callbacks`) nor a success (`tokenId`, `successUrl`).
  public static var notAStep: Self {
    Self(.notAStep, "the server's answer has neither \"callbacks\" nor \"tokenId\": it is not an AM authenticate response")
  }

  /// The journey did not end within this many steps.
  public static func tooManySteps(_ limit: Int) -> Self {
    Self(.tooManySteps, limit: limit, "the journey did not end within \(limit) steps")
  }

  /// A step has more callbacks than the client answers.
  public static func tooManyCallbacks(count: Int, limit: Int) -> Self {
    Self(
      .tooManyCallbacks, count: count, limit: limit, "the step has \(count) callbacks, more than the \(limit) a client answers")
  }

  /// The journey did not end within this many seconds.
  public static func timeLimit(seconds: Double) -> Self {
    Self(
      .timeLimit, seconds: seconds,
      "the journey did not end within \(seconds == seconds.rounded() ? String(Int(seconds)) : String(seconds)) s")
  }
}
