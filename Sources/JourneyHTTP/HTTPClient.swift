import CCurl

/// A response: status code, body bytes, and the Location of a redirect (never followed).
public struct HTTPResponse: Sendable, Equatable {
  public var status: Int
  public var body: [UInt8]
  /// The absolute URL a 3xx response points to (libcurl resolves a relative Location).
  public var location: String?

  public init(status: Int, body: [UInt8], location: String? = nil) {
    self.status = status
    self.body = body
    self.location = location
  }
}

/// Why a request got no response, by what the user can do about it.
///
/// A struct, not an enum, so that a release can add a failure without breaking an embedder's
/// `switch`: new codes may be added in any release. Match on ``code`` (`error.code ==
/// .timedOut`, or `switch error.code` with a `default:`); the values callers act on are the
/// optional properties (`nil` where a code has none), ``description`` is the message.
public struct HTTPError: Error, Sendable, Hashable, CustomStringConvertible {
  /// What kind of failure it is. New codes may be added in any release: switch with a
  /// `default:`.
  public struct Code: Hashable, Sendable, CustomStringConvertible {
    private enum Backing: Hashable, Sendable {
      case timedOut, cannotConnect, tls, badCAFile, failed, responseTooLarge, libraryUnavailable
    }

    private var backing: Backing
    private init(_ backing: Backing) { self.backing = backing }

    /// No answer from ``url`` within ``seconds``.
    public static let timedOut = Code(.timedOut)
    /// The host is unknown or unreachable, or refused or dropped the connection.
    public static let cannotConnect = Code(.cannotConnect)
    /// The TLS handshake failed: usually a certificate no trusted CA signed.
    public static let tls = Code(.tls)
    /// The CA file given for verification (``path``) cannot be used.
    public static let badCAFile = Code(.badCAFile)
    /// Anything else libcurl reports (a malformed URL, an unsupported scheme).
    public static let failed = Code(.failed)
    /// The response body was larger than the client accepts (``limit``); the transfer was
    /// stopped there.
    public static let responseTooLarge = Code(.responseTooLarge)
    /// libcurl cannot be loaded (it is opened with dlopen on first use, not linked): ``soname``
    /// is the library asked for, ``package`` the Debian package that ships it
    /// (``debian13Package`` on Debian 13), ``reason`` dlerror's text.
    public static let libraryUnavailable = Code(.libraryUnavailable)

    public var description: String { String(describing: backing) }
  }

  /// What kind of failure it is.
  public let code: Code
  /// The URL requested (every code but ``Code/badCAFile`` and ``Code/libraryUnavailable``).
  public let url: String?
  /// The timeout that passed, in seconds (``Code/timedOut``).
  public let seconds: Double?
  /// The CA file that cannot be used (``Code/badCAFile``; `(system store)` when none was
  /// given).
  public let path: String?
  /// What libcurl said (``Code/cannotConnect``, ``Code/tls``, ``Code/badCAFile``,
  /// ``Code/failed``), or dlerror's text (``Code/libraryUnavailable``).
  public let reason: String?
  /// The largest body accepted, in bytes (``Code/responseTooLarge``).
  public let limit: Int?
  /// The library that cannot be loaded (``Code/libraryUnavailable``).
  public let soname: String?
  /// The Debian package that ships ``soname`` (``Code/libraryUnavailable``).
  public let `package`: String?
  /// The Debian 13 package that ships ``soname`` (``Code/libraryUnavailable``).
  public let debian13Package: String?
  /// One line saying what is wrong and what to do.
  public let description: String

  private init(
    _ code: Code, url: String? = nil, seconds: Double? = nil, path: String? = nil, reason: String? = nil, limit: Int? = nil,
    soname: String? = nil, package: String? = nil, debian13Package: String? = nil, _ description: String
  ) {
    self.code = code
    self.url = url
    self.seconds = seconds
    self.path = path
    self.reason = reason
    self.limit = limit
    self.soname = soname
    self.package = package
    self.debian13Package = debian13Package
    self.description = description
  }

