import TPMProtocol

/// Why a TPM operation failed. The CLI maps each case to a message and an exit code.
public enum TPMError: Error, Sendable, Equatable, CustomStringConvertible {
  /// No TPM answers at `tcti` (no device, swtpm not running, no TCTI library): the TPM is not
  /// usable here. `detail` is tpm2-tss's decoded response code.
  case unavailable(tcti: String, detail: String)
  /// The key blob does not belong to this TPM (its parent, the storage key, is another TPM's):
  /// the state directory came from another machine, or the TPM was cleared.
  case foreignKey(detail: String)
  /// The authorization value (the PIN) was wrong; the TPM counted a failure.
  case authFailed
  /// The TPM's dictionary-attack protection is in lockout: no key that counts failures can be
  /// used until its recovery time passes (or the owner resets it with the lockout auth).
  case lockout
  /// The lockout blocked a key through its parent: a persistent SRK without noDA (made by
  /// `tpm2_createprimary` with its default attributes) parents the key, and loading the key
  /// authorizes the parent, so the key is blocked whatever its own authorization.
  case lockoutThroughParent
  /// The TPM answered with a transient warning (out of object memory, RETRY, YIELDED,
  /// TESTING): `TPMContext.session` retries; past its budget this is the failure.
  case busy(call: String, detail: String)
  /// The TPM was cleared or replaced since the attestation key was made (its EK changed, or
  /// keys made in it no longer load): what was bound or attested in it is gone.
  case tpmChanged(detail: String)
  /// The kept attestation key cannot be used: none made yet, its file damaged, or the state
  /// directory refused.
  case attestationKey(detail: String)
  /// A stored blob does not parse or is not a P-256 signing key.
  case corrupt(reason: String)
  /// Any other TPM or tpm2-tss failure: the ESAPI call and the decoded response code.
  case failed(call: String, detail: String)
  /// The TPM sent no response within `seconds` (`TPMContext.responseTimeout`): it stopped
  /// answering. The connection is closed; the next operation opens a new one.
  case timedOut(seconds: Double)
  /// A tpm2-tss library cannot be loaded (they are opened with dlopen on first use, not
  /// linked): `soname` is the library that failed, `package` the Debian package that ships it
  /// (`debian13Package` on Debian 13), `reason` dlerror's text.
  case libraryUnavailable(soname: String, package: String, debian13Package: String, reason: String)

  public var description: String {
    switch self {
    case .unavailable(let tcti, let detail): "no usable TPM at \(tcti) (\(detail))"
    case .foreignKey(let detail): "the key was not made by this TPM (\(detail))"
    case .authFailed: "the TPM refused the key's authorization value (wrong PIN)"
    case .lockout:
      "the TPM is in dictionary-attack lockout (failed authorizations on this TPM by any user, or unclean shutdowns, reached its maxTries)"
    case .lockoutThroughParent:
      "the TPM is in dictionary-attack lockout, and this key is under the persistent SRK at 0x81000001, which is not noDA: the lockout blocks every key under it, with a PIN or without"
    case .busy(let call, let detail): "the TPM was busy for \(call): \(detail)"
    case .tpmChanged(let detail), .attestationKey(let detail): detail
    case .corrupt(let reason): "the TPM key blob is corrupt (\(reason))"
    case .failed(let call, let detail): "\(call) failed: \(detail)"
    case .timedOut(let seconds):
      "the TPM did not answer within \(seconds == seconds.rounded() ? String(Int(seconds)) : String(seconds)) s (it stopped answering?)"
    case .libraryUnavailable(let soname, let package, let debian13Package, let reason):
      "\(soname) cannot be loaded (\(reason)); install Debian package \(package)"
        + (debian13Package == package ? "" : " (\(debian13Package) on Debian 13)")
    }
  }
}

extension TPMKeyBlob {
  /// A key file parsed by TPMProtocol, its refusal as this module's `TPMError.corrupt`.
  public static func parsed(_ bytes: [UInt8]) throws(TPMError) -> TPMKeyBlob {
    do { return try TPMKeyBlob(bytes: bytes) } catch { throw .corrupt(reason: error.description) }
  }
}
