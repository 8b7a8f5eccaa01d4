import ArgumentParser
import Collectors
import DeviceIdentity
import StateStore
import SystemCalls

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// Options that name the device identity: where the key lives and which machine is read.
/// `identifier` takes only these; the commands that collect a profile take `ProfileOptions`.
package struct IdentityOptions: ParsableArguments {
  @Option(
    name: .customLong("state-dir"),
    help: ArgumentHelp(
      "Directory of the device key (default: $FR_PROFILE_HOME; for root /var/lib/fr-profile; else $XDG_STATE_HOME/fr-profile or ~/.local/state/fr-profile).",
      valueName: "DIR"), completion: .directory)
  package var stateDirectory: String?

  @Option(
    name: .customLong("root"),
    help: ArgumentHelp(
      "Collect a recorded machine tree (its /proc, /sys, /etc) instead of /. App policies always read this machine.",
      valueName: "DIR"), completion: .directory)
  package var root: String = "/"

  @Flag(name: .shortAndLong, help: "Explain on stderr where each value came from and what was dropped.")
  package var verbose = false

  package init() {}

  package func validate() throws {
    if let problem = settings.problem { throw ValidationError(problem) }
  }

  package var settings: ProfileSettings {
    ProfileSettings(stateDirectory: stateDirectory, root: root, verbose: verbose)
  }
}

/// Options that shape a profile, shared by every command that collects one, so that they mean
/// the same everywhere and name one identity.
package struct ProfileOptions: ParsableArguments {
  @OptionGroup package var identity: IdentityOptions

  // `.unconditional`: the next argument is the value even when it starts with '-', so that
  // `--latitude -33.9` works (southern and western hemispheres).
  @Option(parsing: .unconditional, help: ArgumentHelp("Latitude to report with --location (-90…90).", valueName: "DEGREES"))
  package var latitude: Double?

  @Option(parsing: .unconditional, help: ArgumentHelp("Longitude to report with --location (-180…180).", valueName: "DEGREES"))
  package var longitude: Double?

  @Option(
    name: .customLong("location-file"),
    help: ArgumentHelp(
      "File holding \"LATITUDE,LONGITUDE\" (default: <state-dir>/location, when present).", valueName: "FILE"), completion: .file())
  package var locationFile: String?

  @Option(
    name: .customLong("user-agent"),
    help: ArgumentHelp(
      "Report this user agent instead of fr-profile's own.", valueName: "TEXT"))
  package var userAgent: String?

  package init() {}

  package func validate() throws {
    if let problem = settings.problem { throw ValidationError(problem) }
  }

  /// The parsed values as a plain value the commands (and the `collect` fast path) share.
  package var settings: ProfileSettings {
    ProfileSettings(
      stateDirectory: identity.stateDirectory, root: identity.root, latitude: latitude, longitude: longitude,
      locationFile: locationFile, userAgent: userAgent, verbose: identity.verbose)
  }
}

/// This process's environment, looked up one variable at a time (`getenv`): building a
/// dictionary of it is a measurable part of a collect (bench/README.md).
private let environment = SystemSource(root: "/")

/// What `ProfileOptions` holds, without ArgumentParser: how to find the system, the identity
/// and the location.
package struct ProfileSettings: Equatable {
  package var stateDirectory: String?
  package var root = "/"
  package var latitude: Double?
  package var longitude: Double?
  package var locationFile: String?
  package var userAgent: String?
  package var verbose = false

  package init(
    stateDirectory: String? = nil, root: String = "/", latitude: Double? = nil, longitude: Double? = nil,
    locationFile: String? = nil, userAgent: String? = nil, verbose: Bool = false
  ) {
    self.stateDirectory = stateDirectory
    self.root = root
    self.latitude = latitude
    self.longitude = longitude
    self.locationFile = locationFile
    self.userAgent = userAgent
    self.verbose = verbose
  }

  /// The first rule the values break, as a usage message; nil when they are valid.
  package var problem: String? {
    if (latitude == nil) != (longitude == nil) { return "--latitude and --longitude go together: give both or neither." }
    if root.isEmpty { return "--root needs a directory." }
    return nil
  }

  /// The system source for the chosen root; a missing root directory is an error.
  package func systemSource() throws -> SystemSource {
    let system = SystemSource(root: root)
    if !system.isLive {
      guard SystemSource(root: "/", environment: [:]).status(root, followLinks: true)?.isDirectory == true else {
        throw Failure(.noInput, "--root \(root) is not a directory.")
      }
    }
    return system
  }

  package func keyStore() throws -> DeviceKeyStore {
    DeviceKeyStore(directory: try stateDirectoryPath())
  }

  /// --state-dir, else the default state directory ($FR_PROFILE_HOME, …).
  package func stateDirectoryPath() throws -> String {
    let directory = stateDirectory ?? DeviceKeyStore.defaultDirectory(variable: environment.variable)
    guard let directory else { throw Failure(IdentityError.noStateDirectory) }
    return directory
  }

  /// The identifier for `system`'s machine-id and the stored key (created on first use).
  package func identifier(_ system: SystemSource) throws -> String {
    let identifier: String
    let store = try keyStore()
    if verbose { detail("state directory \(store.directory)") }
    do { identifier = try store.identifier(for: system) } catch { throw Failure(error) }
    if !identifier.contains("-") {
      note("no usable /etc/machine-id: the identifier is the key part alone (the iOS SDK's shape).")
    }
    return identifier
  }

  /// The configured location, or nil with a note on stderr when none is configured. The order
  /// is the CLI's: --latitude/--longitude, then FR_PROFILE_LOCATION="lat,lon", then the location
  /// file (--location-file, required to exist; else <state-dir>/location when present).
  package func configuredLocation() throws -> Location? {
    let found: (location: Location, source: String)?
    do {
      found = try configuredLocationSource()
    } catch let error as LocationError {
      throw Failure(.dataError, error.description)
    }
    if found == nil {
      note(
        "location asked for, but no position is configured (--latitude/--longitude, FR_PROFILE_LOCATION or a location file); location omitted."
      )
    }
    if verbose, let found { detail("location from \(found.source)") }
    return found?.location
  }

  private func configuredLocationSource() throws -> (location: Location, source: String)? {
    if let latitude, let longitude {
      return (try Location(latitude: latitude, longitude: longitude, source: "--latitude/--longitude"), "flags")
    }
    if let value = environment.variable("FR_PROFILE_LOCATION"), !trimmed(value).isEmpty {
      return (try Location.parse(value, source: "FR_PROFILE_LOCATION"), "FR_PROFILE_LOCATION")
    }
    guard let file = locationFile ?? (try? keyStore()).map({ $0.directory + "/location" }) else { return nil }
    let fd = open(file, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else {
      if locationFile != nil {
        throw Failure(.noInput, "cannot read the location file \(file). Check the path, or drop --location-file.")
      }
      return nil
    }
    defer { close(fd) }
    let bytes: [UInt8]
    do throws(SystemCallError) { bytes = try readAll(fd, limit: 65536) } catch {
      throw Failure(.noInput, "cannot read the location file \(file): \(errorText(error.errno)).")
    }
    return (try Location.parseFile(String(decoding: bytes, as: UTF8.self), source: file), file)
  }

  package func printDiagnostics(_ diagnostics: Diagnostics) {
    for item in diagnostics.notes where item.level == .warning || verbose {
      let label = item.level == .warning ? "warning" : "detail"
      writeStandardError("fr-profile: \(label): \(item.key): \(item.message)\n")
    }
  }
}
