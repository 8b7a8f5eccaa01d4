/// Why a login could not go on: no answer for a prompt, an answer that is not one, or a walk
/// past its time. A struct with a code, not an enum: new codes may come in any release, so a
/// `switch` over `code` needs a `default`.
public struct LoginError: Error, Sendable, Hashable, CustomStringConvertible {
  /// What went wrong, for a caller to act on (the command line picks its exit status by it).
  public struct Code: Hashable, Sendable, CustomStringConvertible {
    private enum Backing: String { case cannotAnswer, badGivenAnswer, badAnswersEntry, timeLimit }
    private let backing: Backing
    private init(_ backing: Backing) { self.backing = backing }

    /// The journey asks what no source can answer (no terminal, no entry, an unsupported
    /// callback or a device step that is not there).
    public static let cannotAnswer = Code(.cannotAnswer)
    /// An answer given up front (a user name, `--choice`, `--idp`) does not fit the prompt.
    public static let badGivenAnswer = Code(.badGivenAnswer)
    /// An entry of an answers file (or a program's answer) does not fit the prompt.
    public static let badAnswersEntry = Code(.badAnswersEntry)
    /// The walk took longer than its time limit.
    public static let timeLimit = Code(.timeLimit)

    public var description: String { backing.rawValue }
  }

  public let code: Code
  /// One line, with server text already made printable and secrets hidden.
  public let message: String

  public init(_ code: Code, _ message: String) {
    self.code = code
    self.message = message
  }

  public var description: String { message }
}
