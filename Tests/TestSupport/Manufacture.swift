import Foundation

extension SWTPM {
  /// A TPM state made by `swtpm_setup` as a manufacturer would: RSA 2048 and P-384 EKs with
  /// certificates in NV, signed by swtpm_localca's CA, and persistent (the RSA EK at
  /// 0x81010001, as a PC's firmware leaves it). With `persistentSRK`, also the storage primary
  /// key at 0x81000001 (`--create-spk`: RSA 2048, noDA, what Windows provisions). Its
  /// configuration and CA live in `directory` (never /etc or /var/lib). Returns the state
  /// directory, the CA's root certificate and its issuing certificate (PEM paths).
  public static func manufacture(in directory: String, persistentSRK: Bool = false) throws -> (
    state: String, root: String, issuer: String
  ) {
    let state = directory + "/state"
    let ca = directory + "/ca"
    try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
    try FileManager.default.createDirectory(atPath: ca, withIntermediateDirectories: true)
    try "statedir = \(ca)\nsigningkey = \(ca)/signkey.pem\nissuercert = \(ca)/issuercert.pem\ncertserial = \(ca)/certserial\n"
      .write(toFile: directory + "/localca.conf", atomically: true, encoding: .utf8)
    try "--platform-manufacturer fr-profile-test\n--platform-version 2.1\n--platform-model swtpm\n"
      .write(toFile: directory + "/localca.options", atomically: true, encoding: .utf8)
    try """
    create_certs_tool = /usr/bin/swtpm_localca
    create_certs_tool_config = \(directory)/localca.conf
    create_certs_tool_options = \(directory)/localca.options
    active_pcr_banks = sha256

    """.write(toFile: directory + "/setup.conf", atomically: true, encoding: .utf8)
    let setup = try TestProcess.run(
      [
        "/usr/bin/swtpm_setup", "--tpm2", "--tpmstate", state, "--create-ek-cert", "--create-platform-cert", "--config",
        directory + "/setup.conf", "--overwrite",
      ] + (persistentSRK ? ["--create-spk"] : []), environment: [:], timeout: 120)
    guard setup.status == 0 else { throw SWTPMError("swtpm_setup failed with status \(setup.status): \(setup.stderr.suffix(500))") }
    return (state, ca + "/swtpm-localca-rootca-cert.pem", ca + "/issuercert.pem")
  }
}
