import Foundation
import Testing

/// The PAM stacks that gate BIOMETRIC keys and the `biometricAvailable` policy are the
/// administrator's (/etc/pam.d/fr-profile, fr-profile-biometric): no option of the shipped
/// binary lets a caller swap them.
@Suite(.timeLimit(.minutes(10))) struct PAMConfigurationTests {
  @Test(arguments: [
    ["callback", "step.json"], ["journey", "--server", "https://am.example.com/am", "--realm", "root", "--tree", "Login"],
    ["policy"], ["keys", "unlock", "2ed8f1a6"],
  ])
  func pamConfdirIsAUsageError(command: [String]) throws {
    let directory = try makeTemporaryDirectory("fr-profile-pam")
    defer { removeTemporaryDirectory(directory) }
    let result = try run(command + ["--state-dir", directory + "/state", "--pam-confdir", directory])
    #expect(result.status == 64, "\(result.stderr)")
    #expect(result.stderr.contains("--pam-confdir"), "\(result.stderr)")
    #expect(result.stdout.isEmpty)
  }

  @Test(arguments: [
    ["--help"], ["callback", "--help"], ["journey", "--help"], ["policy", "--help"], ["keys", "unlock", "--help"],
    ["callback", "--help-hidden"], ["journey", "--help-hidden"], ["policy", "--help-hidden"], ["keys", "unlock", "--help-hidden"],
    ["--experimental-dump-help"],
  ])
  func helpNeverMentionsAPAMDirectory(arguments: [String]) throws {
    let help = try run(arguments)
    #expect(help.status == 0, "\(help.stderr)")
    #expect(!help.stdout.contains("pam-confdir") && !help.stdout.contains("PAM_CONFDIR"))
  }
}
