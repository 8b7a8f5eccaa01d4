extension SoftAuthenticator {
  /// The keys named by `FR_PROFILE_TEST_SECURITY_KEYS`: a colon-separated list of state files
  /// (``SoftKeyState``); an empty list is no key plugged in. Each key's path and product come
  /// from its file; the paths must differ.
  public static func keys(fromList list: String) throws -> [SoftAuthenticator] {
    try list.split(separator: ":", omittingEmptySubsequences: true).map { try SoftAuthenticator(stateFile: String($0)) }
  }

  /// The environment variable the test executable `fr-profile-seams` reads the keys from.
  public static let environmentVariable = "FR_PROFILE_TEST_SECURITY_KEYS"
}
