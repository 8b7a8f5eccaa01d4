import ArgumentParser
import DeviceBinding
import ProfileJSON

/// The options of device binding and signing, shared by `journey` and `callback`.
package struct BindingOptions: ParsableArguments {
  /// The default JWS `iss` (BindingOptions.defaultApplicationId, the same text).
  package static let defaultApplicationId = "fr-profile"

  @Option(
    name: .customLong("app-id"),
    help: ArgumentHelp(
      "The JWS issuer; must be one of the node's Application Ids (default \(BindingOptions.defaultApplicationId)).",
      valueName: "ID"))
  package var applicationId: String = BindingOptions.defaultApplicationId

  @Option(
    name: .customLong("device-name"),
    help: ArgumentHelp("The device name sent when binding (default: the profile's platform.deviceName).", valueName: "NAME"))
  package var deviceName: String?

  @Option(
    name: .customLong("pin-file"),
    help: ArgumentHelp("Read the APPLICATION_PIN from the first line of FILE (else asked on the terminal, no echo).", valueName: "FILE"),
    completion: .file())
  package var pinFile: String?

  @Option(
    name: .customLong("pin-policy"),
    help: ArgumentHelp("PINs accepted when binding, e.g. \"MINLEN=6;MAXLEN=10;NUM=6;SEQ=3;REP=2\".", valueName: "SPEC"))
  package var pinPolicy: String = "MINLEN=6;MAXLEN=64;SEQ=3;REP=2"

  @Option(
    name: .customLong("lock-policy"),
    help: ArgumentHelp("What wrong PINs cost a new key: none, lock, lock:N, delay or silent.", valueName: "POLICY"))
  package var lockPolicy: String = "lock:5"

  @Option(
    name: .customLong("bound-user"),
    help: ArgumentHelp("Usernameless signing with several bound keys: the username (or userId, kid) whose key signs.", valueName: "NAME"))
  package var boundUser: String?

  @Option(
    name: .customLong("claim"),
    help: ArgumentHelp("Add a custom claim to signing JWSs, e.g. --claim 'os=\"linux\"' (JSON value; repeatable).", valueName: "NAME=JSON"))
  package var claims: [String] = []

  @Flag(
    name: .customLong("posture"),
    help: ArgumentHelp(
      "Add this machine's security posture ('fr-profile posture --json', never --root's) to signing JWSs as the claim posture."))
  package var posture = false

  @Option(
    name: .customLong("policies"),
    help: ArgumentHelp(
      "App policies for new bindings, e.g. '{\"deviceTampering\":{\"score\":0.8}}' (default: <state-dir>/policies.json if present).",
      valueName: "JSON"))
  package var policies: String?

  @Option(
    name: .customLong("key-store"),
    help: ArgumentHelp(
      "Where new bound keys are made: auto (the TPM when usable, else files), tpm or file (default: $FR_PROFILE_KEY_STORE, else auto). Existing keys stay where they were made.",
      valueName: "STORE"))
  package var keyStore: KeyStoreChoice?

  @OptionGroup package var tpm: TPMOptions

  @Flag(
    name: .customLong("tpm-evidence"),
    help: ArgumentHelp(
      "Attach TPM evidence (claim tpmEvidence) to the JWSs of TPM keys without an attestation round in this run: the verifier activated this device's attestation key before ('fr-profile attest answer')."
    ))
  package var tpmEvidence = false

  package init() {}

  package func validate() throws {
    do { _ = try PINPolicy(parsing: pinPolicy) } catch { throw ValidationError("--pin-policy \(pinPolicy): \(error).") }
    do { _ = try LockPolicy(parsing: lockPolicy) } catch { throw ValidationError("--lock-policy \(lockPolicy): \(error).") }
    guard !applicationId.isEmpty else { throw ValidationError("--app-id needs an id, e.g. \(BindingOptions.defaultApplicationId).") }
    for claim in claims {
      guard let equals = claim.firstIndex(of: "="), equals != claim.startIndex else {
        throw ValidationError("--claim \(claim): write NAME=JSON, e.g. --claim 'os=\"linux\"'.")
      }
      if posture && claim[..<equals] == "posture" {
        throw ValidationError("--claim posture=… and --posture both set the claim posture: give one.")
      }
      guard (try? JSONParser.parse(Array(claim[claim.index(after: equals)...].utf8))) != nil else {
        throw ValidationError("--claim \(claim): the value after = is not JSON (quote strings: 'os=\"linux\"').")
      }
    }
  }

  /// Custom claims, in order.
  package var customClaims: [(String, JSON)] {
    claims.compactMap { claim in
      guard let equals = claim.firstIndex(of: "="),
        let value = try? JSONParser.parse(Array(claim[claim.index(after: equals)...].utf8))
      else { return nil }
      return (String(claim[..<equals]), value)
    }
  }
}

/// `--key-store`: where new keys are made.
package enum KeyStoreChoice: String, ExpressibleByArgument, CaseIterable, Sendable {
  /// The TPM when one answers at the TCTI, else files.
  case auto
  /// The TPM; an error when there is none.
  case tpm
  /// PEM/JSON files in the state directory.
  case file

  /// The environment variable read when `--key-store` is not given.
  package static let environmentVariable = "FR_PROFILE_KEY_STORE"
}
