// swift-format-ignore-file: NoBlockComments

// (Inline /* TPM2_… */ comments name the TPM constants where their numbers are used.)
import CTSS2
import Crypto
import TPMProtocol

@_exported import struct TPMProtocol.TPMKeyBlob

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
  /// the environment (issue 20).
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

/// One connection to a TPM through ESAPI: the TCTI and the ESYS context, finalized on deinit.
/// The only type that touches tpm2-tss pointers. Not shareable between threads (ESAPI is not
/// thread-safe); each signing opens its own.
public final class TPMContext {
  public let tcti: String
  private var tctiContext: OpaquePointer?
  var esys: OpaquePointer?

  /// Opens the TPM at `tcti` for `body`, retrying the whole of it — a fresh connection each
  /// time, every transient object flushed in between — while the TPM answers with a transient
  /// warning (`TPMError.busy`: out of object memory while other clients hold the slots, RETRY,
  /// YIELDED, TESTING), with a jittered exponential backoff for at most `budget` seconds.
  /// Without a resource manager a TPM has 3 object slots: 20 parallel bindings on swtpm ran into
  /// 0x902 in 14 of 20 before this (issue 20).
  public static func session<T>(tcti: String, budget: Double = 10, _ body: (TPMContext) throws(TPMError) -> T) throws(TPMError) -> T {
    var start = timespec()
    clock_gettime(CLOCK_MONOTONIC, &start)
    var pause = 0.01
    while true {
      do {
        return try body(TPMContext(tcti: tcti))
      } catch .busy(let call, let detail) {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let spent = Double(now.tv_sec - start.tv_sec) + Double(now.tv_nsec - start.tv_nsec) / 1e9
        guard spent + pause < budget else {
          throw .busy(call: call, detail: detail + "; still busy after \(Int(budget)) s of retries")
        }
        usleep(useconds_t(pause * Double.random(in: 0.5...1.5) * 1e6))
        pause = min(pause * 2, 0.5)
      }
    }
  }

  /// Connects to the TPM at `tcti` and checks that it answers (TPM2_GetRandom of 1 byte).
  public init(tcti: String) throws(TPMError) {
    self.tcti = tcti
    // tpm2-tss logs every TPM error response to stderr; ours are mapped to TPMError and
    // reported once, so its log stays off unless the user asks for it (TSS2_LOG=all+debug).
    setenv("TSS2_LOG", "all+NONE", 0)
    try Self.loadLibraries()
    var loaded: OpaquePointer?
    var rc = frp_Tss2_TctiLdr_Initialize(tcti, &loaded)
    guard rc == TSS2_RC_SUCCESS, let loaded else { throw .unavailable(tcti: tcti, detail: Self.decode(rc)) }
    tctiContext = loaded
    var context: OpaquePointer?
    rc = frp_Esys_Initialize(&context, loaded, nil)
    guard rc == TSS2_RC_SUCCESS, let context else {
      frp_Tss2_TctiLdr_Finalize(&tctiContext)
      throw .unavailable(tcti: tcti, detail: Self.decode(rc))
    }
    esys = context
    var random: UnsafeMutablePointer<TPM2B_DIGEST>?
    rc = frp_Esys_GetRandom(context, ESYS_TR(ESYS_TR_NONE), ESYS_TR(ESYS_TR_NONE), ESYS_TR(ESYS_TR_NONE), 1, &random)
    frp_Esys_Free(random)
    guard rc == TSS2_RC_SUCCESS else {
      if frp_rc_is_transient(rc) != 0 { throw .busy(call: "Esys_GetRandom", detail: Self.decode(rc)) }
      throw .unavailable(tcti: tcti, detail: Self.decode(rc))
    }
  }

  deinit {
    if esys != nil { frp_Esys_Finalize(&esys) }
    if tctiContext != nil { frp_Tss2_TctiLdr_Finalize(&tctiContext) }
  }

  // MARK: - The storage primary key

