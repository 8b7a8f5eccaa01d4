import ArgumentParser
import Collectors
import DeviceBinding
import DeviceIdentity
import Journey
import Login
import Posture
import ProfileCLI
import ProfileJSON
import SystemCalls
import TPMKeys
import TPMProtocol

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// Exit codes of binding-side failures that stop a command (client errors do not: they are
/// AM's to route).
enum BindingExit {
  /// The failure for an error of the binding path: the store's, the TPM's, PAM's; others as they are.
  static func failure(forAny error: any Error) -> any Error {
    switch error {
    case let error as KeyStoreError: failure(error)
    case let error as HardwareKeyError: TPMExit.failure(error)
    case let error as PAMError: Failure(.libraryMissing, error.description + ".")
    default: error
    }
  }

  static func failure(_ error: KeyStoreError) -> Failure {
    switch error {
    case .corrupt: Failure(.dataError, error.description + ". Delete it with 'fr-profile keys delete KID' and bind again.")
    case .unsafe: Failure(.permission, error.description + ".")
    case .io: Failure(.ioError, error.description + ".")
    }
  }
}

extension ProfileSettings {
  /// The file store in the state directory.
  func userKeyStore(create: Bool = true) throws -> FileUserKeyStore {
    let directory = try keyStore().directory
    do throws(KeyStoreError) {
      return try FileUserKeyStore(stateDirectory: directory, create: create)
    } catch {
      throw BindingExit.failure(error)
    }
  }
}

/// Exit codes of TPM failures (docs/tpm.md).
enum TPMExit {
  /// The TCTI to use (`TPMConfiguration.tcti`): a refused --tcti is a usage error (64), a refused
  /// FR_PROFILE_TCTI a configuration error (78).
  static func tcti(option: String?) throws -> String {
    do throws(TPMConfigurationError) {
      return try TPMConfiguration.tcti(option: option, environment: processEnvironment())
    } catch {
      throw Failure(error.source == "--tcti" ? .usage : .configuration, error.description + ".")
    }
  }

  /// A TPM failure of the attester (TPMKeys), read as the binding side reads TPM failures.
  static func failure(_ error: TPMError, tcti: String) -> Failure { failure(TPMUserKeyStore.mapped(error, tcti: tcti)) }

  static func failure(_ error: HardwareKeyError) -> Failure {
    switch error {
    case .unavailable(let detail):
      Failure(.noTPM, detail + ". Check --tcti / FR_PROFILE_TCTI (default device:/dev/tpmrm0) and access to the TPM device.")
    case .foreignKey(let detail):
      Failure(.foreignTPMKey, detail + " The key is never re-made silently: bind this device again.")
    case .tpmChanged(let detail):
      Failure(
        .foreignTPMKey,
        detail + ". Keys bound in the old TPM are gone and nothing was re-made: delete this device's bound-key records on the "
          + "server, then run 'fr-profile attest request --replace' and bind again.")
    case .lockout, .lockoutThroughParent, .wrongAuthValue: Failure(.tpmLockout, error.description + ".")
    case .failed(let detail): Failure(.tpmFailure, detail + ".")
    case .timedOut(let detail): Failure(.timedOut, detail + ". Check the TPM (or swtpm) at --tcti; raise --max-time if it is slow.")
    case .libraryUnavailable: Failure(.libraryMissing, error.description + ".")
    }
  }
}

