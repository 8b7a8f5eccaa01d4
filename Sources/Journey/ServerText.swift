import ProfileJSON

/// Text a server sent, made safe to show: a journey's server is not trusted with the terminal.
///
/// Messages, prompts, callback type names and error bodies may carry escape sequences (ANSI
/// CSI, OSC 52 clipboard writes, title changes), C1 controls or bidirectional overrides that
/// make the text read differently from what it is; and a server that echoes the password back
/// would have it printed. `printable` replaces every such character with `?` and every
/// occurrence of a secret with `[hidden]`.
public enum ServerText {
  /// What a hidden secret is shown as.
  public static let hidden = "[hidden]"

  /// `text` with control characters (C0 except tab and — unless `singleLine` — newline, DEL,
  /// C1) and bidirectional formatting characters replaced by `?`, and each non-empty string of
  /// `secrets` replaced by `[hidden]` (before and after the replacement, so that removing a
  /// character cannot reassemble a secret).
  public static func printable(_ text: String, hiding secrets: [String] = [], singleLine: Bool = false) -> String {
    var result = hide(secrets, in: text)
    var scalars = String.UnicodeScalarView()
    var changed = false
    for scalar in result.unicodeScalars {
      if isUnsafe(scalar, singleLine: singleLine) {
        scalars.append("?")
        changed = true
      } else {
        scalars.append(scalar)
      }
    }
    if changed { result = hide(secrets, in: String(scalars)) }
    return result
  }

  /// Whether `scalar` may change what a terminal shows beyond printing a character
  /// (`PrintableText.isUnsafe`).
  public static func isUnsafe(_ scalar: Unicode.Scalar, singleLine: Bool = false) -> Bool {
    PrintableText.isUnsafe(scalar, singleLine: singleLine)
  }

  /// `value` with every string (member names included) passed through `hide`: for printing a
  /// server's JSON, where the writer escapes controls itself.
  public static func hiding(_ secrets: [String], in value: JSON) -> JSON {
    guard secrets.contains(where: { !$0.isEmpty }) else { return value }
    switch value {
    case .string(let text): return .string(hide(secrets, in: text))
    case .array(let items): return .array(items.map { hiding(secrets, in: $0) })
    case .object(let object):
      return .object(JSONObject(object.members.map { (hide(secrets, in: $0.key), hiding(secrets, in: $0.value)) }))
    default: return value
    }
  }

  /// JSON text with DEL and C1 controls (which JSON leaves raw) written as `\u00XX` escapes:
  /// still the same JSON value, and nothing a terminal acts on.
  public static func escapingControls(inJSON text: String) -> String {
    guard text.unicodeScalars.contains(where: { $0.value >= 0x7F && $0.value <= 0x9F || isUnsafe($0) && $0.value > 0x9F })
    else { return text }
    var out = ""
    for scalar in text.unicodeScalars {
      if scalar.value >= 0x7F && (scalar.value <= 0x9F || isUnsafe(scalar)) {
        let hex = String(scalar.value, radix: 16)
        out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
      } else {
        out.unicodeScalars.append(scalar)
      }
    }
    return out
  }

  /// `text` with each occurrence of each non-empty secret replaced by `[hidden]`.
  static func hide(_ secrets: [String], in text: String) -> String {
    var result = Array(text.utf8)
    for secret in secrets where !secret.isEmpty {
      let needle = Array(secret.utf8)
      guard result.count >= needle.count else { continue }
      var out: [UInt8] = []
      out.reserveCapacity(result.count)
      var index = 0
      var found = false
      while index < result.count {
        if result[index] == needle[0], index + needle.count <= result.count, result[index..<(index + needle.count)].elementsEqual(needle) {
          out.append(contentsOf: hidden.utf8)
          index += needle.count
          found = true
        } else {
          out.append(result[index])
          index += 1
        }
      }
      if found { result = out }
    }
    return String(decoding: result, as: UTF8.self)
  }
}
