/// One HTTP exchange as the OAuth 2.0 client and a login's journey need it: the embedder
/// supplies the transport (the command line uses JourneyHTTP's libcurl client through
/// `Login.transport(_:)`), so this library loads no HTTP stack. The one transport shape of the
/// package: `Login` walks journeys over it too.
public struct OAuthRequest: Sendable, Equatable {
  public var method: String
  public var url: String
  /// "Name: value" lines.
  public var headers: [String]
  public var body: [UInt8]
  /// Seconds this request may take; nil for the transport's own limit. A journey sends the
  /// time its walk has left.
  public var timeout: Double?

  public init(method: String, url: String, headers: [String] = [], body: [UInt8] = [], timeout: Double? = nil) {
    self.method = method
    self.url = url
    self.headers = headers
    self.body = body
    self.timeout = timeout
  }
}

/// A response: any status, the body, and a redirect's target (redirects are never followed: the
/// authorization code arrives in one).
public struct OAuthResponse: Sendable, Equatable {
  public var status: Int
  public var body: [UInt8]
  public var location: String?

  public init(status: Int, body: [UInt8], location: String? = nil) {
    self.status = status
    self.body = body
    self.location = location
  }
}

/// Sends a request; throws only when no response came (the transport's own error type).
public typealias OAuthTransport = (OAuthRequest) throws -> OAuthResponse