extension BindingOptions {
  /// The store behind binding and signing: the file store for records, wrapped so that keys
  /// made in the TPM are used there (never as files). New keys go to the TPM for `tpm`, and
  /// for `auto` when a TPM answers.
  func bindingKeyStore(_ files: FileUserKeyStore, environment: [String: String]) throws -> TPMUserKeyStore {
    let tcti = try tpm.resolved()
    var choice = keyStore
    if choice == nil, let text = environment[KeyStoreChoice.environmentVariable], !text.isEmpty {
      guard let parsed = KeyStoreChoice(rawValue: text) else {
        throw Failure(.usage, "\(KeyStoreChoice.environmentVariable)=\(text): use auto, tpm or file.")
      }
      choice = parsed
    }
    let connection = ProcessTPM.connection(tcti, stateDirectory: files.stateDirectory)
    switch choice ?? .auto {
    case .file: return TPMUserKeyStore(records: files, tcti: tcti, createInTPM: false, connection: connection)
    case .tpm:
      do throws(TPMError) { try connection.run { (tpm) throws(TPMError) in try tpm.probe() } } catch {
        throw TPMExit.failure(TPMUserKeyStore.mapped(error, tcti: tcti))
      }
      return TPMUserKeyStore(records: files, tcti: tcti, createInTPM: true, connection: connection)
    case .auto: return TPMUserKeyStore.automatic(records: files, tcti: tcti, connection: connection)
    }
  }
}

/// Builds the binder the commands use from the options.
struct BindingSetup {
  var options: BindingOptions
  var settings: ProfileSettings
  /// Whether questions may go to the terminal (journey: yes; callback: no).
  var interactive: Bool
  /// The AM host the journey talks to, shown at every PIN and PAM prompt so a person sees
  /// whom they are answering (a relay in front of the real AM is the protocol's blind spot;
  /// docs/binding.md "Threat model of device binding").
  var serverHost: String? = nil
  /// The journey's own deadline (--max-time, CLOCK_MONOTONIC seconds): every prompt and the
  /// binder's waits end by it, whatever timeout the callback asks for.
  var deadline: Double? = nil
  /// Where a bound key's PIN comes from instead of the terminal or --pin-file (a sign-in's PAM
  /// conversation).
  var pinSource: (any PINSource)? = nil

  /// App policies read this machine, never a `--root` tree: a caller who could point the
  /// evaluation at a recorded laptop would unlock and sign with a key its deviceTampering
  /// policy locked. `--root` still shapes the collected profile.
  func policyContext(verifier: PAMUserVerifier) -> PolicyContext {
    PolicyContext(
      system: SystemSource(root: Self.policyRoot), biometricAvailable: { verifier.isConfigured(PAMUserVerifier.biometricService) })
  }

  /// "/", or the machine tree of the test seam `TestSeams.policyRoot`.
  static var policyRoot: String { TestSeams.policyRoot ?? "/" }

  /// Refuses `--root` for a command whose whole work is evaluating app policies.
  static func refuseRoot(_ settings: ProfileSettings, command: String) throws {
    guard settings.root == "/" else {
      throw Failure(
        .usage,
        "--root does not apply to '\(command)': app policies are always evaluated on this machine, never on a recorded tree.")
    }
  }

  func verifier() -> PAMUserVerifier {
    let interactive = interactive
    let serverHost = serverHost
    let deadline = deadline
    return PAMUserVerifier(
      configurationDirectory: Self.pamConfigurationDirectory, user: Self.userName(),
      prompt: { message, echo in
        guard interactive, let terminal = Terminal() else { return nil }
        if let serverHost { terminal.write(TerminalPINSource.serverLine(serverHost)) }
        return terminal.readLine(prompt: LoginAnswerer.promptText(message), echo: echo, deadline: deadline)
      },
      inform: { message in writeStandardError("\(message)\n") })
  }

  /// Where the PAM services live: nil, the system's /etc/pam.d, which only its administrator
  /// configures (fr-profile, fr-profile-biometric). No option changes it: the stacks gate
  /// BIOMETRIC keys and the biometricAvailable policy, so a caller who could point fr-profile at
  /// a directory of pam_permit stacks would pass both. Only the test seam
  /// `TestSeams.pamConfigurationDirectory` does.
  static var pamConfigurationDirectory: String? { TestSeams.pamConfigurationDirectory }

  /// The policies for new bindings: --policies, else <state-dir>/policies.json, else none.
  func policies(_ evaluator: PolicyEvaluator) throws -> JSONObject {
    var text = options.policies
    var source = "--policies"
    if text == nil {
      let path = try settings.keyStore().directory + "/policies.json"
      if access(path, F_OK) == 0 {
        text = String(decoding: try readInput(path, limit: 1 << 20), as: UTF8.self)
        source = path
      }
    }
    guard let text else { return JSONObject() }
    do { return try evaluator.parse(text) } catch { throw Failure(.dataError, "\(source): \(error.description).") }
  }

