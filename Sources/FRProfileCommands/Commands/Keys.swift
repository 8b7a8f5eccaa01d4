import ArgumentParser
import Collectors
import DeviceBinding
import Journey
import JourneyHTTP
import ProfileCLI
import ProfileJSON
import TPMKeys
import TPMProtocol

/// `fr-profile keys`: the bound keys of this device.
extension FRProfile {
  struct Keys: ParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "keys",
      abstract: "List, delete, unlock and export the keys bound to AM users (device binding).",
      discussion: """
        Bound keys live in <state-dir>/bound-keys/<kid>.json (0600, directory 0700), one per \
        AM user; 'fr-profile journey' creates them when a journey's Device Binding node asks.

        \(ExitStatus.helpSection(
        [.success, .negative, .usage, .dataError, .ioError, .permission, .configuration, .libraryMissing] + ExitStatus.tpm,
        [
          .success: "done",
          .negative:
            "no such key (delete, unlock), AM refused the delete, or unlock re-evaluated a breached policy",
          .dataError: "a stored key is corrupt",
          .permission: "the state directory or a key file is not safe (owner, mode, link)",
        ]))

        EXAMPLES:
          fr-profile keys list
          fr-profile keys list --json
          fr-profile keys delete 2ed8f1a6-0e55-4d8b-9a43-5f0c7c3d9b21
          echo "$SSO_TOKEN" | fr-profile keys delete 2ed8f1a6-0e55-4d8b-9a43-5f0c7c3d9b21 \\
              --server https://am.example.com/am --realm alpha --token-stdin
          fr-profile keys unlock 2ed8f1a6-0e55-4d8b-9a43-5f0c7c3d9b21
          fr-profile keys export 2ed8f1a6-0e55-4d8b-9a43-5f0c7c3d9b21 -o key.pem
        """,
      subcommands: [List.self, Delete.self, Unlock.self, Export.self]
    )

    struct Export: ParsableCommand {
      static let configuration = CommandConfiguration(
        abstract: "Write a key made in the TPM as a TSS2 PRIVATE KEY PEM (tpm2-openssl, openssl_tpm2_engine, GnuTLS).",
        discussion: """
          The PEM holds the TPM-wrapped key, as fr-profile keeps it: it loads in this TPM only, \
          under the storage key it was made under. Only keys made in the TPM and used without a PIN \
          (NONE, BIOMETRIC_*) under the persistent SRK (0x81000001, where provisioned TPMs keep it) \
          are exported: a file key has no TPM form, a PIN key's authorization value is the SHA-256 \
          of its PIN, which those loaders do not derive, and they re-create a template parent from \
          a template of their own. The file is written with mode 0600.

          \(ExitStatus.helpSection(
          [.success, .negative, .usage, .dataError, .cannotCreate, .ioError, .permission, .configuration],
          [
            .success: "written",
            .negative: "no such key, or the key cannot be exported (a file key, a PIN key, no persistent SRK)",
            .dataError: "the stored key is corrupt",
          ]))

          EXAMPLES:
            fr-profile keys export 2ed8f1a6-0e55-4d8b-9a43-5f0c7c3d9b21 -o key.pem
            TPM2OPENSSL_TCTI=device:/dev/tpmrm0 openssl dgst -sha256 -provider tpm2 -provider default \\
                -propquery '?provider=tpm2' -sign key.pem -out signature.der message.txt
          """)

      @OptionGroup var options: ProfileOptions
      @Argument(help: ArgumentHelp("The key's kid.", valueName: "KID")) var kid: String
      @OptionGroup var output: CredentialOutputFileOption

      func run() throws {
        try reportingFailures {
          let store = try options.settings.userKeyStore(create: false)
          let stored: StoredUserKey?
          do throws(KeyStoreError) { stored = try store.key(kid: kid) } catch { throw BindingExit.failure(error) }
          guard let stored else { throw Failure(.negative, "no bound key has the kid \(kid); see 'fr-profile keys list'.") }
          guard case .hardware(let key) = stored.material else {
            throw Failure(.negative, "the key \(kid) is a file key (store \(stored.record.store)): it has no TPM form to export.")
          }
          guard !key.pinProtected else {
            throw Failure(
              .negative,
              "the key \(kid) has a PIN: its TPM authorization value is the PIN's SHA-256, which TSS2 key loaders do not derive; it is not exported."
            )
          }
          let blob: TPMKeyBlob
          do throws(TPMError) { blob = try TPMKeyBlob.parsed(key.blob) } catch {
            throw Failure(.dataError, "the key \(kid)'s TPM blob is corrupt (\(error)).")
          }
          // Loaders re-create an owner-hierarchy parent from their own template (tpm2-openssl's
          // differs from the TCG one fr-profile uses: the key fails the TPM's integrity check
          // under it), so only keys under the persistent SRK travel.
          guard blob.parent == .persistentSRK else {
            throw Failure(
              .negative,
              "the key \(kid) was made under the storage key fr-profile re-creates from its template, which other TPM software "
                + "does not re-create the same way: provision the TCG template's SRK at 0x81000001 (the RSA 2048 one Windows and "
                + "swtpm_setup --create-spk make; fr-profile takes a persistent SRK only when it is a TCG template's), then bind again.")
          }
          let pem: String
          do { pem = try TSS2PrivateKey.pem(blob, emptyAuth: true) } catch {
            throw Failure(.dataError, "cannot encode the key \(kid) (\(error)).")
          }
          try output.emit(text: pem)
        }
      }
    }

    struct List: ParsableCommand {
      static let configuration = CommandConfiguration(abstract: "List the bound keys (kid, user, type, created, lock).")

      @OptionGroup var options: ProfileOptions
      @Flag(help: "Print a JSON array of the key records.") var json = false

      func run() throws {
        try reportingFailures {
          let settings = options.settings
          let store = try settings.userKeyStore(create: false)
          let records: [UserKeyRecord]
          let damaged: [DamagedKey]
          do throws(KeyStoreError) {
            records = try store.records()
            damaged = try store.damagedKeys()
          } catch {
            throw BindingExit.failure(error)
          }
          for key in damaged {
            writeStandardError(
              "fr-profile: warning: skipped the bound key \(key.kid): \(key.reason); 'fr-profile keys delete \(key.kid)' removes it.\n")
          }
          if json {
            // Usernames are a server's text: C1 controls and bidirectional overrides, which JSON
            // leaves raw, are escaped.
            try printOutput(ServerText.escapingControls(inJSON: JSONWriter.compact(.array(records.map(\.json)))) + "\n")
            return
          }
          if records.isEmpty {
            note("no keys are bound on this device (\(store.path)).")
            return
          }
          var lines = ["KID\tUSER\tTYPE\tCREATED\tSTATE"]
          for record in records {
            var state = record.locked ? "locked by \(record.lockingPolicy ?? "?")" : "usable"
            if let key = try? store.key(kid: record.kid), key.lock.lockedOut { state = "locked after \(key.lock.failures) wrong PINs" }
            let username = ServerText.printable(record.username, singleLine: true)
            lines.append("\(record.kid)\t\(username)\t\(record.authType.rawValue)\t\(record.createdAt)\t\(state)")
          }
          try printOutput(lines.joined(separator: "\n") + "\n")
        }
      }
    }

    struct Delete: ParsableCommand {
      static let configuration = CommandConfiguration(
        abstract: "Delete a bound key on this device, and with --server its record in AM too.",
        discussion: """
          Without --server only the local key goes; AM keeps the user's bound device (it still \
          counts toward the node's Max Saved Devices). With --server, AM's record goes first \
          (DELETE <server>/json/realms/…/users/<userId>/devices/2fa/binding/<kid>, \
          Accept-API-Version: resource=1.0, the SSO token from stdin as the <cookie-name> header); \
          only HTTP 200 counts, and on any other answer the local key is kept unless --force. \
          TLS is always verified (--cacert: only against the CAs in that file). \
          \(AMServerURL.helpParagraph(credential: Delete.credential))

          \(ExitStatus.helpSection(
          [.success, .negative, .usage, .dataError, .untrustedServer, .cannotConnect, .libraryMissing, .timedOut, .permission],
          [
            .success: "deleted", .negative: "no such key, or AM refused (its status and message on stderr)",
            .dataError: "no token on stdin", .permission: "unsafe key files",
          ]))
          """)

      @OptionGroup var options: ProfileOptions
      @Argument(help: ArgumentHelp("The key's kid (see 'fr-profile keys list').", valueName: "KID")) var kid: String

      @Option(help: ArgumentHelp("Also delete AM's record: AM's base URL, e.g. https://am.example.com/am.", valueName: "URL"))
      var server: String?

      @Option(help: ArgumentHelp("The realm of the user (with --server).", valueName: "REALM"))
      var realm: String = "root"

      @Flag(name: .customLong("token-stdin"), help: "Read the user's SSO token from stdin (with --server; never a flag).")
      var tokenStdin = false

      @Option(name: .customLong("cookie-name"), help: ArgumentHelp("AM's session cookie name.", valueName: "NAME"))
      var cookieName: String = "iPlanetDirectoryPro"

      @OptionGroup var connection: AMConnectionOptions

      @Flag(help: "With --server: delete the local key even when AM does not confirm.")
      var force = false

      /// What this command sends over --server, for the transport rule's messages.
      static let credential = "the SSO token"

      func validate() throws {
        if let server {
          _ = try AMServerURL(server, credential: Self.credential, insecureHTTP: connection.insecureHTTP)
          guard tokenStdin else { throw ValidationError("--server needs the user's SSO token: pipe it to --token-stdin.") }
          guard !cookieName.isEmpty, cookieName.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }) else {
            throw ValidationError("--cookie-name takes a header name such as iPlanetDirectoryPro.")
          }
        } else if tokenStdin || force || connection.cacert != nil || connection.insecureHTTP {
          throw ValidationError("--token-stdin, --force, --cacert and --insecure-http go with --server URL.")
        }
      }

      func run() throws {
        try reportingFailures {
          let store = try options.settings.userKeyStore(create: false)
          if let text = server {
            let server = try AMServerURL(text, credential: Self.credential, insecureHTTP: connection.insecureHTTP)
            if let warning = server.warning { writeStandardError(warning) }
            let key: StoredUserKey?
            do throws(KeyStoreError) { key = try store.key(kid: kid) } catch { throw BindingExit.failure(error) }
            guard let key else { throw Failure(.negative, "no bound key has the kid \(kid); see 'fr-profile keys list'.") }
            let token = try Self.tokenFromStandardInput()
            let url = Self.bindingURL(server: server.text, realm: realm, userId: key.record.userId, kid: kid)
            let response: HTTPResponse
            do throws(HTTPError) {
              response = try connection.client().delete(
                url,
                headers: [
                  "Accept-API-Version: resource=1.0", "Accept: application/json", "Content-Type: application/json",
                  "\(cookieName): \(token)", "User-Agent: fr-profile/\(frProfileVersion)",
                ])
            } catch {
              throw Failure(FRProfile.Journey.exitStatus(error), error.description)
            }
            guard response.status == 200 else {
              let message = (try? JSONParser.parse(response.body))?["message"]?.stringValue ?? ""
              let said = ServerText.printable(message, hiding: [token], singleLine: true)
              if force {
                _ = try deleteLocally(store)
                throw Failure(
                  .negative,
                  "AM answered HTTP \(response.status)\(said.isEmpty ? "" : ": " + said); deleted the local key anyway (--force).")
              }
              throw Failure(
                .negative,
                "AM answered HTTP \(response.status)\(said.isEmpty ? "" : ": " + said); the local key is kept (--force deletes it anyway).")
            }
            _ = try deleteLocally(store)
            note("deleted the bound key \(kid) in AM and on this device.")
            return
          }
          guard try deleteLocally(store) else {
            throw Failure(.negative, "no bound key has the kid \(kid); see 'fr-profile keys list'.")
          }
          note("deleted the bound key \(kid) on this device; AM still lists it (delete it there with --server URL --token-stdin).")
        }
      }

      private func deleteLocally(_ store: FileUserKeyStore) throws -> Bool {
        do throws(KeyStoreError) { return try store.delete(kid: kid) } catch { throw BindingExit.failure(error) }
      }

      /// `<server>/json/realms/root[/realms/<realm>]/users/<userId>/devices/2fa/binding/<kid>`, the
      /// userId in one percent-encoded path segment (as the Android SDK sends it).
      static func bindingURL(server: String, realm: String, userId: String, kid: String) -> String {
        let authenticate = AuthenticateEndpoint(server: server, realm: realm, tree: "-").url
        let base = authenticate.components(separatedBy: "/authenticate?").first ?? authenticate
        let encoded = (AuthenticateEndpoint.percentEncoded(userId), AuthenticateEndpoint.percentEncoded(kid))
        return base + "/users/" + encoded.0 + "/devices/2fa/binding/" + encoded.1
      }

      /// The SSO token: the first line of stdin, printable ASCII only (it becomes a header).
      static func tokenFromStandardInput() throws -> String {
        let bytes = readStandardInput()
        let line = bytes.split(separator: UInt8(ascii: "\n"), maxSplits: 1, omittingEmptySubsequences: false).first ?? []
        var token = Array(line)
        if token.last == UInt8(ascii: "\r") { token.removeLast() }
        guard !token.isEmpty, token.count <= 4096, token.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
          throw Failure(.dataError, "--token-stdin: standard input holds no SSO token on its first line (printable, no spaces).")
        }
        return String(decoding: token, as: UTF8.self)
      }
    }

    struct Unlock: ParsableCommand {
      static let configuration = CommandConfiguration(
        abstract: "Unlock a key a breached app policy locked, after evaluating its policies again.")

      @OptionGroup var options: ProfileOptions
      @OptionGroup var binding: BindingOptions
      @Argument(help: ArgumentHelp("The key's kid.", valueName: "KID")) var kid: String

      func run() throws {
        try reportingFailures {
          let settings = options.settings
          let store = try settings.userKeyStore(create: false)
          try BindingSetup.refuseRoot(settings, command: "keys unlock")
          let setup = BindingSetup(options: binding, settings: settings, interactive: false)
          let context = setup.policyContext(verifier: setup.verifier())
          let evaluator = PolicyEvaluator()
          let outcome: String?
          do {
            outcome = try store.update(kid: kid) { key -> String in
              if let breach = evaluator.firstBreach(key.record.policies, context: context) {
                key.record.locked = true
                key.record.lockingPolicy = breach.name
                return "policy \(breach.name) is still breached (\(breach.outcome.detail)); the key stays locked"
              }
              key.record.locked = false
              key.record.lockingPolicy = nil
              return ""
            }
          } catch let error as KeyStoreError {
            throw BindingExit.failure(error)
          }
          guard let outcome else { throw Failure(.negative, "no bound key has the kid \(kid); see 'fr-profile keys list'.") }
          guard outcome.isEmpty else { throw Failure(.negative, outcome + ".") }
          note("the key \(kid) is unlocked: its policies hold on this device.")
        }
      }
    }
  }
}
