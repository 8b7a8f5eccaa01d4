import FRProfileCommands
import Glibc

// fr-profile with the CLI tests' seams (Sources/FRProfileCommands/Support/TestSeams.swift), set
// from the environment: FR_PROFILE_TEST_PAM_CONFDIR, the PAM services' directory, and
// FR_PROFILE_TEST_POLICY_ROOT, the machine tree app policies read. Built with the tests, never
// installed; the CLI tests run it only where they need a seam (Tests/CLITests/Support/Run.swift).
func seam(_ name: String) -> String? {
  guard let value = getenv(name), value.pointee != 0 else { return nil }
  return String(cString: value)
}
TestSeams.pamConfigurationDirectory = seam("FR_PROFILE_TEST_PAM_CONFDIR")
TestSeams.policyRoot = seam("FR_PROFILE_TEST_POLICY_ROOT")
FRProfile.main()
