import ArgumentParser
import Collectors
import DeviceBinding
import Journey
import JourneyProfiler
import ProfileCLI
import ProfileJSON

extension FRProfile {
  struct Callback: ParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Answer the DeviceProfileCallbacks in an AM authenticate response.",
      discussion: """
        Reads the JSON body of an AM /authenticate response (FILE, or standard input for - or no \
        FILE). For every DeviceProfileCallback it collects what the callback's outputs ask for \
        (metadata, location) and writes the profile, serialised as a JSON string, into the \
        callback's input[0].value; everything else is kept as it came. Prints the body to post \
        back. The callback's message goes to stderr. A step without a DeviceProfileCallback \
        passes through unchanged (with a note on stderr). The machine is collected once, however \
        many callbacks ask; a step with more than 256 callbacks is refused. Text from the \
        server (the callback's message, type names) is printed with control characters \
        replaced. A step with a DeviceBindingCallback or DeviceSigningVerifierCallback is \
        answered too: fr-profile binds or signs without asking anything (the PIN from --pin-file; several bound keys need \
        --bound-user), or sends the client error AM routes on.

        \(ExitStatus.helpSection(
          [.success, .usage] + ExitStatus.identity + [.libraryMissing] + ExitStatus.tpm,
          [
            .success: "answered or passed through",
            .dataError:
              "the body is not JSON, has no callbacks, has too many callbacks, or a callback is malformed; a bound key is corrupt",
            .noInput: "FILE cannot be read; the device key is missing but backups of it exist",
          ]))

        EXAMPLES:
          fr-profile callback step.json -o answer.json
          curl -s "$AM/json/realms/root/authenticate" -d '{}' \\
              --url-query authIndexType=service \\
              --url-query authIndexValue=DeviceProfiling \\
              -H 'Accept-API-Version: resource=2.1, protocol=1.0' \\
              -H 'Content-Type: application/json' \\
          | fr-profile callback --latitude -33.8688 --longitude 151.2093 \\
          | curl -s "$AM/json/realms/root/authenticate" -d @- \\
              --url-query authIndexType=service \\
              --url-query authIndexValue=DeviceProfiling \\
              -H 'Accept-API-Version: resource=2.1, protocol=1.0' \\
              -H 'Content-Type: application/json'
        """
    )

    @OptionGroup var options: ProfileOptions
    @OptionGroup(title: "Device binding") var binding: BindingOptions

    @Argument(help: ArgumentHelp("The authenticate response body (default: standard input).", valueName: "FILE|-"), completion: .file())
    var file: String = "-"

    @OptionGroup(title: "Output Options") var format: OutputOptions

    func run() throws {
      try reportingFailures {
        let name = file == "-" ? "standard input" : file
        let bytes = try readInput(file)
        var step: AuthenticateStep
        do {
          step = try AuthenticateStep(parsing: bytes)
        } catch {
          throw Failure(.dataError, ServerText.printable("\(name): \(error)", singleLine: true))
        }
        let settings = options.settings
        if Self.needsBinding(step) {
          try answerBinding(&step, name: name, settings: settings)
          return
        }
        let system = try settings.systemSource()
        let profiler = DeviceProfiler(
          collectors: DeviceProfile.defaultCollectors(userAgent: settings.userAgent),
          system: system,
          identifier: { try settings.identifier(system) },
          location: { try settings.configuredLocation() })
        let diagnostics = Diagnostics()
        let answers: [DeviceProfileAnswer]
        do {
          answers = try profiler.answers(&step, diagnostics: diagnostics)
        } catch let error as JourneyError {
          throw Failure(.dataError, ServerText.printable("\(name): \(error)", singleLine: true))
        }
        settings.printDiagnostics(diagnostics)
        if answers.isEmpty {
          note("\(name): the step has no DeviceProfileCallback; passing it through unchanged.")
          try format.emit(text: String(decoding: bytes, as: UTF8.self) + (bytes.last == UInt8(ascii: "\n") ? "" : "\n"), mode: 0o600)
          return
        }
        for answer in answers where !answer.request.message.isEmpty {
          writeStandardError(ServerText.printable(answer.request.message) + "\n")
        }
        for answer in answers {
          warnIfOversized(answer.size, subject: "the profile for callbacks[\(answer.index)]")
        }
        try format.emit(.object(step.body), mode: 0o600)  // the authId continues the journey
      }
    }

    static let bindingCallbackTypes: Set<String> = [DeviceBindingRequest.callbackType, DeviceSigningRequest.callbackType]

    /// Whether the step holds a DeviceBindingCallback or DeviceSigningVerifierCallback.
    static func needsBinding(_ step: AuthenticateStep) -> Bool {
      step.callbacks?.contains { bindingCallbackTypes.contains($0.type ?? "") } ?? false
    }

    /// Answers every device-profile, binding and signing callback of `step`, non-interactively,
    /// and prints the body to post back.
    func answerBinding(_ step: inout AuthenticateStep, name: String, settings: ProfileSettings) throws {
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
        for outcome in try binder.answer(&step) { BindingSetup.report(outcome, verbose: settings.verbose) }
      } catch let error as JourneyError {
        throw Failure(.dataError, ServerText.printable("\(name): \(error)", singleLine: true))
      } catch {
        throw BindingExit.failure(forAny: error)
      }
      settings.printDiagnostics(diagnostics)
      try format.emit(.object(step.body), mode: 0o600)  // the authId continues the journey
    }
  }
}
