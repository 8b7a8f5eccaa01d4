import ProfileJSON

/// The third round of TPM attestation: the boot state, quoted by the TPM. After the
/// credential activation the verifier sends a nonce in a HiddenValueCallback `frTpmBootQuote`;
/// the device answers in the same callback with TPM2_Quote of its boot PCRs by the activated
/// attestation key over that nonce, the PCR values, and the firmware event log when it can read
/// it (docs/tpm.md "Boot state"). Offline: `fr-profile attest quote` and `attest verify --boot`.
///
///     quote request  (verifier → client)  {"v":1,"nonce":32 bytes}
///     quote          (client → verifier)  {"v":1,"attest":TPMS_ATTEST,"signature":R‖S,"akPublic":TPM2B_PUBLIC,
///                                          "pcrs":{"0":…,"7":…,"14":…},
///                                          "eventLog":binary_bios_measurements | "eventLogMissing":"why"}
///
/// A client that cannot quote answers {"v":1,"error":"…"}.
extension AttestationProtocol {
  /// The HiddenValueCallback id of the boot-quote round.
  public static let quoteCallbackId = "frTpmBootQuote"
  /// The PCRs quoted, of the SHA-256 bank: the firmware's (0–7: code, configuration, option
  /// ROMs, the boot manager and the applications it ran, GPT, Secure Boot policy) and shim's MOK
  /// state (14).
  public static let bootPCRs = [0, 1, 2, 3, 4, 5, 6, 7, 14]
  /// TPM_ALG_SHA256, the bank quoted.
  public static let bootBank: UInt16 = 0x000B
  /// The largest event log a client sends (real ones are 20–120 KB); base64url of it stays under
  /// the verifier script's 1 MiB bound on the callback's value.
  public static let maximumEventLogSize = 512 << 10
}

/// The verifier's nonce for the boot quote.
public struct BootQuoteRequest: Sendable, Equatable {
  public var nonce: [UInt8]

  public init(nonce: [UInt8]) { self.nonce = nonce }

  public var json: JSON { ["v": .number(Double(AttestationProtocol.version)), "nonce": .string(Base64URL.encode(nonce))] }

  public init(json: JSON) throws(AttestationError) {
    nonce = try Message(json, "quote request").bytes("nonce")
    guard (16...64).contains(nonce.count) else { throw .malformed("the quote request's nonce has \(nonce.count) bytes, not 16 to 64") }
  }
}

/// The client's boot quote.
public struct BootQuote: Sendable, Equatable {
  /// The marshalled TPMS_ATTEST (TPM_ST_ATTEST_QUOTE) the attestation key signed.
  public var attestation: [UInt8]
  /// The attestation key's ECDSA signature over SHA-256(attestation), raw R ‖ S.
  public var signature: [UInt8]
  /// The attestation key's TPM2B_PUBLIC.
  public var attestationKey: [UInt8]
  /// The quoted PCRs' values (SHA-256 bank), read after the quote.
  public var pcrs: [Int: [UInt8]]
  /// The firmware's TCG event log (binary_bios_measurements), or why there is none.
  public var eventLog: EventLogContent

  public enum EventLogContent: Sendable, Equatable {
    case log([UInt8])
    case missing(String)
  }

  public init(attestation: [UInt8], signature: [UInt8], attestationKey: [UInt8], pcrs: [Int: [UInt8]], eventLog: EventLogContent) {
    self.attestation = attestation
    self.signature = signature
    self.attestationKey = attestationKey
    self.pcrs = pcrs
    self.eventLog = eventLog
  }

  public var json: JSON {
    var object: JSONObject = [
      "v": .number(Double(AttestationProtocol.version)), "attest": .string(Base64URL.encode(attestation)),
      "signature": .string(Base64URL.encode(signature)), "akPublic": .string(Base64URL.encode(attestationKey)),
      "pcrs": .object(
        JSONObject(pcrs.sorted { $0.key < $1.key }.map { (key: String($0.key), value: .string(Base64URL.encode($0.value))) })),
    ]
    switch eventLog {
    case .log(let bytes): object["eventLog"] = .string(Base64URL.encode(bytes))
    case .missing(let reason): object["eventLogMissing"] = .string(reason)
    }
    return .object(object)
  }

  /// Reads a quote: every member present and typed, the PCRs exactly `AttestationProtocol.bootPCRs`
  /// with 32-byte values, and either an event log or the reason there is none.
  public init(json: JSON) throws(AttestationError) {
    let message = try Message(json, "quote")
    attestation = try message.bytes("attest")
    signature = try message.bytes("signature")
    attestationKey = try message.bytes("akPublic")
    guard case .object(let values)? = json["pcrs"] else { throw .malformed("the quote has no object pcrs") }
    var pcrs: [Int: [UInt8]] = [:]
    for (key, value) in values.members {
      guard let index = Int(key), String(index) == key, AttestationProtocol.bootPCRs.contains(index) else {
        throw .malformed("the quote's pcrs name PCR \"\(PrintableText.line(key, limit: 10))\", which is not quoted")
      }
      guard let text = value.stringValue, let bytes = Base64URL.decode(text), bytes.count == 32 else {
        throw .malformed("the quote's PCR \(index) is not a base64url SHA-256 value")
      }
      pcrs[index] = bytes
    }
    guard pcrs.count == AttestationProtocol.bootPCRs.count, values.count == pcrs.count else {
      throw .malformed("the quote's pcrs lack PCR \(AttestationProtocol.bootPCRs.first { pcrs[$0] == nil } ?? 0)")
    }
    self.pcrs = pcrs
    if json["eventLog"] != nil, json["eventLogMissing"] != nil {
      throw .malformed("the quote has both eventLog and eventLogMissing")
    } else if json["eventLog"] != nil {
      eventLog = .log(try message.bytes("eventLog"))
    } else if let reason = json["eventLogMissing"]?.stringValue {
      eventLog = .missing(reason)
    } else {
      throw .malformed("the quote has neither eventLog nor eventLogMissing")
    }
  }
}
