import DeviceBinding
import Foundation
import ProfileJSON
import TestSupport
import Testing

/// The JWS encoder is our own (JWS.swift), so an implementation we did not write checks what it
/// makes: PyJWT with `cryptography` (Debian python3-jwt, installed by `make test`) verifies the
/// binding JWS with its header's `jwk` and the signing JWS with the bound key, claims and all.
@Suite(.timeLimit(.minutes(10))) struct IndependentVerificationTests {
  static let python = "/usr/bin/python3"
  static let script = """
    import json, sys, jwt
    binding, signing = sys.argv[1], sys.argv[2]
    header = jwt.get_unverified_header(binding)
    key = jwt.PyJWK(header["jwk"]).key
    required = {"require": ["exp", "iat", "nbf", "sub"]}
    bound = jwt.decode(binding, key, algorithms=["ES256"], options=required)
    signed = jwt.decode(signing, key, algorithms=["ES256"], options=required)
    print(json.dumps({"typ": header["typ"], "kid": header["kid"], "binding": bound, "signing": signed}))
    """

  /// Runs the script; (status, stdout, stderr).
  static func verify(_ binding: String, _ signing: String) throws -> (Int32, String, String) {
    let result = try TestProcess.run([python, "-c", script, binding, signing], environment: [:], timeout: 60)
    return (result.status, result.stdout, result.stderr)
  }

  @Test("PyJWT verifies the binding and signing JWSs, and refuses a changed one")
  func pyJWTVerifiesWhatWeSign() async throws {
    try #require(FileManager.default.isExecutableFile(atPath: Self.python), "\(Self.python) is missing (Debian python3)")
    let store = InMemoryUserKeyStore()
    var binder = makeBinder(store: store)
    let bound = try binder.bind(bindingRequest(timeout: 45))
    binder.customClaims = [("os", "linux"), ("isCompanyPhone", true), ("n", 7)]
    let signed = try binder.sign(signingRequest())

    let (status, stdout, stderr) = try Self.verify(bound.jws, signed.jws)
    try #require(status == 0, "PyJWT refused the JWSs (is python3-jwt installed?): \(stderr)")
    let result = try JSONParser.parse(Array(stdout.utf8))
    #expect(result["typ"] == "JWS" && result["kid"]?.stringValue == bound.kid)
    #expect(result["binding"]?["platform"] == "linux")
    #expect(result["binding"]?["challenge"] == "CS3+g40VkHXx+dN7rpnJKhrEAvwZaYgbaXoEcpO5twM=")
    #expect(result["signing"]?["challenge"] == "zYwKaKnqS2YzvhXSK+sFjC7FKBoprArqz6LpJ8qe9+g=")
    #expect(result["signing"]?["isCompanyPhone"] == true && result["signing"]?["n"] == 7)
    let iat = try #require(result["binding"]?["iat"]?.numberValue)
    #expect(result["binding"]?["exp"]?.numberValue == iat + 45)

    // A claim changed after signing: PyJWT must refuse it.
    let parts = signed.jws.split(separator: ".").map(String.init)
    let forged = parts[0] + "." + Base64URL.encode(Array(#"{"sub":"someone else"}"#.utf8)) + "." + parts[2]
    let (refused, _, why) = try Self.verify(bound.jws, forged)
    #expect(refused != 0, "PyJWT accepted a forged signing JWS")
    #expect(why.contains("Signature verification failed"), "\(why)")
  }
}
