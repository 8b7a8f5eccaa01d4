import ArgumentParser
import ProfileJSON

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// The one output convention of every command that prints a result (docs/install.md "Output"):
/// `-o FILE` writes it atomically instead of to stdout (`-o -` is stdout), and JSON is compact
/// when piped or written to a file, indented on a terminal, or as `--pretty`/`--compact` say.
/// Commands whose default output is text take `--json` as well.
package struct OutputOptions: ParsableArguments {
  @Flag(help: "Indent the JSON (the default on a terminal).")
  package var pretty = false

  @Flag(help: "Print compact JSON (the default when piped or written to a file).")
  package var compact = false

  @Option(
    name: .shortAndLong,
    help: ArgumentHelp(
      "Write the result to FILE atomically instead of stdout ('-': stdout); a replaced file keeps its mode.",
      valueName: "FILE"), completion: .file())
  package var output: String?

  package init() {}

  package func validate() throws {
    if pretty && compact { throw ValidationError("--pretty and --compact exclude each other.") }
  }

  /// The file to write, or nil for standard output.
  package var file: String? { output == "-" ? nil : output }

  /// Whether JSON is indented: asked for, or the default on a terminal.
  package var usePretty: Bool { pretty || (!compact && file == nil && standardOutputIsTerminal) }

  /// Writes `value` as JSON, followed by a newline.
  package func emit(_ value: JSON, mode: mode_t = 0o644) throws {
    try emit(text: (usePretty ? JSONWriter.pretty(value) : JSONWriter.compact(value)) + "\n", mode: mode)
  }

  /// Writes `text` (already ending in a newline) to the file or stdout; a file gets `mode`
  /// (0600 for a credential), see `writeFileAtomically`.
  package func emit(text: String, mode: mode_t = 0o644) throws {
    if let file { try writeFileAtomically(file, text, mode: mode) } else { try printOutput(text) }
  }
}

/// `-o FILE` alone, for the commands whose output has no format flags (the `attest` documents):
/// written atomically with mode 0644 instead of to stdout (`-o -` is stdout).
package struct OutputFileOption: ParsableArguments {
  @Option(
    name: .shortAndLong, help: ArgumentHelp("Write the JSON to FILE atomically instead of stdout ('-': stdout).", valueName: "FILE"),
    completion: .file())
  package var output: String?

  package init() {}

  /// The file to write, or nil for standard output.
  package var file: String? { output == "-" ? nil : output }

  /// Writes `text` (already ending in a newline) to the file or stdout.
  package func emit(text: String) throws {
    if let file { try writeFileAtomically(file, text) } else { try printOutput(text) }
  }
}

/// `-o FILE` for a credential (an access token, a key): as `OutputFileOption`, but the file
/// gets mode 0600.
package struct CredentialOutputFileOption: ParsableArguments {
  @Option(
    name: .shortAndLong,
    help: ArgumentHelp("Write the result to FILE atomically (mode 0600) instead of stdout ('-': stdout).", valueName: "FILE"),
    completion: .file())
  package var output: String?

  package init() {}

  /// The file to write, or nil for standard output.
  package var file: String? { output == "-" ? nil : output }

  /// Writes `text` (already ending in a newline) to the file (mode 0600) or stdout.
  package func emit(text: String) throws {
    if let file { try writeFileAtomically(file, text, mode: 0o600) } else { try printOutput(text) }
  }
}
