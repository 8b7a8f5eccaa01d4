import CPAM

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// Why PAM cannot be asked at all (a refusal is a `PAMUserVerifier.Result`, not an error).
package enum PAMError: Error, Sendable, Equatable, CustomStringConvertible {
  /// libpam cannot be loaded (it is opened with dlopen on first use, not linked): `soname` is
  /// the library asked for, `package` the Debian package that ships it (`debian13Package` on
  /// Debian 13), `reason` dlerror's text.
  case libraryUnavailable(soname: String, package: String, debian13Package: String, reason: String)

  package var description: String {
    switch self {
    case .libraryUnavailable(let soname, let package, let debian13Package, let reason):
      "\(soname) cannot be loaded (\(reason)); install Debian package \(package)"
        + (debian13Package == package ? "" : " (\(debian13Package) on Debian 13)")
    }
  }
}

/// Verifies the local user through a PAM service — on Linux, user verification is PAM's job:
/// `fr-profile` for BIOMETRIC_ALLOW_FALLBACK, `fr-profile-biometric` for BIOMETRIC_ONLY (an
/// admin points its stack at pam_fprintd). A service with no file in the configuration
/// directory is not configured (answered `Unsupported`), rather than falling back to PAM's
/// `other` stack. Only this file touches libpam.
package struct PAMUserVerifier: Sendable {
  package static let fallbackService = "fr-profile"
  package static let biometricService = "fr-profile-biometric"

  /// The configuration directory (`pam_start_confdir`, Linux-PAM ≥ 1.4); nil is the system's
  /// (/etc/pam.d). Tests use a directory of their own with pam_permit / pam_deny.
  package var configurationDirectory: String?
  /// The local account to verify.
  package var user: String
  /// Answers a PAM prompt (`echo` false for secrets); nil cancels the conversation.
  package var prompt: @Sendable (_ message: String, _ echo: Bool) -> String?
  /// Shows PAM's informational and error messages (e.g. "Place your finger on the reader").
  package var inform: @Sendable (_ message: String) -> Void

  package init(
    configurationDirectory: String? = nil, user: String,
    prompt: @escaping @Sendable (String, Bool) -> String? = { _, _ in nil },
    inform: @escaping @Sendable (String) -> Void = { _ in }
  ) {
    self.configurationDirectory = configurationDirectory
    self.user = user
    self.prompt = prompt
    self.inform = inform
  }

  /// The service for an authentication type (nil for NONE and APPLICATION_PIN).
  package static func service(for type: AuthenticationType) -> String? {
    switch type {
    case .biometricOnly: biometricService
    case .biometricAllowFallback: fallbackService
    case .none, .applicationPIN: nil
    }
  }

  /// Whether `service` has a regular file in the configuration directory.
  package func isConfigured(_ service: String) -> Bool {
    var info = stat()
    let path = (configurationDirectory ?? "/etc/pam.d") + "/" + service
    return stat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFREG
  }

  package enum Result: Sendable, Equatable {
    case verified
    case notConfigured
    /// PAM said no (wrong finger, wrong password, account locked, conversation cancelled).
    case denied(String)
  }

  /// Loads libpam (dlopen, once per process; Sources/CPAM/include/CPAM.h), or says why not.
  package static func loadLibrary() throws(PAMError) {
    var reason: UnsafePointer<CChar>?
    guard frp_pam_load(&reason) == 0 else { return }
    // libpam0g on Debian 12 (checked with apt-cache); the same name on Debian 13 is what the
    // package list we were given says, not checked against a Debian 13 archive here.
    throw .libraryUnavailable(
      soname: "libpam.so.0", package: "libpam0g", debian13Package: "libpam0g",
      reason: reason.map { String(cString: $0) } ?? "unknown")
  }

  /// Runs `pam_authenticate` and `pam_acct_mgmt` for `user` on `service`. Throws only when
  /// libpam cannot be loaded; an unconfigured service is answered without loading it.
  package func verify(service: String) throws(PAMError) -> Result {
    guard isConfigured(service) else { return .notConfigured }
    try Self.loadLibrary()
    let box = Unmanaged.passRetained(ConversationBox(prompt: prompt, inform: inform))
    defer { box.release() }
    var conversation = pam_conv(conv: pamConversation, appdata_ptr: box.toOpaque())
    var handle: OpaquePointer?
    let started = frp_pam_start_confdir(service, user, &conversation, configurationDirectory, &handle)
    guard started == PAM_SUCCESS, let handle else {
      return .denied("PAM could not start service \(service) (error \(started))")
    }
    var status = frp_pam_authenticate(handle, 0)
    if status == PAM_SUCCESS { status = frp_pam_acct_mgmt(handle, 0) }
    let text = frp_pam_strerror(handle, status).map { String(cString: $0) } ?? "error \(status)"
    frp_pam_end(handle, status)
    return status == PAM_SUCCESS ? .verified : .denied("PAM service \(service): \(text)")
  }
}

private final class ConversationBox {
  let prompt: @Sendable (String, Bool) -> String?
  let inform: @Sendable (String) -> Void
  init(prompt: @escaping @Sendable (String, Bool) -> String?, inform: @escaping @Sendable (String) -> Void) {
    self.prompt = prompt
    self.inform = inform
  }
}

/// PAM's conversation callback: answers are malloc'ed for PAM to free; a cancelled prompt
/// ends the conversation with PAM_CONV_ERR.
private func pamConversation(
  count: Int32, messages: UnsafeMutablePointer<UnsafePointer<pam_message>?>?,
  responses: UnsafeMutablePointer<UnsafeMutablePointer<pam_response>?>?, context: UnsafeMutableRawPointer?
) -> Int32 {
  guard count > 0, count <= 32, let messages, let responses, let context else { return PAM_CONV_ERR }
  let box = Unmanaged<ConversationBox>.fromOpaque(context).takeUnretainedValue()
  guard let answers = calloc(Int(count), MemoryLayout<pam_response>.stride)?.bindMemory(to: pam_response.self, capacity: Int(count))
  else { return PAM_BUF_ERR }
  func fail() -> Int32 {
    for index in 0..<Int(count) {
      if let text = answers[index].resp {
        memset(text, 0, strlen(text))
        free(text)
      }
    }
    free(answers)
    return PAM_CONV_ERR
  }
  for index in 0..<Int(count) {
    guard let message = messages[index]?.pointee else { return fail() }
    let text = message.msg.map { String(cString: $0) } ?? ""
    switch message.msg_style {
    case PAM_PROMPT_ECHO_OFF, PAM_PROMPT_ECHO_ON:
      guard let answer = box.prompt(text, message.msg_style == PAM_PROMPT_ECHO_ON) else { return fail() }
      answers[index].resp = strdup(answer)
      answers[index].resp_retcode = 0
    case PAM_ERROR_MSG, PAM_TEXT_INFO:
      box.inform(text)
    default:
      return fail()
    }
  }
  responses.pointee = answers
  return PAM_SUCCESS
}