  func pinPolicy() throws -> PINPolicy {
    do { return try PINPolicy(parsing: options.pinPolicy) } catch { throw Failure(.usage, "--pin-policy: \(error).") }
  }

  func lockPolicy() throws -> LockPolicy {
    do { return try LockPolicy(parsing: options.lockPolicy) } catch { throw Failure(.usage, "--lock-policy: \(error).") }
  }

  func binder(deviceName fallbackName: @escaping () -> String) throws -> DeviceBinder {
    let system = try settings.systemSource()
    let store = try options.bindingKeyStore(try settings.userKeyStore(), environment: processEnvironment())
    let identity = try settings.keyStore()
    let evaluator = PolicyEvaluator()
    let verifier = verifier()
    let pinSource: (any PINSource)? =
      if let pinSource { pinSource } else if let file = options.pinFile { FilePINSource(path: file) } else if interactive {
        TerminalPINSource(serverHost: serverHost)
      } else {
        nil
      }
    let deviceId: @Sendable () throws -> String = {
      do throws(IdentityError) { return try identity.identifier(for: system) } catch { throw Failure(error) }
    }
    var selector: KeySelector?
    if interactive { selector = TerminalKeySelector.choose }
    let pinPolicy = try pinPolicy()
    let lockPolicy = try lockPolicy()
    let policies = try policies(evaluator)
    var binder = DeviceBinder(
      store: store, applicationId: options.applicationId, deviceId: deviceId, deviceName: options.deviceName ?? fallbackName(),
      pins: PINGate(source: pinSource, policy: pinPolicy, lockPolicy: lockPolicy), userVerifier: verifier, policies: policies,
      policyEvaluator: evaluator, policyContext: policyContext(verifier: verifier),
      customClaims: options.customClaims + postureClaim(), boundUser: options.boundUser, selectKey: selector, deadline: deadline)
    if options.tpmEvidence {
      binder.attester = TPMAttester(connection: store.connection, stateDirectory: identity.directory, activated: true)
    }
    return binder
  }

  /// With --posture, the claim `posture`: this machine's posture (never a --root tree's, as app
  /// policies), read when the binder is made, for the user running fr-profile.
  func postureClaim() -> [(String, JSON)] {
    guard options.posture else { return [] }
    return [("posture", PostureReport.evaluate(.live(), uid: getuid(), now: Int64(time(nil))).json)]
  }

  /// The profile's platform.deviceName (what collect reports), else the host name.
  static func profileDeviceName(_ system: SystemSource) -> String {
    let platform = PlatformCollector(detectors: []).collect(CollectionContext(system: system))
    if let name = platform?["deviceName"]?.stringValue, !name.isEmpty { return name }
    var buffer = [CChar](repeating: 0, count: 256)
    return gethostname(&buffer, buffer.count) == 0 ? String(cString: buffer) : "Linux"
  }

  /// The caller's account name, for PAM.
  static func userName() -> String {
    if let entry = getpwuid(geteuid()), let name = entry.pointee.pw_name { return String(cString: name) }
    return String(geteuid())
  }

  /// A one-line note about what happened to each binding callback.
  static func report(_ outcome: DeviceBinder.Outcome, verbose: Bool) {
    let what = outcome.type == DeviceBindingRequest.callbackType ? "binding" : "signing"
    if let failure = outcome.failure {
      let reason = ServerText.printable(failure.reason, singleLine: true)
      writeStandardError("fr-profile: warning: device \(what) answered \(failure.clientError.rawValue): \(reason).\n")
    } else {
      for text in outcome.notes { note(text + ".") }
    }
    if outcome.failure == nil, verbose, let kid = outcome.kid {
      detail("device \(what): signed with key \(kid).")
    }
  }
}

