import Crypto
import ProfileJSON
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
    let keyPart = Hex.encode(Insecure.SHA1.hash(data: publicKeyDER))
    guard let machineID else { return keyPart }
    let mac = HMAC<SHA256>.authenticationCode(for: Array(appLabel.utf8), using: SymmetricKey(data: machineID))
    return String(Hex.encode(mac).prefix(16)) + "-" + keyPart
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
    guard text.utf8.count == 32, let bytes = Hex.decode(text) else { return nil }
    return bytes.allSatisfy({ $0 == 0 }) ? nil : bytes
  }

}
