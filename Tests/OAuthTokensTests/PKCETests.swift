import OAuthTokens
import Testing

@Suite(.timeLimit(.minutes(10)))
struct PKCETests {
  @Test("the S256 challenge of RFC 7636's Appendix B example")
  func rfc7636Example() {
    let secrets = AuthorizationSecrets(codeVerifier: "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk", state: "s", nonce: "n")
    #expect(secrets.codeChallenge == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")
  }
}
