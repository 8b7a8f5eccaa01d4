import Foundation
import ProfileJSON
import Testing

@Suite(.timeLimit(.minutes(10))) struct Base64URLTests {
  @Test func roundTripsEveryLength() {
    for length in 0..<40 {
      let bytes = (0..<length).map { UInt8(($0 * 37 + 11) & 0xFF) }
      let text = Base64URL.encode(bytes)
      #expect(!text.contains("=") && !text.contains("+") && !text.contains("/"))
      #expect(Base64URL.decode(text) == bytes)
      #expect(
        text
          == Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
          .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: ""))
    }
    #expect(Base64URL.decode("a") == nil && Base64URL.decode("ab=c") == nil)
  }

  @Test("one byte string, one spelling: unused bits that are not zero are refused")
  func nonCanonicalTailsAreRefused() {
    #expect(Base64URL.decode("QQ") == [0x41])
    #expect(Base64URL.decode("QR") == nil && Base64URL.decode("QX") == nil)
    #expect(Base64URL.decode("QUE") == [0x41, 0x41])
    #expect(Base64URL.decode("QUF") == nil)
    // Every last character after one and two others: exactly the canonical ones (4 of 64 and 16
    // of 64) decode, and to bytes that encode back to the same text.
    for (prefix, canonical) in [("Q", 4), ("QQ", 16)] {
      var decoded = 0
      for last in Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") {
        let text = prefix + String(last)
        guard let bytes = Base64URL.decode(text) else { continue }
        decoded += 1
        #expect(Base64URL.encode(bytes) == text)
      }
      #expect(decoded == canonical, "\(prefix)?")
    }
  }
}
