import ArgumentParser
import CFIDO2
import Login
import OAuthTokens
import ProfileCLI
import SystemCalls

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// FIDO2 security keys on USB for AM's WebAuthn nodes, through libfido2 (dlopened at the first
/// node, never before: Sources/CFIDO2). What a browser does around a key is done here: waiting
/// for one to be plugged in, letting the person pick one of several by touch, asking the PIN
/// only when the key or the node needs it, bounding the wait by the node's timeout, and
/// cancelling the key's request on Ctrl-C.
final class FIDO2SecurityKeys: SecurityKeys {
  /// `--security-key PATH`: only this device (a /dev/hidraw path as libfido2 lists it).
  let chosenPath: String?
  /// The PIN when it comes from stdin (`--key-pin-stdin`), read at the first need.
  let pinFromStandardInput: Bool
  /// `--webauthn-timeout`: overrides the node's timeout (seconds).
  let timeoutSeconds: Double?
  private var pinRead: String?

  init(chosenPath: String?, pinFromStandardInput: Bool, timeoutSeconds: Double?) {
    self.chosenPath = chosenPath
    self.pinFromStandardInput = pinFromStandardInput
    self.timeoutSeconds = timeoutSeconds
  }

  /// The browser's words for a key that timed out or was refused (Chrome's message).
  static let notAllowed =
    "The operation either timed out or was not allowed. See: https://www.w3.org/TR/webauthn-2/#sctn-privacy-considerations-client."

  // MARK: - The ceremonies

  func register(_ options: WebAuthnRegistration, clientData: [UInt8], login: LoginAnswerer) throws -> NewCredential {
    let api = try Self.library()
    let deadline = deadline(options.timeoutMilliseconds, login: login)
    let offered = options.algorithms.filter { Self.algorithms.contains($0) }
    let unsupported = WebAuthnRefusal(
      name: "NotSupportedError",
      message:
        "None of AM's algorithms (\(options.algorithms.map(String.init).joined(separator: ", "))) is one the security key signs with.")
    guard !offered.isEmpty else { throw unsupported }
    let key = try pickKey(api, verb: "register with", relyingParty: options.relyingPartyID, deadline: deadline, login: login)
    defer { key.close() }
    // A browser hands the key AM's whole list and the key picks; libfido2 takes one algorithm.
    // So: the first of AM's that the key lists (CTAP 2.1 getInfo), else ES256, which every
    // FIDO2 key makes (a CTAP 2.0 key lists none), else AM's first.
    let listed = Self.algorithms(of: key)
    guard let algorithm = listed.isEmpty ? (offered.contains(-7) ? -7 : offered[0]) : offered.first(where: listed.contains) else {
      throw unsupported
    }
    let verification = try verification(key, required: options.userVerification, registering: true, login: login)
    var credential = api.pointee.fido_cred_new()
    guard credential != nil else { throw Failure(.negative, "libfido2 could not allocate a credential.") }
    defer { api.pointee.fido_cred_free(&credential) }
    try check(api, api.pointee.fido_cred_set_type(credential, Int32(algorithm)), "the algorithm")
    try check(
      api, clientData.withUnsafeBufferPointer { api.pointee.fido_cred_set_clientdata(credential, $0.baseAddress, $0.count) },
      "the client data")
    try check(api, api.pointee.fido_cred_set_rp(credential, options.relyingPartyID, options.relyingPartyName), "the relying party")
    try check(
      api,
      options.userID.withUnsafeBufferPointer {
        api.pointee.fido_cred_set_user(credential, $0.baseAddress, $0.count, options.userName, options.userDisplayName, nil)
      }, "the user")
    if options.residentKeyRequired { try check(api, api.pointee.fido_cred_set_rk(credential, FIDO_OPT_TRUE), "the resident key") }
    if verification.builtIn { try check(api, api.pointee.fido_cred_set_uv(credential, FIDO_OPT_TRUE), "user verification") }
    for id in options.excludeCredentials {
      try check(
        api, id.withUnsafeBufferPointer { api.pointee.fido_cred_exclude(credential, $0.baseAddress, $0.count) }, "an excluded credential")
    }
    try run(key, verb: "register with", relyingParty: options.relyingPartyID, pin: verification.pin, deadline: deadline, login: login) {
      pin in api.pointee.fido_dev_make_cred(key.device, credential, pin)
    }
    return NewCredential(
      format: api.pointee.fido_cred_fmt(credential).map { String(cString: $0) } ?? "none",
      authenticatorData: Self.bytes(api.pointee.fido_cred_authdata_raw_ptr(credential), api.pointee.fido_cred_authdata_raw_len(credential)),
      attestationStatement: Self.bytes(api.pointee.fido_cred_attstmt_ptr(credential), api.pointee.fido_cred_attstmt_len(credential)),
      id: Self.bytes(api.pointee.fido_cred_id_ptr(credential), api.pointee.fido_cred_id_len(credential)))
  }

