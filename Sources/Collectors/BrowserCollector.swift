import DeviceFacts
import ProfileJSON
import SystemCalls

/// The "browser" section: the client's user agent.
public struct BrowserCollector: DeviceCollector {
  public let name = "browser"
  /// Replaces the generated user agent (for callers that want their own).
  public var userAgent: String?

  public init(userAgent: String? = nil) {
    self.userAgent = userAgent
  }

  public func collect(_ context: CollectionContext) -> JSON? {
    // "userAgent" ← fr-profile/<version> (<os-release PRETTY_NAME>; <uname machine>)
    // Labelled members, not a dictionary literal (see DeviceProfile.profile).
    .object(
      JSONObject([(key: "userAgent", value: .string(userAgent ?? Self.userAgent(osRelease: context.facts.osRelease, context.system)))]))
  }

  /// "fr-profile/0.1.0 (Debian GNU/Linux 12 (bookworm); x86_64)". The machine comes from
  /// /proc/sys/kernel/arch (Linux ≥ 6.1, and fixture trees) or `uname`.
  public static func defaultUserAgent(_ system: SystemSource) -> String {
    userAgent(osRelease: SharedFacts(system: system).osRelease, system)
  }

  static func userAgent(osRelease: KeyValues, _ system: SystemSource) -> String {
    let osName = meaningful(osRelease["PRETTY_NAME"]) ?? meaningful(osRelease["NAME"]) ?? "Linux"
    var details = osName
    if let machine = system.readLine("/proc/sys/kernel/arch") ?? system.unameMachine() { details += "; " + machine }
    return "fr-profile/" + frProfileVersion + " (" + details + ")"
  }
}
