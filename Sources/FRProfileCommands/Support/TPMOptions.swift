import ArgumentParser

/// `--tcti`: the TPM a command talks to. One group for every command that has the option
/// (`journey` and `callback` through `BindingOptions`, `identifier`, the `attest` client
/// commands), so its name, help and default are said once.
package struct TPMOptions: ParsableArguments {
  @Option(
    name: .customLong("tcti"),
    help: ArgumentHelp(
      "The TPM, in tpm2-tss's loader syntax, e.g. swtpm:host=127.0.0.1,port=2321 (default: $FR_PROFILE_TCTI, else device:/dev/tpmrm0).",
      valueName: "CONF"))
  package var tcti: String?

  package init() {}

  /// The TPM to open: --tcti, else $FR_PROFILE_TCTI, else the kernel's resource manager.
  func resolved() throws -> String { try TPMExit.tcti(option: tcti) }
}