  func authenticate(_ options: WebAuthnAuthentication, clientData: [UInt8], login: LoginAnswerer) throws -> WebAuthnAssertion {
    let api = try Self.library()
    let deadline = deadline(options.timeoutMilliseconds, login: login)
    let key = try pickKey(api, verb: "sign in to", relyingParty: options.relyingPartyID, deadline: deadline, login: login)
    defer { key.close() }
    let verification = try verification(key, required: options.userVerification, registering: false, login: login)
    var assertion = api.pointee.fido_assert_new()
    guard assertion != nil else { throw Failure(.negative, "libfido2 could not allocate an assertion.") }
    defer { api.pointee.fido_assert_free(&assertion) }
    try check(
      api, clientData.withUnsafeBufferPointer { api.pointee.fido_assert_set_clientdata(assertion, $0.baseAddress, $0.count) },
      "the client data")
    try check(api, api.pointee.fido_assert_set_rp(assertion, options.relyingPartyID), "the relying party")
    for id in options.allowCredentials {
      try check(
        api, id.withUnsafeBufferPointer { api.pointee.fido_assert_allow_cred(assertion, $0.baseAddress, $0.count) }, "an allowed credential"
      )
    }
    if verification.builtIn { try check(api, api.pointee.fido_assert_set_uv(assertion, FIDO_OPT_TRUE), "user verification") }
    try run(key, verb: "sign in to", relyingParty: options.relyingPartyID, pin: verification.pin, deadline: deadline, login: login) {
      pin in api.pointee.fido_dev_get_assert(key.device, assertion, pin)
    }
    let count = api.pointee.fido_assert_count(assertion)
    guard count > 0 else { throw WebAuthnRefusal(name: "NotAllowedError", message: Self.notAllowed) }
    let index = try account(api, assertion, count: count, login: login)
    var id = Self.bytes(api.pointee.fido_assert_id_ptr(assertion, index), api.pointee.fido_assert_id_len(assertion, index))
    if id.isEmpty, options.allowCredentials.count == 1 { id = options.allowCredentials[0] }  // CTAP 2.0 §5.2: may be omitted then
    let wrapped = Self.bytes(api.pointee.fido_assert_authdata_ptr(assertion, index), api.pointee.fido_assert_authdata_len(assertion, index))
    guard let authenticatorData = Self.unwrapByteString(wrapped) else {
      throw Failure(.negative, "the security key's authenticator data is not a CBOR byte string as libfido2 returns it.")
    }
    let handle = Self.bytes(api.pointee.fido_assert_user_id_ptr(assertion, index), api.pointee.fido_assert_user_id_len(assertion, index))
    return WebAuthnAssertion(
      authenticatorData: authenticatorData,
      signature: Self.bytes(api.pointee.fido_assert_sig_ptr(assertion, index), api.pointee.fido_assert_sig_len(assertion, index)),
      id: id, userHandle: handle.isEmpty ? nil : handle)
  }

  // MARK: - The key

  /// An open key.
  final class Key {
    let api: UnsafePointer<frp_fido2_api>
    var device: OpaquePointer?
    let path: String
    let product: String

    init(api: UnsafePointer<frp_fido2_api>, device: OpaquePointer, path: String, product: String) {
      self.api = api
      self.device = device
      self.path = path
      self.product = product
    }

    func close() {
      guard device != nil else { return }
      _ = api.pointee.fido_dev_close(device)
      api.pointee.fido_dev_free(&device)
    }
  }

  /// A key as listed: its path and name, and how to open it.
  struct Listed {
    let path: String
    let product: String
    let attach: (@Sendable (OpaquePointer) -> Int32)?
  }

  /// COSE algorithms libfido2 makes credentials with: ES256, EdDSA, RS256.
  static let algorithms = [-7, -8, -257]