extension CommandDeviceSteps {
  /// Answers the TPM attestation rounds a server's script sends as HiddenValueCallbacks
  /// (TPMAttestation's `AttestationProtocol`); other hidden values are left as they are. A
  /// client that cannot attest (no TPM, `--key-store file`) answers `{"v":1,"error":…}` so the
  /// script can route on it; a TPM that changed since the attestation key was made stops the
  /// journey (exit 81) with the way out.
  func answerAttestation(_ step: inout AuthenticateStep, index: Int, id: String, value: String) throws -> Bool {
    let answer: JSON
    switch id {
    case AttestationProtocol.requestCallbackId:
      if let reason = try cannotAttest() {
        writeStandardError("fr-profile: warning: the server asks for TPM attestation and this device cannot give it: \(reason).\n")
        answer = ["v": 1, "error": .string(reason)]
      } else {
        let directory = try settings.keyStore().directory
        let attester = TPMAttester(
          connection: ProcessTPM.connection(try binding.tpm.resolved(), stateDirectory: directory), stateDirectory: directory)
        self.attester = attester
        do { answer = try attester.request() } catch { throw TPMExit.failure(error, tcti: attester.tcti) }
        if settings.verbose { detail("answered the TPM attestation request (endorsement key and attestation key).") }
      }
    case AttestationProtocol.challengeCallbackId:
      guard let attester else {
        throw Failure(.cannotAnswer, "the server sent a TPM attestation challenge before its request round.")
      }
      let challenge: AttestationChallenge
      do { challenge = try AttestationChallenge(json: try JSONParser.parse(Array(value.utf8))) } catch {
        throw Failure(.cannotAnswer, ServerText.printable("the server's TPM attestation challenge is not one: \(error).", singleLine: true))
      }
      do throws(TPMError) { answer = try attester.answer(challenge) } catch { throw TPMExit.failure(error, tcti: attester.tcti) }
      if settings.verbose { detail("answered the TPM attestation challenge: keys signed in this journey carry TPM evidence.") }
    case AttestationProtocol.quoteCallbackId:
      guard let attester, attester.activated else {
        throw Failure(.cannotAnswer, "the server asked for a boot quote before the attestation key was activated.")
      }
      let request: BootQuoteRequest
      do { request = try BootQuoteRequest(json: try JSONParser.parse(Array(value.utf8))) } catch {
        throw Failure(.cannotAnswer, ServerText.printable("the server's boot quote request is not one: \(error).", singleLine: true))
      }
      let log = FirmwareEventLog.read(path: processEnvironment()[FirmwareEventLog.environmentVariable], tcti: attester.tcti)
      if case .missing(let why) = log {
        writeStandardError("fr-profile: note: the boot quote goes without the firmware event log: \(why).\n")
      }
      do throws(TPMError) { answer = try attester.quote(request, eventLog: log) } catch {
        throw TPMExit.failure(error, tcti: attester.tcti)
      }
      if settings.verbose, case .log = log { detail("answered the boot quote round: PCRs 0-7 and 14 quoted, with the event log.") }
    default:
      return false
    }
    try step.answer(index, with: JSONWriter.compact(answer))
    return true
  }

  /// Why this device cannot attest, or nil: keys are made as files (`--key-store file`, or
  /// `auto` and no TPM answers).
  private func cannotAttest() throws -> String? {
    let store = try binding.bindingKeyStore(try settings.userKeyStore(), environment: processEnvironment())
    guard store.createsHardwareKeys else {
      return store.fallbackNote.map { "its keys are made as files: \($0)" }
        ?? "its keys are made as files (no TPM answers, or --key-store file)"
    }
    return nil
  }
}

/// The PIN from the first line of a file (never argv or the environment).
struct FilePINSource: PINSource {
  var path: String

