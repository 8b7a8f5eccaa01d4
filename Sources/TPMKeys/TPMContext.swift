// swift-format-ignore-file: NoBlockComments

// (Inline /* TPM2_… */ comments name the TPM constants where their numbers are used.)
import CTSS2
import Crypto
import Dispatch
import Synchronization
import TPMProtocol

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// Which TPM to talk to, in tpm2-tss's TCTI loader syntax: `device:/dev/tpmrm0` (the kernel's
/// resource manager, the default), `swtpm:host=127.0.0.1,port=2321`, `mssim:…`, `cmd:…`.
public enum TPMConfiguration {
  /// The kernel's in-kernel resource manager.
  public static let defaultTCTI = "device:/dev/tpmrm0"
  /// The environment variable that chooses the TCTI when `--tcti` is not given.
  public static let environmentVariable = "FR_PROFILE_TCTI"

  /// The TCTIs tpm2-tss ships that reach a TPM: the kernel device, the TPM simulators' sockets,
  /// the access broker, libtpms in process. Not `cmd` (it runs a command) or `pcap`, and never a
  /// library path: tpm2-tss's loader dlopens whatever it is given, and the TCTI can come from
  /// the environment.
  public static let acceptedTCTIs = ["device", "mssim", "swtpm", "tabrmd", "libtpms"]

  /// `option`, else `$FR_PROFILE_TCTI`, else `defaultTCTI`; an option or variable that is not
  /// `NAME` or `NAME:CONFIG` with a NAME from `acceptedTCTIs` is refused, naming its source.
  public static func tcti(option: String?, environment: [String: String]) throws(TPMConfigurationError) -> String {
    if let option, !option.isEmpty { return try checked(option, source: "--tcti") }
    if let value = environment[environmentVariable], !value.isEmpty { return try checked(value, source: environmentVariable) }
    return defaultTCTI
  }

  static func checked(_ tcti: String, source: String) throws(TPMConfigurationError) -> String {
    let name = tcti.prefix { $0 != ":" }
    guard acceptedTCTIs.contains(String(name)) else { throw TPMConfigurationError(source: source, value: tcti) }
    return tcti
  }
}

/// A TCTI that is not one of `TPMConfiguration.acceptedTCTIs` (a library path, `cmd:`…).
public struct TPMConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
  /// "--tcti" or "FR_PROFILE_TCTI".
  public var source: String
  public var value: String

  public init(source: String, value: String) {
    self.source = source
    self.value = value
  }

  public var description: String {
    "\(source)=\(value) is not a TPM interface fr-profile uses: give one of "
      + TPMConfiguration.acceptedTCTIs.map { $0 + "[:CONFIG]" }.joined(separator: ", ")
      + " (e.g. device:/dev/tpmrm0, swtpm:host=127.0.0.1,port=2321); a library path is never loaded"
  }
}

/// One connection to a TPM through ESAPI: the TCTI and the ESYS context, and what the
/// operations that follow on it reuse (every command costs 3-600 ms on a real chip,
/// a CreatePrimary of an RSA key seconds): the storage key looked up or made once, keys kept
/// loaded between operations (Certify, then Sign), one salted HMAC session for the authValues.
/// `close()` (or deinit) flushes what it loaded. The only type that touches tpm2-tss pointers.
/// Not shareable between threads (ESAPI is not thread-safe): `TPMConnection` serialises the
/// users of one.
public final class TPMContext {
  public let tcti: String
  /// Whether what an operation loads (the template SRK, keys, the salted session) stays for the
  /// operations that follow: a `TPMConnection`'s context, one process's operations, does. A
  /// context made directly flushes it at the end of each operation, so that holding one holds
  /// none of the TPM's object slots: without a resource manager every process shares 3.
  public let keepsObjects: Bool
  /// How deep in public operations the current call is (one may call another).
  private var operationDepth = 0
  private var tctiContext: OpaquePointer?
  var esys: OpaquePointer?

  /// A persistent object, looked up once per connection: not yet, absent, or its handle and
  /// public area (nil when the area is not a key fr-profile parses).
  enum Persistent {
    case unknown
    case absent
    case present(ESYS_TR, TPMPublic?)
  }

  private var persistentSRK = Persistent.unknown
  /// Names of storage keys known to be this TPM's own primary for a TCG SRK template
  /// (remembered with the state by the caller, `TPMConnection`): a persistent SRK of such a name
  /// parents new keys without a CreatePrimary to check it again.
  public var knownStorageKeyNames: Set<[UInt8]> = []
  /// A persistent SRK's name this connection checked with CreatePrimary and the caller has not
  /// taken yet (`takeCheckedStorageKeyName`), to remember.
  private var checkedStorageKeyName: [UInt8]?

  /// The name a CreatePrimary checked since the last call, once.
  public func takeCheckedStorageKeyName() -> [UInt8]? {
    defer { checkedStorageKeyName = nil }
    return checkedStorageKeyName
  }
  /// The SRK re-created from its template, once per connection (flushed by `close()`).
  private var templateSRK: ESYS_TR?
  /// Keys loaded for the operations that follow, the most recently used last, as many as leave
  /// room for the next command (`makeRoom`).
  private var loadedKeys: [(blob: [UInt8], handle: ESYS_TR)] = []
  /// The object slots of a TPM without a resource manager (the PC Client profile's minimum,
  /// and swtpm's): a command needs one for each object it makes or loads, and one for each
  /// persistent object it names (the TPM loads it for the command).
  static let objectSlots = 3
  /// The salted HMAC session that carries authValues (`authorizationSession`).
  private var authSession: ESYS_TR?
  /// Whether the command that uses `authSession` next keeps it (continueSession).
  private var authSessionContinues = true
  /// Whether TPM2_CreateLoaded may be tried (cleared when the TPM answers that it lacks it).
  private var createLoadedImplemented = true
  /// Persistent EKs, by handle, looked up (or rebuilt from a verified public area) once.
  var endorsementKeys: [UInt32: Persistent] = [:]

  /// Opens the TPM at `tcti` for `body`, retrying the whole of it — every transient object
  /// flushed in between — while the TPM answers with a transient
  /// warning (`TPMError.busy`: out of object memory while other clients hold the slots, RETRY,
  /// YIELDED, TESTING), with a jittered exponential backoff for at most `budget` seconds.
  /// Without a resource manager a TPM has 3 object slots: 20 parallel bindings on swtpm ran into
  /// 0x902 in 14 of 20 before this. A connection of its own, closed afterwards;
  /// `TPMConnection.run` keeps one for the operations that follow.
  public static func session<T: Sendable>(tcti: String, budget: Double = 10, _ body: (TPMContext) throws(TPMError) -> T) throws(TPMError)
    -> T
  {
    let connection = TPMConnection(tcti: tcti)
    defer { connection.close() }
    return try connection.run(budget: budget, body)
  }