  /// No answer within the timeout.
  public static func timedOut(url: String, seconds: Double) -> Self {
    Self(
      .timedOut, url: url, seconds: seconds,
      "no response from \(url) within \(formatSeconds(seconds)) s. Check that the server is up, or raise --timeout.")
  }

  /// The host is unknown or unreachable, or refused or dropped the connection.
  public static func cannotConnect(url: String, reason: String) -> Self {
    Self(.cannotConnect, url: url, reason: reason, "cannot connect to \(url): \(reason). Check --server and the network.")
  }

  /// The TLS handshake failed: usually a certificate no trusted CA signed.
  public static func tls(url: String, reason: String) -> Self {
    Self(
      .tls, url: url, reason: reason,
      "TLS with \(url) failed: \(reason). If the server uses a private CA, pass its certificate with --cacert FILE.")
  }

  /// The CA file given for verification cannot be used.
  public static func badCAFile(path: String, reason: String) -> Self {
    Self(
      .badCAFile, path: path, reason: reason, "cannot use the CA certificate file \(path): \(reason). It must hold PEM certificates.")
  }

  /// Anything else libcurl reports (a malformed URL, an unsupported scheme).
  public static func failed(url: String, reason: String) -> Self {
    Self(.failed, url: url, reason: reason, "request to \(url) failed: \(reason).")
  }

  /// The response body was larger than the client accepts; the transfer was stopped there.
  public static func responseTooLarge(url: String, limit: Int) -> Self {
    Self(
      .responseTooLarge, url: url, limit: limit,
      "the response from \(url) is larger than \(limit) bytes; stopped reading. An AM authenticate response is a few KB; raise --max-response-size if this server's are larger."
    )
  }

  /// libcurl cannot be loaded (it is opened with dlopen on first use, not linked): `soname` is
  /// the library asked for, `package` the Debian package that ships it (`debian13Package` on
  /// Debian 13), `reason` dlerror's text.
  public static func libraryUnavailable(soname: String, package: String, debian13Package: String, reason: String) -> Self {
    Self(
      .libraryUnavailable, reason: reason, soname: soname, package: package, debian13Package: debian13Package,
      "\(soname) cannot be loaded (\(reason)); install Debian package \(package)"
        + (debian13Package == package ? "" : " (\(debian13Package) on Debian 13)"))
  }
}

private func formatSeconds(_ seconds: Double) -> String {
  seconds == seconds.rounded() ? String(Int(seconds)) : String(seconds)
}

/// POSTs over the system libcurl: TLS peer and host verification always on, an optional CA
/// file that replaces the system store (CAfile set, CApath unset: stricter than curl's
/// `--cacert`, which keeps CApath), one timeout per request, no
/// redirects, cookies kept in memory across requests (AM load balancers pin a journey to a
/// server with one). One client reuses its connection; it is not for use from two threads.
public final class HTTPClient {
  /// Seconds each request may take, connecting included.
  public let timeout: Double
  /// PEM file of the CAs to trust instead of the system store; nil for the system store.
  public let caFile: String?
  /// The largest response body accepted, in bytes (`HTTPError.responseTooLarge` beyond it):
  /// a hostile server cannot make the client hold gigabytes.
  public let maximumResponseSize: Int

  /// The default `maximumResponseSize`: 1 MiB.
  public static let defaultMaximumResponseSize = 1 << 20
  /// nil when libcurl could not be loaded (`post` then throws `libraryUnavailable`).
  /// libcurl's easy handle, made at the first request (and reused by the next ones).
  private var easyHandle: UnsafeMutableRawPointer?

  /// Loads libcurl (dlopen, once per process; Sources/CCurl/include/CCurl.h), or says why not.
  public static func loadLibrary() throws(HTTPError) {
    var reason: UnsafePointer<CChar>?
    guard frp_curl_load(&reason) == 0 else { return }
    throw .libraryUnavailable(
      soname: "libcurl.so.4", package: "libcurl4", debian13Package: "libcurl4t64",
      reason: reason.map { String(cString: $0) } ?? "unknown")
  }