  func read() throws(BindingFailure) -> String {
    var info = stat()
    if stat(path, &info) == 0, info.st_mode & 0o077 != 0 {
      writeStandardError(
        "fr-profile: warning: the --pin-file \(path) is readable by others (mode \(String(info.st_mode & 0o777, radix: 8))); run 'chmod 600 \(path)'.\n"
      )
    }
    let bytes: [UInt8]
    do { bytes = try readInput(path, limit: 4096) } catch {
      throw BindingFailure(.abort, "cannot read the --pin-file \(path)")
    }
    let line = bytes.split(separator: UInt8(ascii: "\n"), maxSplits: 1, omittingEmptySubsequences: false).first ?? []
    var pin = Array(line)
    if pin.last == UInt8(ascii: "\r") { pin.removeLast() }
    guard !pin.isEmpty, let text = String(validating: pin, as: UTF8.self) else {
      throw BindingFailure(.abort, "the --pin-file \(path) holds no PIN on its first line")
    }
    return text
  }

  func newPIN(prompt: String, policy: PINPolicy, deadline: Double) throws(BindingFailure) -> String? { try read() }
  func existingPIN(prompt: String, deadline: Double) throws(BindingFailure) -> String? { try read() }
}

/// The PIN asked on /dev/tty without echo, within the callback's deadline. The server's title
/// and description are shown as `Terminal` shows everything: sanitized.
struct TerminalPINSource: PINSource {
  var serverHost: String?

  /// "Server: am.example.com:8443" and a newline: whom the answer goes to.
  static func serverLine(_ host: String) -> String { "Server: \(host)\n" }

  private func introduce(_ prompt: String, on terminal: Terminal) {
    if let serverHost { terminal.write(Self.serverLine(serverHost)) }
    if !prompt.isEmpty { terminal.write(prompt + "\n") }
  }

  func newPIN(prompt: String, policy: PINPolicy, deadline: Double) throws(BindingFailure) -> String? {
    guard let terminal = Terminal() else {
      throw BindingFailure(.abort, "an APPLICATION_PIN binding needs a PIN and there is no terminal: pass --pin-file FILE")
    }
    introduce(prompt, on: terminal)
    return Self.newPIN(
      policy: policy, label: "New PIN: ", ask: { terminal.readLine(prompt: $0, echo: false, deadline: deadline) },
      tell: { terminal.write($0 + "\n") })
  }

  /// A new PIN typed twice, three tries at most: `ask` reads one (nil: none came), `tell` says
  /// why the last one was not taken. The terminal's and a sign-in's PAM conversation's.
  static func newPIN(policy: PINPolicy, label: String, ask: (String) -> String?, tell: (String) -> Void) -> String? {
    for _ in 0..<3 {
      guard let first = ask(label) else { return nil }
      if let problem = policy.violation(first) {
        tell("Not accepted: \(problem).")
        continue
      }
      guard let second = ask("Repeat the PIN: ") else { return nil }
      if first == second { return first }
      tell("The PINs differ.")
    }
    return nil
  }

  func existingPIN(prompt: String, deadline: Double) throws(BindingFailure) -> String? {
    guard let terminal = Terminal() else {
      throw BindingFailure(.abort, "the bound key needs its PIN and there is no terminal: pass --pin-file FILE")
    }
    introduce(prompt, on: terminal)
    return terminal.readLine(prompt: "PIN: ", echo: false, deadline: deadline)
  }
}

/// The SDKs' key selector on the terminal: keys labelled "<username>-(<authType>)-(<createdAt>)".
enum TerminalKeySelector {
  static func choose(_ records: [UserKeyRecord]) throws(BindingFailure) -> String? {
    guard let terminal = Terminal() else {
      throw BindingFailure(
        .abort,
        "\(records.count) keys are bound and the callback names no user: pass --bound-user NAME (one of \(records.map(\.username).joined(separator: ", ")))"
      )
    }
    terminal.write("Which bound key signs?\n")
    for (index, record) in records.enumerated() {
      terminal.write("  \(index)) \(record.username)-(\(record.authType.rawValue))-(\(record.createdAt))\n")
    }
    while true {
      guard let line = terminal.readLine(prompt: "Key [0-\(records.count - 1)], empty to cancel: ", echo: true, deadline: nil) else {
        return nil
      }
      if line.isEmpty { return nil }
      if let index = Int(line), records.indices.contains(index) { return records[index].kid }
    }
  }
}
