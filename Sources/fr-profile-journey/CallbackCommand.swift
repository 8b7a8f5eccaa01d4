import ArgumentParser
import Collectors
import DeviceBinding
import Journey
import JourneyProfiler
import ProfileCLI
import ProfileJSON

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// `fr-profile callback` for steps with a DeviceBindingCallback or DeviceSigningVerifierCallback:
/// fr-profile hands such a step over (`--step-fd`), so that collect's binary never links the
/// JOSE and PAM code. Answers every device-profile, binding and signing callback of the step,
/// non-interactively, and prints the body to post back.
struct CallbackCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "fr-profile callback",
    abstract: "Answer the DeviceProfile, DeviceBinding and DeviceSigningVerifier callbacks of an AM step.",
    discussion: "See 'fr-profile callback --help'."
  )

  @OptionGroup var options: ProfileOptions
  @OptionGroup var binding: BindingOptions

  @Argument(help: ArgumentHelp("The authenticate response body (default: standard input).", valueName: "FILE|-"))
  var file: String = "-"

  @OptionGroup(title: "Output Options") var format: OutputOptions

  /// The step's bytes, already read by fr-profile, on this inherited descriptor.
  @Option(name: .customLong("step-fd"), help: .hidden)
  var stepDescriptor: Int32?

  func run() throws {
    try reportingFailures {
      let name = file == "-" ? "standard input" : file
      let bytes: [UInt8]
      if let stepDescriptor {
        lseek(stepDescriptor, 0, SEEK_SET)
        guard let read = readAll(stepDescriptor, limit: 64 << 20) else {
          throw Failure(code: 66, "cannot read the step handed over by fr-profile: \(String(cString: strerror(errno))).")
        }
        close(stepDescriptor)
        bytes = read
      } else {
        bytes = try readInput(file)
      }
      var step: AuthenticateStep
      do { step = try AuthenticateStep(parsing: bytes) } catch { throw Failure(code: 65, "\(name): \(error)") }
      let settings = options.settings
      let system = try settings.systemSource()
      let profiler = DeviceProfiler(
        collectors: DeviceProfile.defaultCollectors(userAgent: settings.userAgent), system: system,
        identifier: { try settings.identifier(system) }, location: { try settings.configuredLocation() })
      let diagnostics = Diagnostics()
      let setup = BindingSetup(options: binding, settings: settings, interactive: false)
      do {
        let requests = try profiler.answer(&step, diagnostics: diagnostics)
        for request in requests where !request.message.isEmpty { writeStandardError(ServerText.printable(request.message) + "\n") }
        let binder = try setup.binder(deviceName: { BindingSetup.profileDeviceName(system) })
        let profiled = step
        let (answered, outcomes) = try runBlocking {
          var copy = profiled
          let outcomes = try await binder.answer(&copy)
          return (copy, outcomes)
        }
        step = answered
        for outcome in outcomes { BindingSetup.report(outcome, verbose: settings.verbose) }
      } catch let error as JourneyError {
        throw Failure(code: 65, "\(name): \(error)")
      } catch let error as KeyStoreError {
        throw BindingExit.failure(error)
      } catch let error as HardwareKeyError {
        throw TPMExit.failure(error)
      } catch let error as PAMError {
        throw Failure(code: 69, error.description + ".")
      }
      settings.printDiagnostics(diagnostics)
      try format.emit(.object(step.body))
    }
  }
}

/// The binding commands of this executable: fr-profile execs it for `keys`, `policy`,
/// `identity` (a TPM identity key) and binding `callback` steps with the subcommand name first (`journey` passes its arguments as
/// given, so a journey never starts with these words).
enum BindingCommands {
  /// Runs the command `arguments` name and does not return; returns for anything else.
  static func runIfNamed(_ arguments: [String]) {
    let rest = Array(arguments.dropFirst())
    switch arguments.first {
    case "keys": CommandMain.run(KeysCommand.self, rest, name: "fr-profile keys")
    case "policy": CommandMain.run(PolicyCommand.self, rest, name: "fr-profile policy")
    case "callback": CommandMain.run(CallbackCommand.self, rest, name: "fr-profile callback")
    case "identity": CommandMain.run(IdentityCommand.self, rest, name: "fr-profile identifier")
    default: return
    }
  }
}
