import TPMProtocol

/// Why a TPM operation failed. The CLI maps each code to a message and an exit code.
///
/// A struct, not an enum, so that a release can add a failure without breaking an embedder's
/// `switch`: new codes may be added in any release. Match on ``code`` (`error.code ==
/// .lockout`, or `switch error.code` with a `default:`); the values the failure carries are the
/// optional properties (`nil` where a code has none), ``description`` is the message.
public struct TPMError: Error, Sendable, Hashable, CustomStringConvertible {
  /// What kind of failure it is. New codes may be added in any release: switch with a
  /// `default:`.
  public struct Code: Hashable, Sendable, CustomStringConvertible {
    private enum Backing: Hashable, Sendable {
      case unavailable, foreignKey, authFailed, lockout, lockoutThroughParent, busy, tpmChanged, attestationKey, corrupt
      case failed, timedOut, libraryUnavailable
    }

    private var backing: Backing
    private init(_ backing: Backing) { self.backing = backing }

    /// No TPM answers at ``tcti`` (no device, swtpm not running, no TCTI library): the TPM is not
    /// usable here. ``detail`` is tpm2-tss's decoded response code.
    public static let unavailable = Code(.unavailable)
    /// The key blob does not belong to this TPM (its parent, the storage key, is another TPM's):
    /// the state directory came from another machine, or the TPM was cleared.
    public static let foreignKey = Code(.foreignKey)
    /// The authorization value (the PIN) was wrong; the TPM counted a failure.
    public static let authFailed = Code(.authFailed)
    /// The TPM's dictionary-attack protection is in lockout: no key that counts failures can be
    /// used until its recovery time passes (or the owner resets it with the lockout auth).
    public static let lockout = Code(.lockout)
    /// The lockout blocked a key through its parent: a persistent SRK without noDA (made by
    /// `tpm2_createprimary` with its default attributes) parents the key, and loading the key
    /// authorizes the parent, so the key is blocked whatever its own authorization.
    public static let lockoutThroughParent = Code(.lockoutThroughParent)
    /// The TPM answered with a transient warning (out of object memory, RETRY, YIELDED,
    /// TESTING): `TPMContext.session` retries; past its budget this is the failure.
    public static let busy = Code(.busy)
    /// The TPM was cleared or replaced since the attestation key was made (its EK changed, or
    /// keys made in it no longer load): what was bound or attested in it is gone.
    public static let tpmChanged = Code(.tpmChanged)
    /// The kept attestation key cannot be used: none made yet, its file damaged, or the state
    /// directory refused.
    public static let attestationKey = Code(.attestationKey)
    /// A stored blob does not parse or is not a P-256 signing key.
    public static let corrupt = Code(.corrupt)
    /// Any other TPM or tpm2-tss failure: the ESAPI call and the decoded response code.
    public static let failed = Code(.failed)
    /// The TPM sent no response within ``seconds`` (`TPMContext.responseTimeout`): it stopped
    /// answering. The connection is closed; the next operation opens a new one.
    public static let timedOut = Code(.timedOut)
    /// A tpm2-tss library cannot be loaded (they are opened with dlopen on first use, not
    /// linked): ``soname`` is the library that failed, ``package`` the Debian package that ships
    /// it (``debian13Package`` on Debian 13), ``reason`` dlerror's text.
    public static let libraryUnavailable = Code(.libraryUnavailable)

    public var description: String { String(describing: backing) }
  }

  /// What kind of failure it is.
  public let code: Code
  /// The TCTI at which no TPM answers (``Code/unavailable``; empty when the caller did not
  /// name it).
  public let tcti: String?
  /// The ESAPI call that failed (``Code/busy``, ``Code/failed``).
  public let call: String?
  /// What tpm2-tss or the TPM said (``Code/unavailable``, ``Code/foreignKey``, ``Code/busy``,
  /// ``Code/tpmChanged``, ``Code/attestationKey``, ``Code/failed``).
  public let detail: String?
  /// Why a blob is corrupt (``Code/corrupt``), or dlerror's text (``Code/libraryUnavailable``).
  public let reason: String?
  /// How long the TPM was waited for (``Code/timedOut``).
  public let seconds: Double?
  /// The library that cannot be loaded (``Code/libraryUnavailable``).
  public let soname: String?
  /// The Debian package that ships ``soname`` (``Code/libraryUnavailable``).
  public let `package`: String?
  /// The Debian 13 package that ships ``soname`` (``Code/libraryUnavailable``).
  public let debian13Package: String?
  /// One line saying what is wrong.
  public let description: String

