import Journey

/// The device's part of a login: this machine's profile, its bound keys, its TPM. The login
/// hands every DeviceProfileCallback, DeviceBindingCallback, DeviceSigningVerifierCallback and
/// HiddenValueCallback to it; a login without device steps refuses the first three by name.
/// fr-profile's command line answers them from the collectors, the key store and the TPM; an
/// embedder passes `DeviceProfiler` (JourneyProfiler) and `DeviceBinder` (DeviceBinding) here.
public protocol DeviceSteps: AnyObject {
  /// Answers every DeviceProfileCallback of `step` (one collection for all of them).
  func answerProfiles(_ step: inout AuthenticateStep, login: LoginAnswerer) throws
  /// Answers the DeviceBindingCallback or DeviceSigningVerifierCallback at `index`.
  func answerBinding(_ step: inout AuthenticateStep, index: Int, login: LoginAnswerer) throws
  /// Answers the HiddenValueCallback at `index` when the device knows its `id` (a TPM
  /// attestation round); false leaves it as it is, as the SDKs do.
  func answerHiddenValue(_ step: inout AuthenticateStep, index: Int, id: String, value: String, login: LoginAnswerer) throws -> Bool
}
