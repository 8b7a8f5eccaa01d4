import Crypto
import ProfileJSON
import TPMProtocol

/// What a verifier requires of a boot quote.
public struct BootPolicy: Sendable, Equatable {
  /// Refuse a boot whose replayed PCR 7 shows Secure Boot off — and, since only the event log can
  /// show it, a quote without a log.
  public var requireSecureBoot: Bool
  /// PCR values enrolled for this device earlier (trust on first use), compared whenever they are
  /// given, with an event log or without one: a log that replays shows what this boot measured,
  /// not that it is the boot enrolled.
  public var enrolledPCRs: [Int: [UInt8]]?

  public init(requireSecureBoot: Bool = true, enrolledPCRs: [Int: [UInt8]]? = nil) {
    self.requireSecureBoot = requireSecureBoot
    self.enrolledPCRs = enrolledPCRs
  }
}

/// What a verified boot quote says, and how much that is.
public struct BootState: Sendable, Equatable {
  public enum Method: String, Sendable {
    /// The event log replayed to the quoted PCRs; Secure Boot and the boot chain were read from it
    /// (`equalsEnrolled` says whether they were also compared with enrolled values).
    case eventLog
    /// No log: the quoted PCRs equal the ones enrolled for this device.
    case enrolledPCRs
    /// No log and nothing enrolled: only that this TPM quoted these values now.
    case quoteOnly
  }

  public var method: Method
  /// Secure Boot as PCR 7 measured it; nil without a log (unknown, not off).
  public var secureBoot: Bool?
  /// PCR 4's EV_EFI_BOOT_SERVICES_APPLICATION digests (SHA-256), in order.
  public var bootApplications: [[UInt8]]
  /// False when shim measured MokSBState = 1 into PCR 7 (its verification of GRUB and the
  /// kernel switched off); true when the log shows no such thing; nil without a log.
  public var shimValidation: Bool? = nil
  /// The firmware measured "DMA Protection Disabled" into PCR 7; nil without a log.
  public var dmaProtectionDisabled: Bool? = nil
  /// The quoted values.
  public var pcrs: [Int: [UInt8]]
  /// The quoted values were compared with the ones enrolled for this device, and are them
  /// (always so for `enrolledPCRs`).
  public var equalsEnrolled = false

  /// One sentence: what was proven and what was not.
  public var note: String {
    switch method {
    case .eventLog:
      "The TPM quoted PCRs 0-7 and 14 with the activated attestation key over this nonce"
        + (equalsEnrolled ? ", they equal the values enrolled for this device (trust on first use)," : "")
        + " and the firmware event log replays to them: "
        + "Secure Boot was \(secureBoot == true ? "on" : "off") as the firmware measured it into PCR 7 and the boot applications are PCR 4's; "
        + "this shows what was measured, not that the measured code is good."
    case .enrolledPCRs:
      "The TPM quoted PCRs 0-7 and 14 with the activated attestation key over this nonce and they equal the values enrolled for this device "
        + "(trust on first use): the boot is the enrolled one; without the event log nothing about Secure Boot was read."
    case .quoteOnly:
      "The TPM quoted PCRs 0-7 and 14 with the activated attestation key over this nonce, but there was no event log and no enrolled "
        + "values: nothing about the boot was interpreted."
    }
  }

  public var json: JSON {
    [
      "method": .string(method.rawValue), "secureBoot": secureBoot.map(JSON.bool) ?? .null,
      "bootApplications": .array(bootApplications.map { .string(Hex.encode($0)) }),
      "shimValidation": shimValidation.map(JSON.bool) ?? .null,
      "dmaProtectionDisabled": dmaProtectionDisabled.map(JSON.bool) ?? .null,
      "pcrs": .object(JSONObject(pcrs.sorted { $0.key < $1.key }.map { (key: String($0.key), value: .string(Hex.encode($0.value))) })),
      "note": .string(note),
    ]
  }
}

/// Why a boot quote was refused: the check (the same names as am/fr-tpm-attestation.js's
/// `refusedCheck`, so both verifiers can be compared case by case) and the reason.
public struct BootRefusal: Error, Sendable, Equatable, CustomStringConvertible {
  public enum Check: String, Sendable {
    case malformed, signature, notQuote, nonce, selection, pcrDigest, eventLog, replay, debugMode, separators, bootState
    case secureBootOff, shimValidationOff, enrolledPcrs, noEventLog, cannotQuote
  }

  public var check: Check
  public var reason: String

  public init(_ check: Check, _ reason: String) {
    self.check = check
    self.reason = reason
  }

  public var description: String { reason }
}

