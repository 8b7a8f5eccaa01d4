import DeviceFacts
import ProfileJSON
import SystemCalls

/// What app policies may look at on this device.
package struct PolicyContext: Sendable {
  package var system: SystemSource
  /// Whether a biometric user verification (PAM service `fr-profile-biometric`) is usable.
  package var biometricAvailable: @Sendable () -> Bool

  package init(system: SystemSource, biometricAvailable: @escaping @Sendable () -> Bool) {
    self.system = system
    self.biometricAvailable = biometricAvailable
  }
}

/// The outcome of one policy on this device.
package enum PolicyOutcome: Sendable, Equatable {
  case holds(String)
  case breached(String)

  package var isBreached: Bool { if case .breached = self { true } else { false } }
  package var detail: String {
    switch self {
    case .holds(let text), .breached(let text): text
    }
  }
}

/// An app policy (the SDKs' authenticator policies): evaluated on this device before every
/// signing with its parameters from AM's JSON form, e.g. `{"deviceTampering": {"score": 0.8}}`.
/// Embedders add their own by conforming and registering with `PolicyEvaluator`.
package protocol DevicePolicy: Sendable {
  /// The key in the policies JSON.
  var name: String { get }
  /// Checks `parameters` when a binding records the policy; throws a message naming the field.
  func validate(_ parameters: JSON) throws(PolicyError)
  func evaluate(_ parameters: JSON, context: PolicyContext) -> PolicyOutcome
}

package struct PolicyError: Error, Sendable, Equatable, CustomStringConvertible {
  package var description: String
  package init(_ description: String) { self.description = description }
}

/// `deviceTampering`: breached when the tamper score (`jailBreakScore`) is above `score`
/// (default 0.8, the SDKs' default).
package struct DeviceTamperingPolicy: DevicePolicy {
  package var detectors: [any TamperDetector]
  package static let policyName = "deviceTampering"
  package init(detectors: [any TamperDetector] = TamperScore.defaultDetectors) { self.detectors = detectors }
  package var name: String { Self.policyName }

  package func validate(_ parameters: JSON) throws(PolicyError) {
    guard case .object(let object) = parameters else {
      throw PolicyError("policy deviceTampering: its value must be an object like {\"score\": 0.8}")
    }
    if let score = object["score"] {
      guard let value = score.numberValue, value >= 0, value <= 1 else {
        throw PolicyError("policy deviceTampering: \"score\" must be a number from 0 to 1")
      }
    }
  }

  package func evaluate(_ parameters: JSON, context: PolicyContext) -> PolicyOutcome {
    let limit = parameters["score"]?.numberValue ?? 0.8
    let report = TamperScore.evaluate(detectors, TamperContext(system: context.system))
    let fired = report.results.filter { $0.finding.score > 0 }.map(\.name)
    let text =
      "jailBreakScore \(JSONWriter.formatNumber(report.score)) (limit \(JSONWriter.formatNumber(limit)))"
      + (fired.isEmpty ? "" : "; fired: " + fired.joined(separator: ", "))
    return report.score > limit ? .breached(text) : .holds(text)
  }
}

/// `biometricAvailable`: breached when no biometric PAM service is usable.
package struct BiometricAvailablePolicy: DevicePolicy {
  package init() {}
  package var name: String { "biometricAvailable" }

  package func validate(_ parameters: JSON) throws(PolicyError) {
    guard case .object = parameters else { throw PolicyError("policy biometricAvailable: its value must be an object ({})") }
  }

  package func evaluate(_ parameters: JSON, context: PolicyContext) -> PolicyOutcome {
    context.biometricAvailable()
      ? .holds("PAM service \(PAMUserVerifier.biometricService) is configured")
      : .breached("no PAM service \(PAMUserVerifier.biometricService) is configured")
  }
}

/// The registered policies, and evaluation of a policies object against them.
package struct PolicyEvaluator: Sendable {
  package var policies: [any DevicePolicy]

  package init(policies: [any DevicePolicy] = [DeviceTamperingPolicy(), BiometricAvailablePolicy()]) {
    self.policies = policies
  }

  /// Parses AM's JSON form; every name must be registered and its parameters valid.
  package func parse(_ text: String) throws(PolicyError) -> JSONObject {
    let value: JSON
    do { value = try JSONParser.parse(Array(text.utf8)) } catch { throw PolicyError("policies are not JSON: \(error)") }
    guard case .object(let object) = value else {
      throw PolicyError("policies must be a JSON object like {\"deviceTampering\": {\"score\": 0.8}}")
    }
    try validate(object)
    return object
  }

  package func validate(_ object: JSONObject) throws(PolicyError) {
    for member in object.members {
      guard let policy = policies.first(where: { $0.name == member.key }) else {
        throw PolicyError("unknown policy \"\(member.key)\"; known: \(policies.map(\.name).joined(separator: ", "))")
      }
      try policy.validate(member.value)
    }
  }

  /// Every policy's outcome, in the object's order. A name no longer registered is breached.
  package func evaluate(_ object: JSONObject, context: PolicyContext) -> [(name: String, outcome: PolicyOutcome)] {
    object.members.map { member in
      guard let policy = policies.first(where: { $0.name == member.key }) else {
        return (member.key, .breached("no such policy is registered in this client"))
      }
      return (member.key, policy.evaluate(member.value, context: context))
    }
  }

  /// The first breached policy, nil when all hold.
  package func firstBreach(_ object: JSONObject, context: PolicyContext) -> (name: String, outcome: PolicyOutcome)? {
    for member in object.members {
      let outcome = evaluate(JSONObject([member]), context: context)[0]
      if outcome.outcome.isBreached { return outcome }
    }
    return nil
  }
}
