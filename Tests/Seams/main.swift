import FRProfileCommands
import Glibc
import SoftFIDO2

// fr-profile with the CLI tests' seams (Sources/FRProfileCommands/Support/TestSeams.swift), set
// from the environment: FR_PROFILE_TEST_PAM_CONFDIR, the PAM services' directory,
// FR_PROFILE_TEST_POLICY_ROOT, the machine tree app policies read, and
// FR_PROFILE_TEST_SECURITY_KEYS, the software security keys' state files (colon-separated; empty:
// no key plugged in; Tests/SoftFIDO2/SoftKeyState.swift describes them). Built with the tests,
// never installed; the CLI tests run it only where they need a seam (Tests/CLITests/Support/Run.swift).
func seam(_ name: String) -> String? {
  guard let value = getenv(name), value.pointee != 0 else { return nil }
  return String(cString: value)
}
TestSeams.pamConfigurationDirectory = seam("FR_PROFILE_TEST_PAM_CONFDIR")
TestSeams.policyRoot = seam("FR_PROFILE_TEST_POLICY_ROOT")
if let list = getenv(SoftAuthenticator.environmentVariable).map({ String(cString: $0) }) {
  do {
    TestSeams.securityKeys = try SoftAuthenticator.keys(fromList: list).map { key in
      TestSecurityKey(path: key.path, product: key.product, attach: { key.attach($0) })
    }
  } catch {
    let message = Array("fr-profile-seams: \(SoftAuthenticator.environmentVariable): \(error)\n".utf8)
    _ = write(2, message, message.count)
    exit(70)
  }
}
FRProfile.main()
