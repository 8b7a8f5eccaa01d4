import Journey
import SystemCalls

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// The person a login asks when nothing given up front answers: a terminal, a PAM
/// conversation, a program's own dialog. Everything shown comes from the server and is made
/// printable before it gets here.
public protocol Conversation: AnyObject {
  /// Whether a person can be asked at all (a terminal is there, a PAM conversation is open).
  var canAsk: Bool { get }
  /// Shows `prompt` and reads one line; with `echo` false what is typed is not shown. Nil when
  /// there is no answer: the person closed the input, or `deadline` (CLOCK_MONOTONIC seconds,
  /// as `monotonicSeconds()`) passed first.
  func ask(_ prompt: String, echo: Bool, deadline: Double?) -> String?
  /// Shows `text` as `kind` says.
  func show(_ text: String, as kind: MessageKind)
  /// A PollingWaitCallback (Push, "check your email"): shows `message` (the first time of a
  /// page AM repeats) and returns when the step should go back to AM — after `milliseconds`,
  /// cut at `deadline`. A conversation that cannot show a message while it waits (OpenSSH
  /// shows PAM's information only with the next prompt) asks the person to say when instead.
  func pollingWait(_ message: String, firstTime: Bool, milliseconds: Int, deadline: Double?)
}

extension Conversation {
  public func pollingWait(_ message: String, firstTime: Bool, milliseconds: Int, deadline: Double?) {
    if firstTime && !message.isEmpty { show(message, as: .information) }
    pause(milliseconds: milliseconds, until: deadline)
  }
}

/// Sleeps `milliseconds` (at most ten minutes), cut at `deadline` (CLOCK_MONOTONIC seconds).
public func pause(milliseconds: Int, until deadline: Double?) {
  var seconds = Double(min(max(milliseconds, 0), 600_000)) / 1000
  if let deadline { seconds = min(seconds, max(0, deadline - monotonicSeconds())) }
  var left = timespec(tv_sec: Int(seconds), tv_nsec: Int((seconds - seconds.rounded(.down)) * 1e9))
  var rest = timespec()
  while nanosleep(&left, &rest) != 0 && errno == EINTR { left = rest }
}

/// What a text shown to the person is.
public enum MessageKind: Sendable, Equatable {
  /// Belongs with the next question (a list of choices, "try again"): shown where questions are
  /// asked, just before it.
  case prompting
  /// AM's information (a TextOutputCallback of type 0, a polling message, recovery codes).
  case information
  /// AM's warning (type 1), or what the server refused of the last answer.
  case warning
  /// AM's error message (type 2).
  case error
  /// The client's remark on what it did (answered PingOne Protect with its client error).
  case note
  /// Detail for a verbose run only.
  case detail
  /// An MFA registration URI (`otpauth://`, `pushauth://`) for an authenticator app to take.
  case registration
}

/// No person to ask: every question goes unanswered and texts are dropped (a service, a
/// program that answers everything through its `AnswerSource`).
public final class NoConversation: Conversation {
  public init() {}
  public var canAsk: Bool { false }
  public func ask(_ prompt: String, echo: Bool, deadline: Double?) -> String? { nil }
  public func show(_ text: String, as kind: MessageKind) {}
}
