import ArgumentParser
import Collectors
import ProfileCLI

@main
struct FRProfile: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "fr-profile",
    abstract: "A Linux device-profiling client for PingAM / ForgeRock journeys.",
    discussion: """
      Prints this machine's device profile in the shape the ForgeRock SDKs send to a journey's \
      DeviceProfileCallback, with a persistent key-derived identifier and a tamper score.

      EXIT CODES (match has its own: see 'fr-profile match --help'):
        0   success
        64  usage error (bad flags or arguments)
        65  bad data (corrupt key, invalid location value)
        66  an input file is missing or unreadable; the device key is missing
            but backups of it exist
        73  cannot create the state directory, the key or the output file
            (or --output names a link, FIFO, device or directory)
        74  I/O error
        77  permission problem (key or state directory mode/owner, or a
            directory on the way to it that others can write)
        78  configuration error (no state directory could be determined)

      OUTPUT: every command prints its result on stdout; -o FILE writes it to FILE \
      atomically instead ('-o -' is stdout). JSON is compact when piped or written to a \
      file and indented on a terminal; --pretty and --compact choose. Commands whose result \
      is text (identifier, tamper, match) print JSON with --json. Notes, warnings and errors \
      go to stderr, one line each.

      EXAMPLES:
        fr-profile collect --pretty
        fr-profile identifier --json
        fr-profile tamper
        fr-profile match stored.json incoming.json
        fr-profile callback step.json -o answer.json
        fr-profile journey --server https://am.example.com/am --realm alpha \\
            --tree DeviceProfiling --user demo
        fr-profile keys list
      """,
    version: versionText,
    subcommands: [
      Collect.self, Identifier.self, Tamper.self, Match.self, Callback.self, JourneyLauncher.self, KeysLauncher.self,
      PolicyLauncher.self,
    ]
  )

  static func main() {
    let arguments = Array(CommandLine.arguments.dropFirst())
    if arguments.first == "journey" { JourneyExecutable.exec(Array(arguments.dropFirst())) }
    // `help journey` is the journey client's own help (its options live in that executable).
    if arguments.first == "help", arguments.dropFirst().first == "journey" { JourneyExecutable.exec(["--help"]) }
    if arguments.first == "keys" || arguments.first == "policy" { JourneyExecutable.exec(arguments) }
    if arguments.first == "help", let topic = arguments.dropFirst().first, topic == "keys" || topic == "policy" {
      JourneyExecutable.exec([topic, "--help"])
    }
    if let request = FastCollect.parse(arguments) {
      do {
        try request.perform(exitWhenDone: true)
      } catch {
        exit(withError: error)
      }
      return
    }
    CommandMain.run(FRProfile.self, arguments)
  }
}