extension AttestationVerifier {
  /// Checks a boot quote against the nonce sent and the activated attestation key, in the order
  /// the AM script checks it: the document; the quote signed by the activated AK; a TPM quote
  /// over `nonce` of exactly the SHA-256 bank's `AttestationProtocol.bootPCRs`, whose digest the
  /// sent values hash to; then, with an event log, its replay must equal every quoted PCR and
  /// only the replayed events are read (Secure Boot from PCR 7, applications from PCR 4). The
  /// values are compared with the enrolled ones when there are any, before the log is read, with
  /// a log or without one.
  public static func verifyBoot(quote json: JSON, nonce: [UInt8], attestationKey: TPMPublic, policy: BootPolicy = BootPolicy())
    throws(BootRefusal) -> BootState
  {
    let quote: BootQuote
    do { quote = try BootQuote(json: json) } catch {
      if error.code == .clientCannotAttest { throw BootRefusal(.cannotQuote, "the device cannot quote: \(error.reason ?? "")") }
      throw BootRefusal(.malformed, error.description)
    }
    let presented: TPMPublic
    do { presented = try TPMPublic(tpm2b: quote.attestationKey) } catch { throw BootRefusal(.malformed, error.description) }
    guard presented.name == attestationKey.name else {
      throw BootRefusal(.signature, "the quote was made by an attestation key that was not activated with this TPM's endorsement key")
    }
    guard quote.signature.count == 64, let signature = try? P256.Signing.ECDSASignature(rawRepresentation: quote.signature),
      let key = try? attestationKey.signingKey(), key.isValidSignature(signature, for: SHA256.hash(data: quote.attestation))
    else { throw BootRefusal(.signature, "the quote's signature does not verify with the attestation key") }
    let attest: TPMAttest
    do { attest = try TPMAttest(quote.attestation) } catch { throw BootRefusal(.notQuote, "the signed structure is not a TPM quote") }
    guard case .quote(let selection, let digest) = attest.attested else {
      throw BootRefusal(.notQuote, "the signed structure is not a TPM quote")
    }
    guard attest.extraData == nonce else { throw BootRefusal(.nonce, "the quote is for another nonce (replayed?)") }
    guard selection.count == 1, selection[0].hash == AttestationProtocol.bootBank, selection[0].indices == AttestationProtocol.bootPCRs
    else {
      throw BootRefusal(.selection, "the quote is not of the SHA-256 bank's PCRs 0-7 and 14 (a SHA-1 bank, or other PCRs)")
    }
    guard PCRComposite.digest(of: quote.pcrs, selection: AttestationProtocol.bootPCRs) == digest else {
      throw BootRefusal(.pcrDigest, "the PCR values sent are not the ones the TPM quoted")
    }
    if let enrolled = policy.enrolledPCRs, let pcr = AttestationProtocol.bootPCRs.first(where: { enrolled[$0] != quote.pcrs[$0] }) {
      throw BootRefusal(.enrolledPcrs, "PCR \(pcr) is not the value enrolled for this device: the boot changed since enrolment")
    }
    let equalsEnrolled = policy.enrolledPCRs != nil
    switch quote.eventLog {
    case .log(let bytes):
      let replayed: ReplayedLog
      do { replayed = try EventLog(parsing: bytes).verify(pcrs: quote.pcrs, bank: .sha256) } catch {
        if error.code == .replayMismatch { throw BootRefusal(.replay, error.description) }
        throw BootRefusal(.eventLog, error.description)
      }
      let state: SecureBootState
      do { state = try SecureBootState(replayed) } catch {
        switch error.code {
        case .debugMode: throw BootRefusal(.debugMode, error.description)
        case .missingSeparator, .duplicateSeparator, .separatorSignalsError: throw BootRefusal(.separators, error.description)
        default: throw BootRefusal(.bootState, error.description)
        }
      }
      if policy.requireSecureBoot, !state.enabled { throw BootRefusal(.secureBootOff, "the firmware event log says Secure Boot is off") }
      if policy.requireSecureBoot, !state.shimValidation {
        throw BootRefusal(
          .shimValidationOff,
          "shim measured MokSBState = 1 into PCR 7: its verification was switched off (mokutil --disable-validation), so GRUB and the kernel were not verified"
        )
      }
      // "eventLog" with enrolled values too: Secure Boot and the applications were read from the log.
      return BootState(
        method: .eventLog, secureBoot: state.enabled, bootApplications: state.bootApplications,
        shimValidation: state.shimValidation, dmaProtectionDisabled: state.dmaProtectionDisabled, pcrs: quote.pcrs,
        equalsEnrolled: equalsEnrolled)
    case .missing(let why):
      if policy.requireSecureBoot {
        throw BootRefusal(
          .noEventLog, "Secure Boot cannot be read without the firmware event log (the device: \(PrintableText.line(why, limit: 200)))")
      }
      return BootState(
        method: equalsEnrolled ? .enrolledPCRs : .quoteOnly, secureBoot: nil, bootApplications: [], pcrs: quote.pcrs,
        equalsEnrolled: equalsEnrolled)
    }
  }
}
