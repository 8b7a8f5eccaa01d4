import ArgumentParser
import Collectors
import DeviceBinding
import ProfileCLI
import ProfileJSON
import TPMKeys

/// `fr-profile identifier --move-to-tpm`, and `fr-profile identifier [--reset]` when the
/// identity key is in a TPM: fr-profile execs this (`fr-profile-journey identity …`) so that
/// its own binary never loads libtss2.
struct IdentityCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "fr-profile identifier",
    abstract: "Check the device identity key in the TPM, or move the identity into the TPM.",
    discussion: """
      --move-to-tpm creates a P-256 key inside the TPM (under its storage key) and makes it \
      the device identity: the identifier CHANGES (AM sees a new device), the file key is \
      kept as device-key.pem.<time>.bak, and only the TPM-wrapped key (device-key.tpm) is \
      written. --reset of an identity in the TPM makes a new key in the TPM the same way \
      (the identifier changes; the old blob is kept as device-key.tpm.<time>.bak). Without \
      them, the command proves that the identity key loads in this TPM and prints the \
      identifier. collect reads the public key from device-key.tpm and never talks to the \
      TPM. With no usable TPM nothing changes (exit 80). The output is that of \
      'fr-profile identifier': the identifier, or with --json {"identifier": …}, on stdout \
      or in the file -o names.

      EXIT CODES:
        0   the identifier is on stdout
        64  usage error
        80  no usable TPM at --tcti (FR_PROFILE_TCTI, default device:/dev/tpmrm0)
        81  the identity key was made by another TPM: the state directory was copied
            from another machine, or the TPM was cleared (no new identity is made)
        83  another TPM failure
        65, 73, 74, 77, 78  as for collect (key, state directory, permissions)

      EXAMPLES:
        fr-profile identifier --move-to-tpm
        fr-profile identifier --move-to-tpm --json -o identity.json
        fr-profile identifier --reset
        fr-profile identifier --verbose --tcti swtpm:host=127.0.0.1,port=2321
      """
  )

  @OptionGroup var options: ProfileOptions

  @OptionGroup(title: "Output Options") var format: OutputOptions

  @Flag(help: "Print JSON: {\"identifier\": …}.")
  var json = false

  @Option(
    name: .customLong("tcti"),
    help: ArgumentHelp("The TPM, in tpm2-tss's loader syntax (default: $FR_PROFILE_TCTI, else device:/dev/tpmrm0).", valueName: "CONF"))
  var tcti: String?

  @Flag(
    name: .customLong("move-to-tpm"), help: "Make a new identity key in the TPM (the identifier changes; the file key is kept as a backup)."
  )
  var moveToTPM = false

  @Flag(help: "Make a new identity key where the identity is: in the TPM (the old blob is kept as device-key.tpm.<time>.bak), else a file.")
  var reset = false

  /// Used by `fr-profile identifier`: check the key in the TPM, print nothing on success.
  @Flag(name: .customLong("check-only"), help: .hidden)
  var checkOnly = false

  func validate() throws {
    let given = [("--move-to-tpm", moveToTPM), ("--reset", reset), ("--check-only", checkOnly)].filter(\.1).map(\.0)
    if given.count > 1 { throw ValidationError("\(given.joined(separator: " and ")) exclude each other.") }
    if !json && (format.pretty || format.compact) { throw ValidationError("--pretty and --compact format JSON: add --json.") }
  }

  func run() throws {
    try reportingFailures {
      let settings = options.settings
      let system = try settings.systemSource()
      let store = try settings.keyStore()
      let tcti = TPMConfiguration.tcti(option: tcti, environment: processEnvironment())
      let existing: [UInt8]?
      do throws(IdentityError) { existing = try store.tpmKeyBlob() } catch { throw Failure(error) }
      if reset {
        // The identity keeps its store. The new key is made before anything changes: with no
        // usable TPM this fails (80) and the identity stays as it was.
        var backup: String?
        if existing != nil {
          let blob: TPMKeyBlob
          do throws(TPMError) { blob = try TPMContext(tcti: tcti).createSigningKey() } catch {
            throw TPMExit.failure(TPMUserKeyStore.mapped(error, tcti: tcti))
          }
          do throws(IdentityError) { backup = try store.resetTPMKey(blob.bytes) } catch { throw Failure(error) }
          if settings.verbose { detail("made a new identity key in the TPM at \(tcti)") }
        } else {
          do throws(IdentityError) { backup = try store.reset() } catch { throw Failure(error) }
        }
        if let backup { note("the previous key is kept as \(backup); AM will see this device as new.") }
      } else if moveToTPM {
        if existing != nil {
          note("the identity key is already in the TPM (\(store.tpmKeyPath)); nothing changed.")
        } else {
          let blob: TPMKeyBlob
          do throws(TPMError) { blob = try TPMContext(tcti: tcti).createSigningKey() } catch {
            throw TPMExit.failure(TPMUserKeyStore.mapped(error, tcti: tcti))
          }
          let before = try? store.keyExists() ? settings.identifier(system) : nil
          do throws(IdentityError) {
            let (adopted, backup) = try store.adoptTPMKey(blob.bytes)
            let after = try store.identifier(for: system)
            if !adopted {
              note("the identity key is already in the TPM (\(store.tpmKeyPath)), moved there by a concurrent run.")
            } else {
              note(
                "the identity key is now in the TPM at \(tcti); the identifier changed"
                  + (before.map { " from \($0) to \(after)" } ?? "") + ": AM will see this device as new."
                  + (backup.map { " The file key is kept as \($0)." } ?? ""))
            }
          } catch {
            throw Failure(error)
          }
        }
      } else if let existing {
        // The full check: the key must load under this TPM's storage key.
        do throws(TPMError) {
          try TPMContext(tcti: tcti).verifyLoads(try TPMKeyBlob(bytes: existing))
        } catch {
          throw TPMExit.failure(TPMUserKeyStore.mapped(error, tcti: tcti))
        }
      }
      if checkOnly {
        if settings.verbose { detail("key store: tpm (\(tcti)), \(store.tpmKeyPath)") }
        return
      }
      let identifier = try settings.identifier(system)
      if settings.verbose {
        detail(
          (try? store.tpmKeyBlob()) != nil ? "key store: tpm (\(tcti)), \(store.tpmKeyPath)" : "key store: file, \(store.privateKeyPath)")
      }
      // The output convention of `fr-profile identifier`.
      if json {
        try format.emit(.object(["identifier": .string(identifier)]))
      } else {
        try format.emit(text: identifier + "\n")
      }
    }
  }
}
