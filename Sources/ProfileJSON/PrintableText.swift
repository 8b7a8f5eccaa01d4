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
    // Every Bidi_Control scalar (U+061C, U+200E/F, U+202A–E, U+2066–9) by Unicode's own property,
    // not a hand list that misses one; other format characters (ZWJ, ZWNJ) stay, as emoji and
    // Persian need them.
    default: scalar.properties.isBidiControl
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