  /// How long a socket TCTI (swtpm's, mssim's) waits for a response by default.
  public static let defaultResponseTimeout: Double = 60
  /// Seconds an operation (or opening the connection) may wait for the TPM before it fails
  /// with `.timedOut`. On a socket TCTI (swtpm's, mssim's) a deadline shuts the sockets to the
  /// TCTI's ports down when it passes, and the blocked receive returns: tpm2-tss's socket TCTIs
  /// ignore `Esys_SetTimeout`, implement no poll handles, connect anew while they are
  /// initialised (swtpm's sends a control command then, which a stopped TPM never answers), and
  /// ESAPI's synchronous calls retry TRY_AGAIN for ever, so no per-socket receive timeout set
  /// from outside reaches every wait. The device TCTI's reads are bounded by the kernel's TPM
  /// driver (its command durations, at most minutes), not by this.
  public let responseTimeout: Double
  /// The TCTI's ports on the loopback or host it names (`swtpm:`/`mssim:` only), for the
  /// deadline.
  private let socketPeer: SocketPeer?
  /// Whether a response did not come in time: nothing more is sent on this connection.
  private var silent = false
  /// Set by a deadline that fired (from its own thread).
  private let deadlinePassed = DeadlineFlag()

  /// Loads tpm2-tss (once per process, `loadLibraries()`) and connects to the TPM at `tcti`.
  /// No command is sent: the first one an operation needs tells whether a TPM answers there
  /// (`probe()` when there is no operation yet); a TCTI that cannot be opened (no device,
  /// nothing listening at the port) fails here. A named factory rather than an initializer: it
  /// loads libraries and opens a device.
  public static func open(
    tcti: String, keepsObjects: Bool = false, responseTimeout: Double = TPMContext.defaultResponseTimeout
  ) throws(TPMError) -> TPMContext {
    try TPMContext(tcti: tcti, keepsObjects: keepsObjects, responseTimeout: responseTimeout)
  }

  private init(tcti: String, keepsObjects: Bool, responseTimeout: Double) throws(TPMError) {
    self.tcti = tcti
    self.keepsObjects = keepsObjects
    self.responseTimeout = responseTimeout
    socketPeer = SocketPeer(tcti: tcti)
    try Self.loadLibraries()
    var loaded: OpaquePointer?
    let opened = withDeadline { frp_Tss2_TctiLdr_Initialize(tcti, &loaded) }
    if deadlinePassed.value.load(ordering: .acquiring) {
      if let loaded {
        var context: OpaquePointer? = loaded
        frp_Tss2_TctiLdr_Finalize(&context)
      }
      throw .timedOut(seconds: responseTimeout)
    }
    var rc = opened
    guard rc == TSS2_RC_SUCCESS, let loaded else { throw .unavailable(tcti: tcti, detail: Self.decode(rc)) }
    tctiContext = loaded
    var context: OpaquePointer?
    rc = frp_Esys_Initialize(&context, loaded, nil)
    guard rc == TSS2_RC_SUCCESS, let context else {
      frp_Tss2_TctiLdr_Finalize(&tctiContext)
      throw .unavailable(tcti: tcti, detail: Self.decode(rc))
    }
    esys = context
  }

  /// Whether a TPM answers: the first command every key operation sends anyway (the look-up
  /// of the persistent SRK), so asking costs nothing later.
  public func probe() throws(TPMError) {
    _ = try operation { () throws(TPMError) in try persistentStorageKey() }
  }

  /// `body`, one public operation: at its end a context that does not keep objects
  /// (`keepsObjects`) flushes what it loaded.
  func operation<T>(_ body: () throws(TPMError) -> T) throws(TPMError) -> T {
    operationDepth += 1
    defer {
      operationDepth -= 1
      if operationDepth == 0, !keepsObjects { flushTransients() }
    }
    guard operationDepth == 1 else { return try body() }
    do { return try withDeadline(body) } catch let error where error.code == .unavailable {
      // The TCTI's I/O error once the deadline shut its sockets is the TPM's silence.
      if deadlinePassed.value.load(ordering: .acquiring) {
        silent = true
        throw .timedOut(seconds: responseTimeout)
      }
      throw error
    }
  }

