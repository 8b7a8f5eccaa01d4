import Foundation
import Testing

/// libcurl, libpam, tpm2-tss, libqrencode and libfido2 are opened with dlopen by soname when a command needs them
/// (Sources/CCurl, CPAM, CTSS2), never linked: collect maps none of them, and a command that
/// needs one that cannot be loaded stops with exit 69 (EX_UNAVAILABLE) naming the Debian package.
/// "Cannot be loaded" is simulated by an invalid file of that soname first on LD_LIBRARY_PATH, as
/// UdevCommandTests does for libudev.
@Suite(.timeLimit(.minutes(10)))
struct OptionalLibraryTests {
  /// Runs `body` with a directory holding an invalid `soname` (any dlopen of it fails).
  func withUnloadable(_ soname: String, _ body: (_ directory: String, _ environment: [String: String]) throws -> Void) throws {
    let directory = try makeTemporaryDirectory("fr-profile-dlopen")
    defer { removeTemporaryDirectory(directory) }
    try Data("not a library".utf8).write(to: URL(fileURLWithPath: directory + "/" + soname))
    try body(directory, ["LD_LIBRARY_PATH": directory])
  }

  @Test func unloadableLibcurlStopsJourneyWithExit69NamingThePackage() throws {
    try withUnloadable("libcurl.so.4") { directory, environment in
      let result = try run(
        [
          "journey", "--server", "http://127.0.0.1:9/am", "--realm", "alpha", "--tree", "Login", "--user", "demo",
          "--password-stdin", "--state-dir", directory + "/state",
        ], environment: environment, stdin: "s3cret\n")
      #expect(result.status == 69, "\(result.stderr)")
      #expect(result.stderr.contains("libcurl.so.4 cannot be loaded"), "\(result.stderr)")
      #expect(result.stderr.contains("install Debian package libcurl4 (libcurl4t64 on Debian 13)"), "\(result.stderr)")
      #expect(result.stdout.isEmpty)
    }
  }

  @Test func unloadableLibtss2StopsTheTPMIdentityWithExit69NamingThePackage() throws {
    try withUnloadable("libtss2-esys.so.0") { directory, environment in
      let state = directory + "/state"
      let result = try run(
        ["identifier", "--move-to-tpm", "--state-dir", state, "--tcti", "swtpm:host=127.0.0.1,port=9"], environment: environment)
      #expect(result.status == 69, "\(result.stderr)")
      #expect(result.stderr.contains("libtss2-esys.so.0 cannot be loaded"), "\(result.stderr)")
      #expect(result.stderr.contains("libtss2-esys-3.0.2-0"), "\(result.stderr)")
      // Nothing changed: the identity stays a file key.
      #expect(!FileManager.default.fileExists(atPath: state + "/device-key.tpm"))
    }
  }

  /// The shortest path to PAM: a binding step of type BIOMETRIC_ALLOW_FALLBACK answered by
  /// `callback`, with the `fr-profile` PAM service configured (pam_permit). `make check-installed`
  /// runs this against the release binary, which has no PAM seam: the services are shown to it
  /// as /etc/pam.d in a private mount namespace.
  @Test(.enabled(if: canUseMountNamespace, "needs root and unshare for a private /etc/pam.d"))
  func unloadableLibpamStopsABiometricBindingWithExit69NamingThePackage() throws {
    try withUnloadable("libpam.so.0") { directory, environment in
      let pam = directory + "/pam.d"
      try FileManager.default.createDirectory(atPath: pam, withIntermediateDirectories: true)
      try "auth required pam_permit.so\naccount required pam_permit.so\n".write(
        toFile: pam + "/fr-profile", atomically: true, encoding: .utf8)
      let fixture = try String(contentsOfFile: cliFixture("callbacks/device-binding.json"), encoding: .utf8)
      let step = directory + "/step.json"
      try fixture.replacingOccurrences(of: "APPLICATION_PIN", with: "BIOMETRIC_ALLOW_FALLBACK").write(
        toFile: step, atomically: true, encoding: .utf8)
      let arguments = ["callback", step, "--state-dir", directory + "/state", "--root", machineRoot("laptop")]
      let result = try run(arguments, environment: environment, prefix: withPAMServices(pam))
      #expect(result.status == 69, "\(result.stderr)")
      #expect(result.stderr.contains("libpam.so.0 cannot be loaded"), "\(result.stderr)")
      #expect(result.stderr.contains("install Debian package libpam0g"), "\(result.stderr)")
      // The same step with libpam loadable binds (pam_permit verifies the user).
      let bound = try run(arguments, prefix: withPAMServices(pam))
      #expect(bound.status == 0, "\(bound.stderr)")
    }
  }

  @Test("collect maps none of libcurl, libpam, libtss2, libqrencode, libfido2 (LD_DEBUG=files lists every object the loader opens)")
  func collectMapsNoOptionalLibrary() throws {
    let directory = try makeTemporaryDirectory("fr-profile-dlopen")
    defer { removeTemporaryDirectory(directory) }
    let result = try run(
      ["collect", "--no-metadata", "--root", machineRoot("laptop")],
      environment: ["FR_PROFILE_HOME": directory + "/state", "LD_DEBUG": "files"])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stderr.contains("file=libc.so.6"), "LD_DEBUG had no effect: \(result.stderr.prefix(400))")
    for library in ["libcurl", "libpam", "libtss2", "libqrencode", "libfido2", "libcbor"] {
      #expect(!result.stderr.contains(library), "collect mapped \(library)")
    }
  }

  @Test func theExecutableNeedsNoOptionalLibrary() throws {
    let dynamic = try run(["-d", frProfilePath], executable: "/usr/bin/readelf")
    #expect(dynamic.status == 0, "\(dynamic.stderr)")
    let needed = dynamic.stdout.split(separator: "\n").filter { $0.contains("(NEEDED)") }
    #expect(!needed.isEmpty, "readelf printed no NEEDED entry: \(dynamic.stdout.prefix(300))")
    for library in ["libcurl", "libpam", "libtss2", "libudev", "libqrencode", "libfido2"] {
      #expect(!needed.contains { $0.contains(library) }, "fr-profile needs \(library)")
    }
  }
}
