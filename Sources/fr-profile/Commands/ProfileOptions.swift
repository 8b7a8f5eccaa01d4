import ArgumentParser
import Collectors

/// Options that shape a profile, shared by every command that collects one, so that they mean
/// the same everywhere and name one identity.
struct ProfileOptions: ParsableArguments {
  @Option(name: .customLong("state-dir"), help: ArgumentHelp(
    "Directory of the device key (default: $FR_PROFILE_HOME; for root /var/lib/fr-profile; else $XDG_STATE_HOME/fr-profile or ~/.local/state/fr-profile).",
    valueName: "DIR"))
  var stateDirectory: String?

  @Option(name: .customLong("root"), help: ArgumentHelp(
    "Collect a recorded machine tree (its /proc, /sys, /etc) instead of /.", valueName: "DIR"))
  var root: String = "/"

  @Option(help: ArgumentHelp("Latitude to report with --location (-90…90).", valueName: "DEGREES"))
  var latitude: Double?

  @Option(help: ArgumentHelp("Longitude to report with --location (-180…180).", valueName: "DEGREES"))
  var longitude: Double?

  @Option(name: .customLong("location-file"), help: ArgumentHelp(
    "File holding \"LATITUDE,LONGITUDE\" (default: <state-dir>/location, when present).", valueName: "FILE"))
  var locationFile: String?

  @Option(name: .customLong("user-agent"), help: ArgumentHelp(
    "Report this user agent instead of fr-profile's own.", valueName: "TEXT"))
  var userAgent: String?

  @Flag(name: .shortAndLong, help: "Explain on stderr where each value came from and what was dropped.")
  var verbose = false

  func validate() throws {
    if let problem = settings.problem { throw ValidationError(problem) }
  }

  /// The parsed values as a plain value the commands (and the `collect` fast path) share.
  var settings: ProfileSettings {
    ProfileSettings(
      stateDirectory: stateDirectory, root: root, latitude: latitude, longitude: longitude,
      locationFile: locationFile, userAgent: userAgent, verbose: verbose)
  }
}

/// What `ProfileOptions` holds, without ArgumentParser: how to find the system, the identity
/// and the location.
struct ProfileSettings: Equatable {
  var stateDirectory: String?
  var root = "/"
  var latitude: Double?
  var longitude: Double?
  var locationFile: String?
  var userAgent: String?
  var verbose = false

  /// The first rule the values break, as a usage message; nil when they are valid.
  var problem: String? {
    if (latitude == nil) != (longitude == nil) { return "--latitude and --longitude go together: give both or neither." }
    if root.isEmpty { return "--root needs a directory." }
    return nil
  }

  /// The system source for the chosen root; a missing root directory is an error.
  func systemSource() throws -> SystemSource {
    let environment = processEnvironment()
    let system = SystemSource(root: root, environment: environment)
    if !system.isLive {
      guard SystemSource(root: "/", environment: [:]).status(root, followLinks: true)?.isDirectory == true else {
        throw Failure(code: 66, "--root \(root) is not a directory.")
      }
    }
    return system
  }

  func keyStore() throws -> DeviceKeyStore {
    let directory = stateDirectory ?? DeviceKeyStore.defaultDirectory(environment: processEnvironment())
    guard let directory else { throw Failure(IdentityError.noStateDirectory) }
    return DeviceKeyStore(directory: directory)
  }

  /// The identifier for `system`'s machine-id and the stored key (created on first use).
  func identifier(_ system: SystemSource) throws -> String {
    let identifier: String
    let store = try keyStore()
    do { identifier = try store.identifier(for: system) } catch { throw Failure(error) }
    if !identifier.contains("-") {
      note("no usable /etc/machine-id: the identifier is the key part alone (the iOS SDK's shape).")
    }
    return identifier
  }

  /// The configured location, or nil with a note on stderr when none is configured.
  func configuredLocation() throws -> Location? {
    let defaultFile = (try? keyStore()).map { $0.directory + "/location" }
    do {
      let found = try Location.configured(
        latitude: latitude, longitude: longitude, environment: processEnvironment(),
        file: locationFile ?? defaultFile, fileRequired: locationFile != nil)
      if found == nil {
        note("location asked for, but no position is configured (--latitude/--longitude, FR_PROFILE_LOCATION or a location file); location omitted.")
      }
      if verbose, let found { detail("location from \(found.source)") }
      return found?.location
    } catch {
      throw Failure(code: error.exitCode, error.description)
    }
  }

  func printDiagnostics(_ diagnostics: Diagnostics) {
    for item in diagnostics.notes where item.level == .warning || verbose {
      let label = item.level == .warning ? "warning" : "detail"
      writeStandardError("fr-profile: \(label): \(item.key): \(item.message)\n")
    }
  }
}
