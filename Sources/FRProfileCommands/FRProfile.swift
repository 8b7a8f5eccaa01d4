import ArgumentParser
import Collectors
import ProfileCLI

package struct FRProfile: ParsableCommand {
  package static let configuration = CommandConfiguration(
    commandName: "fr-profile",
    abstract: "A Linux device-profiling client for PingAM / ForgeRock journeys.",
    discussion: """
      Prints this machine's device profile in the shape the ForgeRock SDKs send to a journey's \
      DeviceProfileCallback, with a persistent key-derived identifier and a tamper score.

      \(ExitStatus.helpSection([.success, .usage] + ExitStatus.identity + [.libraryMissing] + ExitStatus.tpm))
      match, journey, keys and policy add their own: see their --help.

      OUTPUT: every command prints its result on stdout; -o FILE writes it to FILE \
      atomically instead ('-o -' is stdout). JSON is compact when piped or written to a \
      file and indented on a terminal; --pretty and --compact choose. Commands whose result \
      is text (identifier, tamper, match) print JSON with --json. Notes, warnings and errors \
      go to stderr, one line each.

      EXAMPLES:
        fr-profile collect --pretty
        fr-profile identifier --json
        fr-profile tamper
        fr-profile posture
        fr-profile match stored.json incoming.json
        fr-profile callback step.json -o answer.json
        fr-profile journey --server https://am.example.com/am --realm alpha \\
            --tree DeviceProfiling --user demo
        fr-profile keys list
      """,
    version: versionText,
    subcommands: [
      Collect.self, Identifier.self, Tamper.self, Posture.self, Match.self, Callback.self, Journey.self, Keys.self,
      Policy.self, Attest.self, Token.self, Logout.self, Signin.self,
    ]
  )

  package init() {}

  package static func main() {
    let arguments = Array(CommandLine.arguments.dropFirst())
    if let request = FastCollect.parse(arguments) {
      do {
        try request.perform(exitWhenDone: true)
      } catch {
        exit(withError: error)
      }
      return
    }
    CommandMain.run(
      FRProfile.self, arguments,
      hints: [
        "--password":
          "--password is not an option: a password in the arguments is visible to every user (ps, /proc). Pipe it with --password-stdin, or leave it out to be asked on the terminal"
      ], asynchronous: [Attest.Challenge.self])
  }
}
