import ArgumentParser
import Collectors
import DeviceBinding
import Journey
import JourneyHTTP
import ProfileCLI
import ProfileJSON
import TPMKeys
import TPMProtocol

/// `fr-profile policy`: evaluates app policies on this machine.
extension FRProfile {
  struct Policy: ParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "policy",
      abstract: "Evaluate device-binding app policies on this machine.",
      discussion: """
        Policies are AM's JSON form: {"deviceTampering": {"score": 0.8}, "biometricAvailable": {}}. \
        deviceTampering breaches when the tamper score (jailBreakScore, see 'fr-profile tamper') \
        is above score; biometricAvailable breaches when no PAM service fr-profile-biometric is \
        configured. Without --policies, <state-dir>/policies.json is read, else both policies \
        with their defaults are evaluated.

        \(ExitStatus.helpSection(
        [.success, .negative, .usage, .dataError, .libraryMissing],
        [
          .success: "every policy holds", .negative: "a policy is breached (the first breach is on stderr)",
          .dataError: "the policies are not valid JSON or name an unknown policy",
        ]))

        EXAMPLES:
          fr-profile policy
          fr-profile policy --policies '{"deviceTampering":{"score":0.3}}' --json
        """
    )

    @OptionGroup var options: ProfileOptions
    @OptionGroup var binding: BindingOptions
    @Flag(help: "Print each policy's outcome as JSON.") var json = false

    func run() throws {
      try reportingFailures {
        let settings = options.settings
        let setup = BindingSetup(options: binding, settings: settings, interactive: false)
        let evaluator = PolicyEvaluator()
        var policies = try setup.policies(evaluator)
        if policies.isEmpty && binding.policies == nil { policies = ["deviceTampering": [:], "biometricAvailable": [:]] }
        try BindingSetup.refuseRoot(settings, command: "policy")
        let context = setup.policyContext(verifier: setup.verifier())
        let outcomes = evaluator.evaluate(policies, context: context)
        if json {
          let items: [JSON] = outcomes.map {
            ["policy": .string($0.name), "holds": .bool(!$0.outcome.isBreached), "detail": .string($0.outcome.detail)]
          }
          try printOutput(JSONWriter.compact(.array(items)) + "\n")
        } else {
          try printOutput(
            outcomes.map { "\($0.name)\t\($0.outcome.isBreached ? "breached" : "holds")\t\($0.outcome.detail)" }.joined(separator: "\n")
              + (outcomes.isEmpty ? "" : "\n"))
        }
        if let breach = outcomes.first(where: { $0.outcome.isBreached }) {
          throw Failure(.negative, "policy \(breach.name) is breached: \(breach.outcome.detail).")
        }
      }
    }
  }
}
