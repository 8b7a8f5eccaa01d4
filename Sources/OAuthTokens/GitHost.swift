/// Where a git credential helper may hand out the access token: a scheme, a host and port, and
/// optionally a path (the token then goes only to repositories at or below it).
///
/// git asks every configured helper for every host it fetches from, over https and plain http
/// alike (gitcredentials(7)); a helper that answered them all would give AM's access token to any
/// server a repository or a redirect names. `token --format git` answers only a request that
/// `matches` one of these, by default the AM server's own origin.
public struct GitHost: Sendable, Equatable, CustomStringConvertible {
  /// `https` or `http` (http only where the user wrote it).
  public var scheme: String
  /// Lower-case host name, or an IPv6 address in brackets.
  public var host: String
  public var port: Int
  /// Without leading or trailing `/`; nil answers every path on the host.
  public var path: String?

  /// Reads what a user writes: `git.example.com`, `git.example.com:8443`,
  /// `https://git.example.com/org`, `http://git.lan` (plain http only so, by name). Without a
  /// scheme it is https.
  public init(parsing text: String) throws(GitHostError) {
    var rest = Substring(text)
    var scheme = "https"
    let name = rest.prefix { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "+" || $0 == "-" || $0 == ".") }
    if !name.isEmpty, rest.dropFirst(name.count).starts(with: "://") {
      scheme = name.lowercased()
      guard scheme == "https" || scheme == "http" else { throw GitHostError(text, "its scheme must be https or http") }
      rest = rest.dropFirst(name.count + 3)
    }
    let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
    rest = rest.dropFirst(authority.count)
    guard !rest.contains("?") && !rest.contains("#") else { throw GitHostError(text, "a query or fragment cannot scope a git host") }
    guard let (host, port) = Self.split(authority: authority, defaultPort: scheme == "http" ? 80 : 443) else {
      throw GitHostError(text, "give a host name or address, with an optional :port (no user name)")
    }
    let path = rest.split(separator: "/").joined(separator: "/")
    guard path.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value != 0x7F }) else {
      throw GitHostError(text, "its path holds spaces or control characters")
    }
    self.init(scheme: scheme, host: host, port: port, path: path.isEmpty ? nil : path)
  }

  public init(scheme: String, host: String, port: Int, path: String? = nil) {
    self.scheme = scheme
    self.host = host
    self.port = port
    self.path = path
  }

  /// The origin of `url` (its path dropped): the default scope, the AM server's own.
  public static func origin(of url: String) -> GitHost? {
    guard var host = try? GitHost(parsing: url), url.contains("://") else { return nil }
    host.path = nil
    return host
  }

  /// `https://git.example.com[:port][/path]`, the form kept with the tokens.
  public var description: String {
    let defaultPort = scheme == "http" ? 80 : 443
    return "\(scheme)://\(host)" + (port == defaultPort ? "" : ":\(port)") + (path.map { "/" + $0 } ?? "")
  }

  /// Whether git's request is for this scope: the same protocol (so never http for an https
  /// host), host (case-insensitive) and port (git omits the default one) and, when a path is
  /// configured, git's `path=` at or below it (git sends it only with `credential.useHttpPath`).
  public func matches(_ request: GitCredentialRequest) -> Bool {
    guard let requestProtocol = request.protocol?.lowercased(), requestProtocol == scheme, let authority = request.host,
      let (host, port) = Self.split(authority: Substring(authority), defaultPort: scheme == "http" ? 80 : 443),
      host == self.host, port == self.port
    else { return false }
    guard let path else { return true }
    guard let asked = request.path?.split(separator: "/").joined(separator: "/") else { return false }
    return asked == path || asked.hasPrefix(path + "/")
  }

  /// `host[:port]` or `[v6]:port`, lower-cased; nil for a user name, an empty host, a bad port
  /// or a character no host name holds.
  static func split(authority: Substring, defaultPort: Int) -> (String, Int)? {
    guard !authority.contains("@") else { return nil }
    var host = authority
    var port = defaultPort
    if authority.first == "[" {
      guard let close = authority.firstIndex(of: "]") else { return nil }
      host = authority[...close]
      let after = authority[authority.index(after: close)...]
      if !after.isEmpty {
        guard after.first == ":", let number = Int(after.dropFirst()) else { return nil }
        port = number
      }
      guard host.dropFirst().dropLast().allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." }) else { return nil }
    } else {
      if let colon = authority.lastIndex(of: ":") {
        guard let number = Int(authority[authority.index(after: colon)...]) else { return nil }
        port = number
        host = authority[..<colon]
      }
      guard host.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == ".") }) else { return nil }
    }
    guard !host.isEmpty, host != "[]", (1...65535).contains(port) else { return nil }
    return (host.lowercased(), port)
  }
}

/// Why a `--git-host` cannot be read.
public struct GitHostError: Error, Sendable, Equatable, CustomStringConvertible {
  public var text: String
  public var reason: String

  init(_ text: String, _ reason: String) {
    self.text = text
    self.reason = reason
  }

  public var description: String { "the git host \"\(text)\" cannot be used: \(reason)" }
}

/// What git writes to a credential helper (gitcredentials(7), "Custom helpers"): `key=value`
/// lines up to an empty line. Only what scoping needs is kept.
public struct GitCredentialRequest: Sendable, Equatable {
  public var `protocol`: String?
  public var host: String?
  public var path: String?

  public init(protocol: String? = nil, host: String? = nil, path: String? = nil) {
    self.protocol = `protocol`
    self.host = host
    self.path = path
  }

  public init(parsing bytes: [UInt8]) {
    self.init()
    for line in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
      var line = line
      if line.last == UInt8(ascii: "\r") { line.removeLast() }
      if line.isEmpty { break }
      guard let equals = line.firstIndex(of: UInt8(ascii: "=")) else { continue }
      let key = String(decoding: line[..<equals], as: UTF8.self)
      let value = String(decoding: line[(equals + 1)...], as: UTF8.self)
      // git sends each once; a repeated key is not git speaking: the request matches nothing.
      switch key {
      case "protocol": `protocol` = `protocol` == nil ? value : ""
      case "host": host = host == nil ? value : ""
      case "path": path = path == nil ? value : ""
      default: continue
      }
    }
  }
}
