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
  /// The security keys a WebAuthn node sees instead of the machine's FIDO devices (libfido2's
  /// HID manifest): software authenticators of the test executable. Empty: no key is plugged in.
  nonisolated(unsafe) package static var securityKeys: [TestSecurityKey]?
}

/// A security key of the tests: libfido2 talks to it through its own seam for such devices
/// (`fido_dev_set_io_functions`, `fido_dev_set_transport_functions`), so every CTAP command still
/// goes through the real library.
package struct TestSecurityKey: Sendable {
  /// The path `fido_dev_open` is given (passed to the key's `open` function).
  package var path: String
  /// What the key calls itself, as a HID device's product string.
  package var product: String
  /// Sets the I/O and transport functions on a new `fido_dev_t` before it is opened; returns a
  /// libfido2 status (FIDO_OK is 0).
  package var attach: @Sendable (OpaquePointer) -> Int32

  package init(path: String, product: String, attach: @escaping @Sendable (OpaquePointer) -> Int32) {
    self.path = path
    self.product = product
    self.attach = attach
  }
}
