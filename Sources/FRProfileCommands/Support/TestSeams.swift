/// What the CLI tests change in the commands, and nothing else may: set only by the test-only
/// executable `fr-profile-seams` (Tests/Seams/main.swift) before it runs the commands. The
/// `fr-profile` executable never sets them, in any build configuration, and reads no
/// environment variable for them; bench/release-golden.sh checks that the shipped binary holds
/// neither variable name and refuses --pam-confdir.
///
/// A process's own globals rather than `#if DEBUG`: the suite runs on the release build's objects
/// (one build configuration, docs/development.md "One build"), where DEBUG is not defined.
package enum TestSeams {
  /// The machine tree app policies are evaluated on instead of "/" (a tampered device).
  nonisolated(unsafe) package static var policyRoot: String?
  /// The directory of PAM services used instead of /etc/pam.d (pam_permit / pam_deny stacks).
  nonisolated(unsafe) package static var pamConfigurationDirectory: String?
}
