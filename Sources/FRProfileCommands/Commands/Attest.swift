import ArgumentParser
import Collectors
import Crypto
import DeviceBinding
import DeviceIdentity
import ProfileCLI
import ProfileJSON
import TPMAttestation
import TPMKeys
import TPMProtocol
import X509

/// `fr-profile attest`: TPM attestation offline — the same documents a journey exchanges in its
/// two HiddenValueCallback rounds and its JWS claim (docs/tpm.md "TPM attestation"), as files. The
/// client commands (request, answer) run on the device; the verifier commands (challenge,
/// verify) wherever the server half runs.
extension FRProfile {
  struct Attest: ParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "attest",
      abstract: "Prove that bound keys live in this device's TPM (EK-rooted attestation), and verify such proofs.",
      discussion: """
        A verifier trusts a key only when its TPM's endorsement key (EK) is certified by a TPM \
        manufacturer root it is configured with, an attestation key (AK) was shown to live in that \
        same TPM (credential activation), and the AK certified the key (TPM2_Certify) over the \
        server's challenge. In a journey this happens by itself when the server's script sends the \
        attestation rounds; these commands do it with files:

          device:   fr-profile attest request -o request.json
          verifier: fr-profile attest challenge request.json --roots tpm-roots.pem --state state.json -o challenge.json
          device:   fr-profile attest answer challenge.json -o answer.json
          device:   fr-profile callback --tpm-evidence signing-step.json > answered.json
          verifier: fr-profile attest verify --state state.json --answer answer.json jws.txt
          device:   fr-profile attest quote --nonce "$NONCE" -o quote.json
          verifier: fr-profile attest verify --state state.json --answer answer.json --boot quote.json --nonce "$NONCE"

        EXAMPLES:
          fr-profile attest request --tcti swtpm:host=127.0.0.1,port=2321
          fr-profile attest certify --identity --challenge "$CHALLENGE" -o evidence.json
          fr-profile attest verify --state state.json --answer answer.json --challenge "$CHALLENGE" jws.txt
        """,
      subcommands: [Request.self, Challenge.self, Answer.self, Certify.self, Quote.self, Verify.self]
    )

    /// The client options: the state directory (where the AK is kept) and the TPM.
    struct ClientOptions: ParsableArguments {
      @OptionGroup var options: ProfileOptions
      @OptionGroup var tpm: TPMOptions
      @OptionGroup var output: OutputFileOption
      @Option(name: .customLong("max-time"), help: TimeLimitHelp.maxTime)
      var maxTime: Double = 120

      func validate() throws {
        guard maxTime > 0, maxTime <= 86400 else { throw ValidationError("--max-time must be more than 0 and at most 86400 seconds.") }
      }

      /// The attester, each TPM response bounded by --max-time (the library's receive timeout on
      /// a socket TCTI: exit 75 naming the TPM); the watchdog, 2 s later, is the backstop for
      /// what no timeout reaches (tpm2-tss waits on a silent TCTI).
      func attester(_ verb: String) throws -> TPMAttester {
        armWatchdog(
          after: maxTime + FRProfile.Journey.watchdogGrace,
          "attest \(verb) did not end within --max-time (\(JSONWriter.formatNumber(maxTime)) s): the TPM stopped answering? Raise --max-time if it is slow."
        )
        let directory = try options.settings.keyStore().directory
        let connection = ProcessTPM.connection(try tpm.resolved(), stateDirectory: directory, responseTimeout: maxTime)
        return TPMAttester(connection: connection, stateDirectory: directory)
      }
    }

    static let clientExits: [ExitStatus] =
      [.success, .usage, .dataError, .noInput, .cannotCreate, .ioError, .timedOut, .permission, .configuration] + ExitStatus.tpm

    struct Request: ParsableCommand {
      static let configuration = CommandConfiguration(
        abstract: "Print this TPM's endorsement key, its certificate and the attestation key (made once, kept in the state directory).",
        discussion: """
          The attestation key is made on first use and kept TPM-wrapped in \
          <state-dir>/attestation-key.json (0600) with the name of the EK it belongs to. If the TPM \
          was cleared or replaced since, the command says so and exits 81; --replace then makes a \
          new attestation key (delete the server's records of this device's keys: they are gone).

          \(ExitStatus.helpSection(Attest.clientExits, [.success: "printed"]))

          EXAMPLES:
            fr-profile attest request -o request.json
            fr-profile attest request --replace
          """)

      @OptionGroup var client: ClientOptions
      @Flag(help: "Make a new attestation key even if one is kept (after the TPM was cleared or replaced).") var replace = false

      func run() throws {
        try reportingFailures {
          let request: JSON
          let attester = try client.attester("request")
          do throws(TPMError) { request = try attester.request(replace: replace) } catch {
            throw TPMExit.failure(error, tcti: attester.tcti)
          }
          try Attest.write(request, to: client.output)
        }
      }
    }

    struct Answer: ParsableCommand {
      static let configuration = CommandConfiguration(
        abstract: "Answer a verifier's credential challenge: the TPM releases the credential only through its EK, for its AK.",
        discussion: """
          \(ExitStatus.helpSection(Attest.clientExits, [.success: "printed", .dataError: "the challenge is not a challenge"]))

          EXAMPLES:
            fr-profile attest answer challenge.json -o answer.json
          """)

      @OptionGroup var client: ClientOptions
      @Argument(help: ArgumentHelp("The challenge ('-': standard input).", valueName: "CHALLENGE"), completion: .file()) var challenge:
        String

      func run() throws {
        try reportingFailures {
          let document: AttestationChallenge
          do { document = try AttestationChallenge(json: try Attest.readJSON(challenge)) } catch let error as AttestationError {
            throw Attest.failure(error, file: challenge)
          }
          let answer: JSON
          let attester = try client.attester("answer")
          do throws(TPMError) { answer = try attester.answer(document) } catch {
            throw TPMExit.failure(error, tcti: attester.tcti)
          }
          try Attest.write(answer, to: client.output)
        }
      }
    }

    struct Certify: ParsableCommand {
      static let configuration = CommandConfiguration(
        abstract: "Print TPM evidence for the identity key or a bound key over a challenge (TPM2_Certify by the attestation key).",
        discussion: """
          The evidence document is the tpmEvidence claim a journey puts in its JWSs: the key's \
          public area certified by the attestation key over SHA-256 of --challenge. Only keys used \
          without a PIN are certified here: certifying a PIN key would try its PIN outside the key's \
          lock policy ('fr-profile callback --tpm-evidence' signs under the policy). A verifier \
          checks it with 'attest verify --evidence'.

          \(ExitStatus.helpSection(
          Attest.clientExits + [.negative],
          [.success: "printed", .negative: "no such key, or it is not in the TPM or has a PIN"]))

          EXAMPLES:
            fr-profile attest certify --identity --challenge "$CHALLENGE" -o evidence.json
            fr-profile attest certify 2ed8f1a6-0e55-4d8b-9a43-5f0c7c3d9b21 --challenge "$CHALLENGE"
          """)

      @OptionGroup var client: ClientOptions
      @Argument(help: ArgumentHelp("A bound key's kid (or --identity).", valueName: "KID")) var kid: String?
      @Flag(help: "Certify the identity key (device-key.tpm) instead of a bound key.") var identity = false
      @Option(help: ArgumentHelp("The verifier's challenge.", valueName: "TEXT")) var challenge: String

      func validate() throws {
        guard (kid != nil) != identity else { throw ValidationError("name one key: a KID or --identity.") }
      }

      func run() throws {
        try reportingFailures {
          let settings = client.options.settings
          let blob: [UInt8]
          if identity {
            let found: [UInt8]?
            let store = try settings.keyStore()
            do throws(IdentityError) { found = try store.tpmKeyBlob() } catch { throw Failure(error) }
            guard let found else {
              throw Failure(.negative, "the identity key is not in the TPM; 'fr-profile identifier --key-store tpm' moves it there.")
            }
            blob = found
          } else {
            let kid = kid ?? ""
            let stored: StoredUserKey?
            let store = try settings.userKeyStore(create: false)
            do throws(KeyStoreError) { stored = try store.key(kid: kid) } catch {
              throw BindingExit.failure(error)
            }
            guard let stored else { throw Failure(.negative, "no bound key has the kid \(kid); see 'fr-profile keys list'.") }
            guard case .hardware(let key) = stored.material else {
              throw Failure(.negative, "the key \(kid) is a file key: it is not in the TPM, and there is no evidence to give.")
            }
            guard !key.pinProtected else {
              throw Failure(
                .negative,
                "the key \(kid) has a PIN: certify it through a signing ('fr-profile callback --tpm-evidence'), under its lock policy.")
            }
            blob = key.blob
          }
          let evidence: JSON
          let attester = try client.attester("certify")
          do throws(TPMError) { evidence = try attester.evidence(forKeyBlob: blob, authValue: [], challenge: challenge) } catch {
            throw TPMExit.failure(error, tcti: attester.tcti)
          }
          try Attest.write(evidence, to: client.output)
        }
      }
    }

    struct Quote: ParsableCommand {
      static let configuration = CommandConfiguration(
        abstract: "Quote this TPM's boot PCRs (SHA-256 bank, 0-7 and 14) with the attestation key over a verifier's nonce.",
        discussion: """
          The quote document carries TPM2_Quote by the attestation key (activated by 'attest \
          answer') over --nonce, the PCR values, and the firmware's event log, from which a \
          verifier reads Secure Boot (PCR 7) and the boot applications (PCR 4) after replaying it \
          against the quoted PCRs. The kernel's log (\(FirmwareEventLog.kernelPath)) is readable \
          by root only: fr-profile-eventlog.service copies it for group tss to \
          \(FirmwareEventLog.copyPath). Without a readable log the quote goes alone ("quote \
          only", said on standard error) and a verifier can only compare the PCRs with enrolled \
          ones. The log is read by itself only for the kernel's TPM (device:); with another TCTI \
          give it with --event-log. Journeys answer the server's frTpmBootQuote round the same \
          way, with $\(FirmwareEventLog.environmentVariable) in place of --event-log.

          \(ExitStatus.helpSection(
          Attest.clientExits,
          [.success: "printed", .noInput: "--event-log FILE cannot be read"]))

          EXAMPLES:
            fr-profile attest quote --nonce "$NONCE" -o quote.json
            fr-profile attest quote --nonce "$NONCE" --event-log none
          """)

      @OptionGroup var client: ClientOptions
      // .unconditional: a base64url nonce may begin with "-".
      @Option(parsing: .unconditional, help: ArgumentHelp("The verifier's nonce, base64url (16 to 64 bytes).", valueName: "B64URL"))
      var nonce: String
      @Option(
        name: .customLong("event-log"),
        help: ArgumentHelp(
          "The firmware event log to send ('none': send none; default: the service's copy, else the kernel's, for the kernel's TPM).",
          valueName: "FILE"), completion: .file())
      var eventLog: String?

      func validate() throws {
        guard let bytes = Base64URL.decode(nonce), (16...64).contains(bytes.count) else {
          throw ValidationError("--nonce must be 16 to 64 bytes in base64url (the verifier's nonce).")
        }
      }

      func run() throws {
        try reportingFailures {
          let request = BootQuoteRequest(nonce: Base64URL.decode(nonce) ?? [])
          let tcti = try client.tpm.resolved()
          let log = FirmwareEventLog.read(path: eventLog, tcti: tcti)
          if let eventLog, eventLog != "none", case .missing(let why) = log { throw Failure(.noInput, "--event-log: \(why).") }
          let attester = try client.attester("quote")
          let quote: JSON
          do throws(TPMError) { quote = try attester.quote(request, eventLog: log) } catch {
            throw TPMExit.failure(error, tcti: attester.tcti)
          }
          if case .missing(let why) = log, eventLog != "none" {
            writeStandardError("fr-profile: note: quote only, no event log: \(why).\n")
          }
          try Attest.write(quote, to: client.output)
        }
      }
    }

    static let verifierExits: [ExitStatus] = [.success, .negative, .usage, .dataError, .noInput, .cannotCreate, .ioError, .permission]

    // MARK: -

    struct P256KeyText {
      var x: String
      var y: String
      init(_ key: P256.Signing.PublicKey) { (x, y) = P256JWK.coordinates(raw: Array(key.rawRepresentation)) }
    }

    /// A verifier's refusal: exit 1 naming the check; malformed input: exit 65 naming the file.
    static func failure(_ error: AttestationError, file: String?) -> Failure {
      switch error.code {
      case .malformed, .unsupported:
        Failure(.dataError, (file.map { "\($0): " } ?? "") + error.description + ".")
      default:
        Failure(.negative, "refused: \(error.description).")
      }
    }

    static func readJSON(_ path: String, limit: Int = 1 << 20) throws -> JSON {
      try parseJSON(try readInput(path, limit: limit), from: path)
    }

    /// An enrolled-PCRs file: {"0": value, …} with each value a SHA-256 in hex (64 digits) or
    /// base64url (43 characters), as a verdict's or a quote's "pcrs" has them.
    static func pcrValues(_ path: String) throws -> [Int: [UInt8]] {
      guard case .object(let object) = try readJSON(path) else { throw Failure(.dataError, "\(path): not a JSON object of PCR values.") }
      var values: [Int: [UInt8]] = [:]
      for (key, value) in object.members {
        guard let pcr = Int(key), String(pcr) == key, (0..<24).contains(pcr), let text = value.stringValue,
          let bytes = text.utf8.count == 64 ? Hex.decode(text) : Base64URL.decode(text), bytes.count == 32
        else {
          throw Failure(
            .dataError, "\(path): \"\(PrintableText.line(key, limit: 10))\" is not a PCR number with a SHA-256 value (hex or base64url).")
        }
        values[pcr] = bytes
      }
      return values
    }

    static func parseJSON(_ bytes: [UInt8], from path: String) throws -> JSON {
      do { return try JSONParser.parse(bytes) } catch {
        throw Failure(.dataError, "\(path == "-" ? "standard input" : path): not JSON (\(error)).")
      }
    }

    static func certificates(_ path: String?) throws -> [Certificate] {
      guard let path else { return [] }
      do {
        return try EndorsementCertificate.certificates(pem: String(decoding: try readInput(path, limit: 4 << 20), as: UTF8.self))
      } catch let error as AttestationError {
        throw Failure(.dataError, "\(path): \(error.description).")
      }
    }

    static func write(_ document: JSON, to output: OutputFileOption) throws {
      try output.emit(text: JSONWriter.compact(document) + "\n")
    }

    /// An EK name in hex (34 bytes: 000b and a SHA-256), ASCII digits only: `Character.isHexDigit`
    /// also accepts full-width digits, which `UInt8(_:radix:)` does not (a crash).
    static func hex(_ text: String) -> [UInt8]? {
      text.utf8.count == 68 ? Hex.decode(text) : nil
    }
  }
}
