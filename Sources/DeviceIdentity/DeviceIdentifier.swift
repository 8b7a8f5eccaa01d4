import Crypto
import SystemCalls

/// The profile's `identifier`: `<host>-<key>`, the shape of Android's `ANDROID_ID-sha1hex`.
///
/// - `<host>`: the first 16 hex digits of HMAC-SHA256(key: the machine-id's 16 bytes,
///   message: `appLabel`) — app-specific, so the raw machine-id never leaves the machine
///   (systemd's `sd_id128_get_machine_app_specific` idea).
/// - `<key>`: lowercase hex SHA-1 of the public key's DER (SubjectPublicKeyInfo).
///
/// Without a usable machine-id the identifier is the 40-hex key part alone (the iOS shape).
public enum DeviceIdentifier {
  public static let appLabel = "fr-profile device identifier v1"

  public static func make(machineID: [UInt8]?, publicKeyDER: [UInt8]) -> String {
    let keyPart = hexString(Insecure.SHA1.hash(data: publicKeyDER))
    guard let machineID else { return keyPart }
    let mac = HMAC<SHA256>.authenticationCode(for: Array(appLabel.utf8), using: SymmetricKey(data: machineID))
    return String(hexString(mac).prefix(16)) + "-" + keyPart
  }

  /// The 16 bytes of /etc/machine-id (32 hex digits), or nil when it is missing, empty,
  /// "uninitialized" (first boot) or malformed. Falls back to /var/lib/dbus/machine-id.
  public static func machineID(_ system: SystemSource) -> [UInt8]? {
    for path in ["/etc/machine-id", "/var/lib/dbus/machine-id"] {
      if let line = system.readLine(path), let bytes = parseMachineID(line) { return bytes }
    }
    return nil
  }

  public static func parseMachineID(_ text: String) -> [UInt8]? {
    let digits = Array(text.utf8)
    guard digits.count == 32 else { return nil }
    var bytes: [UInt8] = []
    bytes.reserveCapacity(16)
    for index in stride(from: 0, to: 32, by: 2) {
      guard let high = hexValue(digits[index]), let low = hexValue(digits[index + 1]) else { return nil }
      bytes.append(high << 4 | low)
    }
    return bytes.allSatisfy({ $0 == 0 }) ? nil : bytes
  }

  private static func hexValue(_ digit: UInt8) -> UInt8? {
    switch digit {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
    default: nil
    }
  }

}
