import ArgumentParser
import Collectors
import DeviceBinding
import ProfileCLI
import ProfileJSON

/// `fr-profile keys`: the bound keys of this device (exec'd by fr-profile, like `journey`).
struct KeysCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "fr-profile keys",
    abstract: "List, delete and unlock the keys bound to AM users (device binding).",
    discussion: """
      Bound keys live in <state-dir>/bound-keys/<kid>.json (0600, directory 0700), one per \
      AM user; 'fr-profile journey' creates them when a journey's Device Binding node asks.

      EXIT CODES:
        0   done
        1   no such key (delete, unlock), or unlock re-evaluated a breached policy
        64  usage error
        65  a stored key is corrupt
        74  I/O error
        77  the state directory or a key file is not safe (owner, mode, link)
        78  no state directory could be determined

      EXAMPLES:
        fr-profile keys list
        fr-profile keys list --json
        fr-profile keys delete 2ed8f1a6-0e55-4d8b-9a43-5f0c7c3d9b21
        fr-profile keys unlock 2ed8f1a6-0e55-4d8b-9a43-5f0c7c3d9b21
      """,
    subcommands: [List.self, Delete.self, Unlock.self]
  )

  struct List: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List the bound keys (kid, user, type, created, lock).")

    @OptionGroup var options: ProfileOptions
    @Flag(help: "Print a JSON array of the key records.") var json = false

    func run() throws {
      try reportingFailures {
        let settings = options.settings
        let store = try settings.userKeyStore(create: false)
        let records: [UserKeyRecord]
        do throws(KeyStoreError) { records = try store.records() } catch { throw BindingExit.failure(error) }
        if json {
          try printOutput(JSONWriter.compact(.array(records.map(\.json))) + "\n")
          return
        }
        if records.isEmpty {
          note("no keys are bound on this device (\(store.path)).")
          return
        }
        var lines = ["KID\tUSER\tTYPE\tCREATED\tSTATE"]
        for record in records {
          var state = record.locked ? "locked by \(record.lockingPolicy ?? "?")" : "usable"
          if let key = try? store.key(kid: record.kid), key.lock.lockedOut { state = "locked after \(key.lock.failures) wrong PINs" }
          lines.append("\(record.kid)\t\(record.username)\t\(record.authType.rawValue)\t\(record.createdAt)\t\(state)")
        }
        try printOutput(lines.joined(separator: "\n") + "\n")
      }
    }
  }

  struct Delete: ParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Delete a bound key on this device (AM keeps its record; delete it there too).")

    @OptionGroup var options: ProfileOptions
    @Argument(help: ArgumentHelp("The key's kid (see 'fr-profile keys list').", valueName: "KID")) var kid: String

    func run() throws {
      try reportingFailures {
        let store = try options.settings.userKeyStore(create: false)
        let removed: Bool
        do throws(KeyStoreError) { removed = try store.delete(kid: kid) } catch { throw BindingExit.failure(error) }
        guard removed else { throw Failure(code: 1, "no bound key has the kid \(kid); see 'fr-profile keys list'.") }
        note("deleted the bound key \(kid) on this device; AM still lists it under the user's bound devices.")
      }
    }
  }

  struct Unlock: ParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Unlock a key a breached app policy locked, after evaluating its policies again.")

    @OptionGroup var options: ProfileOptions
    @OptionGroup var binding: BindingOptions
    @Argument(help: ArgumentHelp("The key's kid.", valueName: "KID")) var kid: String

    func run() throws {
      try reportingFailures {
        let settings = options.settings
        let store = try settings.userKeyStore(create: false)
        let setup = BindingSetup(options: binding, settings: settings, interactive: false)
        let context = setup.policyContext(system: try settings.systemSource(), verifier: setup.verifier())
        let evaluator = PolicyEvaluator()
        let outcome: String?
        do {
          outcome = try store.update(kid: kid) { key -> String in
            if let breach = evaluator.firstBreach(key.record.policies, context: context) {
              key.record.locked = true
              key.record.lockingPolicy = breach.name
              return "policy \(breach.name) is still breached (\(breach.outcome.detail)); the key stays locked"
            }
            key.record.locked = false
            key.record.lockingPolicy = nil
            return ""
          }
        } catch let error as KeyStoreError {
          throw BindingExit.failure(error)
        }
        guard let outcome else { throw Failure(code: 1, "no bound key has the kid \(kid); see 'fr-profile keys list'.") }
        guard outcome.isEmpty else { throw Failure(code: 1, outcome + ".") }
        note("the key \(kid) is unlocked: its policies hold on this device.")
      }
    }
  }
}

/// `fr-profile policy`: evaluates app policies on this machine.
struct PolicyCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "fr-profile policy",
    abstract: "Evaluate device-binding app policies on this machine.",
    discussion: """
      Policies are AM's JSON form: {"deviceTampering": {"score": 0.8}, "biometricAvailable": {}}. \
      deviceTampering breaches when the tamper score (jailBreakScore, see 'fr-profile tamper') \
      is above score; biometricAvailable breaches when no PAM service fr-profile-biometric is \
      configured. Without --policies, <state-dir>/policies.json is read, else both policies \
      with their defaults are evaluated.

      EXIT CODES:
        0   every policy holds
        1   a policy is breached (the first breach is on stderr)
        64  usage error
        65  the policies are not valid JSON or name an unknown policy

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
      let context = setup.policyContext(system: try settings.systemSource(), verifier: setup.verifier())
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
        throw Failure(code: 1, "policy \(breach.name) is breached: \(breach.outcome.detail).")
      }
    }
  }
}
