import ProfileJSON

/// Assembles the profile the SDKs send: `identifier`, `version`, `metadata` (the collectors'
/// sections in order), `location`.
public enum DeviceProfile {
  /// The profile format version the Android and iOS SDKs send.
  public static let version = "1.0"

  /// AM's Device Profile Collector node rejects profiles above this size by default (3 KB).
  public static let defaultMaximumSize = 3072

  /// The built-in collectors in Android's order: platform, hardware, browser, bluetooth, network.
  public static func defaultCollectors(userAgent: String? = nil) -> [any DeviceCollector] {
    [
      PlatformCollector(),
      HardwareCollector(nested: [DisplayCollector(), CameraCollector()]),
      BrowserCollector(userAgent: userAgent),
      BluetoothCollector(),
      NetworkCollector(),
    ]
  }

  /// The metadata object: each collector's section under its name; empty sections are omitted.
  public static func metadata(_ collectors: [any DeviceCollector], _ context: CollectionContext) -> JSON {
    var builder = SectionBuilder()
    for collector in collectors {
      builder.set(collector.name, collector.collect(context))
    }
    return .object(builder.object)
  }

  /// The whole profile. `metadata` and `location` are included only when given.
  public static func profile(identifier: String, metadata: JSON?, location: Location?) -> JSON {
    // Labelled members, not a dictionary literal: its `(String, JSON)` elements would cost collect
    // one more runtime metadata instantiation.
    var object = JSONObject([(key: "identifier", value: .string(identifier)), (key: "version", value: .string(version))])
    if let metadata { object["metadata"] = metadata }
    if let location { object["location"] = location.json }
    return .object(object)
  }
}