  private init(
    _ code: Code, tcti: String? = nil, call: String? = nil, detail: String? = nil, reason: String? = nil, seconds: Double? = nil,
    soname: String? = nil, package: String? = nil, debian13Package: String? = nil, _ description: String
  ) {
    self.code = code
    self.tcti = tcti
    self.call = call
    self.detail = detail
    self.reason = reason
    self.seconds = seconds
    self.soname = soname
    self.package = package
    self.debian13Package = debian13Package
    self.description = description
  }

  /// No TPM answers at `tcti` (no device, swtpm not running, no TCTI library): the TPM is not
  /// usable here. `detail` is tpm2-tss's decoded response code.
  public static func unavailable(tcti: String, detail: String) -> Self {
    Self(.unavailable, tcti: tcti, detail: detail, "no usable TPM at \(tcti) (\(detail))")
  }

  /// The key blob does not belong to this TPM (its parent, the storage key, is another TPM's):
  /// the state directory came from another machine, or the TPM was cleared.
  public static func foreignKey(detail: String) -> Self {
    Self(.foreignKey, detail: detail, "the key was not made by this TPM (\(detail))")
  }

  /// The authorization value (the PIN) was wrong; the TPM counted a failure.
  public static var authFailed: Self { Self(.authFailed, "the TPM refused the key's authorization value (wrong PIN)") }

  /// The TPM's dictionary-attack protection is in lockout: no key that counts failures can be
  /// used until its recovery time passes (or the owner resets it with the lockout auth).
  public static var lockout: Self {
    Self(
      .lockout,
      "the TPM is in dictionary-attack lockout (failed authorizations on this TPM by any user, or unclean shutdowns, reached its maxTries)"
    )
  }

  /// The lockout blocked a key through its parent: a persistent SRK without noDA (made by
  /// `tpm2_createprimary` with its default attributes) parents the key, and loading the key
  /// authorizes the parent, so the key is blocked whatever its own authorization.
  public static var lockoutThroughParent: Self {
    Self(
      .lockoutThroughParent,
      "the TPM is in dictionary-attack lockout, and this key is under the persistent SRK at 0x81000001, which is not noDA: the lockout blocks every key under it, with a PIN or without"
    )
  }

  /// The TPM answered with a transient warning (out of object memory, RETRY, YIELDED,
  /// TESTING): `TPMContext.session` retries; past its budget this is the failure.
  public static func busy(call: String, detail: String) -> Self {
    Self(.busy, call: call, detail: detail, "the TPM was busy for \(call): \(detail)")
  }

  /// The TPM was cleared or replaced since the attestation key was made (its EK changed, or
  /// keys made in it no longer load): what was bound or attested in it is gone.
  public static func tpmChanged(detail: String) -> Self { Self(.tpmChanged, detail: detail, detail) }

  /// The kept attestation key cannot be used: none made yet, its file damaged, or the state
  /// directory refused.
  public static func attestationKey(detail: String) -> Self { Self(.attestationKey, detail: detail, detail) }

  /// A stored blob does not parse or is not a P-256 signing key.
  public static func corrupt(reason: String) -> Self {
    Self(.corrupt, reason: reason, "the TPM key blob is corrupt (\(reason))")
  }

  /// Any other TPM or tpm2-tss failure: the ESAPI call and the decoded response code.
  public static func failed(call: String, detail: String) -> Self {
    Self(.failed, call: call, detail: detail, "\(call) failed: \(detail)")
  }

  /// The TPM sent no response within `seconds` (`TPMContext.responseTimeout`): it stopped
  /// answering. The connection is closed; the next operation opens a new one.
  public static func timedOut(seconds: Double) -> Self {
    Self(
      .timedOut, seconds: seconds,
      "the TPM did not answer within \(seconds == seconds.rounded() ? String(Int(seconds)) : String(seconds)) s (it stopped answering?)")
  }

  /// A tpm2-tss library cannot be loaded (they are opened with dlopen on first use, not
  /// linked): `soname` is the library that failed, `package` the Debian package that ships it
  /// (`debian13Package` on Debian 13), `reason` dlerror's text.
  public static func libraryUnavailable(soname: String, package: String, debian13Package: String, reason: String) -> Self {
    Self(
      .libraryUnavailable, reason: reason, soname: soname, package: package, debian13Package: debian13Package,
      "\(soname) cannot be loaded (\(reason)); install Debian package \(package)"
        + (debian13Package == package ? "" : " (\(debian13Package) on Debian 13)"))
  }
}

extension TPMKeyBlob {
  /// A key file parsed by TPMProtocol, its refusal as this module's `TPMError.corrupt`.
  public static func parsed(_ bytes: [UInt8]) throws(TPMError) -> TPMKeyBlob {
    do { return try TPMKeyBlob(bytes: bytes) } catch { throw .corrupt(reason: error.description) }
  }
}