  /// Does not load libcurl until it is needed: a client that never posts never maps it, and
  /// one made where libcurl is missing throws from `post`.
  public init(timeout: Double, caFile: String? = nil, maximumResponseSize: Int = HTTPClient.defaultMaximumResponseSize) {
    self.timeout = timeout
    self.caFile = caFile
    self.maximumResponseSize = maximumResponseSize
  }

  deinit { if let easyHandle { frp_curl_easy_cleanup(easyHandle) } }

  /// POSTs `body` to `url` with `headers` ("Name: value"); any status is a response. `timeout`
  /// (seconds) replaces the client's for this request, e.g. the time a journey has left.
  /// `method` "GET" sends no body; another verb is sent with the body (DELETE).
  public func post(
    _ url: String, headers: [String], body: [UInt8], timeout requestTimeout: Double? = nil, method: String? = nil
  ) throws(HTTPError) -> HTTPResponse {
    try Self.loadLibrary()
    if easyHandle == nil { easyHandle = frp_curl_easy_init() }
    guard let handle = easyHandle else { throw .failed(url: url, reason: "curl_easy_init failed") }
    let timeout = requestTimeout ?? self.timeout
    let sink = ResponseSink(limit: maximumResponseSize)
    var errorBuffer = [CChar](repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
    var list: UnsafeMutablePointer<curl_slist>? = nil
    for header in headers { list = frp_curl_slist_append(list, header) }
    defer { frp_curl_slist_free_all(list) }

    let milliseconds = max(1, Int(timeout * 1000))
    let isGet = method == "GET"
    let code: CURLcode = url.withCString { urlPointer in
      (caFile ?? "").withCString { caPointer in
        body.withUnsafeBytes { bodyBytes in
          errorBuffer.withUnsafeMutableBufferPointer { errorPointer in
            withExtendedLifetime(sink) {
              let context = Unmanaged.passUnretained(sink).toOpaque()
              let setup: [CURLcode] = [
                frp_curl_setopt_pointer(handle, CURLOPT_URL, urlPointer),
                frp_curl_setopt_pointer(handle, CURLOPT_PROTOCOLS_STR, "http,https"),
                isGet ? frp_curl_setopt_long(handle, CURLOPT_HTTPGET, 1) : frp_curl_setopt_long(handle, CURLOPT_POST, 1),
                // Another verb with the same body handling (DELETE of a bound device, `delete`).
                isGet ? CURLE_OK : method.map { frp_curl_setopt_pointer(handle, CURLOPT_CUSTOMREQUEST, $0) } ?? CURLE_OK,
                isGet ? CURLE_OK : frp_curl_setopt_long(handle, CURLOPT_POSTFIELDSIZE, bodyBytes.count),
                isGet
                  ? CURLE_OK
                  : frp_curl_setopt_pointer(handle, CURLOPT_POSTFIELDS, bodyBytes.baseAddress ?? UnsafeRawPointer(urlPointer)),
                frp_curl_setopt_pointer(handle, CURLOPT_HTTPHEADER, list),
                frp_curl_setopt_write(
                  handle,
                  { data, size, count, context in
                    let sink = Unmanaged<ResponseSink>.fromOpaque(context!).takeUnretainedValue()
                    let total = size * count
                    guard sink.bytes.count + total <= sink.limit else {
                      sink.overflowed = true
                      return 0  // libcurl stops the transfer: CURLE_WRITE_ERROR
                    }
                    if let data { sink.bytes.append(contentsOf: UnsafeRawBufferPointer(start: data, count: total)) }
                    return total
                  }),
                frp_curl_setopt_pointer(handle, CURLOPT_WRITEDATA, context),
                frp_curl_setopt_pointer(handle, CURLOPT_ERRORBUFFER, errorPointer.baseAddress),
                frp_curl_setopt_long(handle, CURLOPT_TIMEOUT_MS, milliseconds),
                frp_curl_setopt_long(handle, CURLOPT_CONNECTTIMEOUT_MS, milliseconds),
                frp_curl_setopt_long(handle, CURLOPT_NOSIGNAL, 1),
                frp_curl_setopt_long(handle, CURLOPT_FOLLOWLOCATION, 0),
                frp_curl_setopt_long(handle, CURLOPT_SSL_VERIFYPEER, 1),
                frp_curl_setopt_long(handle, CURLOPT_SSL_VERIFYHOST, 2),
                frp_curl_setopt_pointer(handle, CURLOPT_COOKIEFILE, ""),
                caFile == nil ? CURLE_OK : frp_curl_setopt_pointer(handle, CURLOPT_CAINFO, caPointer),
                // Only that file: Debian's libcurl also trusts CApath /etc/ssl/certs unless it is unset.
                caFile == nil ? CURLE_OK : frp_curl_setopt_pointer(handle, CURLOPT_CAPATH, nil),
              ]
              if let failed = setup.first(where: { $0 != CURLE_OK }) { return failed }
              return frp_curl_easy_perform(handle)
            }
          }
        }
      }
    }
    // The error buffer, the body and the header list must not outlive this call in the handle.
    _ = frp_curl_setopt_pointer(handle, CURLOPT_ERRORBUFFER, nil)
    _ = frp_curl_setopt_pointer(handle, CURLOPT_POSTFIELDS, nil)
    _ = frp_curl_setopt_pointer(handle, CURLOPT_CUSTOMREQUEST, nil)
    _ = frp_curl_setopt_pointer(handle, CURLOPT_HTTPHEADER, nil)

    if sink.overflowed { throw .responseTooLarge(url: url, limit: maximumResponseSize) }
    guard code == CURLE_OK else {
      let detail = String(decoding: errorBuffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
      let reason = detail.isEmpty ? String(cString: frp_curl_easy_strerror(code)) : detail
      throw Self.error(code, url: url, reason: reason, timeout: timeout, caFile: caFile)
    }
    var status = 0
    _ = frp_curl_response_code(handle, &status)
    var location: UnsafeMutablePointer<CChar>? = nil
    if (300..<400).contains(status) { _ = frp_curl_redirect_url(handle, &location) }
    return HTTPResponse(status: status, body: sink.bytes, location: location.map { String(cString: $0) })
  }

  static func error(_ code: CURLcode, url: String, reason: String, timeout: Double, caFile: String?) -> HTTPError {
    switch code {
    case CURLE_OPERATION_TIMEDOUT:
      return .timedOut(url: url, seconds: timeout)
    case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY, CURLE_COULDNT_CONNECT, CURLE_SEND_ERROR,
      CURLE_RECV_ERROR, CURLE_GOT_NOTHING:
      return .cannotConnect(url: url, reason: reason)
    case CURLE_SSL_CACERT_BADFILE:
      return .badCAFile(path: caFile ?? "(system store)", reason: reason)
    case CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CONNECT_ERROR, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER,
      CURLE_SSL_ENGINE_NOTFOUND, CURLE_SSL_ISSUER_ERROR, CURLE_SSL_PINNEDPUBKEYNOTMATCH:
      return .tls(url: url, reason: reason)
    default:
      return .failed(url: url, reason: reason)
    }
  }
}

/// Collects the body libcurl hands to the write callback.
private final class ResponseSink {
  var bytes: [UInt8] = []
  let limit: Int
  var overflowed = false
  init(limit: Int) { self.limit = limit }
}

extension HTTPClient {
  /// GETs `url` with `headers`; any status is a response, a redirect's target in `location`.
  public func get(_ url: String, headers: [String], timeout: Double? = nil) throws(HTTPError) -> HTTPResponse {
    try post(url, headers: headers, body: [], timeout: timeout, method: "GET")
  }

  /// DELETEs `url` with `headers`; any status is a response.
  public func delete(_ url: String, headers: [String]) throws(HTTPError) -> HTTPResponse {
    try post(url, headers: headers, body: [], method: "DELETE")
  }
}
