import Collectors
import DeviceBinding
import Foundation
import Journey
import ProfileJSON
import Testing

@Suite(.timeLimit(.minutes(10))) struct BindingJWSTests {
  @Test func bindingJWSCarriesTheHeaderAndClaimsAMVerifies() async throws {
    let store = InMemoryUserKeyStore()
    let binder = makeBinder(store: store)
    let before = Int(DeviceBinder.wallClock())
    let result = try binder.bind(bindingRequest(timeout: 45))
    let token = try DecodedJWS(result.jws)
    #expect(token.header["alg"] == "ES256")
    #expect(token.header["typ"] == "JWS")
    #expect(token.header["kid"]?.stringValue == result.kid)
    let jwk = try #require(token.header["jwk"])
    #expect(jwk["kty"] == "EC" && jwk["crv"] == "P-256" && jwk["use"] == "sig" && jwk["alg"] == "ES256")
    #expect(jwk["kid"]?.stringValue == result.kid)
    #expect(token.claims["sub"] == "id=demo,ou=user,o=alpha,ou=services,ou=am-config")
    #expect(token.claims["iss"] == "fr-profile")
    #expect(token.claims["challenge"] == "CS3+g40VkHXx+dN7rpnJKhrEAvwZaYgbaXoEcpO5twM=")
    #expect(token.claims["platform"] == "linux")
    let iat = try #require(token.claims["iat"]?.numberValue)
    #expect(iat >= Double(before) && iat == iat.rounded())
    #expect(token.claims["nbf"]?.numberValue == iat)
    #expect(token.claims["exp"]?.numberValue == iat + 45)
    #expect(token.signature.count == 64)
    #expect(token.verifies(x: jwk["x"]!.stringValue!, y: jwk["y"]!.stringValue!))
    #expect(result.deviceId == "device-1" && result.deviceName == "Test box")
    // The kid is a random version-4 UUID.
    #expect(result.kid.count == 36 && Array(result.kid)[14] == "4")
  }

  @Test("a JWS lives the callback's timeout, but never more than an hour")
  func jwsLifetimeIsCapped() async throws {
    let store = InMemoryUserKeyStore()
    let binder = makeBinder(store: store)
    let result = try binder.bind(bindingRequest(timeout: 999_999_999))
    let claims = try DecodedJWS(result.jws).claims
    let iat = try #require(claims["iat"]?.numberValue)
    #expect(claims["exp"]?.numberValue == iat + Double(DeviceBinder.maximumJWSLifetime))
    #expect(DeviceBinder.maximumJWSLifetime == 3600)
  }

  @Test func signingJWSUsesTheBoundKeyWithoutJWKAndAddsCustomClaims() async throws {
    let store = InMemoryUserKeyStore()
    var binder = makeBinder(store: store)
    let bound = try binder.bind(bindingRequest())
    let jwk = try #require(try DecodedJWS(bound.jws).header["jwk"])
    binder.customClaims = [("os", "linux"), ("isCompanyPhone", true)]
    let signed = try binder.sign(signingRequest(timeout: 30))
    let token = try DecodedJWS(signed.jws)
    #expect(token.header["jwk"] == nil)
    #expect(token.header["kid"]?.stringValue == bound.kid && token.header["typ"] == "JWS")
    #expect(token.claims["challenge"] == "zYwKaKnqS2YzvhXSK+sFjC7FKBoprArqz6LpJ8qe9+g=")
    #expect(token.claims["os"] == "linux" && token.claims["isCompanyPhone"] == true)
    #expect(token.claims["exp"]?.numberValue == token.claims["iat"]!.numberValue! + 30)
    #expect(token.verifies(x: jwk["x"]!.stringValue!, y: jwk["y"]!.stringValue!))
  }

  @Test func reservedCustomClaimsAbort() async throws {
    var binder = makeBinder()
    _ = try binder.bind(bindingRequest())
    for name in ["sub", "iss", "challenge", "iat", "nbf", "exp"] {
      binder.customClaims = [(name, "x")]
      #expect(throws: BindingFailure.self) { try binder.sign(signingRequest()) }
      if case .failure(let failure) = try binder.signOrFail(signingRequest()) { #expect(failure.clientError == .abort) }
    }
  }

  @Test func attestationAndUnknownTypesAreUnsupported() async throws {
    let binder = makeBinder()
    guard case .failure(let attested) = try binder.bindOrFail(bindingRequest(attestation: true)) else {
      Issue.record("attestation bound")
      return
    }
    #expect(attested.clientError == .unsupported)
    var odd = bindingRequest()
    odd.authenticationType = "FACE_ID"
    guard case .failure(let unknown) = try binder.bindOrFail(odd) else {
      Issue.record("expected this to fail; it succeeded")
      return
    }
    #expect(unknown.clientError == .unsupported)
    #expect(try binder.store.records().isEmpty)
  }

  @Test func rebindingReplacesTheUsersKey() async throws {
    let store = InMemoryUserKeyStore()
    let binder = makeBinder(store: store)
    let first = try binder.bind(bindingRequest())
    let second = try binder.bind(bindingRequest())
    #expect(first.kid != second.kid)
    #expect(try store.records().map(\.kid) == [second.kid])
  }
}

@Suite(.timeLimit(.minutes(10))) struct KeySelectionTests {
  @Test func usernamelessSigningWithNoKeyIsClientNotRegistered() async throws {
    let binder = makeBinder()
    guard case .failure(let failure) = try binder.signOrFail(signingRequest(userId: "")) else {
      Issue.record("signed without a key")
      return
    }
    #expect(failure.clientError == .clientNotRegistered)
  }

  @Test func usernamelessSigningWithOneKeyUsesIt() async throws {
    let binder = makeBinder()
    let bound = try binder.bind(bindingRequest())
    #expect(try binder.sign(signingRequest(userId: "")).kid == bound.kid)
  }

  @Test func usernamelessSigningWithTwoKeysNeedsBoundUserOrTheSelector() async throws {
    let store = InMemoryUserKeyStore()
    var binder = makeBinder(store: store)
    let demo = try binder.bind(bindingRequest())
    let other = try binder.bind(bindingRequest(userId: "id=bjensen,ou=user,o=alpha", username: "bjensen"))
    guard case .failure(let failure) = try binder.signOrFail(signingRequest(userId: "")) else {
      Issue.record("expected this to fail; it succeeded")
      return
    }
    #expect(failure.clientError == .abort)
    #expect(failure.reason.contains("--bound-user"))
    binder.boundUser = "bjensen"
    #expect(try binder.sign(signingRequest(userId: "")).kid == other.kid)
    binder.boundUser = nil
    binder.selectKey = { records throws(BindingFailure) in
      #expect(records.map(\.username) == ["bjensen", "demo"])  // sorted by username
      return records[1].kid
    }
    #expect(try binder.sign(signingRequest(userId: "")).kid == demo.kid)
    binder.selectKey = { _ throws(BindingFailure) in nil }
    guard case .failure(let cancelled) = try binder.signOrFail(signingRequest(userId: "")) else {
      Issue.record("expected this to fail; it succeeded")
      return
    }
    #expect(cancelled.clientError == .abort)
  }

  @Test func unknownUserIdIsClientNotRegistered() async throws {
    let binder = makeBinder()
    _ = try binder.bind(bindingRequest())
    guard case .failure(let failure) = try binder.signOrFail(signingRequest(userId: "id=nobody")) else {
      Issue.record("expected this to fail; it succeeded")
      return
    }
    #expect(failure.clientError == .clientNotRegistered)
  }

  @Test func aKeyBoundOnAnotherDeviceIsNotRegisteredHere() async throws {
    let store = InMemoryUserKeyStore()
    _ = try makeBinder(store: store, deviceId: "device-1").bind(bindingRequest())
    guard case .failure(let failure) = try makeBinder(store: store, deviceId: "device-2").signOrFail(signingRequest()) else {
      Issue.record("a copied key signed on another device")
      return
    }
    #expect(failure.clientError == .clientNotRegistered)
    #expect(failure.reason.contains("copied"))
  }
}

@Suite(.timeLimit(.minutes(10))) struct AnsweringStepsTests {
  @Test func answersTheReferenceBindingStepByInputSuffix() async throws {
    let path = fixture("authenticate-device-binding.json")
    let bytes = try Array(Data(contentsOf: path))
    var step = try AuthenticateStep(parsing: bytes)
    // The reference step asks for APPLICATION_PIN.
    let binder = makeBinder(pins: FixedPINs("271828"))
    let outcomes = try binder.answer(&step)
    #expect(outcomes.count == 1 && outcomes[0].failure == nil)
    let inputs = try #require(step.callbacks?.first?.json["input"]?.arrayValue)
    #expect(
      inputs.map { $0["name"]?.stringValue ?? "" } == ["IDToken1jws", "IDToken1deviceName", "IDToken1deviceId", "IDToken1clientError"])
    #expect(inputs[0]["value"]?.stringValue?.split(separator: ".").count == 3)
    #expect(inputs[1]["value"] == "Test box" && inputs[2]["value"] == "device-1" && inputs[3]["value"] == "")
  }

  @Test func aClientErrorLeavesTheOtherInputsEmpty() async throws {
    let path = fixture("authenticate-device-signing-verifier.json")
    var step = try AuthenticateStep(parsing: Array(Data(contentsOf: path)))
    let outcomes = try makeBinder().answer(&step)
    #expect(outcomes.first?.failure?.clientError == .clientNotRegistered)
    let inputs = try #require(step.callbacks?.first?.json["input"]?.arrayValue)
    #expect(inputs[0]["value"] == "" && inputs[1]["value"] == "ClientNotRegistered")
  }

  @Test func readsTheReferenceCallbacks() async throws {
    let binding = try AuthenticateStep(
      parsing: Array(Data(contentsOf: fixture("authenticate-device-binding.json"))))
    let requests = try binding.requests()
    guard case .deviceBinding(let request) = requests.first?.request else {
      Issue.record("not a binding request")
      return
    }
    #expect(request.userId == "id=demo,ou=user,o=alpha,ou=services,ou=am-config")
    #expect(request.authenticationType == "APPLICATION_PIN" && request.timeout == 60 && !request.attestation)
  }
}
