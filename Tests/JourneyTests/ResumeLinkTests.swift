import Journey
import Testing

@Suite("Resume links", .timeLimit(.minutes(10)))
struct ResumeLinkTests {
  @Test(
    "the link shapes AM 6.5–8 and PingOne Advanced Identity Cloud send: parameters in the query, the fragment or both",
    arguments: [
      // AM 7–8 and Identity Cloud (XUI): the tree kept, the route fragment after the last parameter.
      ("https://am.example.com/am/XUI/?realm=/alpha&suspendedId=abc-123&authIndexType=service&authIndexValue=Login#/", "/alpha", "Login"),
      ("https://am.example.com/am/XUI/?realm=/alpha&authIndexType=service&authIndexValue=Login&suspendedId=abc-123#/", "/alpha", "Login"),
      (
        "https://openam-acme.forgeblocks.com/am/XUI/?realm=alpha&authIndexType=service&authIndexValue=Reg&suspendedId=abc-123", "alpha",
        "Reg"
      ),
      // The parameters in the fragment (XUI routes by it), or split between both.
      ("https://am.example.com/am/XUI/#/?realm=/alpha&suspendedId=abc-123", "/alpha", nil),
      ("https://am.example.com/am/XUI/?realm=%2Falpha#/&suspendedId=abc-123&authIndexValue=Login", "/alpha", "Login"),
      // AM 6.5's XUI: `#login/&…`, and a link without a realm.
      ("https://openam.example.com/openam/XUI/#login/&realm=/&suspendedId=abc-123", "/", nil),
      ("https://am.example.com/am/XUI/?suspendedId=abc-123", nil, nil),
    ] as [(String, String?, String?)])
  func shapes(link: String, realm: String?, tree: String?) throws {
    let parsed = try ResumeLink(parsing: link)
    #expect(parsed.suspendedId == "abc-123")
    #expect(parsed.realm == realm)
    #expect(parsed.tree == tree)
  }

  @Test("the id is percent-decoded and sent back encoded, with the link's tree after it, as the JavaScript SDK orders them")
  func sentBack() throws {
    let parsed = try ResumeLink(parsing: "https://am/am/XUI/?suspendedId=a%2Bb%3D&authIndexValue=Log%20in#/")
    #expect(parsed.suspendedId == "a+b=" && parsed.tree == "Log in")
    let endpoint = AuthenticateEndpoint(
      server: "https://am/am", realm: "root", start: .resume(suspendedId: parsed.suspendedId, tree: parsed.tree))
    #expect(
      endpoint.url == "https://am/am/json/realms/root/authenticate?suspendedId=a%2Bb%3D&authIndexType=service&authIndexValue=Log%20in")
    let bare = AuthenticateEndpoint(server: "https://am/am", realm: "alpha", start: .resume(suspendedId: "x"))
    #expect(bare.url == "https://am/am/json/realms/root/realms/alpha/authenticate?suspendedId=x")
  }

  @Test(
    "a link that cannot name one journey is refused, saying why",
    arguments: [
      ("https://am/am/XUI/?realm=/alpha#/", ResumeLinkError.noSuspendedId),
      ("https://am/am/XUI/?realm=/alpha&suspendedId=#/", .noSuspendedId),
      ("https://am/am/XUI/?suspendedId=a#/?suspendedId=b", .conflicting("suspendedId")),
      ("https://am/am/XUI/?realm=/alpha&suspendedId=a#/&realm=/beta", .conflicting("realm")),
      ("https://am/am/XUI/?suspendedId=a%zz", .malformedEscape("suspendedId=a%zz")),
      ("https://am/am/XUI/?suspendedId=a&authIndexType=composite_advice&authIndexValue=x", .unsupportedIndexType("composite_advice")),
    ] as [(String, ResumeLinkError)])
  func refused(link: String, error: ResumeLinkError) {
    #expect(throws: error) { try ResumeLink(parsing: link) }
  }

  @Test("the same parameter twice with the same value (query and fragment) is one parameter")
  func repeatedAlike() throws {
    #expect(try ResumeLink(parsing: "https://am/am/XUI/?suspendedId=a&realm=/alpha#/?suspendedId=a").suspendedId == "a")
  }
}
