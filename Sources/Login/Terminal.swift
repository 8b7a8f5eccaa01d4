import Collectors
import DeviceBinding
import Journey
import ProfileCLI
import SystemCalls

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// The controlling terminal, for prompts: questions go to it and answers come from it, so
/// stdin and stdout stay free for `--password-stdin` and the token.
final class Terminal {
  private let fd: Int32

  /// The terminal, or nil when the process has none (a service, a pipeline under cron).
  init?() {
    let fd = open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY)
    guard fd >= 0 else { return nil }
    self.fd = fd
  }

  deinit { close(fd) }

  /// Writes `text` with every control character but newline and tab (escape sequences, C1,
  /// bidirectional overrides) replaced: prompts carry a server's words (a binding callback's
  /// title, a stored username), and nothing a server chose may drive the terminal.
  func write(_ text: String) {
    _ = try? writeAll(fd, Array(ServerText.printable(text).utf8))
  }

  /// Shows `prompt` and reads one line; with `echo` false the typed characters are not shown
  /// (echo is restored even if reading fails). Nil at end of input, or when `deadline`
  /// (CLOCK_MONOTONIC seconds, as `DeviceBinder.monotonicNow()`) passes first.
  ///
  /// Echo goes off before the prompt is shown, as getpass(3) does: a secret typed (or pasted)
  /// the moment the prompt appears is never echoed, and input typed before it (flushed by
  /// TCSAFLUSH) is not taken as the answer. Showing the prompt first let a fast answer be
  /// echoed and then discarded, leaving the prompt waiting (seen in TerminalPromptTests).
  func readLine(prompt: String, echo: Bool = true, deadline: Double? = nil) -> String? {
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
        let left = deadline - DeviceBinder.monotonicNow()
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

/// Standard input, as bytes (at most 1 MiB: what is read from it is a password or a token);
/// empty when it cannot be read.
func readStandardInput() -> [UInt8] {
  (try? readAll(0, limit: 1 << 20)) ?? []
}
