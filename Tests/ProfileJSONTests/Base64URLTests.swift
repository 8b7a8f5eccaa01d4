import Foundation
import Testing

@testable import ProfileJSON

@Suite struct Base64URLTests {
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
}
