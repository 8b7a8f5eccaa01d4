import ArgumentParser
import Collectors
import Dispatch
import SystemCalls

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// One error style for every command: a usage error is one line on stderr,
/// `fr-profile: error: … (see 'fr-profile X --help')`, and exit code 64 (EX_USAGE).
/// ArgumentParser's own `main()` prints "Error: …" followed by the usage (for a missing
/// required option, the whole help), and exits 0 for a root command without a subcommand.
package enum CommandMain {
  /// Exit code of every usage error (sysexits EX_USAGE).
  package static let usageExitCode = ExitStatus.usage.rawValue

  /// Parses `arguments` with `Command` as the root and runs the command; never returns.
  ///
  /// - Parameters:
  ///   - name: how the user spells the root command ("fr-profile", "fr-profile journey").
  ///   - hints: a replacement message for an argument that does not exist but that users try,
  ///     such as `--password` (which would put a secret in argv).
  ///   - asynchronous: the subcommands that are `AsyncParsableCommand`s. Named rather than found
  ///     by a cast: casting every parsed command to the protocol would make the runtime scan the
  ///     binary's conformance records (0.2 M instructions) for the commands that are not async.
  package static func run<Command: ParsableCommand>(
    _: Command.Type, _ arguments: [String], name: String = "fr-profile", hints: [String: String] = [:],
    asynchronous: [any AsyncParsableCommand.Type] = []
  ) -> Never {
    let subcommands = Command.configuration.subcommands.map { $0._commandName }
    // The subcommand the user asked for, which names the help to see.
    let helpName = arguments.first.flatMap { first in subcommands.contains(first) ? "\(name) \(first)" : nil } ?? name

    for argument in arguments {
      let option = argument.split(separator: "=", maxSplits: 1).first.map(String.init) ?? argument
      if let hint = hints[option] { usageError(hint, helpName) }
      if argument == "--" { break }
    }
    if !subcommands.isEmpty {
      if arguments.isEmpty {
        usageError("no command given; the commands are \(subcommands.joined(separator: ", "))", name)
      }
      var candidate: String?
      if let first = arguments.first, !first.hasPrefix("-"), first != "help", !subcommands.contains(first) {
        candidate = first
      } else if arguments.first == "help", arguments.count > 1, !subcommands.contains(arguments[1]) {
        candidate = arguments[1]
      }
      let rootFlags = ["--help", "--version", "--generate-completion-script", "--experimental-dump-help"]
      if let first = arguments.first, first.hasPrefix("--"), let flag = first.split(separator: "=").first,
        !rootFlags.contains(String(flag)), let near = nearest(String(flag), in: rootFlags)
      {
        usageError("unknown option '\(flag)'; did you mean '\(near)'?", name)
      }
      // A mistyped command of a command group (`keys lst`): the same advice, one level down.
      if candidate == nil, let first = arguments.first, arguments.count > 1, !arguments[1].hasPrefix("-"),
        let group = Command.configuration.subcommands.first(where: { $0._commandName == first }),
        case let names = group.configuration.subcommands.map({ $0._commandName }), !names.isEmpty,
        !names.contains(arguments[1]), arguments[1] != "help"
      {
        var message = "unknown command '\(arguments[1])'"
        if let near = nearest(arguments[1], in: names) {
          message += "; did you mean '\(near)'?"
        } else {
          message += "; the commands are \(names.joined(separator: ", "))"
        }
        usageError(message, "\(name) \(first)")
      }
      if let candidate {
        var message = "unknown command '\(candidate)'"
        if let near = nearest(candidate, in: subcommands) {
          message += "; did you mean '\(near)'?"
        } else {
          message += "; the commands are \(subcommands.joined(separator: ", "))"
        }
        usageError(message, name)
      }
    }

    let command: any ParsableCommand
    do { command = try Command.parseAsRoot(arguments) } catch { finish(Command.self, error, helpName) }
    if asynchronous.contains(where: { ObjectIdentifier($0) == ObjectIdentifier(type(of: command)) }),
      let command = command as? any AsyncParsableCommand
    {
      runAsync(Command.self, command, helpName)
    }
    do {
      var command = command
      try command.run()
      exit(0)
    } catch {
      finish(Command.self, error, helpName)
    }
  }

  /// An async command (one that awaits a library's async API, as `attest challenge` awaits the
  /// certificate verifier) runs as a task while the main thread parks in `dispatchMain()`; the
  /// task ends the process. Structured: no semaphore, no box shared across threads, and the
  /// commands that are not async (collect among them) never start the concurrency runtime.
  static func runAsync<Command: ParsableCommand>(_: Command.Type, _ command: any AsyncParsableCommand, _ helpName: String) -> Never {
    nonisolated(unsafe) var command = command  // handed to the one task, never touched here again
    Task {
      do {
        try await command.run()
        exit(0)
      } catch {
        finish(Command.self, error, helpName)
      }
    }
    dispatchMain()
  }

  /// Ends the process for what parsing or a command threw: its exit code, with ArgumentParser's
  /// message on one line (help and version text on stdout).
  static func finish<Command: ParsableCommand>(_: Command.Type, _ error: any Error, _ helpName: String) -> Never {
    if let exitCode = error as? ExitCode { exit(exitCode.rawValue) }  // already reported (reportingFailures)
    do {
      let code = Command.exitCode(for: error)
      if code == .success {
        // --help, --version, help, --generate-completion-script: the text goes to stdout.
        let text = Command.fullMessage(for: error)
        _ = try? writeAll(1, Array((text.hasSuffix("\n") ? text : text + "\n").utf8))
        exit(0)
      }
      if code.rawValue != usageExitCode {
        // An error thrown by a command outside reportingFailures: still one line.
        writeStandardError("fr-profile: error: \(oneLine(Command.message(for: error)))\n")
        exit(code.rawValue)
      }
      usageError(oneLine(Command.message(for: error)), helpName)
    }
  }

  /// Prints the one-line usage error and exits 64.
  package static func usageError(_ message: String, _ helpName: String) -> Never {
    writeStandardError("fr-profile: error: \(message) (see '\(helpName) --help')\n")
    exit(usageExitCode)
  }

  /// ArgumentParser's message on one line ("Unknown option '--verison'" and "Did you mean
  /// '--version'?" joined), without its "Error: " prefix, usage or trailing period.
  static func oneLine(_ message: String) -> String {
    var parts: [String] = []
    for line in message.split(separator: "\n", omittingEmptySubsequences: false) {
      var part = Substring(line.drop(while: { $0 == " " }))
      if part.hasPrefix("Usage:") || part.hasPrefix("See '") { break }
      if part.hasPrefix("Error: ") { part.removeFirst(7) }
      while part.hasSuffix(".") || part.hasSuffix(" ") { part.removeLast() }
      if !part.isEmpty { parts.append(String(part)) }
    }
    var text = parts.joined(separator: "; ").replacing(". Did you mean", with: "; did you mean")
    // "Unknown option" → "unknown option", as our own messages; "URL …" stays.
    if let first = text.first, first.isUppercase, text.dropFirst().first?.isLowercase == true {
      text = first.lowercased() + text.dropFirst()
    }
    return text
  }

  /// The closest of `names` to `word` within two edits, if any.
  static func nearest(_ word: String, in names: [String]) -> String? {
    let scored = names.map { ($0, editDistance(Array(word.utf8), Array($0.utf8))) }
    guard let best = scored.min(by: { $0.1 < $1.1 }), best.1 <= 2 else { return nil }
    return best.0
  }

  /// Levenshtein distance (insert, delete, substitute; each 1).
  static func editDistance(_ a: [UInt8], _ b: [UInt8]) -> Int {
    if a.isEmpty { return b.count }
    var previous = Array(0...b.count)
    for i in 1...a.count {
      var current = [i] + Array(repeating: 0, count: b.count)
      for j in stride(from: 1, through: b.count, by: 1) {
        current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
      }
      previous = current
    }
    return previous[b.count]
  }
}
