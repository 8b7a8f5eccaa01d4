import ArgumentParser
import Collectors
import DeviceMatch
import ProfileCLI
import ProfileJSON
import SystemCalls

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

extension FRProfile {
  struct Match: ParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Answer what ForgeRock's device-match script would answer for two profiles, and why.",
      discussion: """
        STORED holds the profiles AM has stored for the user (old), INCOMING the profile a \
        client just sent (new). The first stored profile whose identifier equals the incoming \
        one decides: true when metadata and location match under the config, else false; \
        none gives unknownDevice. The command prints which leaves differed (JSON path, stored \
        and incoming values, weight), the running sum against maxUnmatchedAttrs, and the \
        distance against allowedRadius.

        STORED may be one profile, a JSON array of profiles, a JSON array of strings each \
        holding a serialised profile (as AM's DAO hands them to the script), JSON Lines (one \
        profile per line; sniffed from the first lines, or forced by a .jsonl/.ndjson name), \
        or AM's REST listing {"result": [...]}. It is streamed: memory does not grow with the \
        number of profiles. An array element that is a JSON string is parsed as a serialised \
        profile; elsewhere the text is the profile, parsed once, as the script's JSON.parse \
        does. Either file may be '-' for standard input. Text that is not JSON gets the \
        script's treatment (a stored entry is skipped; an unreadable incoming profile gives \
        unknownDevice) and a warning on standard error with file, line and column. A stored \
        array or listing is one JSON text: cut short, or with text after its end, the whole \
        file is one entry the script skips (unknownDevice); JSON Lines are read line by line.

        CONFIG: --config FILE, else the first of: $FR_PROFILE_MATCH_CONFIG; \
        ./match-config.json; match-config.json at the root of the checkout the binary was \
        built in; <prefix>/share/fr-profile/match-config.json next to an installed binary; \
        /etc/fr-profile/match-config.json. If none exists the command stops with exit code 78 \
        rather than silently using other settings; --script-defaults uses the script's own \
        defaults ({} weights, maxUnmatchedAttrs 0, allowedRadius 100) instead.

        LIMITS: one profile (INCOMING, or one stored entry) may be at most 16 MiB; a larger \
        stored entry is skipped with a warning, a larger INCOMING is an error (65). A config \
        may be at most 1 MiB.

        \(ExitStatus.helpSection(
          [.success, .negative, .unknownDevice, .cannotAnswer, .usage, .dataError, .noInput, .cannotCreate, .ioError, .permission, .configuration],
          [
            .success: "true", .negative: "false", .unknownDevice: "unknownDevice",
            .cannotAnswer: "the script would throw (e.g. a location is missing)",
            .dataError: "INCOMING is larger than 16 MiB", .noInput: "a file cannot be read",
            .ioError: "the output cannot be written (e.g. a full disk)",
            .cannotCreate: "the output file cannot be created (no such directory; a link, FIFO or device)",
            .permission: "--output names another user's file, or a directory others can change",
            .configuration: "no usable match config (missing, not JSON, unknown key, too large)",
          ]))
        With --each or --summary the exit code is still the script's answer: the first stored \
        profile with the incoming identifier decides.

        OUTPUT: text by default, JSON with --json (indented on a terminal or with --pretty, \
        compact when piped, written to a file or with --compact). -o FILE writes the output \
        atomically instead of to standard output ('-o -' is standard output): FILE appears \
        whole when the command ends, or not at all; the exit code is the same as without -o.

        EXAMPLES:
          fr-profile match stored.json incoming.json
          fr-profile match --json am-devices.json incoming.json
          fr-profile match --json --pretty -o result.json stored.json incoming.json
          fr-profile collect --location \\
              | fr-profile match --config strict.json stored.json -
          fr-profile match --each --json logins.jsonl incoming.json
          fr-profile match --summary logins.jsonl incoming.json
        """
    )

    @Argument(help: ArgumentHelp("The stored (old) profiles: a file, or '-' for standard input.", valueName: "stored"), completion: .file())
    var stored: String

    @Argument(
      help: ArgumentHelp("The incoming (new) profile: a file, or '-' for standard input.", valueName: "incoming"), completion: .file())
    var incoming: String

    @Option(
      name: .long, help: ArgumentHelp("The match config (default: match-config.json, see CONFIG).", valueName: "file"), completion: .file())
    var config: String?

    @Flag(name: .long, help: "Use the script's built-in defaults instead of a config file.")
    var scriptDefaults = false

    @OptionGroup(title: "Output Options") var format: OutputOptions

    @Flag(name: .long, help: "Print the result as JSON (with --each: JSON Lines, one compact object per line).")
    var json = false

    @Flag(name: .long, help: "Evaluate every stored profile with the incoming identifier, not only the first.")
    var each = false

    @Flag(name: .long, help: "Print only totals and the leaf keys that mismatched most often (implies --each).")
    var summary = false

    func validate() throws {
      if stored == "-" && incoming == "-" {
        throw ValidationError("STORED and INCOMING cannot both be '-' (standard input)")
      }
      if scriptDefaults && config != nil {
        throw ValidationError("--config and --script-defaults cannot be used together")
      }
      if !json && (format.pretty || format.compact) { throw ValidationError("--pretty and --compact format JSON: add --json.") }
      if each && !summary && format.pretty {
        throw ValidationError("--each --json prints JSON Lines, one compact object per line: --pretty does not apply.")
      }
    }

    func run() throws {
      try reportingFailures { try execute() }
    }

    func execute() throws {
      let (matchConfig, configSource) = try loadConfig()
      let matcher = DeviceMatcher(config: matchConfig)
      for key in matchConfig.nonNumericWeights {
        warn("\(configSource): attrWeights.\(MatchConfigError.shown(key)) is not a number; the script counts it as 1")
      }

      // INCOMING: one profile; unreadable text gives unknownDevice, as in the script.
      let incomingName = incoming == "-" ? "<stdin>" : incoming
      let incomingBytes = try readWhole(incoming, name: incomingName, limit: ProfileLimits.maxProfileBytes) {
        Failure(
          .dataError,
          "\(incomingName) is larger than \(ProfileLimits.maxProfileBytes >> 20) MiB, the limit for one profile "
            + "(a device profile is a few KB)")
      }
      var incomingProfile: JSON?
      switch ProfileText.parse(incomingBytes) {
      case .success(let value): incomingProfile = value
      case .failure(let error):
        warn("\(incomingName):\(error.line):\(error.column): \(error.message) (the script answers unknownDevice)")
      }

      let storedName = stored == "-" ? "<stdin>" : stored
      let fd = try open(stored, name: storedName)
      defer { if fd != 0 { close(fd) } }
      let lower = stored.lowercased()
      let reader = StoredProfileReader(
        fileDescriptor: fd, jsonLinesHint: lower.hasSuffix(".jsonl") || lower.hasSuffix(".ndjson"))

      var output = Output(json: json, pretty: format.usePretty && !(each && !summary), file: format.file)
      var engine = ReplayEngine(
        matcher: matcher, incoming: incomingProfile, each: each || summary, summary: summary,
        workers: Self.environmentNumber("FR_PROFILE_MATCH_WORKERS"), warn: warn)
      if let blockSize = Self.environmentNumber("FR_PROFILE_MATCH_BLOCK") { engine.blockSize = blockSize }
      let report = try engine.run(reader: reader, storedName: storedName) { result, source, index in
        try output.result(result, source: source, index: index, config: configSource, incoming: incomingProfile)
      }
      if summary {
        try output.summary(report.totals, decision: report.decision, decisionSource: report.decisionSource)
      }
      try output.finish()
      if let error = report.decision.error, report.decision.outcome == .error {
        warn("\(error)")
      }
      throw ExitCode(Self.exitStatus(for: report.decision.outcome).rawValue)
    }

    /// A positive number from the environment: FR_PROFILE_MATCH_WORKERS (parallel summary
    /// workers) and FR_PROFILE_MATCH_BLOCK (bytes per worker block) let tests pin the
    /// parallel split; neither changes any result.
    static func environmentNumber(_ name: String) -> Int? {
      guard let text = getenv(name), let value = Int(String(cString: text)), value > 0 else { return nil }
      return value
    }

    static func exitStatus(for outcome: Outcome) -> ExitStatus {
      switch outcome {
      case .true: .success
      case .false: .negative
      case .unknownDevice: .unknownDevice
      case .error: .cannotAnswer
      }
    }

    // MARK: Config

    func loadConfig() throws -> (MatchConfig, String) {
      if scriptDefaults { return (MatchConfig(), "script defaults") }
      let path: String
      if let config {
        path = config
      } else {
        let candidates = Self.defaultConfigCandidates()
        guard let found = candidates.first(where: { access($0, R_OK) == 0 }) else {
          throw Failure(
            .configuration,
            "no match config found (looked for: \(candidates.joined(separator: ", "))). "
              + "Pass --config FILE, or --script-defaults for the script's own defaults.")
        }
        path = found
      }
      // A config is a few hundred bytes; the cap keeps a hostile one from costing minutes.
      let bytes = try readWhole(path, name: path, limit: ProfileLimits.maxConfigBytes) {
        Failure(
          .configuration,
          "\(path) is larger than \(ProfileLimits.maxConfigBytes >> 20) MiB, the limit for a match config "
            + "(a config is a few hundred bytes)")
      }
      let value: JSON
      do {
        value = try JSONParser.parse(bytes)
      } catch {
        throw Failure(
          .configuration, "\(path):\(error.line):\(error.column): the match config is not JSON: \(error.message)")
      }
      do {
        return (try MatchConfig(json: value), path)
      } catch {
        throw Failure(.configuration, "\(path): \(error)")
      }
    }

    /// Where the default config is looked for, in order.
    static func defaultConfigCandidates() -> [String] {
      var list: [String] = []
      if let env = getenv("FR_PROFILE_MATCH_CONFIG") { list.append(String(cString: env)) }
      list.append("match-config.json")
      if let executable = executablePath() {
        var directory = parent(executable)
        let installPrefix = parent(directory)
        // The checkout the binary was built in: .build/<triple>/<config>/fr-profile.
        while directory != "/" && !directory.isEmpty {
          if access(directory + "/Package.swift", F_OK) == 0 {
            list.append(directory + "/match-config.json")
            break
          }
          directory = parent(directory)
        }
        list.append(installPrefix + "/share/fr-profile/match-config.json")
      }
      list.append("/etc/fr-profile/match-config.json")
      return list
    }

    static func executablePath() -> String? {
      var buffer = [CChar](repeating: 0, count: 4096)
      let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
      guard count > 0 else { return nil }
      return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    static func parent(_ path: String) -> String {
      guard let slash = path.lastIndex(of: "/") else { return "." }
      return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    // MARK: Files

    func open(_ path: String, name: String) throws -> Int32 {
      if path == "-" { return 0 }
      let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
      if fd < 0 { throw Failure(.noInput, "cannot read \(name): \(String(cString: strerror(errno))).") }
      return fd
    }

    /// The whole file, at most `limit` bytes; `tooLarge` is the failure beyond that.
    func readWhole(_ path: String, name: String, limit: Int, tooLarge: () -> Failure) throws -> [UInt8] {
      let fd = try open(path, name: name)
      defer { if fd != 0 { close(fd) } }
      let bytes: [UInt8]
      do throws(SystemCallError) { bytes = try readAll(fd, limit: limit + 1) } catch {
        throw Failure(.noInput, "cannot read \(name): \(errorText(error.errno)).")
      }
      if bytes.count > limit { throw tooLarge() }
      return bytes
    }
  }
}

/// Prints a warning on standard error.
func warn(_ message: String) {
  writeStandardError("fr-profile: warning: \(message)\n")
}
