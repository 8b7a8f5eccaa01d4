import DeviceBinding
import Journey
import Login
import SystemCalls

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// The helper's end of the socketpair `pam_frprofile.so` starts it with (descriptor 3,
/// SOCK_SEQPACKET): one record per message, a type byte and its payload (pam/pam_frprofile.c
/// describes them). Nothing else of the caller reaches the helper: no environment, no terminal.
final class PAMHelperChannel {
  let fd: Int32
  static let maximumMessage = 65536

  init(fd: Int32 = 3) { self.fd = fd }

  /// Sends one record; false when the module is gone.
  @discardableResult
  func send(_ type: UInt8, _ payload: [UInt8] = []) -> Bool {
    var record = [type] + payload.prefix(Self.maximumMessage - 1)
    defer { for index in record.indices { record[index] = 0 } }
    return record.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } == record.count
  }

  @discardableResult
  func send(_ type: UInt8, _ text: String) -> Bool { send(type, Array(text.utf8)) }

  /// The next record, waited for until `deadline` (CLOCK_MONOTONIC seconds); nil when the module
  /// is gone or the deadline passed.
  func receive(deadline: Double?) -> (type: UInt8, payload: [UInt8])? {
    var buffer = [UInt8](repeating: 0, count: Self.maximumMessage)
    while true {
      if let deadline {
        let left = deadline - monotonicSeconds()
        guard left > 0 else { return nil }
        var waiting = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let ready = poll(&waiting, 1, Int32(min((left * 1000).rounded(.up), 3_600_000)))
        if ready < 0 && errno == EINTR { continue }
        guard ready > 0 else { return nil }
      }
      let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
      if count < 0 && errno == EINTR { continue }
      guard count > 0 else { return nil }
      let record = (buffer[0], Array(buffer[1..<count]))
      for index in 0..<count { buffer[index] = 0 }
      return record
    }
  }

  /// The start record's fields (`config`, `user`, `service`, `tty`, `rhost`, `ruser`,
  /// `authtok`, `firstpass`).
  static func fields(_ payload: [UInt8]) -> [String: String] {
    var fields: [String: String] = [:]
    for part in payload.split(separator: 0, omittingEmptySubsequences: true) {
      guard let equals = part.firstIndex(of: UInt8(ascii: "=")) else { continue }
      fields[String(decoding: part[..<equals], as: UTF8.self)] = String(decoding: part[(equals + 1)...], as: UTF8.self)
    }
    return fields
  }
}

/// The person at a Linux sign-in, through the PAM conversation the module relays: a secret is
/// PAM_PROMPT_ECHO_OFF, other questions PAM_PROMPT_ECHO_ON with what belongs to them (a list of
/// choices) in the same message, AM's information PAM_TEXT_INFO and its errors PAM_ERROR_MSG.
final class PAMConversation: Conversation {
  let channel: PAMHelperChannel
  /// Over SSH (or without a terminal) PAM's information shows only with the next prompt: a
  /// Push wait then asks the person to press Enter once they have approved.
  let remote: Bool
  /// Texts that belong with the next question.
  private var pending: [String] = []
  /// Whether the module answered every question so far (false once it could not).
  private(set) var connected = true

  init(channel: PAMHelperChannel, remote: Bool) {
    self.channel = channel
    self.remote = remote
  }

  var canAsk: Bool { connected }

  func ask(_ prompt: String, echo: Bool, deadline: Double?) -> String? {
    let text = (pending + [prompt]).joined(separator: "\n")
    pending.removeAll()
    guard channel.send(echo ? UInt8(ascii: "E") : UInt8(ascii: "P"), text), let reply = channel.receive(deadline: deadline),
      reply.type == UInt8(ascii: "A")
    else {
      connected = false
      return nil
    }
    var line = reply.payload
    if line.last == UInt8(ascii: "\n") { line.removeLast() }
    return String(decoding: line, as: UTF8.self)
  }

  func show(_ text: String, as kind: MessageKind) {
    switch kind {
    case .prompting: pending.append(text)
    case .information, .warning, .registration: channel.send(UInt8(ascii: "I"), text)
    case .error: channel.send(UInt8(ascii: "W"), text)
    case .note, .detail: SigninLog.debug(text)
    }
  }

  func pollingWait(_ message: String, firstTime: Bool, milliseconds: Int, deadline: Double?) {
    guard remote else {
      if firstTime && !message.isEmpty { show(message, as: .information) }
      pause(milliseconds: milliseconds, until: deadline)
      return
    }
    let what = message.isEmpty ? "Approve the sign-in" : message
    _ = ask("\(what)\nPress Enter once you have approved: ", echo: true, deadline: deadline)
  }
}

/// The sign-in's lines for the system log: sent to the module, which writes them with
/// pam_syslog under the PAM service's name (as every PAM module logs). Never a secret: server
/// text is made printable, and passwords are not put in them.
enum SigninLog {
  nonisolated(unsafe) static var channel: PAMHelperChannel?
  static func error(_ text: String) { write(LOG_ERR, text) }
  static func notice(_ text: String) { write(LOG_NOTICE, text) }
  static func debug(_ text: String) { write(LOG_DEBUG, text) }
  private static func write(_ priority: Int32, _ text: String) {
    channel?.send(UInt8(ascii: "L"), String(priority) + ServerText.printable(text, singleLine: true))
  }
}

/// The PIN of a sign-in key bound with APPLICATION_PIN, asked through the PAM conversation with
/// echo off. `@unchecked Sendable`: the helper is one process with one thread, and the
/// conversation is used by it alone.
struct PAMPINSource: PINSource, @unchecked Sendable {
  let conversation: PAMConversation
  let deadline: Double

  func existingPIN(prompt: String, deadline: Double) throws(BindingFailure) -> String? {
    guard conversation.canAsk else { return nil }
    return conversation.ask("PIN of your sign-in key: ", echo: false, deadline: min(deadline, self.deadline))
  }

  /// A binding inside a sign-in (a tree that binds at the door): the new PIN typed twice.
  func newPIN(prompt: String, policy: PINPolicy, deadline: Double) throws(BindingFailure) -> String? {
    TerminalPINSource.newPIN(
      policy: policy, label: "New PIN for your sign-in key: ",
      ask: { conversation.ask($0, echo: false, deadline: min(deadline, self.deadline)) }, tell: { conversation.show($0, as: .prompting) })
  }

}