  /// `body` under the deadline: past `responseTimeout`, a timer shuts down this process's
  /// sockets to the TCTI's ports, which ends the TCTI's blocked receive (and every later one:
  /// the connection is over). Nothing for a TCTI that is not a socket.
  private func withDeadline<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
    guard let socketPeer, !silent else { return try body() }
    let timer = DispatchWorkItem { [deadlinePassed] in
      deadlinePassed.value.store(true, ordering: .releasing)
      for fd in Self.socketDescriptors() where socketPeer.matches(fd) { shutdown(fd, Int32(SHUT_RDWR)) }
    }
    DispatchQueue.global().asyncAfter(deadline: .now() + responseTimeout, execute: timer)
    defer { timer.cancel() }
    return try body()
  }

  /// The descriptors of this process that are sockets (/proc/self/fd).
  static func socketDescriptors() -> Set<Int32> {
    guard let directory = opendir("/proc/self/fd") else { return [] }
    defer { closedir(directory) }
    let own = dirfd(directory)
    var found: Set<Int32> = []
    while let entry = readdir(directory) {
      let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
      guard let fd = Int32(name), fd != own else { continue }
      var info = stat()
      if fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFSOCK { found.insert(fd) }
    }
    return found
  }

  /// Flushes the keys, the session and the template SRK this context loaded; what it looked up
  /// (the persistent SRK and EKs, which take no slot) stays known.
  func flushTransients() {
    // A TPM that stopped answering gets no more commands (each would wait the timeout again).
    guard esys != nil, !silent else { return }
    for key in loadedKeys { _ = frp_Esys_FlushContext(esys, key.handle) }
    loadedKeys = []
    if let session = authSession { _ = frp_Esys_FlushContext(esys, session) }
    authSession = nil
    if let handle = templateSRK { _ = frp_Esys_FlushContext(esys, handle) }
    templateSRK = nil
  }

  /// Flushes what this connection loaded (keys, the template SRK, the session) and closes it.
  public func close() {
    guard esys != nil else { return }
    flushTransients()
    frp_Esys_Finalize(&esys)
    if tctiContext != nil { frp_Tss2_TctiLdr_Finalize(&tctiContext) }
  }

  deinit {
    close()
  }

  // MARK: - The storage primary key

  /// The parent of our keys: the persistent SRK at 0x81000001 when it is the owner seed's own
  /// primary for a TCG SRK template (`isTemplateStorageKey`), else the ECC SRK re-created from
  /// the standard template (the same key every time, from the owner hierarchy's seed, noDA).
  /// Any TPM user can plant a key at 0x81000001 while the owner hierarchy's auth is empty (as
  /// on Linux by default): keys made under a planted one would be lost when the planter evicts
  /// it, while a template's primary can be re-created, and the keys made under it load again.
  /// `required` names the parent an existing key was made under: a key made under the
  /// persistent SRK loads there, whatever it is (an earlier version took any trustworthy one);
  /// with none there, under the template SRK (what it was, when it was the template's). Returns
  /// its handle, which it is, and whether it is noDA. Both are kept for the connection: the
  /// look-up is one ReadPublic, the template SRK one CreatePrimary, per connection.
  private func storagePrimary(required: TPMKeyBlob.Parent?) throws(TPMError) -> (ESYS_TR, TPMKeyBlob.Parent, noDA: Bool) {
    if required != .templateSRK, let (handle, area) = try persistentStorageKey() {
      if required == .persistentSRK { return (handle, .persistentSRK, area?.has(.noDA) ?? false) }
      if let area, Self.trustworthySRK(area), try isTemplateStorageKey(handle, area) { return (handle, .persistentSRK, true) }
    }
    return (try templateStorageKey(), .templateSRK, true)
  }

  /// Whether the persistent SRK `handle` is this TPM's own primary for the TCG SRK template of
  /// its type (ECC P-256 or RSA 2048): its name is a remembered one, or equals the name of
  /// CreatePrimary from that template (then remembered, `checkedStorageKeyName`). The ECC
  /// template's primary stays loaded as the template SRK when it is not.
  private func isTemplateStorageKey(_ handle: ESYS_TR, _ area: TPMPublic) throws(TPMError) -> Bool {
    let name = try self.name(of: handle)
    if knownStorageKeyNames.contains(name) { return true }
    let rsa = area.type != TPMPublic.algECC
    let primary = rsa ? try createPrimary(frp_srk_rsa_template) : try templateStorageKey()
    let same = try self.name(of: primary) == name
    if rsa || same {
      // The same key as the persistent one (or an RSA key no key of ours is made under): not
      // kept in one of the TPM's three object slots.
      _ = frp_Esys_FlushContext(esys, primary)
      if !rsa { templateSRK = nil }
    }
    guard same else { return false }
    knownStorageKeyNames.insert(name)
    checkedStorageKeyName = name
    return true
  }

  /// The TPM's name of a loaded object (nameAlg ‖ SHA-256 of its public area); no command.
  private func name(of handle: ESYS_TR) throws(TPMError) -> [UInt8] {
    var name: UnsafeMutablePointer<TPM2B_NAME>?
    let rc = frp_Esys_TR_GetName(esys, handle, &name)
    defer { frp_Esys_Free(name) }
    guard rc == TSS2_RC_SUCCESS, let name else { throw Self.error("Esys_TR_GetName", rc) }
    return withUnsafeBytes(of: name.pointee.name) { Array($0.prefix(Int(name.pointee.size))) }
  }

  /// The persistent SRK, looked up once (Esys_TR_FromTPMPublic: one ReadPublic, whose answer
  /// also says that a TPM is there); nil when the TPM has none.
  private func persistentStorageKey() throws(TPMError) -> (ESYS_TR, TPMPublic?)? {
    switch persistentSRK {
    case .absent: return nil
    case .present(let handle, let area): return (handle, area)
    case .unknown:
      let found = try persistentObject(frp_srk_persistent_handle)
      persistentSRK = found.map { .present($0.0, $0.1) } ?? .absent
      return found
    }
  }

  /// The SRK from the standard template, made once per connection.
  private func templateStorageKey() throws(TPMError) -> ESYS_TR {
    if let templateSRK { return templateSRK }
    let handle = try createPrimary(frp_srk_template)
    templateSRK = handle
    return handle
  }

  /// CreatePrimary in the owner hierarchy (its empty auth) from `fillTemplate`'s template.
  private func createPrimary(_ fillTemplate: (UnsafeMutablePointer<TPM2B_PUBLIC>) -> Void) throws(TPMError) -> ESYS_TR {
    makeRoom(for: 1)
    var template = TPM2B_PUBLIC()
    fillTemplate(&template)
    var sensitive = TPM2B_SENSITIVE_CREATE()
    var outsideInfo = TPM2B_DATA()
    var pcrs = TPML_PCR_SELECTION()
    var handle = ESYS_TR(ESYS_TR_NONE)
    let rc = frp_Esys_CreatePrimary(
      esys, ESYS_TR(ESYS_TR_RH_OWNER), ESYS_TR(ESYS_TR_PASSWORD), ESYS_TR(ESYS_TR_NONE), ESYS_TR(ESYS_TR_NONE),
      &sensitive, &template, &outsideInfo, &pcrs, &handle, nil, nil, nil, nil)
    guard rc == TSS2_RC_SUCCESS else { throw Self.error("Esys_CreatePrimary", rc) }
    return handle
  }

  /// The TPM's name of the storage key `parent` names (nameAlg ‖ SHA-256 of its public area),
  /// which changes when the storage hierarchy's seed does (TPM2_Clear): keys wrapped by the
  /// key of this name still load.
  public func storageKeyName(_ parent: TPMKeyBlob.Parent) throws(TPMError) -> [UInt8] {
    try operation { () throws(TPMError) -> [UInt8] in
      let (handle, _, _) = try storagePrimary(required: parent)
      return try name(of: handle)
    }
  }

  /// Whether a persistent SRK may parent new keys: a storage key (restricted decrypt, not a
  /// signing key) generated inside this TPM and never to leave it (fixedTPM, fixedParent,
  /// sensitiveDataOrigin: so not an imported key whose private part someone knows), and noDA —
  /// loading a child authorizes its parent, so a parent without noDA puts every key under it in
  /// the TPM's dictionary-attack lockout, and another user's wrong PINs would block keys that
  /// have none. `tpm2_createprimary`'s default attributes lack noDA: such an SRK is
  /// passed over for the template SRK.
  static func trustworthySRK(_ area: TPMPublic) -> Bool {
    trustworthySaltKey(area) && !area.has(.sign) && area.has(.fixedParent) && area.has(.noDA)
  }

  /// Whether a session may be salted to the key: a decrypt key made inside this TPM that never
  /// leaves it (restricted, decrypt, fixedTPM, sensitiveDataOrigin), so only this TPM can
  /// recover the salt.
  static func trustworthySaltKey(_ area: TPMPublic) -> Bool {
    area.has(.restricted) && area.has(.decrypt) && area.has(.fixedTPM) && area.has(.sensitiveDataOrigin)
  }

  /// A persistent object's handle and public area (one ReadPublic, through
  /// Esys_TR_FromTPMPublic, whose resource already holds the area: no second ReadPublic); nil
  /// when the TPM has no object there. Failures other than the TPM's refusal of the handle (no
  /// TPM, a busy TPM, a TPM not started) are thrown.
  func persistentObject(_ tpmHandle: TPM2_HANDLE) throws(TPMError) -> (ESYS_TR, TPMPublic?)? {
    var handle = ESYS_TR(ESYS_TR_NONE)
    var rc = frp_Esys_TR_FromTPMPublic(esys, tpmHandle, ESYS_TR(ESYS_TR_NONE), ESYS_TR(ESYS_TR_NONE), ESYS_TR(ESYS_TR_NONE), &handle)
    // The TPM loads a persistent object into a free slot to answer, even that there is none:
    // while other clients hold every slot (a TPM without a resource manager has 3), asked again
    // for up to 0.2 s (it is usually an operation's first command: this client holds nothing)
    // before the whole operation backs off (`TPMConnection.run`).
    var tries = 0
    while frp_rc_base(rc) == frp_rc_object_memory, tries < 100 {
      tries += 1
      usleep(2000)
      rc = frp_Esys_TR_FromTPMPublic(esys, tpmHandle, ESYS_TR(ESYS_TR_NONE), ESYS_TR(ESYS_TR_NONE), ESYS_TR(ESYS_TR_NONE), &handle)
    }
    guard rc == TSS2_RC_SUCCESS else {
      // Format-one TPM errors (TPM_RC_HANDLE, _VALUE…) refuse the handle; warnings, format-zero
      // errors (not started, failure mode) and the TCTI's errors say the TPM is not usable.
      if rc & frp_rc_layer_mask == 0, rc & 0x80 != 0 { return nil }
      throw Self.error("Esys_TR_FromTPMPublic", rc)
    }
    return (handle, try? serializedPublicArea(handle))
  }

  /// The public area ESAPI keeps for a key's handle, read from its serialized resource
  /// (IESYS_RESOURCE, tpm2-tss 2.x-4.x: handle, TPM2B_NAME, the resource type 1 for a key, its
  /// TPM2B_PUBLIC), checked against the name the TPM gave.
  func serializedPublicArea(_ handle: ESYS_TR) throws(TPMError) -> TPMPublic {
    var buffer: UnsafeMutablePointer<UInt8>?
    var size = 0
    let rc = frp_Esys_TR_Serialize(esys, handle, &buffer, &size)
    defer { frp_Esys_Free(buffer) }
    guard rc == TSS2_RC_SUCCESS, let buffer else { throw Self.error("Esys_TR_Serialize", rc) }
    do { return try Self.publicArea(ofResource: Array(UnsafeBufferPointer(start: buffer, count: size))) } catch {
      throw .corrupt(reason: "the TPM's public area: \(error)")
    }
  }

  static func publicArea(ofResource bytes: [UInt8]) throws(AttestationError) -> TPMPublic {
    var reader = TPMReader(bytes)
    _ = try reader.u32()
    let name = try reader.sized()
    guard try reader.u32() == 1 else { throw .malformed("the resource is not a key") }
    let area = try TPMPublic(tpm2b: try reader.sizedWhole())
    try reader.expectEnd("the resource")
    guard area.name == name else { throw .malformed("the public area is not the one the TPM named") }
    return area
  }

  /// The handle of a persistent key whose public area the caller verified, without a command
  /// (Esys_TR_Deserialize of the resource ESAPI would have made from it): if the TPM holds
  /// another key there, what is encrypted to this one fails in the TPM.
  func persistentObject(_ tpmHandle: UInt32, verifiedPublicArea tpm2b: [UInt8]) throws(TPMError) -> ESYS_TR {
    let area: TPMPublic
    do { area = try TPMPublic(tpm2b: tpm2b) } catch { throw .corrupt(reason: "the kept public area: \(error)") }
    let resource = TPMWriter.u32(tpmHandle) + TPMWriter.sized(area.name) + TPMWriter.u32(1) + tpm2b
    var handle = ESYS_TR(ESYS_TR_NONE)
    let rc = frp_Esys_TR_Deserialize(esys, resource, resource.count, &handle)
    guard rc == TSS2_RC_SUCCESS else { throw Self.error("Esys_TR_Deserialize", rc) }
    return handle
  }

  /// `body`, a lockout reported as it is: through a parent that is not noDA the lockout blocks
  /// the key whatever its own PIN.
  func throughParent<T>(_ parent: TPMKeyBlob.Parent, _ body: () throws(TPMError) -> T) throws(TPMError) -> T {
    do {
      return try body()
    } catch let error where error.code == .lockout {
      if parent == .persistentSRK, case .present(_, let area) = persistentSRK, !(area?.has(.noDA) ?? false) { throw .lockoutThroughParent }
      throw error
    }
  }

  // MARK: - The salted session

  /// The session that carries every authValue and sensitive parameter: an HMAC session salted
  /// to a decrypt key only this TPM holds (the storage key whose public area was read and
  /// checked — `trustworthySaltKey` — or made from the template), so that its session key
  /// is unknown to anyone who only reads the bus, with parameter encryption (AES-128-CFB) of
  /// the command's first parameter: Create's inSensitive, which holds the new key's authValue.
  /// The key's authValue itself never crosses the bus: the command carries an HMAC keyed with
  /// the session key and the authValue. Started once per connection; `continuing: false` makes
  /// the command end it (the TPM flushes it: no FlushContext).
  func authorizationSession(continuing: Bool) throws(TPMError) -> ESYS_TR {
    let session: ESYS_TR
    if let authSession {
      session = authSession
    } else {
      let saltKey = try sessionSaltKey()
      var symmetric = TPMT_SYM_DEF()
      frp_aes128_cfb(&symmetric)
      var handle = ESYS_TR(ESYS_TR_NONE)
      let rc = frp_Esys_StartAuthSession(
        esys, saltKey, ESYS_TR(ESYS_TR_NONE), ESYS_TR(ESYS_TR_NONE), ESYS_TR(ESYS_TR_NONE), ESYS_TR(ESYS_TR_NONE), nil,
        frp_session_hmac, &symmetric, frp_alg_sha256, &handle)
      guard rc == TSS2_RC_SUCCESS else { throw Self.error("Esys_StartAuthSession", rc) }
      authSession = handle
      session = handle
    }
    let rc = frp_Esys_TRSess_SetAttributes(esys, session, frp_session_decrypt | (continuing ? frp_session_continue : 0), 0xFF)
    guard rc == TSS2_RC_SUCCESS else { throw Self.error("Esys_TRSess_SetAttributes", rc) }
    authSessionContinues = continuing
    return session
  }

  /// After a command in `session`: one that succeeded without continueSession ended it.
  func used(_ session: ESYS_TR, succeeded: Bool) {
    guard let authSession, session == authSession, succeeded, !authSessionContinues else { return }
    var handle = session
    _ = frp_Esys_TR_Close(esys, &handle)
    self.authSession = nil
  }

  /// The key the session's salt is encrypted to.
  private func sessionSaltKey() throws(TPMError) -> ESYS_TR {
    if let (handle, area) = try persistentStorageKey(), let area, Self.trustworthySaltKey(area) { return handle }
    return try templateStorageKey()
  }

  // MARK: - Keys

  /// Creates a P-256 signing key inside the TPM under the storage primary key; `authValue`
  /// (a PIN's bytes, at most 32 after hashing) protects its use. A key without an authValue is
  /// noDA: the TPM's dictionary-attack lockout, which other users' wrong PINs or unclean
  /// shutdowns can trigger, never blocks it. With `keepLoaded` the key stays loaded for the
  /// operations that follow (TPM2_CreateLoaded: no Load). Returns the wrapped blobs.
  public func createSigningKey(authValue: [UInt8] = [], keepLoaded: Bool = false) throws(TPMError) -> TPMKeyBlob {
    try operation { () throws(TPMError) in
      try createKey(authValue: authValue, keepLoaded: keepLoaded) { frp_signing_template($0, authValue.isEmpty ? 1 : 0) }
    }
  }

  /// A key from `template` under the storage primary key, protected by `authValue`, which
  /// travels encrypted in the salted session (`authorizationSession`).
  func createKey(authValue: [UInt8], keepLoaded: Bool = false, template fillTemplate: (UnsafeMutablePointer<TPM2B_PUBLIC>) -> Void)
    throws(TPMError) -> TPMKeyBlob
  {
    let auth = Self.authDigest(authValue)
    let (parent, kind, _) = try storagePrimary(required: nil)
    return try throughParent(kind) { () throws(TPMError) -> TPMKeyBlob in
      var template = TPM2B_PUBLIC()
      fillTemplate(&template)
      var sensitive = TPM2B_SENSITIVE_CREATE()
      Self.fill(&sensitive.sensitive.userAuth, auth)
      let session = auth.isEmpty ? ESYS_TR(ESYS_TR_PASSWORD) : try authorizationSession(continuing: true)
      // The new object, and the persistent parent while the command runs.
      makeRoom(for: kind == .persistentSRK ? 2 : 1)
      if keepLoaded, createLoadedImplemented {
        if let blob = try createLoaded(parent: (parent, kind), session: session, &sensitive, &template) { return blob }
      }
      var outsideInfo = TPM2B_DATA()
      var pcrs = TPML_PCR_SELECTION()
      var outPrivate: UnsafeMutablePointer<TPM2B_PRIVATE>?
      var outPublic: UnsafeMutablePointer<TPM2B_PUBLIC>?
      let rc = frp_Esys_Create(
        esys, parent, session, ESYS_TR(ESYS_TR_NONE), ESYS_TR(ESYS_TR_NONE), &sensitive, &template, &outsideInfo, &pcrs, &outPrivate,
        &outPublic, nil, nil, nil)
      used(session, succeeded: rc == TSS2_RC_SUCCESS)
      defer {
        frp_Esys_Free(outPrivate)
        frp_Esys_Free(outPublic)
      }
      guard rc == TSS2_RC_SUCCESS, let outPrivate, let outPublic else { throw Self.error("Esys_Create", rc) }
      return TPMKeyBlob(parent: kind, publicArea: try Self.marshal(outPublic), privateArea: try Self.marshal(outPrivate))
    }
  }

  /// TPM2_CreateLoaded (TPM 2.0 revision 1.38): the key made and loaded in one command, kept
  /// loaded. Nil when the TPM does not implement it (then Create and Load do the same).
  private func createLoaded(
    parent: (handle: ESYS_TR, kind: TPMKeyBlob.Parent), session: ESYS_TR, _ sensitive: inout TPM2B_SENSITIVE_CREATE,
    _ template: inout TPM2B_PUBLIC
  ) throws(TPMError) -> TPMKeyBlob? {
    var inPublic = TPM2B_TEMPLATE()
    var offset = 0
    let marshalled = withUnsafeMutableBytes(of: &inPublic.buffer) { raw in
      frp_Tss2_MU_TPMT_PUBLIC_Marshal(&template.publicArea, raw.baseAddress!.assumingMemoryBound(to: UInt8.self), raw.count, &offset)
    }
    guard marshalled == TSS2_RC_SUCCESS else { throw Self.error("Tss2_MU_TPMT_PUBLIC_Marshal", marshalled) }
    inPublic.size = UInt16(offset)
    var handle = ESYS_TR(ESYS_TR_NONE)
    var outPrivate: UnsafeMutablePointer<TPM2B_PRIVATE>?
    var outPublic: UnsafeMutablePointer<TPM2B_PUBLIC>?
    let rc = frp_Esys_CreateLoaded(
      esys, parent.handle, session, ESYS_TR(ESYS_TR_NONE), ESYS_TR(ESYS_TR_NONE), &sensitive, &inPublic, &handle, &outPrivate, &outPublic)
    used(session, succeeded: rc == TSS2_RC_SUCCESS)
    defer {
      frp_Esys_Free(outPrivate)
      frp_Esys_Free(outPublic)
    }
    if frp_rc_base(rc) == frp_rc_command_code {
      createLoadedImplemented = false
      return nil
    }
    guard rc == TSS2_RC_SUCCESS, let outPrivate, let outPublic else { throw Self.error("Esys_CreateLoaded", rc) }
    let blob: TPMKeyBlob
    do {
      blob = TPMKeyBlob(parent: parent.kind, publicArea: try Self.marshal(outPublic), privateArea: try Self.marshal(outPrivate))
    } catch {
      _ = frp_Esys_FlushContext(esys, handle)
      throw error
    }
    loadedKeys.append((blob.bytes, handle))
    return blob
  }

  /// Signs the SHA-256 of `message` with the key in `blob` (loaded under its parent, or kept
  /// loaded from an operation before). Returns the raw 64-byte R‖S, the form ES256 uses. A key
  /// with an authValue is used in the salted session, which this command ends: a signature is
  /// the last step of a binding or a signing.
  public func sign<Message: Sequence>(_ message: Message, with blob: TPMKeyBlob, authValue: [UInt8] = []) throws(TPMError) -> [UInt8]
  where Message.Element == UInt8 {
    let digest = Array(SHA256.hash(data: Array(message)))
    return try operation { () throws(TPMError) -> [UInt8] in try signing(digest, with: blob, authValue: authValue) }
  }

  private func signing(_ digest: [UInt8], with blob: TPMKeyBlob, authValue: [UInt8]) throws(TPMError) -> [UInt8] {
    try throughParent(blob.parent) { () throws(TPMError) -> [UInt8] in
      let key = try loaded(blob)
      let auth = Self.authDigest(authValue)
      var authValue = TPM2B_AUTH()
      Self.fill(&authValue, auth)
      var rc = frp_Esys_TR_SetAuth(esys, key, &authValue)
      guard rc == TSS2_RC_SUCCESS else { throw Self.error("Esys_TR_SetAuth", rc) }
      let session = auth.isEmpty ? ESYS_TR(ESYS_TR_PASSWORD) : try authorizationSession(continuing: false)
      var toSign = TPM2B_DIGEST()
      Self.fill(&toSign, digest)
      var scheme = TPMT_SIG_SCHEME()
      frp_ecdsa_scheme(&scheme)
      var ticket = TPMT_TK_HASHCHECK()
      frp_null_ticket(&ticket)
      var result: UnsafeMutablePointer<TPMT_SIGNATURE>?
      rc = frp_Esys_Sign(esys, key, session, ESYS_TR(ESYS_TR_NONE), ESYS_TR(ESYS_TR_NONE), &toSign, &scheme, &ticket, &result)
      used(session, succeeded: rc == TSS2_RC_SUCCESS)
      defer { frp_Esys_Free(result) }
      guard rc == TSS2_RC_SUCCESS, let result else { throw Self.error("Esys_Sign", rc) }
      let ecdsa = result.pointee.signature.ecdsa
      return Self.padded(ecdsa.signatureR) + Self.padded(ecdsa.signatureS)
    }
  }

  /// A new HMAC-SHA256 key inside the TPM (`frp_hmac_template`): what it keys cannot be
  /// recomputed without this TPM. Its blob's public area is a keyed-hash object, which
  /// `TPMKeyBlob(bytes:)` does not parse: keep its parts (`parent`, `publicArea`,
  /// `privateArea`) and rebuild it with `TPMKeyBlob(parent:publicArea:privateArea:)`.
  public func createHMACKey() throws(TPMError) -> TPMKeyBlob {
    try operation { () throws(TPMError) in try createKey(authValue: []) { frp_hmac_template($0) } }
  }

  /// HMAC-SHA256 of `data` (at most 1024 bytes) with the TPM's key in `blob`.
  public func hmac(_ data: [UInt8], with blob: TPMKeyBlob) throws(TPMError) -> [UInt8] {
    var publicArea = try Self.unmarshalPublic(blob.publicArea)
    guard frp_is_hmac_key(&publicArea) != 0 else { throw .corrupt(reason: "not an HMAC-SHA256 key of this program's shape") }
    guard data.count <= 1024 else { throw .corrupt(reason: "more than 1024 bytes to HMAC in one command") }
    return try operation { () throws(TPMError) -> [UInt8] in
      try throughParent(blob.parent) { () throws(TPMError) -> [UInt8] in
        let key = try loaded(blob)
        var buffer = TPM2B_MAX_BUFFER()
        buffer.size = UInt16(data.count)
        withUnsafeMutableBytes(of: &buffer.buffer) { raw in raw.copyBytes(from: data) }
        var result: UnsafeMutablePointer<TPM2B_DIGEST>?
        let rc = frp_Esys_HMAC(
          esys, key, ESYS_TR(ESYS_TR_PASSWORD), ESYS_TR(ESYS_TR_NONE), ESYS_TR(ESYS_TR_NONE), &buffer, frp_alg_sha256, &result)
        defer { frp_Esys_Free(result) }
        guard rc == TSS2_RC_SUCCESS, let result else { throw Self.error("Esys_HMAC", rc) }
        return withUnsafeBytes(of: result.pointee.buffer) { Array($0.prefix(Int(result.pointee.size))) }
      }
    }
  }

  /// Loads `blob` under this TPM's storage key: proves the key belongs to this TPM (and keeps
  /// it loaded for what follows).
  public func verifyLoads(_ blob: TPMKeyBlob) throws(TPMError) {
    _ = try operation { () throws(TPMError) in try throughParent(blob.parent) { () throws(TPMError) in try loaded(blob) } }
  }

  /// The handle of `blob` loaded: kept from before, or loaded now and kept.
  func loaded(_ blob: TPMKeyBlob) throws(TPMError) -> ESYS_TR {
    let bytes = blob.bytes
    if let index = loadedKeys.firstIndex(where: { $0.blob == bytes }) {
      let kept = loadedKeys.remove(at: index)
      loadedKeys.append(kept)
      return kept.handle
    }
    let (parent, kind, _) = try storagePrimary(required: blob.parent)
    makeRoom(for: kind == .persistentSRK ? 2 : 1)
    let handle: ESYS_TR
    do throws(TPMError) {
      handle = try throughParent(kind) { () throws(TPMError) in try load(blob, parent: parent) }
    } catch let error where error.code == .foreignKey && blob.parent == .persistentSRK && kind == .templateSRK {
      throw .foreignKey(
        detail: "the key was made under the persistent SRK 0x81000001, which this TPM no longer has (someone evicted it), and that SRK "
          + "was not the TCG template's storage key, which could be re-created (\(error.detail ?? ""))")
    }
    loadedKeys.append((bytes, handle))
    return handle
  }

  /// Flushes the least recently used kept keys until `objects` more fit in the TPM's slots
  /// beside the template SRK and the kept keys (so an AK loaded just before a key stays).
  func makeRoom(for objects: Int) {
    while !loadedKeys.isEmpty, (templateSRK == nil ? 0 : 1) + loadedKeys.count + objects > Self.objectSlots {
      _ = frp_Esys_FlushContext(esys, loadedKeys.removeFirst().handle)
    }
  }

  func load(_ blob: TPMKeyBlob, parent: ESYS_TR) throws(TPMError) -> ESYS_TR {
    var publicArea = try Self.unmarshalPublic(blob.publicArea)
    var privateArea = try Self.unmarshalPrivate(blob.privateArea)
    var handle = ESYS_TR(ESYS_TR_NONE)
    let rc = frp_Esys_Load(
      esys, parent, ESYS_TR(ESYS_TR_PASSWORD), ESYS_TR(ESYS_TR_NONE), ESYS_TR(ESYS_TR_NONE), &privateArea, &publicArea, &handle)
    guard rc == TSS2_RC_SUCCESS else {
      let base = frp_rc_base(rc)
      // A private blob wrapped by another TPM's storage key fails the TPM's integrity check
      // (or, when sizes differ, its size/value checks on the private parameter).
      if base == frp_rc_integrity || base == 0x095 /* TPM2_RC_SIZE */ || base == 0x084 /* TPM2_RC_VALUE */ {
        throw .foreignKey(detail: Self.decode(rc))
      }
      throw Self.error("Esys_Load", rc)
    }
    return handle
  }

  // MARK: - Dictionary-attack settings (tests, provisioning)

  /// Sets the TPM's dictionary-attack parameters with the lockout hierarchy's (empty) auth.
  public func setDictionaryAttackParameters(maxTries: UInt32, recoverySeconds: UInt32, lockoutRecoverySeconds: UInt32) throws(TPMError) {
    let rc = frp_Esys_DictionaryAttackParameters(
      esys, ESYS_TR(ESYS_TR_RH_LOCKOUT), ESYS_TR(ESYS_TR_PASSWORD), ESYS_TR(ESYS_TR_NONE), ESYS_TR(ESYS_TR_NONE),
      maxTries, recoverySeconds, lockoutRecoverySeconds)
    guard rc == TSS2_RC_SUCCESS else { throw Self.error("Esys_DictionaryAttackParameters", rc) }
  }

  /// Makes the standard SRK persistent at 0x81000001 (what `tpm2_createprimary` +
  /// `tpm2_evictcontrol` provisioning does); a no-op when one is there.
  public func persistStorageKey() throws(TPMError) {
    try operation { () throws(TPMError) in try persistingStorageKey() }
  }

  private func persistingStorageKey() throws(TPMError) {
    let (handle, parent, _) = try storagePrimary(required: nil)
    guard parent == .templateSRK else { return }
    var persistent = ESYS_TR(ESYS_TR_NONE)
    let rc = frp_Esys_EvictControl(
      esys, ESYS_TR(ESYS_TR_RH_OWNER), handle, ESYS_TR(ESYS_TR_PASSWORD), ESYS_TR(ESYS_TR_NONE), ESYS_TR(ESYS_TR_NONE),
      frp_srk_persistent_handle, &persistent)
    guard rc == TSS2_RC_SUCCESS else { throw Self.error("Esys_EvictControl", rc) }
    _ = frp_Esys_TR_Close(esys, &persistent)
    persistentSRK = .unknown
  }

  // MARK: - Public keys

  /// The public key of a blob as swift-crypto's type (its `derRepresentation` is the
  /// SubjectPublicKeyInfo the identifier hashes).
  /// Whether the key in `blob` is noDA (outside the dictionary-attack protection).
  public static func isNoDA(_ blob: TPMKeyBlob) throws(TPMError) -> Bool {
    var publicArea = try unmarshalPublic(blob.publicArea)
    return frp_is_no_da(&publicArea) != 0
  }

  public static func publicKey(of blob: TPMKeyBlob) throws(TPMError) -> P256.Signing.PublicKey {
    var publicArea = try unmarshalPublic(blob.publicArea)
    guard frp_is_signing_key(&publicArea) != 0 else { throw .corrupt(reason: "not a P-256 signing key") }
    let point = publicArea.publicArea.unique.ecc
    guard point.x.size <= 32, point.y.size <= 32 else { throw .corrupt(reason: "the public point is too long") }
    do {
      return try P256.Signing.PublicKey(x963Representation: [0x04] + padded(point.x) + padded(point.y))
    } catch {
      throw .corrupt(reason: "the public point is not on P-256")
    }
  }

  // MARK: - Helpers

  /// The authValue for a PIN: its SHA-256 (32 bytes, the nameAlg's digest size, the most a
  /// TPM accepts), or empty for no PIN.
  static func authDigest(_ value: [UInt8]) -> [UInt8] {
    value.isEmpty ? [] : Array(SHA256.hash(data: value))
  }

  static func fill<T>(_ buffer: inout T, _ bytes: [UInt8]) {
    // Every TPM2B is { UINT16 size; BYTE buffer[N]; }.
    withUnsafeMutableBytes(of: &buffer) { raw in
      let count = min(bytes.count, raw.count - 2)
      raw.storeBytes(of: UInt16(count), toByteOffset: 0, as: UInt16.self)
      for index in 0..<count { raw[2 + index] = bytes[index] }
    }
  }

  static func padded(_ parameter: TPM2B_ECC_PARAMETER) -> [UInt8] {
    var copy = parameter
    let bytes = withUnsafeBytes(of: &copy.buffer) { Array($0.prefix(Int(parameter.size))) }
    return [UInt8](repeating: 0, count: max(0, 32 - bytes.count)) + bytes.suffix(32)
  }

  static func marshal(_ value: UnsafeMutablePointer<TPM2B_PUBLIC>) throws(TPMError) -> [UInt8] {
    var buffer = [UInt8](repeating: 0, count: MemoryLayout<TPM2B_PUBLIC>.size)
    var offset = 0
    let rc = frp_Tss2_MU_TPM2B_PUBLIC_Marshal(value, &buffer, buffer.count, &offset)
    guard rc == TSS2_RC_SUCCESS else { throw error("Tss2_MU_TPM2B_PUBLIC_Marshal", rc) }
    return Array(buffer.prefix(offset))
  }

  static func marshal(_ value: UnsafeMutablePointer<TPM2B_PRIVATE>) throws(TPMError) -> [UInt8] {
    var buffer = [UInt8](repeating: 0, count: MemoryLayout<TPM2B_PRIVATE>.size)
    var offset = 0
    let rc = frp_Tss2_MU_TPM2B_PRIVATE_Marshal(value, &buffer, buffer.count, &offset)
    guard rc == TSS2_RC_SUCCESS else { throw error("Tss2_MU_TPM2B_PRIVATE_Marshal", rc) }
    return Array(buffer.prefix(offset))
  }

  static func unmarshalPublic(_ bytes: [UInt8]) throws(TPMError) -> TPM2B_PUBLIC {
    try loadLibraries()
    var value = TPM2B_PUBLIC()
    var offset = 0
    let rc = frp_Tss2_MU_TPM2B_PUBLIC_Unmarshal(bytes, bytes.count, &offset, &value)
    guard rc == TSS2_RC_SUCCESS, offset == bytes.count else { throw .corrupt(reason: "the public area does not parse") }
    return value
  }

  static func unmarshalPrivate(_ bytes: [UInt8]) throws(TPMError) -> TPM2B_PRIVATE {
    try loadLibraries()
    var value = TPM2B_PRIVATE()
    var offset = 0
    let rc = frp_Tss2_MU_TPM2B_PRIVATE_Unmarshal(bytes, bytes.count, &offset, &value)
    guard rc == TSS2_RC_SUCCESS, offset == bytes.count else { throw .corrupt(reason: "the private area does not parse") }
    return value
  }

  static func decode(_ rc: TSS2_RC) -> String {
    guard frp_tss2_load(nil) != 0, let text = frp_Tss2_RC_Decode(rc) else { return "0x" + String(rc, radix: 16) }
    return String(cString: text) + " (0x" + String(rc, radix: 16) + ")"
  }

  /// Loads tpm2-tss (dlopen of its four libraries, once per process;
  /// Sources/CTSS2/include/CTSS2.h), or says which library is missing and its Debian package.
  public static func loadLibraries() throws(TPMError) {
    var reason: UnsafePointer<CChar>?
    guard frp_tss2_load(&reason) == 0 else { return }
    let soname = frp_tss2_failed_soname().map { String(cString: $0) } ?? "libtss2-esys.so.0"
    // The Debian 12 (bookworm) names were checked with apt-cache; the Debian 13 (trixie) t64
    // names could not be checked here (no trixie archive): libtss2-esys-3.0.2-0t64,
    // libtss2-tctildr0t64, libtss2-mu-4.0.1-0t64, libtss2-rc0t64.
    let (package, debian13Package) =
      switch soname {
      case "libtss2-tctildr.so.0": ("libtss2-tctildr0", "libtss2-tctildr0t64")
      case "libtss2-mu.so.0": ("libtss2-mu0", "libtss2-mu-4.0.1-0t64")
      case "libtss2-rc.so.0": ("libtss2-rc0", "libtss2-rc0t64")
      default: ("libtss2-esys-3.0.2-0", "libtss2-esys-3.0.2-0t64")
      }
    throw .libraryUnavailable(
      soname: soname, package: package, debian13Package: debian13Package, reason: reason.map { String(cString: $0) } ?? "unknown")
  }

  static func error(_ call: String, _ rc: TSS2_RC) -> TPMError {
    let base = frp_rc_base(rc)
    if base == frp_rc_auth_fail || base == frp_rc_bad_auth { return .authFailed }
    if base == frp_rc_lockout { return .lockout }
    if frp_rc_is_transient(rc) != 0 { return .busy(call: call, detail: decode(rc)) }
    if rc & frp_rc_layer_mask != 0, rc & 0xFFFF == 0x000A /* TSS2_BASE_RC_IO_ERROR */ || rc & 0xFFFF == 0x0015 /* NO_CONNECTION */ {
      return .unavailable(tcti: "", detail: decode(rc))
    }
    // Not started (TPM2_RC_INITIALIZE) or in failure mode (TPM2_RC_FAILURE): the first command
    // of a connection is the probe that used to be a GetRandom of its own.
    if base == 0x100 || base == 0x101 { return .unavailable(tcti: "", detail: decode(rc)) }
    return .failed(call: call, detail: decode(rc))
  }
}