  /// The COSE algorithms the key lists in its getInfo (CTAP 2.1); empty when it lists none.
  static func algorithms(of key: Key) -> [Int] {
    let api = key.api
    var info = api.pointee.fido_cbor_info_new()
    guard info != nil else { return [] }
    defer { api.pointee.fido_cbor_info_free(&info) }
    guard api.pointee.fido_dev_get_cbor_info(key.device, info) == FIDO_OK else { return [] }
    return (0..<api.pointee.fido_cbor_info_algorithm_count(info)).map { Int(api.pointee.fido_cbor_info_algorithm_cose(info, $0)) }
  }

  static func library() throws -> UnsafePointer<frp_fido2_api> {
    var reason: UnsafePointer<CChar>?
    guard let api = frp_fido2_load(&reason) else {
      throw Failure(
        .libraryMissing,
        "the journey asks for a security key (WebAuthn), which needs libfido2.so.1: install it (Debian package libfido2-1) and run again (\(reason.map { String(cString: $0) } ?? "not loaded"))."
      )
    }
    return api
  }

  /// The node's wait (`--webauthn-timeout`, else the node's timeout, else two minutes), cut at
  /// the walk's deadline.
  private func deadline(_ milliseconds: Int?, login: LoginAnswerer) -> Double {
    let seconds = timeoutSeconds ?? milliseconds.map { Double($0) / 1000 } ?? 120
    let own = monotonicSeconds() + seconds
    return min(own, login.deadline ?? own)
  }

  /// The security keys plugged in (the tests' software keys instead, in their executable).
  private func listed(_ api: UnsafePointer<frp_fido2_api>) -> [Listed] {
    if let keys = TestSeams.securityKeys { return keys.map { Listed(path: $0.path, product: $0.product, attach: $0.attach) } }
    let capacity = 64
    var list = api.pointee.fido_dev_info_new(capacity)
    guard list != nil else { return [] }
    defer { api.pointee.fido_dev_info_free(&list, capacity) }
    var count = 0
    guard api.pointee.fido_dev_info_manifest(list, capacity, &count) == FIDO_OK else { return [] }
    return (0..<count).compactMap { index in
      guard let info = api.pointee.fido_dev_info_ptr(list, index), let path = api.pointee.fido_dev_info_path(info) else { return nil }
      let maker = api.pointee.fido_dev_info_manufacturer_string(info).map { String(cString: $0) } ?? ""
      let product = api.pointee.fido_dev_info_product_string(info).map { String(cString: $0) } ?? ""
      let name = [maker, product].filter { !$0.isEmpty }.joined(separator: " ")
      return Listed(path: String(cString: path), product: name.isEmpty ? "security key" : name, attach: nil)
    }
  }

  private func open(_ api: UnsafePointer<frp_fido2_api>, _ listed: Listed) throws -> Key {
    guard let device = api.pointee.fido_dev_new() else { throw Failure(.negative, "libfido2 could not allocate a device.") }
    var owned: OpaquePointer? = device
    if let attach = listed.attach {
      let status = attach(device)
      guard status == FIDO_OK else {
        api.pointee.fido_dev_free(&owned)
        throw Failure(.negative, "the security key \(listed.path) could not be attached: \(Self.describe(api, status)).")
      }
    }
    let status = api.pointee.fido_dev_open(device, listed.path)
    guard status == FIDO_OK else {
      api.pointee.fido_dev_free(&owned)
      throw Failure(.negative, "the security key \(listed.path) (\(listed.product)) could not be opened: \(Self.describe(api, status)).")
    }
    return Key(api: api, device: device, path: listed.path, product: listed.product)
  }

  /// The key to use: the one plugged in, or the one of several the person touches; "Insert
  /// your security key" while there is none, until `deadline`.
  private func pickKey(
    _ api: UnsafePointer<frp_fido2_api>, verb: String, relyingParty: String, deadline: Double, login: LoginAnswerer
  ) throws -> Key {
    var asked = false
    while true {
      var keys = listed(api)
      if let chosenPath { keys = keys.filter { $0.path == chosenPath } }
      if keys.count == 1 { return try open(api, keys[0]) }
      if keys.count > 1 {
        let opened = keys.compactMap { try? open(api, $0) }
        if opened.count == 1 { return opened[0] }
        if let touched = try touched(api, opened, deadline: deadline, login: login) { return touched }
      }
      guard monotonicSeconds() < deadline else {
        throw Failure(
          .cannotAnswer,
          "no security key\(chosenPath.map { " at \($0)" } ?? "") was plugged in to \(verb) \(relyingParty) in time: plug one in and run again. Nothing was sent to AM."
        )
      }
      if !asked {
        login.conversation.show(
          chosenPath.map { "Insert your security key (\($0))." } ?? "Insert your security key.", as: .information)
        asked = true
      }
      pause(milliseconds: 250, until: deadline)
    }
  }

