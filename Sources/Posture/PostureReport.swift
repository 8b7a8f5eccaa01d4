import ProfileJSON
import SystemCalls

/// The device's security posture, fact by fact, each with its reason (docs/posture.md): what
/// `fr-profile posture` prints and what `--posture` signs into a JWS as the `posture` claim.
///
/// Never part of the device profile: posture changes (a firewall turned on, a package
/// upgraded), and the profile must stay the same for Device Match to recognise the device.
public struct PostureReport: Sendable, Equatable {
  /// The document's version (`"v": 1`).
  public static let version = 1

  /// Facts that change only when someone changes the machine's configuration, in order.
  public var stable: [(name: String, fact: PostureFact)]
  /// Facts that change by themselves (a new kernel, time passing), in order.
  public var volatile: [(name: String, fact: PostureFact)]

  public init(stable: [(name: String, fact: PostureFact)], volatile: [(name: String, fact: PostureFact)]) {
    self.stable = stable
    self.volatile = volatile
  }

  /// Reads every fact from `system`, for the user `uid`, at `now` (seconds since the epoch).
  /// Reads files only: no root, no D-Bus, no child process.
  public static func evaluate(_ system: SystemSource, uid: UInt32, now: Int64) -> PostureReport {
    let distribution = Distribution(system: system).facts()
    let disks = DiskEncryption(system: system).facts()
    let boot = SecureBoot(system: system).facts()
    let modules = SecurityModules(system: system)
    let freshness = Freshness(system: system, now: now)
    return PostureReport(
      stable: [
        ("distributionId", distribution.id),
        ("distributionVersion", distribution.version),
        ("rootEncrypted", disks.root),
        ("homeEncrypted", disks.home),
        ("swapEncrypted", disks.swap),
        ("secureBootEnabled", boot.enabled),
        ("secureBootSetupMode", boot.setupMode),
        ("firewallServiceEnabled", Firewall(system: system).fact()),
        ("screenLockOnIdle", ScreenLock(system: system, uid: uid).fact()),
        ("passwordQualityEnforced", PasswordQuality(system: system).fact()),
        ("selinuxEnforcing", modules.selinux()),
        ("apparmorEnabled", modules.apparmor()),
      ],
      volatile: [
        ("kernelRelease", freshness.kernel()),
        ("daysSincePackageChange", freshness.packageAge()),
      ])
  }

  /// The fact named `name`, stable or volatile.
  public subscript(name: String) -> PostureFact? {
    (stable + volatile).first(where: { $0.name == name })?.fact
  }

  /// `{"v": 1, "stable": {name: fact…}, "volatile": {name: fact…}}` (schemas/posture.schema.json).
  public var json: JSON {
    var object = JSONObject()
    object["v"] = .number(Double(Self.version))
    object["stable"] = .object(JSONObject(stable.map { (key: $0.name, value: $0.fact.json) }))
    object["volatile"] = .object(JSONObject(volatile.map { (key: $0.name, value: $0.fact.json) }))
    return .object(object)
  }

  /// Two lines per fact: name and value (true, false, unknown, or the text or number), then the
  /// reason. Control and bidirectional characters (a file's content quoted in a reason) are
  /// shown as `?`.
  public var text: String {
    let width = (stable + volatile).map(\.name.count).max() ?? 0
    func lines(_ facts: [(name: String, fact: PostureFact)]) -> String {
      facts.map { name, fact in
        let value: String
        switch fact.value {
        case .null: value = "unknown"
        case .bool(let flag): value = String(flag)
        case .string(let text): value = text
        default: value = JSONWriter.compact(fact.value)
        }
        let padding = String(repeating: " ", count: width - name.count)
        return "  \(name)\(padding)  \(value)\n  \(String(repeating: " ", count: width))    \(fact.reason)\n"
      }.joined()
    }
    let text = "stable\n" + lines(stable) + "volatile\n" + lines(volatile)
    return String(String.UnicodeScalarView(text.unicodeScalars.map { PrintableText.isUnsafe($0) ? "?" : $0 }))
  }

  public static func == (a: PostureReport, b: PostureReport) -> Bool {
    a.json == b.json
  }
}
