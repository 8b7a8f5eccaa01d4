import Journey
import ProfileCLI
import ProfileJSON

/// The answers of a journey without a terminal (`journey --answers FILE`, a kiosk, a script):
/// a 0600 file of the caller's, never argv or the environment (schemas/answers.schema.json):
///
///     {"answers": [
///       {"type": "NameCallback", "prompt": "User Name", "value": "demo"},
///       {"type": "PasswordCallback", "value": "…"},
///       {"type": "NameCallback", "prompt": "Enter verification code", "value": "123456"},
///       {"type": "TermsAndConditionsCallback", "value": true},
///       {"type": "KbaCreateCallback", "question": "…", "answer": "…"}]}
///
/// An entry answers one callback: the first entry not used yet whose `type` is the callback's
/// and whose `prompt`, when it has one, is the callback's (case and surrounding blanks aside).
/// A page shown again (AM's error after a wrong code) takes the next matching entry, never the
/// one already sent: a wrong password is not resent until the account locks.
struct AnswersFile {
  struct Entry {
    var type: String
    var prompt: String?
    var value: JSON?
    var question: String?
    var answer: String?
    var used = false
  }

  let path: String
  private(set) var entries: [Entry]

  /// Every text an entry holds (for `printable`'s hiding).
  var secrets: [String] {
    entries.flatMap { entry in [entry.value?.stringValue, entry.answer].compactMap { $0 } }
  }

  /// Reads and checks `path`: the caller's, mode 0600 or stricter (`readOwnFile` checks the
  /// directories on the way), at most 64 KiB, the shape above.
  init(path: String) throws {
    self.path = path
    let bytes = try readOwnFile(path, limit: 64 << 10, secret: true)
    let document: JSON
    do { document = try JSONParser.parse(bytes) } catch {
      throw Failure(.dataError, "--answers \(path): not JSON (\(error)).")
    }
    guard case .array(let items)? = document["answers"] else {
      throw Failure(.dataError, "--answers \(path): no \"answers\" array.")
    }
    var entries: [Entry] = []
    for (index, item) in items.enumerated() {
      guard case .object(let object) = item, let type = object["type"]?.stringValue else {
        throw Failure(.dataError, "--answers \(path): answers[\(index)] is not an object with a \"type\".")
      }
      guard CallbackRequest.supportedTypes.contains(type) else {
        throw Failure(
          .dataError, "--answers \(path): answers[\(index)] has the type \"\(type)\", which is not a callback type fr-profile answers.")
      }
      let prompt = object["prompt"]
      guard prompt == nil || prompt?.stringValue != nil else {
        throw Failure(.dataError, "--answers \(path): answers[\(index)].prompt is not a string.")
      }
      entries.append(
        Entry(
          type: type, prompt: prompt?.stringValue, value: object["value"], question: object["question"]?.stringValue,
          answer: object["answer"]?.stringValue))
    }
    self.entries = entries
  }

  /// The next unused entry for a callback of `type` whose prompt is `prompt`, marked used.
  mutating func take(type: String, prompt: String) -> Entry? {
    let wanted = Self.normalized(prompt)
    guard let index = entries.firstIndex(where: { !$0.used && $0.type == type && ($0.prompt.map(Self.normalized) ?? wanted) == wanted })
    else { return nil }
    entries[index].used = true
    return entries[index]
  }

  static func normalized(_ prompt: String) -> String {
    var text = Substring(prompt.lowercased())
    while let first = text.first, first == " " || first == ":" { text.removeFirst() }
    while let last = text.last, last == " " || last == ":" { text.removeLast() }
    return String(text)
  }
}
