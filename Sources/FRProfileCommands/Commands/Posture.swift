import ArgumentParser
import Collectors
import Posture
import ProfileCLI
import ProfileJSON
import SystemCalls

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

extension FRProfile {
  struct Posture: ParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Print the device's security posture: each fact true, false or unknown, with its reason.",
      discussion: """
        Disk encryption of /, /home and swap, Secure Boot and setup mode, a firewall service \
        enabled at boot, the desktop's screen lock, the password-quality policy, SELinux and \
        AppArmor, the distribution (stable facts); the running kernel and the days since the \
        package database changed (volatile facts). Read from files without root; a fact that \
        cannot be told is unknown, never guessed, and every fact says why (docs/posture.md).

        Posture is not part of the profile (collect never reads it): sign it into a \
        DeviceSigningVerifier JWS with 'journey --posture' or 'callback --posture', and let an \
        AM Scripted Decision node decide on it (am/fr-posture.js).

        With --json prints {"v": 1, "stable": {NAME: {"value", "reason"}}, "volatile": {…}}; \
        unknown is null (schemas/posture.schema.json).

        \(ExitStatus.helpSection([.success, .usage, .noInput, .cannotCreate, .ioError, .permission]))

        EXAMPLES:
          fr-profile posture
          fr-profile posture --json --pretty
          fr-profile posture --user 1000
          fr-profile posture --root Tests/PostureTests/Fixtures/lvm-on-luks \\
              --json -o posture.json
        """
    )

    @Option(
      name: .customLong("root"), help: ArgumentHelp("Examine a recorded machine tree instead of /.", valueName: "DIR"),
      completion: .directory)
    var root: String = "/"

    @Option(
      name: .customLong("user"),
      help: ArgumentHelp("Whose desktop screen lock to read: a user name or uid (default: you).", valueName: "USER"))
    var user: String?

    @Flag(help: "Print one JSON object (schemas/posture.schema.json) instead of text.")
    var json = false

    @OptionGroup(title: "Output Options") var format: OutputOptions

    func validate() throws {
      if root.isEmpty { throw ValidationError("--root needs a directory.") }
      if !json && (format.pretty || format.compact) { throw ValidationError("--pretty and --compact format JSON: add --json.") }
    }

    func run() throws {
      try reportingFailures {
        let system = try ProfileSettings(root: root).systemSource()
        let uid = try Self.uid(user, system)
        let report = PostureReport.evaluate(system, uid: uid, now: Int64(time(nil)))
        if json {
          try format.emit(report.json)
        } else {
          try format.emit(text: report.text)
        }
      }
    }

    /// The uid of `user` (a number, or a name in the tree's /etc/passwd), else this process's.
    static func uid(_ user: String?, _ system: SystemSource) throws -> UInt32 {
      guard let user else { return getuid() }
      if let number = UInt32(user) { return number }
      for line in (system.readText("/etc/passwd") ?? "").split(separator: "\n") {
        let fields = line.split(separator: ":", omittingEmptySubsequences: false)
        if fields.count >= 3, fields[0] == user, let uid = UInt32(fields[2]) { return uid }
      }
      throw Failure(.noInput, "--user \(user): no such user in \(system.path("/etc/passwd")).")
    }
  }
}
