import ArgumentParser
import ProfileCLI
import Collectors
import ProfileJSON

extension FRProfile {
  struct Identifier: ParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Print the device identifier, rotate it, or print the public key.",
      discussion: """
        The identifier is <host>-<key>: 16 hex digits of an app-specific HMAC of /etc/machine-id \
        and the SHA-1 of the device's public key. The key pair is made on first use and kept in \
        <state-dir>/device-key.pem (mode 0600). This command also checks that the cached public \
        key belongs to the private key. The private key is never printed.

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

    @Flag(help: "Make a new key pair (the old key is kept as device-key.pem.<time>.bak) and print the new identifier.")
    var reset = false

    @Flag(name: .customLong("public-key"), help: "Print the public key (PEM) instead of the identifier.")
    var publicKey = false

    func validate() throws {
      if reset && publicKey { throw ValidationError("--reset and --public-key exclude each other.") }
      if !json && (format.pretty || format.compact) { throw ValidationError("--pretty and --compact format JSON: add --json.") }
    }

    func run() throws {
      try reportingFailures {
        let system = try options.settings.systemSource()
        let store = try options.settings.keyStore()
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
  }
}
