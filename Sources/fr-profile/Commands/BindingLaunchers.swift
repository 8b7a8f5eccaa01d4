import ArgumentParser
import Collectors
import Journey
import ProfileCLI

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

// Device binding runs in fr-profile-journey (JOSE, PAM, libcurl), never in this binary:
// `main()` execs it for `keys` and `policy` before any parsing, and `callback` hands it the
// steps that hold a binding or signing callback. These entries list them in the help.

extension FRProfile {
  struct KeysLauncher: ParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "keys",
      abstract: "List, delete and unlock the keys bound to AM users (see 'fr-profile keys --help').",
      discussion: "Runs fr-profile-journey keys, installed next to fr-profile."
    )
    @Argument(parsing: .captureForPassthrough, help: "Arguments for fr-profile keys.")
    var arguments: [String] = []
    func run() throws { JourneyExecutable.exec(["keys"] + arguments) }
  }

  struct PolicyLauncher: ParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "policy",
      abstract: "Evaluate device-binding app policies on this machine (see 'fr-profile policy --help').",
      discussion: "Runs fr-profile-journey policy, installed next to fr-profile."
    )
    @Argument(parsing: .captureForPassthrough, help: "Arguments for fr-profile policy.")
    var arguments: [String] = []
    func run() throws { JourneyExecutable.exec(["policy"] + arguments) }
  }
}

/// Hands a step with binding or signing callbacks to `fr-profile-journey callback`: the bytes
/// already read go in an anonymous memory file the new program inherits (`--step-fd`).
enum BindingHandoff {
  static let callbackTypes: Set<String> = [DeviceBindingRequest.callbackType, DeviceSigningRequest.callbackType]

  static func needed(_ step: AuthenticateStep) -> Bool {
    step.callbacks?.contains { callbackTypes.contains($0.type ?? "") } ?? false
  }

  /// Execs the journey executable with the original `callback` arguments; never returns.
  static func exec(step bytes: [UInt8]) throws -> Never {
    // An unnamed temporary file (O_TMPFILE): nothing to clean up, nothing others can open.
    let temporaryFile: Int32 = 0o20000000 | O_DIRECTORY
    var fd = open("/tmp", O_RDWR | temporaryFile, 0o600)
    if fd < 0 {
      var template = Array("/tmp/fr-profile-step.XXXXXX".utf8CString)
      fd = mkstemp(&template)
      if fd >= 0 { unlink(String(cString: template)) }
    }
    guard fd >= 0, writeAll(fd, bytes) else {
      throw Failure(code: 74, "cannot hand the step to fr-profile-journey: \(String(cString: strerror(errno))).")
    }
    let original = Array(CommandLine.arguments.dropFirst())
    let rest = original.first == "callback" ? Array(original.dropFirst()) : original
    JourneyExecutable.exec(["callback", "--step-fd", String(fd)] + rest)
  }
}
