import CQREncode

/// An MFA registration URI (`otpauth://…`, `pushauth://…`) as a QR code for a terminal, the
/// way AM's own pages show it to an authenticator app: libqrencode (loaded on demand, like
/// libcurl) makes the modules, drawn two rows per line with half blocks. Nil when libqrencode
/// cannot be loaded (the URI is then shown as text alone).
enum QRCode {
  static func render(_ text: String) -> String? {
    guard frp_qrencode_load(nil) != 0, let code = frp_QRcode_encode(text) else { return nil }
    defer { frp_QRcode_free(code) }
    let width = Int(code.pointee.width)
    guard width > 0, let data = code.pointee.data else { return nil }
    // Bit 0 of each module byte is dark/light; a quiet zone of 2 around it. Light modules are
    // drawn (full and half blocks), dark ones left to the terminal's background: dark on light
    // where the terminal is dark, what scanners read.
    let margin = 2
    let side = width + 2 * margin
    func dark(_ row: Int, _ column: Int) -> Bool {
      let r = row - margin
      let c = column - margin
      guard r >= 0, r < width, c >= 0, c < width else { return false }
      return data[r * width + c] & 1 == 1
    }
    var lines: [String] = []
    for row in stride(from: 0, to: side, by: 2) {
      var line = ""
      for column in 0..<side {
        let top = !dark(row, column)
        let bottom = row + 1 < side ? !dark(row + 1, column) : false
        line += top && bottom ? "█" : top ? "▀" : bottom ? "▄" : " "
      }
      lines.append(line)
    }
    return lines.joined(separator: "\n") + "\n"
  }
}