  /// The parent of our keys: the persistent SRK at 0x81000001 when the TPM has one that is
  /// trustworthy (`trustworthySRK`), else the ECC SRK re-created from the standard template (the
  /// same key every time, from the owner hierarchy's seed, noDA). `required` names the parent an
  /// existing key was made under: that one or none. Returns its handle, which it is, and
  /// whether it is noDA.
  private func storagePrimary(required: TPMKeyBlob.Parent?) throws(TPMError) -> (ESYS_TR, TPMKeyBlob.Parent, noDA: Bool) {
    if required != .templateSRK {
      var handle = ESYS_TR(ESYS_TR_NONE)
      let rc = frp_Esys_TR_FromTPMPublic(
        esys, frp_srk_persistent_handle, ESYS_TR(ESYS_TR_NONE), ESYS_TR(ESYS_TR_NONE), ESYS_TR(ESYS_TR_NONE), &handle)
      if rc == TSS2_RC_SUCCESS {
        let area = try? readPublic(handle)
        // A key made earlier under the persistent SRK loads only there, whatever it is.
        if required == .persistentSRK { return (handle, .persistentSRK, area?.has(.noDA) ?? false) }
        if let area, Self.trustworthySRK(area) { return (handle, .persistentSRK, true) }
        _ = frp_Esys_TR_Close(esys, &handle)
      }
    }
    var template = TPM2B_PUBLIC()
    frp_srk_template(&template)
    var sensitive = TPM2B_SENSITIVE_CREATE()
    var outsideInfo = TPM2B_DATA()
    var pcrs = TPML_PCR_SELECTION()
    var handle = ESYS_TR(ESYS_TR_NONE)
    let rc = frp_Esys_CreatePrimary(
      esys, ESYS_TR(ESYS_TR_RH_OWNER), ESYS_TR(ESYS_TR_PASSWORD), ESYS_TR(ESYS_TR_NONE), ESYS_TR(ESYS_TR_NONE),
      &sensitive, &template, &outsideInfo, &pcrs, &handle, nil, nil, nil, nil)
    guard rc == TSS2_RC_SUCCESS else { throw Self.error("Esys_CreatePrimary", rc) }
    return (handle, .templateSRK, true)
  }

  /// Whether a persistent SRK may parent new keys: a storage key (restricted decrypt, not a
  /// signing key) generated inside this TPM and never to leave it (fixedTPM, fixedParent,
  /// sensitiveDataOrigin: so not an imported key whose private part someone knows), and noDA —
  /// loading a child authorizes its parent, so a parent without noDA puts every key under it in
  /// the TPM's dictionary-attack lockout, and another user's wrong PINs would block keys that
  /// have none (issue 29). `tpm2_createprimary`'s default attributes lack noDA: such an SRK is
  /// passed over for the template SRK.
  static func trustworthySRK(_ area: TPMPublic) -> Bool {
    area.has(.restricted) && area.has(.decrypt) && !area.has(.sign) && area.has(.fixedTPM) && area.has(.fixedParent)
      && area.has(.sensitiveDataOrigin) && area.has(.noDA)
  }

  /// The public area of a loaded or persistent object (TPM2_ReadPublic).
  func readPublic(_ handle: ESYS_TR) throws(TPMError) -> TPMPublic {
    var outPublic: UnsafeMutablePointer<TPM2B_PUBLIC>?
    let rc = frp_Esys_ReadPublic(esys, handle, ESYS_TR(ESYS_TR_NONE), ESYS_TR(ESYS_TR_NONE), ESYS_TR(ESYS_TR_NONE), &outPublic, nil, nil)
    defer { frp_Esys_Free(outPublic) }
    guard rc == TSS2_RC_SUCCESS, let outPublic else { throw Self.error("Esys_ReadPublic", rc) }
    do { return try TPMPublic(tpm2b: try Self.marshal(outPublic)) } catch { throw .corrupt(reason: "\(error)") }
  }

  private func release(_ handle: ESYS_TR, _ parent: TPMKeyBlob.Parent) {
    var handle = handle
    if parent == .templateSRK { _ = frp_Esys_FlushContext(esys, handle) } else { _ = frp_Esys_TR_Close(esys, &handle) }
  }

  func withParent<T>(_ kind: TPMKeyBlob.Parent?, _ body: (ESYS_TR) throws(TPMError) -> T) throws(TPMError) -> (T, TPMKeyBlob.Parent) {
    let (handle, parent, noDA) = try storagePrimary(required: kind)
    if let kind, kind != parent {
      release(handle, parent)
      throw .foreignKey(detail: "the key was made under the \(kind.rawValue) storage key, which this TPM does not have")
    }
    defer { release(handle, parent) }
    do {
      return (try body(handle), parent)
    } catch .lockout where !noDA {
      // Said as it is: the lockout reached this key through its parent, whatever its own PIN.
      throw .lockoutThroughParent
    }
  }

  // MARK: - Keys

  /// Creates a P-256 signing key inside the TPM under the storage primary key; `authValue`
  /// (a PIN's bytes, at most 32 after hashing) protects its use. A key without an authValue is
  /// noDA: the TPM's dictionary-attack lockout, which other users' wrong PINs or unclean
  /// shutdowns can trigger, never blocks it. Returns the wrapped blobs.
  public func createSigningKey(authValue: [UInt8] = []) throws(TPMError) -> TPMKeyBlob {
    try createKey(authValue: authValue) { frp_signing_template($0, authValue.isEmpty ? 1 : 0) }
  }

