import ArgumentParser
import ProfileCLI
import Testing

/// The transport rule of every command that sends a credential to AM.
@Suite(.timeLimit(.minutes(10))) struct AMServerURLTests {
  @Test(arguments: [
    "http://localhost/am", "http://LOCALHOST:8080/am", "http://localhost./am", "http://127.0.0.1:9/am", "http://127.255.0.1/am",
    "http://[::1]:8080/am", "http://user:pw@127.0.0.1/am", "http://127.0.0.1", "http://127.0.0.1?x", "http://127.0.0.1#y",
  ])
  func loopback(url: String) {
    #expect(AMServerURL.isLoopback(url))
  }

  @Test(arguments: [
    "http://192.0.2.1/am", "http://127.0.0.1@192.0.2.1/am", "http://localhost.example.com/am", "http://127.0.0.1.example.com/am",
    "http://127.1/am", "http://0177.0.0.1/am", "http://0x7f.0.0.1/am", "http://127.0.0.+1/am", "http://127.0.0.1\\@192.0.2.1/am",
    "http://127.0.0.1%2f@192.0.2.1/am", "http://127.0.0.1:80x/am", "http://[::1/am", "http://[::ffff:127.0.0.1]/am", "http:///am",
    "am.example.com",
  ])
  func notLoopback(url: String) {
    #expect(!AMServerURL.isLoopback(url))
  }

  @Test func plainHTTPElsewhereNeedsInsecureHTTPAndWarns() throws {
    #expect(throws: ValidationError.self) { try AMServerURL("http://192.0.2.1/am", credential: "the SSO token", insecureHTTP: false) }
    let allowed = try AMServerURL("http://192.0.2.1/am", credential: "the SSO token", insecureHTTP: true)
    #expect(allowed.warning?.contains("--insecure-http") == true && allowed.warning?.contains("the SSO token travels in clear") == true)
    #expect(try AMServerURL("http://127.0.0.1:9/am", credential: "the SSO token", insecureHTTP: false).warning == nil)
    #expect(try AMServerURL("https://am.example.com/am", credential: "the SSO token", insecureHTTP: false).warning == nil)
    #expect(throws: ValidationError.self) { try AMServerURL("ftp://am.example.com/am", credential: "x", insecureHTTP: true) }
  }
}
