import Journey
import ProfileJSON

/// A prompt of a journey, as an answer source sees it.
public struct AnswerPrompt: Sendable, Equatable {
  /// The callback asking.
  public var type: CallbackType
  /// Its prompt, as the server sent it (empty when it has none).
  public var prompt: String
  /// The options of a choice, confirmation or identity provider selection; nil for the others.
  public var options: [String]?

  public init(type: CallbackType, prompt: String, options: [String]? = nil) {
    self.type = type
    self.prompt = prompt
    self.options = options
  }
}

/// One answer: a value (text, a number, true or false, an option's index or text, a provider's
/// name), or a security question with its answer.
public struct Answer: Sendable, Equatable {
  public var value: JSON?
  public var question: String?
  public var answer: String?

  public init(value: JSON? = nil, question: String? = nil, answer: String? = nil) {
    self.value = value
    self.question = question
    self.answer = answer
  }

  public static func text(_ text: String) -> Answer { Answer(value: .string(text)) }
  public static func option(_ index: Int) -> Answer { Answer(value: .number(Double(index))) }
  public static func accept(_ yes: Bool) -> Answer { Answer(value: .bool(yes)) }
}

/// Where answers come from before a person is asked: values given up front, an answers file,
/// a program's callbacks. The login asks its sources in order; the first that answers wins.
public protocol AnswerSource {
  /// The source, as messages name it (`--choice`, `--answers /path/file.json`, "the program").
  var name: String { get }
  /// Whether a wrong answer of this source is the caller's usage error (values given on the
  /// command line) rather than bad data (a file, a program).
  var givenUpFront: Bool { get }
  /// Every secret it holds, hidden wherever server text is shown.
  var secrets: [String] { get }
  /// The answer for `prompt`, used up; nil lets the next source answer.
  mutating func answer(_ prompt: AnswerPrompt) -> Answer?
}

extension AnswerSource {
  public var givenUpFront: Bool { false }
  public var secrets: [String] { [] }
}

/// Values given once, up front (`--user`, a piped password, `--choice`, `--idp`; the PAM user):
/// the user answers the first NameCallback and the password the first PasswordCallback, and
/// they are then gone — a page AM shows again is asked again, never answered from memory, so a
/// mistyped password is not resent until the account locks.
public struct GivenAnswers: AnswerSource {
  public var user: String?
  public var password: String?
  /// Option indexes for the next choice and confirmation callbacks, in order.
  public var choices: [Int]
  /// The provider of every SelectIdPCallback.
  public var identityProvider: String?

  public init(user: String? = nil, password: String? = nil, choices: [Int] = [], identityProvider: String? = nil) {
    self.user = user
    self.password = password
    self.choices = choices
    self.identityProvider = identityProvider
  }

  public var name: String { "the options given" }
  public var givenUpFront: Bool { true }
  public var secrets: [String] { password.map { [$0] } ?? [] }

  public mutating func answer(_ prompt: AnswerPrompt) -> Answer? {
    switch prompt.type {
    case .name:
      defer { user = nil }
      return user.map(Answer.text)
    case .password:
      defer { password = nil }
      return password.map(Answer.text)
    case .choice, .confirmation:
      return choices.isEmpty ? nil : .option(choices.removeFirst())
    case .selectIdP:
      return identityProvider.map(Answer.text)
    default:
      return nil
    }
  }
}

/// A program's answers: `answer` is called for each prompt no earlier source answered; nil
/// lets the conversation ask.
public struct ProgramAnswers: AnswerSource {
  public var name: String
  private let respond: (AnswerPrompt) -> Answer?

  public init(name: String = "the program", _ respond: @escaping (AnswerPrompt) -> Answer?) {
    self.name = name
    self.respond = respond
  }

  public func answer(_ prompt: AnswerPrompt) -> Answer? { respond(prompt) }
}

/// The answers of a journey without a person (a kiosk, a script): a JSON document
/// (schemas/answers.schema.json):
///
///     {"answers": [
///       {"type": "NameCallback", "prompt": "User Name", "value": "demo"},
///       {"type": "PasswordCallback", "value": "…"},
///       {"type": "NameCallback", "prompt": "Enter verification code", "value": "123456"},
///       {"type": "TermsAndConditionsCallback", "value": true},
///       {"type": "KbaCreateCallback", "question": "…", "answer": "…"}]}
///
/// An entry answers one callback: the first entry not used yet whose `type` is the callback's
/// and whose `prompt`, when it has one, is the callback's (case, blanks and colons around it
/// aside). A page shown again (AM's error after a wrong code) takes the next matching entry,
/// never the one already sent: a wrong password is not resent until the account locks.
public struct AnswersFile: AnswerSource {
  struct Entry {
    var type: CallbackType
    var prompt: String?
    var answer: Answer
    var used = false
  }

  /// Where the document came from, for messages (a path).
  public let path: String
  private var entries: [Entry]

  public var name: String { "--answers \(path)" }

  public var secrets: [String] {
    entries.flatMap { entry in [entry.answer.value?.stringValue, entry.answer.answer].compactMap { $0 } }
  }

  /// Reads the document; `path` names it in the errors, which say what is wrong where.
  public init(parsing bytes: [UInt8], path: String) throws(LoginError) {
    self.path = path
    func bad(_ why: String) -> LoginError { LoginError(.badAnswersEntry, "--answers \(path): \(why).") }
    let document: JSON
    do { document = try JSONParser.parse(bytes) } catch { throw bad("not JSON (\(error))") }
    guard case .array(let items)? = document["answers"] else { throw bad("no \"answers\" array") }
    var entries: [Entry] = []
    for (index, item) in items.enumerated() {
      guard case .object(let object) = item, let typeName = object["type"]?.stringValue else {
        throw bad("answers[\(index)] is not an object with a \"type\"")
      }
      guard let type = CallbackType(rawValue: typeName) else {
        throw bad("answers[\(index)] has the type \"\(typeName)\", which is not a callback type fr-profile answers")
      }
      let prompt = object["prompt"]
      guard prompt == nil || prompt?.stringValue != nil else { throw bad("answers[\(index)].prompt is not a string") }
      entries.append(
        Entry(
          type: type, prompt: prompt?.stringValue,
          answer: Answer(value: object["value"], question: object["question"]?.stringValue, answer: object["answer"]?.stringValue)))
    }
    self.entries = entries
  }

  public mutating func answer(_ prompt: AnswerPrompt) -> Answer? {
    let wanted = Self.normalized(prompt.prompt)
    guard
      let index = entries.firstIndex(where: {
        !$0.used && $0.type == prompt.type && ($0.prompt.map(Self.normalized) ?? wanted) == wanted
      })
    else { return nil }
    entries[index].used = true
    return entries[index].answer
  }

  static func normalized(_ prompt: String) -> String {
    var text = Substring(prompt.lowercased())
    while let first = text.first, first == " " || first == ":" { text.removeFirst() }
    while let last = text.last, last == " " || last == ":" { text.removeLast() }
    return String(text)
  }
}
