/// Text from the other side (a server's prompt, a device's error) made safe to print: the one
/// definition of what may not reach a terminal or a log raw, shared by `Journey.ServerText`
/// and the attestation verifier.
package enum PrintableText {
  /// Whether `scalar` may change what a terminal shows, or a log reads as, beyond printing a
  /// character: C0 controls except tab (and newline unless `singleLine`), DEL, C1, the line and
  /// paragraph separators, bidirectional marks, embeddings, overrides and isolates.
  package static func isUnsafe(_ scalar: Unicode.Scalar, singleLine: Bool = false) -> Bool {
    switch scalar.value {
    case 0x09: false
    case 0x0A: singleLine
    case 0x00...0x1F, 0x7F...0x9F: true
    case 0x2028, 0x2029: singleLine
    case 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: true
    default: false
    }
  }

  /// `text` on one line, each unsafe character replaced by `?`, cut to `limit` characters
  /// (then ending in "…"): for text another party chose that goes into a message of ours.
  package static func line(_ text: String, limit: Int = 200) -> String {
    var scalars = String.UnicodeScalarView()
    var count = 0
    for scalar in text.unicodeScalars {
      if count == limit {
        scalars.append("…")
        break
      }
      scalars.append(isUnsafe(scalar, singleLine: true) ? "?" : scalar)
      count += 1
    }
    return String(scalars)
  }
}
