import DeviceBinding
import Foundation
import ProfileJSON
import Testing

@Suite(.timeLimit(.minutes(10))) struct PolicyTests {
  @Test func deviceTamperingBreachesAboveTheScore() async throws {
    let evaluator = PolicyEvaluator()
    let policies = try evaluator.parse(#"{"deviceTampering": {"score": 0.3}}"#)
    let vm = PolicyContext(system: fixtureSystem("cloud-vm"), biometricAvailable: { false })  // score 0.5
    let laptop = PolicyContext(system: fixtureSystem("laptop"), biometricAvailable: { false })  // score 0
    #expect(evaluator.firstBreach(policies, context: vm)?.name == "deviceTampering")
    #expect(evaluator.firstBreach(policies, context: laptop) == nil)
  }

  @Test func unknownPoliciesAndBadParametersAreRefused() {
    let evaluator = PolicyEvaluator()
    #expect(throws: PolicyError.self) { try evaluator.parse(#"{"rooted": {}}"#) }
    #expect(throws: PolicyError.self) { try evaluator.parse(#"{"deviceTampering": {"score": 2}}"#) }
    #expect(throws: PolicyError.self) { try evaluator.parse("[1]") }
  }

  @Test("a breached policy locks the key until it holds again")
  func breachLocksTheKey() async throws {
    let store = InMemoryUserKeyStore()
    let policies: JSONObject = ["deviceTampering": ["score": 0.3]]
    let bound = try makeBinder(store: store, machine: "laptop", policies: policies).bind(bindingRequest())
    #expect(try makeBinder(store: store, machine: "laptop").sign(signingRequest()).kid == bound.kid)
    guard case .failure(let failure) = try makeBinder(store: store, machine: "cloud-vm").signOrFail(signingRequest()) else {
      Issue.record("a tampered device signed")
      return
    }
    #expect(failure.clientError == .abort && failure.reason.contains("deviceTampering"))
    let record = try #require(try store.records().first)
    #expect(record.locked && record.lockingPolicy == "deviceTampering")
    // Locked even back on a clean machine, until unlocked.
    guard case .failure(let still) = try makeBinder(store: store, machine: "laptop").signOrFail(signingRequest()) else {
      Issue.record("expected this to fail; it succeeded")
      return
    }
    #expect(still.reason.contains("keys unlock"))
  }

  /// An embedder's own policy, registered beside the built-in ones.
  struct KioskPolicy: DevicePolicy {
    var name: String { "kioskMode" }
    func validate(_ parameters: JSON) throws(PolicyError) {}
    func evaluate(_ parameters: JSON, context: PolicyContext) -> PolicyOutcome {
      parameters["required"]?.boolValue == true ? .breached("not a kiosk") : .holds("fine")
    }
  }

  @Test func embeddersAddPolicies() async throws {
    let evaluator = PolicyEvaluator(policies: [KioskPolicy()])
    let policies = try evaluator.parse(#"{"kioskMode": {"required": true}}"#)
    let context = PolicyContext(system: fixtureSystem("laptop"), biometricAvailable: { true })
    #expect(evaluator.firstBreach(policies, context: context)?.outcome == .breached("not a kiosk"))
  }
}

@Suite(.timeLimit(.minutes(10))) struct PAMTests {
  /// A PAM configuration directory with `fr-profile` → pam_permit and `fr-profile-biometric`
  /// → pam_deny (pam_start_confdir reads only this directory).
  func confdir(permit: [String] = [PAMUserVerifier.fallbackService], deny: [String] = [PAMUserVerifier.biometricService]) throws -> String {
    let directory = try makeTemporaryDirectory()
    for service in permit {
      try "auth required pam_permit.so\naccount required pam_permit.so\n".write(
        toFile: directory + "/" + service, atomically: true, encoding: .utf8)
    }
    for service in deny {
      try "auth required pam_deny.so\naccount required pam_deny.so\n".write(
        toFile: directory + "/" + service, atomically: true, encoding: .utf8)
    }
    return directory
  }

  @Test func permitVerifiesDenyRefusesMissingIsNotConfigured() async throws {
    let directory = try confdir()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let verifier = PAMUserVerifier(configurationDirectory: directory, user: "root")
    #expect(try verifier.verify(service: PAMUserVerifier.fallbackService) == .verified)
    guard case .denied = try verifier.verify(service: PAMUserVerifier.biometricService) else {
      Issue.record("pam_deny verified")
      return
    }
    #expect(try verifier.verify(service: "fr-profile-nothing") == .notConfigured)
  }

  @Test func biometricTypesBindAndSignThroughPAM() async throws {
    let directory = try confdir(permit: [PAMUserVerifier.fallbackService, PAMUserVerifier.biometricService], deny: [])
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let store = InMemoryUserKeyStore()
    let binder = makeBinder(store: store, verifier: PAMUserVerifier(configurationDirectory: directory, user: "root"))
    for type in [AuthenticationType.biometricOnly, .biometricAllowFallback] {
      let bound = try binder.bind(bindingRequest(type))
      #expect(try binder.sign(signingRequest()).kid == bound.kid)
    }
  }

  @Test func deniedVerificationAbortsAndNoServiceIsUnsupported() async throws {
    let directory = try confdir()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let binder = makeBinder(verifier: PAMUserVerifier(configurationDirectory: directory, user: "root"))
    guard case .failure(let denied) = try binder.bindOrFail(bindingRequest(.biometricOnly)) else {
      Issue.record("expected this to fail; it succeeded")
      return
    }
    #expect(denied.clientError == .abort)
    let empty = try confdir(permit: [], deny: [])
    defer { try? FileManager.default.removeItem(atPath: empty) }
    let bare = makeBinder(verifier: PAMUserVerifier(configurationDirectory: empty, user: "root"))
    guard case .failure(let missing) = try bare.bindOrFail(bindingRequest(.biometricAllowFallback)) else {
      Issue.record("expected this to fail; it succeeded")
      return
    }
    #expect(missing.clientError == .unsupported)
    #expect(try bare.store.records().isEmpty)
  }

  @Test("the callback's timeout bounds user verification: past it, Timeout and no key")
  func slowVerificationTimesOut() async throws {
    let directory = try makeTemporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    // The sleep stands for a user slow to verify (a PAM stack that takes 2 s), not a wait.
    try "auth required pam_exec.so /bin/sleep 2\naccount required pam_permit.so\n".write(
      toFile: directory + "/fr-profile", atomically: true, encoding: .utf8)
    let store = InMemoryUserKeyStore()
    let binder = makeBinder(store: store, verifier: PAMUserVerifier(configurationDirectory: directory, user: "root"))
    guard case .failure(let failure) = try binder.bindOrFail(bindingRequest(.biometricAllowFallback, timeout: 1)) else {
      Issue.record("a slow verification bound")
      return
    }
    #expect(failure.clientError == .timeout)
    #expect(try store.records().isEmpty)
  }
}
