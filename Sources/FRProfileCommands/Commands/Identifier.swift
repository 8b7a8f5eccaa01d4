import ArgumentParser
import Collectors
import DeviceBinding
import DeviceIdentity
import ProfileCLI
import ProfileJSON
import SystemCalls
import TPMKeys
import TPMProtocol

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

        \(ExitStatus.helpSection([.success, .usage] + ExitStatus.identity + [.libraryMissing] + ExitStatus.tpm))

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
        "Make a new identity key inside the TPM (the identifier changes; the file key is kept as a backup)."
    )
    var moveToTPM = false

    /// The TPM of --move-to-tpm, the check and the --reset of a TPM key.
    @OptionGroup var tpm: TPMOptions

    func validate() throws {
      if reset && publicKey { throw ValidationError("--reset and --public-key exclude each other.") }
      if moveToTPM && (reset || publicKey) { throw ValidationError("--move-to-tpm excludes --reset and --public-key.") }
      if !json && (format.pretty || format.compact) { throw ValidationError("--pretty and --compact format JSON: add --json.") }
    }

    func run() throws {
      try reportingFailures {
        let settings = options.settings
        let system = try settings.systemSource()
        let store = try settings.keyStore()
        // libtss2 is loaded only here, when the identity is (or is to be) in the TPM.
        let blob: [UInt8]?
        do throws(IdentityError) { blob = try store.tpmKeyBlob() } catch { throw Failure(error) }
        let tcti = try tpm.resolved()
        var pem: String?
        if moveToTPM {
          try Self.moveToTPM(store: store, existing: blob, tcti: tcti, settings: settings, system: system)
        } else if reset, blob != nil {
          // The identity keeps its store. The new key is made before anything changes: with no
          // usable TPM this fails (80) and the identity stays as it was.
          let made = try Self.makeTPMKey(tcti: tcti)
          let backup: String
          do throws(IdentityError) { backup = try store.resetTPMKey(made.bytes) } catch { throw Failure(error) }
          if settings.verbose { detail("made a new identity key in the TPM at \(tcti)") }
          note("the previous key is kept as \(backup); AM will see this device as new.")
        } else {
          if let blob, !reset, !publicKey {
            // The full check: the key must load under this TPM's storage key.
            do throws(TPMError) {
              let key = try TPMKeyBlob.parsed(blob)
              try TPMContext.session(tcti: tcti) { (tpm) throws(TPMError) in try tpm.verifyLoads(key) }
            } catch {
              throw TPMExit.failure(TPMUserKeyStore.mapped(error, tcti: tcti))
            }
          }
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
        }
        if settings.verbose {
          let inTPM = (try? store.tpmKeyBlob()) != nil
          detail(inTPM ? "key store: tpm (\(tcti)), \(store.tpmKeyPath)" : "key store: file, \(store.privateKeyPath)")
        }
        if json {
          var object: JSONObject = ["identifier": .string(try settings.identifier(system))]
          if let pem { object["publicKey"] = .string(pem) }
          try format.emit(.object(object))
        } else if let pem {
          try format.emit(text: pem + "\n")
        } else {
          try format.emit(text: try settings.identifier(system) + "\n")
        }
      }
    }

    /// A new P-256 signing key inside the TPM at `tcti`.
    static func makeTPMKey(tcti: String) throws -> TPMKeyBlob {
      do throws(TPMError) { return try TPMContext.session(tcti: tcti) { (tpm) throws(TPMError) in try tpm.createSigningKey() } } catch {
        throw TPMExit.failure(TPMUserKeyStore.mapped(error, tcti: tcti))
      }
    }

    /// `--move-to-tpm`: a new identity key in the TPM; the file key is kept as a backup.
    static func moveToTPM(
      store: DeviceKeyStore, existing: [UInt8]?, tcti: String, settings: ProfileSettings, system: SystemSource
    ) throws {
      if existing != nil {
        note("the identity key is already in the TPM (\(store.tpmKeyPath)); nothing changed.")
        return
      }
      let made = try makeTPMKey(tcti: tcti)
      let before = try? store.keyExists() ? settings.identifier(system) : nil
      do throws(IdentityError) {
        let (adopted, backup) = try store.adoptTPMKey(made.bytes)
        let after = try store.identifier(for: system)
        if !adopted {
          note("the identity key is already in the TPM (\(store.tpmKeyPath)), moved there by a concurrent run.")
        } else if let before {
          note(
            "the identity key is now in the TPM at \(tcti); the identifier changed from \(before) to \(after): AM will see this device as new."
              + (backup.map { " The file key is kept as \($0)." } ?? ""))
        } else {
          note("made a new identity key in the TPM at \(tcti); there was no identity before, so AM sees a new device.")
        }
      } catch {
        throw Failure(error)
      }
    }
  }
}
