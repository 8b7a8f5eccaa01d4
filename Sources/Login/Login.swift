import Journey
import JourneyHTTP
import OAuthTokens
import ProfileJSON
import SystemCalls

/// A login: a journey walked from its endpoint to its end, each step answered by a
/// `LoginAnswerer` (answer sources, a conversation, the device steps), within a time limit —
/// what `fr-profile journey`, `token` (logging in again) and an embedder run. The session it
/// ends with can be traded for OAuth 2.0 tokens (`tokens(for:client:tree:)`).
public struct Login {
  public var endpoint: AuthenticateEndpoint
  /// An SSO token to send with the journey (session upgrade, step-up), as the cookie
  /// `cookieName`.
  public var session: String?
  public var cookieName = "iPlanetDirectoryPro"
  /// Seconds each request may take.
  public var requestTimeout = 30.0
  /// Seconds the whole walk may take, answering included.
  public var maximumTime = 300.0
  /// The client's name in `User-Agent` (the SDKs send their platform's agent; this client
  /// names itself, so AM's logs tell its requests apart).
  public var userAgent = "fr-profile"
  /// Sends each journey request (a POST with the time the walk has left as its timeout): the
  /// OAuth 2.0 client's transport shape, so one transport serves the walk and the token trade.
  public var transport: OAuthTransport
  /// Called with a line for each request and response (a verbose run's detail).
  public var trace: ((String) -> Void)?

  public init(endpoint: AuthenticateEndpoint, transport: @escaping OAuthTransport) {
    self.endpoint = endpoint
    self.transport = transport
  }

  /// libcurl (JourneyHTTP, loaded at the first request) as the transport of journeys and of the
  /// OAuth 2.0 client: GET, or the request's method with its body; the request's timeout, else
  /// the client's; no `Expect: 100-continue` round trip (libcurl 7.x adds it for bodies over
  /// 1 KiB); redirects returned, not followed.
  public static func transport(_ client: HTTPClient) -> OAuthTransport {
    { request in
      let headers = request.headers + ["Expect:"]
      let response =
        request.method == "GET"
        ? try client.get(request.url, headers: headers, timeout: request.timeout)
        : try client.post(
          request.url, headers: headers, body: request.body, timeout: request.timeout,
          method: request.method == "POST" ? nil : request.method)
      return OAuthResponse(status: response.status, body: response.body, location: response.location)
    }
  }

  /// Every header of a journey request: the SDKs' (`AuthenticateEndpoint.requestHeaders`), the
  /// agent, and the session cookie when one is sent.
  public var headers: [String] {
    var headers = AuthenticateEndpoint.requestHeaders + ["User-Agent: \(userAgent)"]
    if let session { headers.append("Cookie: \(cookieName)=\(session)") }
    return headers
  }

  /// Walks the journey to its end. Throws `LoginError` (no answer, or the time limit passed),
  /// `JourneyError` (an answer that is not AM's), `HTTPError` (the transport's), and what the
  /// device steps throw.
  public func walk(answerer: LoginAnswerer) throws -> JourneyOutcome {
    let headers = headers
    let maximumTime = maximumTime
    let requestTimeout = requestTimeout
    let transport = transport
    let trace = trace
    let started = monotonicSeconds()
    answerer.deadline = started + maximumTime
    let timeLimit = LoginError(.timeLimit, JourneyError.timeLimit(seconds: maximumTime).description)
    var walker = JourneyWalker(
      post: { url, body in
        trace?("POST \(url)")
        let left = maximumTime - (monotonicSeconds() - started)
        guard left > 0 else { throw timeLimit }
        let response: OAuthResponse
        do {
          response = try transport(OAuthRequest(method: "POST", url: url, headers: headers, body: body, timeout: min(requestTimeout, left)))
        } catch let error as HTTPError {
          if error.code == .timedOut, left < requestTimeout { throw timeLimit }
          throw error
        }
        trace?("HTTP \(response.status), \(response.body.count) bytes")
        return (response.status, response.body)
      },
      answer: { step in try answerer.answer(&step) })
    walker.maximumTime = maximumTime
    do {
      return try walker.walk(endpoint)
    } catch let error as JourneyError {
      if error.code == .timeLimit { throw timeLimit }
      throw error
    }
  }

  /// Trades the session of a successful walk (its `tokenId`) for OAuth 2.0 tokens of `client`:
  /// the authorization code flow with PKCE, the ID token verified. Nil when the journey ended
  /// without a session (`noSession`).
  public static func tokens(for success: JSONObject, client: OAuthClient, tree: String?) throws -> StoredTokens? {
    guard let session = success["tokenId"]?.stringValue else { return nil }
    return try client.login(sessionToken: session, tree: tree)
  }
}
