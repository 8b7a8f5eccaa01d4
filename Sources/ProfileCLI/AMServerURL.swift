import ArgumentParser

/// AM's base URL as a command that sends a credential to it takes it (`--server`), and the one
/// transport rule all such commands share: https://, or plain http:// only to this
/// machine (localhost, 127.0.0.0/8, ::1) or when the caller passes `--insecure-http`. `journey`
/// sends the password and receives a session token; `keys delete --server` sends the SSO token.
package struct AMServerURL: Sendable {
  /// The URL as given.
  package let text: String
  /// What travels to AM, for messages: "the password", "the SSO token".
  package let credential: String

  /// The rule for a command's help, naming what `credential` it would send in clear.
  package static func helpParagraph(credential: String) -> String {
    """
    Plain http:// is refused except to a loopback address (localhost, 127.0.0.0/8, ::1) \
    or with --insecure-http, which sends \(credential) in clear and says so.
    """
  }

  /// Checks `text` against the rule; the error names --server and --insecure-http. Call it
  /// from `validate()`, so nothing is read or sent when the URL is refused.
  package init(_ text: String, credential: String, insecureHTTP: Bool) throws(ValidationError) {
    guard text.hasPrefix("https://") || text.hasPrefix("http://") else {
      throw ValidationError("--server must be an http:// or https:// URL, e.g. https://am.example.com/am.")
    }
    self.text = text
    self.credential = credential
    if isClearToAnotherMachine && !insecureHTTP {
      throw ValidationError(
        "--server \(text) is plain http://: \(credential) would travel in clear. Use https://, or pass --insecure-http to accept that.")
    }
  }

  /// Plain http:// to a host that is not this machine (allowed only with --insecure-http).
  package var isClearToAnotherMachine: Bool { text.hasPrefix("http://") && !Self.isLoopback(text) }

  /// The line to print on stderr before sending anything, or nil when the transport is safe.
  package var warning: String? {
    guard isClearToAnotherMachine else { return nil }
    return "fr-profile: warning: --insecure-http: talking plain http to \(text); \(credential) travels in clear.\n"
  }

  /// The URL's `host[:port]` (user information dropped), shown at prompts so a person sees
  /// which server asks.
  package var host: String { Self.authority(of: text).map(String.init) ?? text }

  /// What follows `scheme://` up to the path, without user information.
  private static func authority(of url: String) -> Substring? {
    guard let schemeEnd = url.firstRange(of: "://") else { return nil }
    let authority = url[schemeEnd.upperBound...].prefix { $0 != "/" && $0 != "?" && $0 != "#" }
    guard let at = authority.lastIndex(of: "@") else { return authority }
    return authority[authority.index(after: at)...]
  }

  /// Whether the URL's host is this machine: `localhost`, 127.0.0.0/8 in dotted-quad form, or
  /// `[::1]`. Anything unusual in the authority (a backslash, a percent escape, spaces) is
  /// answered no, so a URL that libcurl might read differently is never taken for loopback.
  package static func isLoopback(_ url: String) -> Bool {
    guard let authority = authority(of: url) else { return false }
    let host: Substring
    let port: Substring
    if authority.hasPrefix("[") {
      guard let close = authority.firstIndex(of: "]") else { return false }
      host = authority[authority.index(after: authority.startIndex)..<close]
      port = authority[authority.index(after: close)...]
    } else {
      host = authority.prefix { $0 != ":" }
      port = authority.dropFirst(host.count)
    }
    guard port.isEmpty || (port.first == ":" && port.dropFirst().allSatisfy { $0.isASCII && $0.isNumber }) else { return false }
    let name = host.lowercased()
    if name == "localhost" || name == "localhost." || name == "::1" { return true }
    let parts = name.split(separator: ".", omittingEmptySubsequences: false)
    return parts.count == 4 && parts[0] == "127"
      && parts.allSatisfy { part in part.allSatisfy { $0.isASCII && $0.isNumber } && UInt8(part) != nil }
  }
}
