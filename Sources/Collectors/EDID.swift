/// A display mode in pixels, as a panel or monitor prefers it.
package struct DisplayMode: Sendable, Equatable {
  package var width: Int
  package var height: Int

  package init(width: Int, height: Int) {
    self.width = width
    self.height = height
  }
}

/// Why an EDID block gave no preferred mode.
package enum EDIDError: Error, Equatable, CustomStringConvertible {
  /// Fewer than the 128 bytes of a base block (0: the connector has no EDID).
  case tooShort(count: Int)
  /// The first 8 bytes are not 00 FF FF FF FF FF FF 00.
  case badHeader
  /// The base block's bytes do not sum to 0 modulo 256.
  case badChecksum(sum: UInt8)
  /// The first descriptor is not a detailed timing (pixel clock 0) or has no size.
  case noPreferredTiming

  package var description: String {
    switch self {
    case .tooShort(0): "empty EDID"
    case .tooShort(let count): "EDID too short (\(count) bytes, a base block has 128)"
    case .badHeader: "EDID header is not 00 FF FF FF FF FF FF 00"
    case .badChecksum(let sum): "EDID checksum fails (bytes sum to \(sum) modulo 256, not 0)"
    case .noPreferredTiming: "EDID has no preferred detailed timing"
    }
  }
}

/// The preferred mode of an EDID (VESA E-EDID 1.3/1.4 base block): the active pixels of the
/// first detailed timing descriptor, which the standard makes the preferred timing.
///
/// Base block layout used here (offsets in bytes):
///
///     0…7    header 00 FF FF FF FF FF FF 00
///     54…71  first detailed timing descriptor:
///            54–55 pixel clock (10 kHz, little endian; 0 = not a timing)
///            56 horizontal active, low 8 bits   58 high nibble: its bits 8–11
///            59 vertical active, low 8 bits     61 high nibble: its bits 8–11
///            71 bit 7: interlaced (the vertical active lines are one field's: the frame has
///               twice as many, which is what edid-decode and the kernel's modes report)
///     127    checksum: the 128 bytes sum to 0 modulo 256
///
/// Extension blocks (CTA-861, DisplayID) are ignored: a DisplayID-only panel, whose base block
/// has no detailed timing, gives `noPreferredTiming` and the connector's `modes` decide.
package func parseEDID(_ bytes: [UInt8]) -> Result<DisplayMode, EDIDError> {
  guard bytes.count >= 128 else { return .failure(.tooShort(count: bytes.count)) }
  guard bytes[0..<8].elementsEqual([0x00, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x00]) else {
    return .failure(.badHeader)
  }
  let sum = bytes[0..<128].reduce(UInt8(0), &+)
  guard sum == 0 else { return .failure(.badChecksum(sum: sum)) }
  let pixelClock = Int(bytes[54]) | Int(bytes[55]) << 8
  let width = Int(bytes[56]) | Int(bytes[58] & 0xF0) << 4
  let lines = Int(bytes[59]) | Int(bytes[61] & 0xF0) << 4
  let height = bytes[71] & 0x80 != 0 ? 2 * lines : lines
  guard pixelClock != 0, width > 0, height > 0 else { return .failure(.noPreferredTiming) }
  return .success(DisplayMode(width: width, height: height))
}

/// The first mode of a DRM connector's `modes` attribute: the kernel lists the preferred mode
/// first, one "<width>x<height>[i]" per line.
///
///     1920x1080
///     1920x1080
///     1680x1050
package func parseFirstMode(_ modes: String) -> DisplayMode? {
  guard let line = modes.split(separator: "\n").first else { return nil }
  let parts = line.split(separator: "x", maxSplits: 1)
  guard parts.count == 2, let width = Int(parts[0]) else { return nil }
  let heightDigits = parts[1].prefix(while: { $0.isASCII && $0.isNumber })
  guard let height = Int(heightDigits), width > 0, height > 0 else { return nil }
  return DisplayMode(width: width, height: height)
}