  /// Several keys: each blinks, and the one touched first is the one used (the others are
  /// closed). Nil when none was touched before `deadline`.
  private func touched(_ api: UnsafePointer<frp_fido2_api>, _ keys: [Key], deadline: Double, login: LoginAnswerer) throws -> Key? {
    login.conversation.show(
      "Several security keys are plugged in: touch the key to use (\(keys.map(\.product).joined(separator: ", "))).", as: .information)
    let waiting = keys.filter { api.pointee.fido_dev_get_touch_begin($0.device) == FIDO_OK }
    // Keys that cannot blink for a touch (U2F-only ones): the first is used, as a browser would.
    guard !waiting.isEmpty else {
      for key in keys.dropFirst() { key.close() }
      return keys.first
    }
    var chosen: Key?
    while chosen == nil, monotonicSeconds() < deadline {
      for key in waiting where chosen == nil {
        var touched: Int32 = 0
        if api.pointee.fido_dev_get_touch_status(key.device, &touched, 100) == FIDO_OK, touched != 0 { chosen = key }
      }
    }
    for key in keys where key !== chosen {
      _ = api.pointee.fido_dev_cancel(key.device)
      key.close()
    }
    return chosen
  }

  // MARK: - User verification

  /// How the key verifies its user for this request: its PIN (asked), its own verification
  /// (a fingerprint), or neither. A PIN is asked when the key has one and the request needs or
  /// prefers verification (a registration always: CTAP 2.0 keys with a PIN refuse to register
  /// without it); `preferred` with a key that has neither proceeds without, as browsers do.
  private func verification(_ key: Key, required: String, registering: Bool, login: LoginAnswerer) throws -> (
    pin: String?, builtIn: Bool
  ) {
    let hasPIN = key.api.pointee.fido_dev_has_pin(key.device)
    let hasBuiltIn = key.api.pointee.fido_dev_has_uv(key.device)
    if required == "required" && !hasPIN && !hasBuiltIn {
      throw Failure(
        .cannotAnswer,
        "AM's WebAuthn node requires user verification, and the security key (\(key.product)) has neither a PIN nor a fingerprint set: set a PIN on it (e.g. fido2-token -S \(key.path)) and run again. Nothing was sent to AM."
      )
    }
    if hasBuiltIn && required != "discouraged" { return (nil, true) }
    if hasPIN && (registering || required != "discouraged") { return (try pin(key, login: login, triesLeft: nil), false) }
    return (nil, false)
  }

  /// The key's PIN: from stdin once (`--key-pin-stdin`), else asked at the terminal without echo.
  private func pin(_ key: Key, login: LoginAnswerer, triesLeft: Int32?) throws -> String {
    if pinFromStandardInput {
      if triesLeft != nil {
        throw Failure(
          .negative,
          "the PIN on stdin is wrong for the security key (\(key.product)); \(triesLeft.map { "\($0) tries left" } ?? "") before it locks. Nothing was sent to AM."
        )
      }
      if let pinRead { return pinRead }
      let pin = try secretFromStandardInput("--key-pin-stdin", what: "PIN")
      login.hide(pin)
      pinRead = pin
      return pin
    }
    guard login.conversation.canAsk else {
      throw Failure(
        .cannotAnswer,
        "the security key (\(key.product)) needs its PIN and there is no terminal to ask on: pass --key-pin-stdin. Nothing was sent to AM.")
    }
    if let triesLeft { login.conversation.show("Wrong PIN: \(triesLeft) \(triesLeft == 1 ? "try" : "tries") left.", as: .prompting) }
    guard let pin = login.conversation.ask("PIN for your security key (\(key.product)): ", echo: false, deadline: login.deadline),
      !pin.isEmpty
    else {
      throw Failure(.cannotAnswer, "no PIN for the security key (\(key.product)): the input closed or the time limit passed.")
    }
    login.hide(pin)
    return pin
  }

  // MARK: - Running a request

