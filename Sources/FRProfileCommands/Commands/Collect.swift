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
  package struct Collect: ParsableCommand {
    package init() {}

    package static let configuration = CommandConfiguration(
      abstract: "Print this machine's device profile.",
      discussion: """
        The profile has the shape a PingAM Device Profile Collector node receives from the \
        Android SDK: identifier, version, metadata (platform, hardware, browser, network) and, \
        with --location, a configured position. Two runs on an unchanged machine print the same \
        bytes. Output is compact JSON when piped, indented on a terminal or with --pretty.

        EXAMPLES:
          fr-profile collect --pretty
          fr-profile collect --location --latitude -33.8688 --longitude 151.2093
          FR_PROFILE_LOCATION="52.52,13.405" fr-profile collect --location \\
              -o profile.json
          fr-profile collect --no-metadata -o -
          fr-profile collect --root Tests/CollectorsTests/Fixtures/machines/laptop \\
              --state-dir "$HOME/fr-profile-fixture"
        """
    )

    @OptionGroup var options: ProfileOptions

    @Flag(name: .customLong("no-metadata"), help: "Leave out metadata: identifier and version (and location) only.")
    var noMetadata = false

    @Flag(help: "Include the configured location (never invented; omitted with a note when none is configured).")
    var location = false

    @OptionGroup(title: "Output Options") var format: OutputOptions

    package var request: CollectRequest {
      CollectRequest(
        settings: options.settings, noMetadata: noMetadata, location: location, pretty: format.pretty,
        compact: format.compact, output: format.output)
    }

    package func validate() throws {
      if let problem = request.problem { throw ValidationError(problem) }
    }

    package func run() throws {
      try request.perform()
    }
  }
}

/// A parsed `collect` invocation: what ArgumentParser produces, and what the start-up fast
/// path (`FastCollect`) produces for the common invocations.
package struct CollectRequest: Equatable {
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

  /// Collects and writes the profile. With `exitWhenDone`, the process ends (status 0) right
  /// after the output is written, before the profile tree, the context and the caches are torn
  /// down: freeing memory the kernel is about to drop anyway was ~0.15 M instructions, a sixth
  /// of a collect (bench/README.md). The login fast path (FRProfile.main) asks for it.
  func perform(exitWhenDone: Bool = false) throws {
    try reportingFailures {
      let system = try settings.systemSource()
      let identifier = try settings.identifier(system)
      let context = CollectionContext(system: system, diagnostics: Diagnostics(recordsDetail: settings.verbose))
      let metadata = noMetadata ? nil : DeviceProfile.metadata(DeviceProfile.defaultCollectors(userAgent: settings.userAgent), context)
      let position = location ? try settings.configuredLocation() : nil
      let profile = DeviceProfile.profile(identifier: identifier, metadata: metadata, location: position)
      settings.printDiagnostics(context.diagnostics)
      if settings.verbose {
        for line in Provenance.explain(profile, metadata: !noMetadata, location: location) { detail(line) }
      }

      let compactText = JSONWriter.compact(profile)
      warnIfOversized(compactText.utf8.count)
      let file = output == "-" ? nil : output  // `-o -` is stdout
      let usePretty = pretty || (!compact && file == nil && standardOutputIsTerminal)
      let text = (usePretty ? JSONWriter.pretty(profile) : compactText) + "\n"
      if let file {
        try writeFileAtomically(file, text)
      } else {
        try printOutput(text)
      }
      if exitWhenDone { exit(0) }
    }
  }
}
