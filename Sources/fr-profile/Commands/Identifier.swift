import ArgumentParser
import Collectors
import ProfileCLI
import ProfileJSON

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

extension FRProfile {
  struct Identifier: ParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Print the device identifier, rotate it, or print the public key.",
      discussion: """
        The identifier is <host>-<key>: 16 hex digits of an app-specific HMAC of /etc/machine-id \
        and the SHA-1 of the device's public key. The key pair is made on first use and kept in \
        <state-dir>/device-key.pem (mode 0600). This command also checks that the cached public \
        key belongs to the private key. The private key is never printed.

        After --move-to-tpm the key is in the TPM (<state-dir>/device-key.tpm): this command \
        proves it loads in this TPM, and --reset makes the new key in the TPM too (the old \
        blob is kept as device-key.tpm.<time>.bak); with no usable TPM it exits 80 and changes \
        nothing.

        With --json prints {"identifier": …} (and "publicKey" with --public-key).

        EXAMPLES:
          fr-profile identifier
          fr-profile identifier --json --pretty
          fr-profile identifier --public-key -o device.pub
          fr-profile identifier --reset
        """
    )

    @OptionGroup var options: IdentityOptions

    @OptionGroup(title: "Output Options") var format: OutputOptions

    @Flag(help: "Print JSON: {\"identifier\": …}, with --public-key also \"publicKey\".")
    var json = false

    @Flag(
      help: """
        Make a new key pair where the identity key is, a file or the TPM (the old key is kept as \
        device-key.pem.<time>.bak or device-key.tpm.<time>.bak), and print the new identifier.
        """)
    var reset = false

    @Flag(name: .customLong("public-key"), help: "Print the public key (PEM) instead of the identifier.")
    var publicKey = false

    @Flag(
      name: .customLong("move-to-tpm"),
      help:
        "Make a new identity key inside the TPM (the identifier changes; the file key is kept as a backup). See 'fr-profile-journey identity --help'."
    )
    var moveToTPM = false

    @Option(
      name: .customLong("tcti"),
      help: ArgumentHelp(
        "The TPM for --move-to-tpm, the check and the --reset of a TPM key (default: $FR_PROFILE_TCTI, else device:/dev/tpmrm0).",
        valueName: "CONF"))
    var tcti: String?

    func validate() throws {
      if reset && publicKey { throw ValidationError("--reset and --public-key exclude each other.") }
      if moveToTPM && (reset || publicKey) { throw ValidationError("--move-to-tpm excludes --reset and --public-key.") }
      if !json && (format.pretty || format.compact) { throw ValidationError("--pretty and --compact format JSON: add --json.") }
    }

    func run() throws {
      try reportingFailures {
        let system = try options.settings.systemSource()
        let store = try options.settings.keyStore()
        // The TPM is used by fr-profile-journey only: this binary never loads libtss2.
        let inTPM: Bool
        do throws(IdentityError) { inTPM = try store.tpmKeyBlob() != nil } catch { throw Failure(error) }
        // A reset keeps the identity in its store: a TPM identity gets a new key in the TPM.
        if moveToTPM || (reset && inTPM) { JourneyExecutable.exec(["identity"] + Array(CommandLine.arguments.dropFirst(2))) }
        if inTPM && !reset && !publicKey {
          Self.checkInTPM(directory: store.directory, tcti: tcti, verbose: options.settings.verbose)
        } else if options.settings.verbose {
          detail(inTPM ? "key store: tpm, \(store.tpmKeyPath)" : "key store: file, \(store.privateKeyPath)")
        }
        var pem: String?
        do throws(IdentityError) {
          if reset {
            if let backup = try store.reset() {
              note("the previous key is kept as \(backup); AM will see this device as new.")
            }
          } else if try store.keyExists() {
            if try store.verify() { note("rebuilt \(store.publicKeyPath) from the private key: it was missing or did not belong to it.") }
          }
          if publicKey { pem = try store.publicKeyPEM() }
        } catch {
          throw Failure(error)
        }
        if json {
          var object: JSONObject = ["identifier": .string(try options.settings.identifier(system))]
          if let pem { object["publicKey"] = .string(pem) }
          try format.emit(.object(object))
        } else if let pem {
          try format.emit(text: pem + "\n")
        } else {
          try format.emit(text: try options.settings.identifier(system) + "\n")
        }
      }
    }

    /// The full check of an identity key in the TPM: `fr-profile-journey identity --check-only`
    /// (the executable that links libtss2) proves the key loads in this TPM. Its errors are
    /// printed by it; a failure exits here with its exit code (80, 81, …).
    static func checkInTPM(directory: String, tcti: String?, verbose: Bool) {
      var arguments = [JourneyExecutable.path, "identity", "--check-only", "--state-dir", directory]
      if let tcti { arguments += ["--tcti", tcti] }
      if verbose { arguments.append("--verbose") }
      let argv = arguments.map { strdup($0) } + [nil]
      defer { for pointer in argv { free(pointer) } }
      var child: pid_t = 0
      let spawned = posix_spawn(&child, arguments[0], nil, nil, argv, environ)
      guard spawned == 0 else {
        writeStandardError(
          "fr-profile: error: cannot run \(arguments[0]): \(String(cString: strerror(spawned))); install fr-profile-journey next to fr-profile.\n"
        )
        Glibc.exit(69)
      }
      var status: Int32 = 0
      while waitpid(child, &status, 0) < 0 && errno == EINTR {}
      let signalled = status & 0x7F != 0
      let code = (status >> 8) & 0xFF
      if signalled || code != 0 { Glibc.exit(signalled ? 70 : code) }
    }
  }
}