  /// Runs `operation` (make a credential, get an assertion) with the wait bounded by
  /// `deadline` and Ctrl-C cancelling it; a wrong PIN is asked again while tries are left. The
  /// browser's refusals are thrown as `WebAuthnRefusal`, to be posted; the rest as failures.
  private func run(
    _ key: Key, verb: String, relyingParty: String, pin initialPIN: String?, deadline: Double, login: LoginAnswerer,
    _ operation: (String?) -> Int32
  ) throws {
    let api = key.api
    var pin = initialPIN
    while true {
      let left = deadline - monotonicSeconds()
      guard left > 0 else { throw WebAuthnRefusal(name: "NotAllowedError", message: Self.notAllowed) }
      _ = api.pointee.fido_dev_set_timeout(key.device, Int32(min(left * 1000, Double(Int32.max))))
      // Ctrl-C is caught before the person is asked to touch: from then on it cancels.
      let guarded = frp_fido2_guard_begin(key.device) == 1
      login.conversation.show("Touch your security key (\(key.product)) to \(verb) \(relyingParty).", as: .information)
      let status = operation(pin)
      if guarded && frp_fido2_guard_end() == 1 {
        throw Failure(.interrupted, "cancelled at the security key (Ctrl-C). Nothing was sent to AM.")
      }
      switch status {
      case FIDO_OK:
        return
      case FIDO_ERR_PIN_INVALID:
        var tries: Int32 = 0
        _ = api.pointee.fido_dev_get_retry_count(key.device, &tries)
        guard tries > 0 else { throw pinBlocked(key) }
        pin = try self.pin(key, login: login, triesLeft: tries)
      case FIDO_ERR_PIN_REQUIRED where pin == nil:
        pin = try self.pin(key, login: login, triesLeft: nil)
      case FIDO_ERR_PIN_BLOCKED, FIDO_ERR_PIN_AUTH_BLOCKED:
        throw pinBlocked(key)
      case FIDO_ERR_CREDENTIAL_EXCLUDED:
        throw WebAuthnRefusal(
          name: "InvalidStateError",
          message:
            "The user attempted to register an authenticator that contains one of the credentials already registered with the relying party."
        )
      case FIDO_ERR_UNSUPPORTED_ALGORITHM:
        throw WebAuthnRefusal(name: "NotSupportedError", message: "The security key supports none of the relying party's algorithms.")
      case FIDO_ERR_NO_CREDENTIALS, FIDO_ERR_OPERATION_DENIED, FIDO_ERR_NOT_ALLOWED, FIDO_ERR_ACTION_TIMEOUT, FIDO_ERR_USER_ACTION_TIMEOUT,
        FIDO_ERR_KEEPALIVE_CANCEL:
        throw WebAuthnRefusal(name: "NotAllowedError", message: Self.notAllowed)
      default:
        // libfido2 ends a wait cut by fido_dev_set_timeout with a receive error: past the
        // deadline that is the browser's timeout, not a broken key.
        if monotonicSeconds() >= deadline - 0.05 { throw WebAuthnRefusal(name: "NotAllowedError", message: Self.notAllowed) }
        throw Failure(.negative, "the security key (\(key.product)) failed: \(Self.describe(api, status)). Nothing was sent to AM.")
      }
    }
  }

  private func pinBlocked(_ key: Key) -> Failure {
    Failure(
      .negative,
      "the security key's (\(key.product)) PIN is blocked after too many wrong tries: unplug and replug it, or reset it (which erases its credentials). Nothing was sent to AM."
    )
  }

  /// The account of a usernameless sign-in when the key holds several for the relying party:
  /// asked by number (the first without a terminal, as a browser's first choice).
  private func account(_ api: UnsafePointer<frp_fido2_api>, _ assertion: OpaquePointer?, count: Int, login: LoginAnswerer) throws -> Int {
    guard count > 1, login.conversation.canAsk else { return 0 }
    let names = (0..<count).map { index in
      let name = api.pointee.fido_assert_user_name(assertion, index).map { String(cString: $0) } ?? ""
      let display = api.pointee.fido_assert_user_display_name(assertion, index).map { String(cString: $0) } ?? ""
      return login.printable(display.isEmpty ? (name.isEmpty ? "account \(index)" : name) : display, singleLine: true)
    }
    login.conversation.show(
      (["The security key holds several accounts:"] + names.enumerated().map { "  \($0.offset)) \($0.element)" }).joined(separator: "\n"),
      as: .prompting)
    while true {
      guard let typed = login.conversation.ask("Account [0]: ", echo: true, deadline: login.deadline) else {
        throw Failure(.cannotAnswer, "no account chosen: the input closed or the time limit passed.")
      }
      if typed.isEmpty { return 0 }
      if let number = Int(typed.filter { $0 != " " }), (0..<count).contains(number) { return number }
      login.conversation.show("Pick one of 0–\(count - 1).", as: .prompting)
    }
  }