/// Whether a deadline fired: set on the timer's thread, read on the operation's.
final class DeadlineFlag: Sendable {
  let value = Atomic<Bool>(false)
}

/// The TPM a socket TCTI connects to (`swtpm:host=H,port=P`, `mssim:…`; defaults localhost and
/// 2321): its command port P and control port P+1, and its address when the TCTI names one.
struct SocketPeer: Sendable {
  let ports: Set<UInt16>
  /// The host's address bytes when it is an IPv4 or IPv6 literal; nil matches any address.
  let address: [UInt8]?

  init?(tcti: String) {
    let name = tcti.prefix { $0 != ":" }
    guard name == "swtpm" || name == "mssim" else { return nil }
    var host = "localhost"
    var port = 2321
    for item in tcti.dropFirst(name.count + 1).split(separator: ",") {
      let pair = item.split(separator: "=", maxSplits: 1)
      guard pair.count == 2 else { continue }
      if pair[0] == "host" { host = String(pair[1]) }
      if pair[0] == "port", let value = Int(pair[1]), (1..<65535).contains(value) { port = value }
    }
    ports = [UInt16(port), UInt16(port + 1)]
    var v4 = in_addr()
    var v6 = in6_addr()
    if inet_pton(AF_INET, host, &v4) == 1 {
      address = withUnsafeBytes(of: v4) { Array($0) }
    } else if inet_pton(AF_INET6, host, &v6) == 1 {
      address = withUnsafeBytes(of: v6) { Array($0) }
    } else {
      address = nil
    }
  }

  /// Whether `fd` is a socket connected to this TPM.
  func matches(_ fd: Int32) -> Bool {
    var storage = sockaddr_storage()
    var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
    let named = withUnsafeMutablePointer(to: &storage) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(fd, $0, &length) == 0 }
    }
    guard named else { return false }
    let (port, bytes): (UInt16, [UInt8])
    switch Int32(storage.ss_family) {
    case AF_INET:
      let peer = withUnsafeBytes(of: storage) { $0.load(as: sockaddr_in.self) }
      (port, bytes) = (UInt16(bigEndian: peer.sin_port), withUnsafeBytes(of: peer.sin_addr) { Array($0) })
    case AF_INET6:
      let peer = withUnsafeBytes(of: storage) { $0.load(as: sockaddr_in6.self) }
      (port, bytes) = (UInt16(bigEndian: peer.sin6_port), withUnsafeBytes(of: peer.sin6_addr) { Array($0) })
    default: return false
    }
    return ports.contains(port) && (address == nil || address == bytes)
  }
}
