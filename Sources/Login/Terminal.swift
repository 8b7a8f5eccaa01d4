import Journey
import SystemCalls

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// The controlling terminal, for prompts: questions go to it and answers come from it, so
/// stdin and stdout stay free for `--password-stdin` and the token.
public final class Terminal {
  private let fd: Int32

  /// The terminal, or nil when the process has none (a service, a pipeline under cron).
  public init?() {
    let fd = open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY)
    guard fd >= 0 else { return nil }
    self.fd = fd
  }

  deinit { close(fd) }

  /// Writes `text` with every control character but newline and tab (escape sequences, C1,
  /// bidirectional overrides) replaced: prompts carry a server's words (a binding callback's
  /// title, a stored username), and nothing a server chose may drive the terminal.
  public func write(_ text: String) {
    _ = try? writeAll(fd, Array(ServerText.printable(text).utf8))
  }

  /// Shows `prompt` and reads one line; with `echo` false the typed characters are not shown
  /// (echo is restored even if reading fails). Nil at end of input, or when `deadline`
  /// (CLOCK_MONOTONIC seconds, as `monotonicSeconds()`) passes first.
  ///
  /// Echo goes off before the prompt is shown, as getpass(3) does: a secret typed (or pasted)
  /// the moment the prompt appears is never echoed, and input typed before it (flushed by
  /// TCSAFLUSH) is not taken as the answer. Showing the prompt first let a fast answer be
  /// echoed and then discarded, leaving the prompt waiting (seen in TerminalPromptTests).
  public func readLine(prompt: String, echo: Bool = true, deadline: Double? = nil) -> String? {
    var saved = termios()
    let canHide = tcgetattr(fd, &saved) == 0
    if !echo && canHide {
      var quiet = saved
      quiet.c_lflag &= ~tcflag_t(ECHO)
      quiet.c_lflag |= tcflag_t(ECHONL)
      tcsetattr(fd, TCSAFLUSH, &quiet)
    }
    defer { if !echo && canHide { tcsetattr(fd, TCSADRAIN, &saved) } }
    write(prompt)
    var line: [UInt8] = []
    var byte: UInt8 = 0
    while true {
      if let deadline {
        let left = deadline - monotonicSeconds()
        if left <= 0 { return nil }
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        // Rounded up: a wait cut to whole milliseconds below `left` would end just before the
        // deadline, and the caller would take the silence for a cancel rather than a timeout.
        let ready = poll(&poller, 1, Int32(min((left * 1000).rounded(.up), 3_600_000)))
        if ready < 0 && errno == EINTR { continue }
        if ready <= 0 {
          write("\n")
          return nil
        }
      }
      let count = (try? systemCall("read") { read(fd, &byte, 1) }) ?? -1
      if count <= 0 { return line.isEmpty ? nil : String(decoding: line, as: UTF8.self) }
      if byte == UInt8(ascii: "\n") { break }
      line.append(byte)
    }
    if line.last == UInt8(ascii: "\r") { line.removeLast() }
    return String(decoding: line, as: UTF8.self)
  }
}

/// The person at the controlling terminal: questions and what belongs with them go to
/// /dev/tty, so stdin and stdout stay free for piped secrets and results; everything else
/// (AM's messages, notes, registration links) goes to `display`.
public final class TerminalConversation: Conversation {
  /// Nil when the process has no terminal: nothing can be asked.
  public let terminal: Terminal?
  /// Where texts other than `.prompting` go (the command line: stderr, with its prefixes).
  public var display: (String, MessageKind) -> Void

  public init(terminal: Terminal? = Terminal(), display: @escaping (String, MessageKind) -> Void) {
    self.terminal = terminal
    self.display = display
  }

  public var canAsk: Bool { terminal != nil }

  public func ask(_ prompt: String, echo: Bool, deadline: Double?) -> String? {
    terminal?.readLine(prompt: prompt, echo: echo, deadline: deadline)
  }

  public func show(_ text: String, as kind: MessageKind) {
    if kind == .prompting {
      terminal?.write(text + "\n")
    } else {
      display(text, kind)
    }
  }
}
