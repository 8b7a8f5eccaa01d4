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

// The verifier's verbs of `fr-profile attest` (challenge, verify): what runs where the server
// half runs. The device's verbs are in FRProfile.Attest.swift.
extension FRProfile.Attest {
  struct Challenge: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Check a device's request and print a credential challenge sealed to its EK for its AK.",
      discussion: """
        The EK certificate must chain to one of the --roots (through --intermediates when the \
        TPM holds only the leaf) and certify the EK; a TPM without a certificate is accepted only \
        when its EK's name is given with --trusted-ek. The AK must be a restricted signing key of \
        its TPM. The --state file keeps what 'attest verify' needs (no secret: the credential's \
        SHA-256).

        \(ExitStatus.helpSection(
        FRProfile.Attest.verifierExits,
        [.success: "the challenge is printed", .negative: "the request is refused (the check is named)"]))

        EXAMPLES:
          fr-profile attest challenge request.json --roots tpm-roots.pem --state state.json -o challenge.json
        """)

    @Argument(help: ArgumentHelp("The device's request ('-': standard input).", valueName: "REQUEST"), completion: .file()) var request:
      String
    @Option(help: ArgumentHelp("PEM file of TPM manufacturer root certificates.", valueName: "FILE"), completion: .file()) var roots:
      String?
    @Option(help: ArgumentHelp("PEM file of their issuing CAs.", valueName: "FILE"), completion: .file()) var intermediates: String?
    @Option(
      name: .customLong("trusted-ek"),
      help: ArgumentHelp("An EK name (hex, 000b…) trusted without a certificate (repeatable).", valueName: "NAME"))
    var trustedEndorsementKeys: [String] = []
    @Option(help: ArgumentHelp("Where to write the verifier's state for 'attest verify'.", valueName: "FILE"), completion: .file())
    var state: String
    @OptionGroup var output: OutputFileOption

    func validate() throws {
      guard roots != nil || !trustedEndorsementKeys.isEmpty else {
        throw ValidationError("give --roots FILE (TPM manufacturer roots) or --trusted-ek NAME: nothing would be trusted.")
      }
      for name in trustedEndorsementKeys where FRProfile.Attest.hex(name) == nil {
        throw ValidationError("--trusted-ek \(name): write the EK's name in hex (000b followed by 64 hex digits).")
      }
    }

    func run() async throws {
      try await reportingFailuresAsync {
        let parsed: AttestationRequest
        do { parsed = try AttestationRequest(json: try FRProfile.Attest.readJSON(request)) } catch let error as AttestationError {
          throw FRProfile.Attest.failure(error, file: request)
        }
        let verifier = AttestationVerifier(
          roots: try FRProfile.Attest.certificates(roots), intermediates: try FRProfile.Attest.certificates(intermediates),
          trustedEndorsementKeys: trustedEndorsementKeys.compactMap(FRProfile.Attest.hex))
        let result: (challenge: AttestationChallenge, pending: PendingActivation)
        do throws(AttestationError) { result = try await verifier.challenge(for: parsed) } catch {
          throw FRProfile.Attest.failure(error, file: nil)
        }
        try writeFileAtomically(state, JSONWriter.compact(result.pending.json) + "\n", mode: 0o600)
        try FRProfile.Attest.write(result.challenge.json, to: output)
      }
    }
  }

  struct Verify: ParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Verify the TPM evidence a binding or signing JWS carries (claim tpmEvidence).",
      discussion: """
        Checks, each failing by name: the answer is the credential sealed to the EK (so the AK \
        lives in that TPM); the AK certified the JWS's key (TPM2_Certify) over SHA-256 of the \
        JWS's challenge, which is --challenge when given; the key was made in the TPM and never \
        leaves it (fixedTPM, fixedParent, sensitiveDataOrigin); it is the JWS's jwk (binding) and \
        it made the JWS's signature.

        \(ExitStatus.helpSection(
        FRProfile.Attest.verifierExits,
        [.success: "verified", .negative: "refused (the check is named)"]))

        EXAMPLES:
          fr-profile attest verify --state state.json --answer answer.json jws.txt
          fr-profile attest verify --state state.json --answer answer.json --challenge "$CHALLENGE" --json - < jws.txt
        """)

    @Option(help: ArgumentHelp("The state 'attest challenge' wrote.", valueName: "FILE"), completion: .file()) var state: String
    @Option(help: ArgumentHelp("The device's answer to the challenge.", valueName: "FILE"), completion: .file()) var answer: String
    @Option(help: ArgumentHelp("The challenge the server sent with the callback (checked against the JWS's).", valueName: "TEXT"))
    var challenge: String?
    @Flag(help: "Print the verdict as JSON.") var json = false
    @Option(
      help: ArgumentHelp("Verify an evidence document ('attest certify') instead of a JWS; needs --challenge.", valueName: "FILE"),
      completion: .file())
    var evidence: String?
    @Option(
      help: ArgumentHelp("Verify a boot quote ('attest quote') instead of a JWS; needs --nonce.", valueName: "FILE"), completion: .file())
    var boot: String?
    @Option(parsing: .unconditional, help: ArgumentHelp("The nonce the boot quote answers (base64url).", valueName: "B64URL"))
    var nonce: String?
    @Flag(help: "Accept a boot quote whose event log shows Secure Boot off, or that has no event log.") var allowSecureBootOff = false
    @Option(
      name: .customLong("enrolled-pcrs"),
      help: ArgumentHelp(
        "PCR values enrolled for this device (JSON {\"0\":hex,…}, e.g. an earlier verdict's \"pcrs\"), compared whether or not the device sends its event log.",
        valueName: "FILE"), completion: .file())
    var enrolledPCRs: String?
    @Argument(help: ArgumentHelp("The compact JWS ('-': standard input).", valueName: "JWS"), completion: .file()) var jws: String?

    func validate() throws {
      guard [jws != nil, evidence != nil, boot != nil].filter({ $0 }).count == 1 else {
        throw ValidationError("give a JWS, --evidence FILE or --boot FILE (one of them).")
      }
      if evidence != nil, challenge == nil { throw ValidationError("--evidence needs --challenge: the evidence is over it.") }
      if boot != nil, nonce.flatMap(Base64URL.decode) == nil {
        throw ValidationError("--boot needs --nonce B64URL: the nonce the verifier sent, which the quote must answer.")
      }
      if boot == nil, nonce != nil || allowSecureBootOff || enrolledPCRs != nil {
        throw ValidationError("--nonce, --allow-secure-boot-off and --enrolled-pcrs go with --boot.")
      }
    }

    func run() throws {
      try reportingFailures {
        let pending: PendingActivation
        do {
          pending = try PendingActivation(json: try FRProfile.Attest.parseJSON(try readOwnFile(state, limit: 1 << 20), from: state))
        } catch let error as AttestationError {
          throw FRProfile.Attest.failure(error, file: state)
        }
        let answerDocument = try FRProfile.Attest.readJSON(answer)
        let document = try evidence.map { try FRProfile.Attest.readJSON($0) }
        let token = try jws.map { String(decoding: try readInput($0, limit: 1 << 20), as: UTF8.self).filter { !$0.isWhitespace } }
        let key: P256KeyText
        let ak: TPMPublic
        do throws(AttestationError) { ak = try AttestationVerifier.activate(pending, answer: answerDocument) } catch {
          throw FRProfile.Attest.failure(error, file: answer)
        }
        if let boot {
          try verifyBoot(boot, pending: pending, attestationKey: ak)
          return
        }
        do throws(AttestationError) {
          if let document, let challenge {
            key = P256KeyText(try AttestationVerifier.verify(evidence: document, challenge: challenge, attestationKey: ak))
          } else {
            key = P256KeyText(try AttestationVerifier.verify(jws: token ?? "", attestationKey: ak, challenge: challenge))
          }
        } catch {
          throw FRProfile.Attest.failure(error, file: nil)
        }
        let ekName = Hex.encode(pending.endorsementKeyName)
        if json {
          try printOutput(
            JSONWriter.compact([
              "verified": true, "ekName": .string(ekName), "ekCertified": .bool(pending.endorsementCertified),
              "key": .object(P256JWK.members(x: key.x, y: key.y)),
            ]) + "\n")
        } else {
          try printOutput(
            "verified: the \(evidence == nil ? "JWS's key" : "certified key") (x \(key.x)) was made in the TPM whose endorsement key is \(ekName) "
              + "(\(pending.endorsementCertified ? "certificate chained to a configured root" : "trusted by name")) and cannot leave it.\n"
          )
        }
      }
    }

    /// `--boot`: the quote by the activated AK over --nonce, then what its event log (or the
    /// enrolled PCRs) shows; exit 1 naming the check that refused it.
    private func verifyBoot(_ path: String, pending: PendingActivation, attestationKey ak: TPMPublic) throws {
      let quote = try FRProfile.Attest.readJSON(path, limit: 1 << 21)
      let policy = BootPolicy(requireSecureBoot: !allowSecureBootOff, enrolledPCRs: try enrolledPCRs.map(FRProfile.Attest.pcrValues))
      let state: BootState
      do throws(BootRefusal) {
        state = try AttestationVerifier.verifyBoot(
          quote: quote, nonce: Base64URL.decode(nonce ?? "") ?? [], attestationKey: ak, policy: policy)
      } catch {
        if error.check == .malformed { throw Failure(.dataError, "\(path): \(error.reason).") }
        throw Failure(.negative, "refused (\(error.check.rawValue)): \(error.reason).")
      }
      let ekName = Hex.encode(pending.endorsementKeyName)
      if json {
        try printOutput(
          JSONWriter.compact([
            "verified": true, "ekName": .string(ekName), "ekCertified": .bool(pending.endorsementCertified), "boot": state.json,
          ]) + "\n")
        return
      }
      let secureBoot = state.secureBoot.map { $0 ? "on" : "off" } ?? "unknown"
      try printOutput(
        "verified: boot quote (\(state.method.rawValue)) of the TPM whose endorsement key is \(ekName); Secure Boot \(secureBoot); "
          + "\(state.bootApplications.count) boot application(s) in PCR 4.\n\(state.note)\n")
    }
  }
}
