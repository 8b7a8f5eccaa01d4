import ArgumentParser
import ProfileCLI

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

extension FRProfile {
  /// `fr-profile journey`: runs the journey client, a separate executable installed next to
  /// this one, so that collect's binary links no HTTP stack (docs/journey.md).
  /// `main()` execs it before any parsing; this entry lists it in the help.
  struct JourneyLauncher: ParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "journey",
      abstract: "Walk a PingAM authentication journey, answering DeviceProfileCallback (see 'fr-profile journey --help').",
      discussion: """
        Runs fr-profile-journey, installed next to fr-profile, with the same arguments.

        EXAMPLES:
          fr-profile journey --server https://am.example.com/am --realm alpha \\
              --tree DeviceProfiling --user demo
        """
    )

    @Argument(parsing: .captureForPassthrough, help: "Arguments for fr-profile-journey.")
    var arguments: [String] = []

    func run() throws {
      JourneyExecutable.exec(arguments)
    }
  }
}

/// The journey client's executable, beside this one.
enum JourneyExecutable {
  static let name = "fr-profile-journey"

  /// `<directory of /proc/self/exe>/fr-profile-journey`.
  static var path: String {
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
    let executable = count > 0 ? String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self) : CommandLine.arguments[0]
    let directory = executable.lastIndex(of: "/").map { String(executable[..<$0]) } ?? "."
    return (directory.isEmpty ? "" : directory) + "/" + name
  }

  /// Replaces this process with the journey client; exits 69 with a clear message when it is
  /// missing or cannot run.
  static func exec(_ arguments: [String]) -> Never {
    let target = path
    let argv = [target] + arguments
    var pointers = argv.map { strdup($0) } + [nil]
    execv(target, &pointers)
    let reason = String(cString: strerror(errno))
    writeStandardError(
      "fr-profile: error: 'fr-profile journey' runs \(name), expected at \(target): \(reason). Install it next to fr-profile (make install does), or run it from the build directory.\n"
    )
    exit(69)
  }
}
