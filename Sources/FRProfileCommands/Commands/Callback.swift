import ArgumentParser
import Collectors
import DeviceBinding
import Journey
import JourneyProfiler
import Login
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
        // The login's device steps (library Login), with no one to ask: PINs come from
        // --pin-file, and nothing else of the step is touched.
        let settings = options.settings
        let device = CommandDeviceSteps(settings: settings, binding: binding, interactive: false)
        let login = LoginAnswerer(
          sources: [], conversation: CommandLogin.conversation(verbose: settings.verbose, terminal: nil), device: device)
        let callbacks = step.callbacks ?? []
        guard callbacks.count <= AuthenticateStep.defaultMaximumCallbacks else {
          let error = JourneyError.tooManyCallbacks(count: callbacks.count, limit: AuthenticateStep.defaultMaximumCallbacks)
          throw Failure(.dataError, "\(name): \(error).")
        }
        let types = callbacks.map { $0.type.flatMap(CallbackType.init(rawValue:)) }
        guard types.contains(where: { [.deviceProfile, .deviceBinding, .deviceSigning].contains($0) }) else {
          if step.callbacks == nil { throw Failure(.dataError, "\(name): \(JourneyError.noCallbacks).") }
          note("\(name): the step has no DeviceProfileCallback; passing it through unchanged.")
          try format.emit(text: String(decoding: bytes, as: UTF8.self) + (bytes.last == UInt8(ascii: "\n") ? "" : "\n"), mode: 0o600)
          return
        }
        do {
          if types.contains(.deviceProfile) { try device.answerProfiles(&step, login: login) }
          for (index, type) in types.enumerated() where type == .deviceBinding || type == .deviceSigning {
            try device.answerBinding(&step, index: index, login: login)
          }
        } catch let error as JourneyError {
          throw Failure(.dataError, ServerText.printable("\(name): \(error)", singleLine: true))
        }
        try format.emit(.object(step.body), mode: 0o600)  // the authId continues the journey
      }
    }
  }
}