  // MARK: - Bytes

  private func check(_ api: UnsafePointer<frp_fido2_api>, _ status: Int32, _ what: String) throws {
    guard status == FIDO_OK else {
      throw Failure(.negative, "libfido2 refused \(what) of AM's WebAuthn request: \(Self.describe(api, status)).")
    }
  }

  static func describe(_ api: UnsafePointer<frp_fido2_api>, _ status: Int32) -> String {
    "\(api.pointee.fido_strerr(status).map { String(cString: $0) } ?? "error") (\(status))"
  }

  static func bytes(_ pointer: UnsafePointer<UInt8>?, _ count: Int) -> [UInt8] {
    guard let pointer, count > 0 else { return [] }
    return Array(UnsafeBufferPointer(start: pointer, count: count))
  }

  /// The bytes of a CBOR byte string (libfido2 1.12 returns an assertion's authenticator data
  /// so wrapped); nil when `wrapped` is not exactly one.
  static func unwrapByteString(_ wrapped: [UInt8]) -> [UInt8]? {
    guard let head = wrapped.first, head >> 5 == 2 else { return nil }
    let info = Int(head & 0x1F)
    let (length, start): (Int, Int)
    switch info {
    case 0..<24: (length, start) = (info, 1)
    case 24, 25, 26:
      let size = 1 << (info - 24)
      guard wrapped.count > size else { return nil }
      length = wrapped[1...size].reduce(0) { $0 << 8 | Int($1) }
      start = 1 + size
    default: return nil
    }
    guard wrapped.count == start + length else { return nil }
    return Array(wrapped[start...])
  }
}

/// The flags of AM's WebAuthn nodes (`journey`).
struct WebAuthnOptions: ParsableArguments {
  @Option(
    name: .customLong("webauthn-origin"),
    help: ArgumentHelp(
      "The web origin WebAuthn names (default: --server's, e.g. https://am.example.com); needed when AM is reached by IP address.",
      valueName: "URL"))
  var origin: String?

  @Option(
    name: .customLong("security-key"),
    help: ArgumentHelp("Use only this security key (its /dev/hidraw path) at a WebAuthn node.", valueName: "PATH"), completion: .file())
  var securityKey: String?

  @Flag(
    name: .customLong("key-pin-stdin"),
    help: "Read the security key's PIN from stdin (one line) instead of asking on the terminal.")
  var pinFromStandardInput = false

  @Option(
    name: .customLong("webauthn-timeout"),
    help: ArgumentHelp("Wait this long for the security key at a WebAuthn node (default: the node's timeout).", valueName: "SECONDS"))
  var timeout: Double?

  @Option(
    name: .customLong("webauthn-device-name"),
    help: ArgumentHelp("The name AM gives a security key registered at a WebAuthn node (AM 7.1+).", valueName: "NAME"))
  var deviceName: String?

  func validate() throws {
    if let origin, Self.checkedOrigin(origin) == nil {
      throw ValidationError("--webauthn-origin must be an origin: https://host or https://host:port, without a path.")
    }
    if let timeout, !(timeout > 0 && timeout <= 600) {
      throw ValidationError("--webauthn-timeout must be more than 0 and at most 600 seconds.")
    }
  }

  /// `scheme://host[:port]` lowercased in scheme and host, without a trailing slash; nil when
  /// `text` is not one (a path, a query, no host).
  static func checkedOrigin(_ text: String) -> String? {
    guard let origin = FormEncoding.origin(of: text), text.lowercased() == origin || text.lowercased() == origin + "/",
      !origin.contains(where: { $0.isWhitespace || $0.asciiValue == nil })
    else { return nil }
    return origin
  }

  /// Sets `answerer` up for WebAuthn nodes: the origin, the device name and the keys (libfido2
  /// is loaded only when a node is met).
  func configure(_ answerer: LoginAnswerer, server: String) {
    answerer.webAuthnOrigin = origin.flatMap(Self.checkedOrigin) ?? FormEncoding.origin(of: server)
    answerer.webAuthnDeviceName = deviceName
    answerer.securityKeys = FIDO2SecurityKeys(chosenPath: securityKey, pinFromStandardInput: pinFromStandardInput, timeoutSeconds: timeout)
  }
}
