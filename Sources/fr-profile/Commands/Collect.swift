import ArgumentParser
import ProfileCLI
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

    @Option(name: .shortAndLong, help: ArgumentHelp("Write the profile to FILE atomically instead of stdout (a regular file or a new one; a replaced file keeps its mode).", valueName: "FILE"))
    var output: String?

    var request: CollectRequest {
      CollectRequest(settings: options.settings, noMetadata: noMetadata, location: location, pretty: pretty, compact: compact, output: output)
    }

    func validate() throws {
      if let problem = request.problem { throw ValidationError(problem) }
    }

    func run() throws {
      try request.perform()
    }
  }
}

/// A parsed `collect` invocation: what ArgumentParser produces, and what the start-up fast
/// path (`FastCollect`) produces for the common invocations.
struct CollectRequest: Equatable {
  var settings = ProfileSettings()
  var noMetadata = false
  var location = false
  var pretty = false
  var compact = false
  var output: String?

  var problem: String? {
    if let problem = settings.problem { return problem }
    if pretty && compact { return "--pretty and --compact exclude each other." }
    if !location && (settings.latitude != nil || settings.locationFile != nil) {
      return "--latitude/--longitude/--location-file need --location to be reported."
    }
    return nil
  }

  func perform() throws {
    try reportingFailures {
      let system = try settings.systemSource()
      let identifier = try settings.identifier(system)
      let context = CollectionContext(system: system)
      let metadata = noMetadata ? nil : DeviceProfile.metadata(DeviceProfile.defaultCollectors(userAgent: settings.userAgent), context)
      let position = location ? try settings.configuredLocation() : nil
      let profile = DeviceProfile.profile(identifier: identifier, metadata: metadata, location: position)
      settings.printDiagnostics(context.diagnostics)

      let compactText = JSONWriter.compact(profile)
      warnIfOversized(compactText.utf8.count)
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