  /// A key from `template` under the storage primary key, protected by `authValue`.
  func createKey(authValue: [UInt8], template fillTemplate: (UnsafeMutablePointer<TPM2B_PUBLIC>) -> Void) throws(TPMError) -> TPMKeyBlob {
    let auth = Self.authDigest(authValue)
    let ((publicBytes, privateBytes), parent) = try withParent(nil) { (parent) throws(TPMError) in
      var template = TPM2B_PUBLIC()
      fillTemplate(&template)
      var sensitive = TPM2B_SENSITIVE_CREATE()
      Self.fill(&sensitive.sensitive.userAuth, auth)
      var outsideInfo = TPM2B_DATA()
      var pcrs = TPML_PCR_SELECTION()
      var outPrivate: UnsafeMutablePointer<TPM2B_PRIVATE>?
      var outPublic: UnsafeMutablePointer<TPM2B_PUBLIC>?
      let rc = frp_Esys_Create(
        esys, parent, ESYS_TR(ESYS_TR_PASSWORD), ESYS_TR(ESYS_TR_NONE), ESYS_TR(ESYS_TR_NONE),
        &sensitive, &template, &outsideInfo, &pcrs, &outPrivate, &outPublic, nil, nil, nil)
      defer {
        frp_Esys_Free(outPrivate)
        frp_Esys_Free(outPublic)
      }
      guard rc == TSS2_RC_SUCCESS, let outPrivate, let outPublic else { throw Self.error("Esys_Create", rc) }
      return (try Self.marshal(outPublic), try Self.marshal(outPrivate))
    }
    return TPMKeyBlob(parent: parent, publicArea: publicBytes, privateArea: privateBytes)
  }

  /// Signs the SHA-256 of `message` with the key in `blob` (loaded under its parent, flushed
  /// afterwards). Returns the raw 64-byte R‖S, the form ES256 uses.
  public func sign<Message: Sequence>(_ message: Message, with blob: TPMKeyBlob, authValue: [UInt8] = []) throws(TPMError) -> [UInt8]
  where Message.Element == UInt8 {
    let digest = Array(SHA256.hash(data: Array(message)))
    let (signature, _) = try withParent(blob.parent) { (parent) throws(TPMError) in
      let key = try load(blob, parent: parent)
      defer { _ = frp_Esys_FlushContext(esys, key) }
      var auth = TPM2B_AUTH()
      Self.fill(&auth, Self.authDigest(authValue))
      var rc = frp_Esys_TR_SetAuth(esys, key, &auth)
      guard rc == TSS2_RC_SUCCESS else { throw Self.error("Esys_TR_SetAuth", rc) }
      var toSign = TPM2B_DIGEST()
      Self.fill(&toSign, digest)
      var scheme = TPMT_SIG_SCHEME()
      frp_ecdsa_scheme(&scheme)
      var ticket = TPMT_TK_HASHCHECK()
      frp_null_ticket(&ticket)
      var result: UnsafeMutablePointer<TPMT_SIGNATURE>?
      rc = frp_Esys_Sign(
        esys, key, ESYS_TR(ESYS_TR_PASSWORD), ESYS_TR(ESYS_TR_NONE), ESYS_TR(ESYS_TR_NONE), &toSign, &scheme, &ticket, &result)
      defer { frp_Esys_Free(result) }
      guard rc == TSS2_RC_SUCCESS, let result else { throw Self.error("Esys_Sign", rc) }
      let ecdsa = result.pointee.signature.ecdsa
      return Self.padded(ecdsa.signatureR) + Self.padded(ecdsa.signatureS)
    }
    return signature
  }

  /// Loads `blob` under this TPM's storage key: proves the key belongs to this TPM.
  public func verifyLoads(_ blob: TPMKeyBlob) throws(TPMError) {
    _ = try withParent(blob.parent) { (parent) throws(TPMError) in
      let key = try load(blob, parent: parent)
      _ = frp_Esys_FlushContext(esys, key)
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
    let (handle, parent, _) = try storagePrimary(required: nil)
    defer { release(handle, parent) }
    guard parent == .templateSRK else { return }
    var persistent = ESYS_TR(ESYS_TR_NONE)
    let rc = frp_Esys_EvictControl(
      esys, ESYS_TR(ESYS_TR_RH_OWNER), handle, ESYS_TR(ESYS_TR_PASSWORD), ESYS_TR(ESYS_TR_NONE), ESYS_TR(ESYS_TR_NONE),
      frp_srk_persistent_handle, &persistent)
    guard rc == TSS2_RC_SUCCESS else { throw Self.error("Esys_EvictControl", rc) }
    _ = frp_Esys_TR_Close(esys, &persistent)
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
    return .failed(call: call, detail: decode(rc))
  }
}
