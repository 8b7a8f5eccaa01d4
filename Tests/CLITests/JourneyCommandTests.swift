import Foundation
import ProfileJSON
import Testing

/// `fr-profile journey` end to end: the built binary against
/// the loopback AM of `AuthenticateServer`.
@Suite(.timeLimit(.minutes(10))) struct JourneyCommandTests {
  let password = "s3cret-Passw0rd"

  /// A state directory, a fixture machine and a configured location: one stable identity.
  struct Device {
    let directory: String
    var arguments: [String] {
      ["--state-dir", directory + "/state", "--root", machineRoot("laptop"), "--latitude", "52.52", "--longitude", "13.405"]
    }
  }

  func withDevice(_ body: (Device) throws -> Void) throws {
    let directory = try makeTemporaryDirectory("fr-profile-journey-test")
    defer { removeTemporaryDirectory(directory) }
    try body(Device(directory: directory))
  }

  func journey(
    _ server: AuthenticateServer, _ device: Device, user: String = "demo", password: String? = nil, _ extra: [String] = []
  ) throws -> RunResult {
    let arguments =
      [
        "journey", "--server", server.url + "/", "--realm", "alpha", "--tree", "DeviceProfiling", "--user", user,
        "--password-stdin",
      ] + device.arguments + extra
    let result = try run(arguments, stdin: (password ?? self.password) + "\n")
    expectNoSecrets(result, device)
    return result
  }

  /// Neither the password nor the device's private key appears in any output.
  func expectNoSecrets(_ result: RunResult, _ device: Device) {
    #expect(!result.stdout.contains(password) && !result.stderr.contains(password))
    if let key = try? String(contentsOfFile: device.directory + "/state/device-key.pem", encoding: .utf8) {
      for line in key.split(separator: "\n") where !line.hasPrefix("-----") {
        #expect(!result.stdout.contains(line) && !result.stderr.contains(line))
      }
    }
  }

  /// The profile `collect` makes for this device, as a Device Match node would have stored it.
  func enrolledProfile(_ device: Device) throws -> JSON {
    let collected = try run(["collect", "--location", "--compact"] + device.arguments)
    #expect(collected.status == 0, "\(collected.stderr)")
    return try JSONParser.parse(Array(collected.stdout.utf8))
  }

  @Test func matchedDeviceGetsTheSessionToken() throws {
    try withDevice { device in
      var configuration = AuthenticateServer.Configuration()
      configuration.storedProfiles["demo"] = [try enrolledProfile(device)]
      let server = try AuthenticateServer(configuration)
      defer { server.stop() }
      let result = try journey(server, device)
      #expect(result.status == 0, "\(result.stderr)")
      #expect(result.stdout == server.token + "\n")
      #expect(server.outcomes == ["device match: true", "success"])
      #expect(result.stderr.contains("Collecting profile ..."))
      // Start, user name, password, profile: four POSTs with the JavaScript SDK's headers.
      try #require(server.requests.count == 4)
      for request in server.requests {
        #expect(request.headers["accept-api-version"] == "protocol=1.0,resource=2.1")
        #expect(request.headers["x-requested-with"] == "forgerock-sdk")
        #expect(request.headers["content-type"] == "application/json" && request.headers["accept"] == "application/json")
      }
      #expect(server.requests[0].body == "{}")
      #expect(server.requests[2].body.contains(password))
    }
  }

  @Test func sendsTheProfileAsAJSONStringOfTheRequestedShape() throws {
    try withDevice { device in
      let server = try AuthenticateServer()
      defer { server.stop() }
      _ = try journey(server, device)
      let profile = try #require(server.receivedProfiles.first)
      #expect(profile.objectValue?.keys == ["identifier", "version", "metadata", "location"])
      #expect(profile["location"] == ["latitude": 52.52, "longitude": 13.405])
      #expect(profile["metadata"]?["platform"]?["platform"] == "Linux")
      try #require(server.requests.count == 4)
      let answered = try JSONParser.parse(Array(server.requests[3].body.utf8))
      #expect(answered["callbacks"]?.arrayValue?.first?["input"]?.arrayValue?.first?["name"] == "IDToken1")
    }
  }

  @Test func jsonPrintsAMsWholeSuccessBody() throws {
    try withDevice { device in
      var configuration = AuthenticateServer.Configuration()
      configuration.storedProfiles["demo"] = [try enrolledProfile(device)]
      let server = try AuthenticateServer(configuration)
      defer { server.stop() }
      let result = try journey(server, device, ["--json"])
      #expect(result.status == 0, "\(result.stderr)")
      let body = try JSONParser.parse(Array(result.stdout.utf8))
      #expect(body["tokenId"] == .string(server.token))
      #expect(body["successUrl"] == "/am/console")
    }
  }

  @Test func unknownDeviceFailsWithAMsMessage() throws {
    try withDevice { device in
      var configuration = AuthenticateServer.Configuration()
      configuration.storedProfiles["demo"] = [["identifier": "some-other-device", "version": "1.0"]]
      let server = try AuthenticateServer(configuration)
      defer { server.stop() }
      let result = try journey(server, device)
      #expect(result.status == 1)
      #expect(result.stdout.isEmpty)
      #expect(result.stderr.contains("authentication failed: Login failure"))
      #expect(server.outcomes == ["device match: unknownDevice"])
    }
  }

  @Test func movedDeviceFailsTheDeviceMatch() throws {
    try withDevice { device in
      var configuration = AuthenticateServer.Configuration()
      configuration.storedProfiles["demo"] = [try enrolledProfile(device)]
      let server = try AuthenticateServer(configuration)
      defer { server.stop() }
      // Same machine and key, reported 880 km from where it was enrolled.
      let result = try journey(server, device, ["--latitude", "48.8566", "--longitude", "2.3522"])
      #expect(result.status == 1)
      #expect(result.stderr.contains("Login failure"))
      #expect(server.outcomes == ["device match: false"])
    }
  }

  @Test func wrongPasswordFailsBeforeTheProfileIsSent() throws {
    try withDevice { device in
      let server = try AuthenticateServer()
      defer { server.stop() }
      let result = try journey(server, device, password: "not-the-password")
      #expect(result.status == 1)
      #expect(result.stderr.contains("Login failure"))
      #expect(!result.stderr.contains("not-the-password") && !result.stdout.contains("not-the-password"))
      #expect(server.outcomes == ["wrong password"])
      #expect(server.receivedProfiles.isEmpty)
    }
  }

  @Test func oversizedProfileIsRejectedByTheCollectorNode() throws {
    try withDevice { device in
      let server = try AuthenticateServer()
      defer { server.stop() }
      let result = try journey(server, device, ["--user-agent", String(repeating: "x", count: 3200)])
      #expect(result.status == 1)
      #expect(result.stderr.contains("above AM's default Maximum Profile Size"))
      #expect(server.outcomes.first?.hasPrefix("profile too large") == true)
    }
  }

  @Test func hangingServerTimesOutWithinTheTimeout() throws {
    try withDevice { device in
      var configuration = AuthenticateServer.Configuration()
      configuration.behaviour = .hang
      let server = try AuthenticateServer(configuration)
      defer { server.stop() }
      let start = Date()
      let result = try journey(server, device, ["--timeout", "1"])
      #expect(Date().timeIntervalSince(start) < 5)
      #expect(result.status == 75)
      #expect(result.stderr.contains("no response from \(server.url)"))
      #expect(result.stderr.contains("--timeout"))
    }
  }

  @Test func refusedConnectionIsAConnectionError() throws {
    try withDevice { device in
      let server = try AuthenticateServer()
      server.stop()
      let result = try journey(server, device)
      #expect(result.status == 68)
      #expect(result.stderr.contains("cannot connect to"))
    }
  }

  @Test func selfSignedCertificateIsRefusedUnlessGivenWithCACert() throws {
    try withDevice { device in
      var configuration = AuthenticateServer.Configuration()
      configuration.tls = try makeSelfSignedCertificate(in: device.directory)
      configuration.storedProfiles["demo"] = [try enrolledProfile(device)]
      let server = try AuthenticateServer(configuration)
      defer { server.stop() }
      #expect(server.url.hasPrefix("https://"))

      let refused = try journey(server, device)
      #expect(refused.status == 67)
      #expect(refused.stderr.contains("--cacert"))
      #expect(server.requests.isEmpty)

      let accepted = try journey(server, device, ["--cacert", configuration.tls!.certificate])
      #expect(accepted.status == 0, "\(accepted.stderr)")
      #expect(accepted.stdout == server.token + "\n")
    }
  }

  @Test func unreadableCACertIsAnInputError() throws {
    try withDevice { device in
      let server = try AuthenticateServer()
      defer { server.stop() }
      let result = try journey(server, device, ["--cacert", device.directory + "/missing.pem"])
      #expect(result.status == 66)
      #expect(result.stderr.contains("missing.pem"))
      #expect(server.requests.isEmpty)
    }
  }

  @Test func unsupportedCallbackTypeIsNamed() throws {
    try withDevice { device in
      var configuration = AuthenticateServer.Configuration()
      configuration.behaviour = .unsupportedCallback("WebAuthnRegistrationCallback")
      let server = try AuthenticateServer(configuration)
      defer { server.stop() }
      let result = try journey(server, device)
      #expect(result.status == 2)
      #expect(result.stderr.contains("\"WebAuthnRegistrationCallback\""))
      #expect(server.requests.count == 1)
    }
  }

  @Test func choiceAnswersConfirmationAndTextOutputIsShown() throws {
    try withDevice { device in
      var configuration = AuthenticateServer.Configuration()
      configuration.confirmation = true
      configuration.storedProfiles["demo"] = [try enrolledProfile(device)]
      let server = try AuthenticateServer(configuration)
      defer { server.stop() }
      let yes = try journey(server, device, ["--choice", "0"])
      #expect(yes.status == 0, "\(yes.stderr)")
      #expect(yes.stderr.contains("New sign-in from this device."))
      let no = try journey(server, device, ["--choice", "1"])
      #expect(no.status == 1)
      #expect(server.outcomes.last == "not confirmed")
      let outOfRange = try journey(server, device, ["--choice", "7"])
      #expect(outOfRange.status == 64)
      #expect(outOfRange.stderr.contains("0=Yes, 1=No"))
    }
  }

  @Test func rootRealmUsesTheRootPath() throws {
    try withDevice { device in
      var configuration = AuthenticateServer.Configuration()
      configuration.path = "/json/realms/root/authenticate"
      let server = try AuthenticateServer(configuration)
      defer { server.stop() }
      let result = try run(
        [
          "journey", "--server", server.url, "--realm", "root", "--tree", "DeviceProfiling", "--user", "demo",
          "--password-stdin",
        ] + device.arguments, stdin: password)
      #expect(result.status == 1)
      #expect(server.outcomes == ["device match: unknownDevice"])
    }
  }

  @Test func emptyPasswordOnStdinIsRefusedBeforeConnecting() throws {
    try withDevice { device in
      let server = try AuthenticateServer()
      defer { server.stop() }
      let result = try journey(server, device, password: "")
      #expect(result.status == 65)
      #expect(result.stderr.contains("--password-stdin"))
      #expect(server.requests.isEmpty)
    }
  }

  @Test func helpListsExitCodesAndExamples() throws {
    let help = try run(["journey", "--help"])
    #expect(help.status == 0)
    #expect(help.stdout.contains("--cacert"))
    #expect(help.stdout.contains("EXIT CODES:"))
    #expect(help.stdout.contains("EXAMPLES:"))
    let root = try run(["--help"])
    #expect(root.stdout.contains("journey"))
  }
}
