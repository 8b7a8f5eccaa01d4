import ArgumentParser
import Collectors
import ProfileJSON

extension FRProfile {
  struct Collect: ParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Print this machine's device profile.",
      discussion: """
        The profile has the shape a PingAM Device Profile Collector node receives from the \
        Android SDK: identifier, version, metadata (platform, hardware, browser, network) and, \
        with --location, a configured position. Two runs on an unchanged machine print the same \
        bytes. Output is compact JSON when piped, indented on a terminal or with --pretty.

        EXAMPLES:
          fr-profile collect --pretty
          fr-profile collect --location --latitude 52.52 --longitude 13.405
          FR_PROFILE_LOCATION="52.52,13.405" fr-profile collect --location --output /run/profile.json
          fr-profile collect --no-metadata
          fr-profile collect --root tests/fixtures/laptop --state-dir /tmp/state
        """
    )

    @OptionGroup var options: ProfileOptions

    @Flag(name: .customLong("no-metadata"), help: "Leave out metadata: identifier and version (and location) only.")
    var noMetadata = false

    @Flag(help: "Include the configured location (never invented; omitted with a note when none is configured).")
    var location = false

    @Flag(help: "Indent the JSON (the default on a terminal).")
    var pretty = false

    @Flag(help: "Print compact JSON (the default when piped).")
    var compact = false

    @Option(name: .shortAndLong, help: ArgumentHelp("Write the profile to FILE atomically instead of stdout.", valueName: "FILE"))
    var output: String?

    func validate() throws {
      if pretty && compact { throw ValidationError("--pretty and --compact exclude each other.") }
      if !location && (options.latitude != nil || options.locationFile != nil) {
        throw ValidationError("--latitude/--longitude/--location-file need --location to be reported.")
      }
    }

    func run() throws {
      try reportingFailures {
        let system = try options.systemSource()
        let identifier = try options.identifier(system)
        let context = CollectionContext(system: system)
        let metadata = noMetadata ? nil : DeviceProfile.metadata(DeviceProfile.defaultCollectors(userAgent: options.userAgent), context)
        let position = location ? try options.configuredLocation() : nil
        let profile = DeviceProfile.profile(identifier: identifier, metadata: metadata, location: position)
        options.printDiagnostics(context.diagnostics)

        let compactText = JSONWriter.compact(profile)
        if compactText.utf8.count > DeviceProfile.defaultMaximumSize {
          writeStandardError("fr-profile: warning: the profile is \(compactText.utf8.count) bytes, above AM's default Maximum Profile Size of \(DeviceProfile.defaultMaximumSize) bytes.\n")
        }
        let usePretty = pretty || (!compact && output == nil && standardOutputIsTerminal)
        let text = (usePretty ? JSONWriter.pretty(profile) : compactText) + "\n"
        if let output {
          try writeFileAtomically(output, text)
        } else {
          try printOutput(text)
        }
      }
    }
  }
}
