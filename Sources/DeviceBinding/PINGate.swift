import SystemCalls

/// What stands between a PIN-protected key and its use, with rules of its own apart from the
/// binding and signing flow (`DeviceBinder`): where PINs come from, which new PINs are
/// accepted, what wrong PINs cost (the lock policy, counted in the key's record), and what a
/// file key's PIN protection costs to derive.
package struct PINGate: Sendable {
  /// Where PINs come from; nil when no one can be asked (a PIN key then cannot be used).
  package var source: (any PINSource)?
  /// PINs accepted when binding an APPLICATION_PIN key.
  package var policy: PINPolicy
  /// What wrong PINs cost, recorded with each new APPLICATION_PIN key.
  package var lockPolicy: LockPolicy
  /// The scrypt cost of new PIN file keys (2^17; lowered only by this library's tests).
  package var costLog2: Int

  package init(
    source: (any PINSource)? = nil, policy: PINPolicy = .default, lockPolicy: LockPolicy = .lock(attempts: 5),
    costLog2: Int = PINProtectedKey.defaultCostLog2
  ) {
    self.source = source
    self.policy = policy
    self.lockPolicy = lockPolicy
    self.costLog2 = costLog2
  }

  /// The PIN for a new APPLICATION_PIN key, from the source, checked against the PIN policy.
  package func newPIN(prompt: String, deadline: Double) throws -> String {
    guard let source else {
      throw BindingFailure(.unsupported, "an APPLICATION_PIN key needs a PIN: pass --pin-file FILE or run on a terminal")
    }
    guard let pin = try source.newPIN(prompt: prompt, policy: policy, deadline: deadline) else { throw Self.noPIN(deadline: deadline) }
    if let problem = policy.violation(pin) { throw BindingFailure(.abort, "the PIN does not meet the PIN policy: \(problem)") }
    return pin
  }

  /// A file key's scalar sealed under `pin`, with this gate's policies recorded beside it.
  package func seal(scalar: [UInt8], pin: String) throws -> PINProtectedKey {
    do {
      return try PINProtectedKey.seal(scalar: scalar, pin: pin, pinPolicy: policy, lockPolicy: lockPolicy, costLog2: costLog2)
    } catch {
      throw BindingFailure(.unsupported, "cannot derive the PIN key: \(error)")
    }
  }

  /// No PIN came: `Timeout` when `deadline` has passed (the prompt ran out of time), `Abort`
  /// when the user cancelled before it.
  static func noPIN(deadline: Double) -> BindingFailure {
    monotonicSeconds() >= deadline
      ? BindingFailure(.timeout, "no PIN was given before the callback's timeout")
      : BindingFailure(.abort, "no PIN was given")
  }

  /// The PIN attempt protocol, as a smart card keeps its PIN counter: an attempt takes its slot
  /// before the PIN is tried. Under the store's lock it checks the lock-out and the delay again,
  /// raises the failure count and writes the record (the store fsyncs it); only then is the
  /// PIN tried. So parallel attempts queue at the lock and each sees the ones before it, and an
  /// attempt killed mid-derivation stays counted. A wrong PIN sets the lock-out once the limit is
  /// reached; a right one resets the count after it has been written. An error that tried no PIN
  /// (the TPM in lockout, a failed derivation) gives its slot back. `beforeTrying` runs between
  /// the PIN's arrival and its slot (the caller's deadline and tracer checks); `open` tries the
  /// PIN: nil for a wrong one.
  package func unlock<Opened>(
    key kid: String, in store: any UserKeyStore, policy: LockPolicy, prompt: String, deadline: Double,
    now: @Sendable () -> Double, beforeTrying: () throws -> Void, open: (String) throws -> Opened?
  ) throws -> Opened {
    guard let source else {
      throw BindingFailure(.abort, "the key \(kid) is protected by a PIN: pass --pin-file FILE or run on a terminal")
    }
    guard let current = try store.key(kid: kid) else { throw BindingFailure(.clientNotRegistered, "the key \(kid) is gone") }
    // Checked before asking too, so a locked key does not ask for a PIN it will refuse.
    if Self.refusal(current.lock, policy: policy, kid: kid, now: Int(now())) != nil {
      try Self.admitAttempt(kid: kid, in: store, policy: policy, at: Int(now()), taking: false)
    }
    guard let pin = try source.existingPIN(prompt: prompt, deadline: deadline) else { throw Self.noPIN(deadline: deadline) }
    try beforeTrying()
    let counting = policy != .silent
    if counting { try Self.admitAttempt(kid: kid, in: store, policy: policy, at: Int(now()), taking: true) }
    let opened: Opened?
    do {
      opened = try open(pin)
    } catch {
      if counting {
        _ = try? store.update(kid: kid) { key in key.lock.failures = max(0, key.lock.failures - 1) }
      }
      if let error = error as? HardwareKeyError { throw error }
      throw BindingFailure(.abort, "cannot derive the PIN key: \(error)")
    }
    guard let opened else {
      var failures = 0
      let failedAt = Int(now())  // the delay runs from the refusal, not from the start of the derivation
      _ = try store.update(kid: kid) { key in
        key.lock.lastFailure = failedAt
        if case .lock(let attempts) = policy, key.lock.failures >= attempts { key.lock.lockedOut = true }
        failures = key.lock.failures
      }
      let suffix: String
      switch policy {
      case .lock(let attempts):
        suffix = failures >= attempts ? "; the key is now locked: bind this device again" : " (\(failures) of \(attempts) attempts)"
      case .delay: suffix = "; next attempt in \(LockPolicy.delaySeconds(failures: failures)) s"
      case .none, .silent: suffix = ""
      }
      throw BindingFailure(.abort, "wrong PIN for the key \(kid)\(suffix)")
    }
    if counting {
      _ = try store.update(kid: kid) { key in key.lock = PINLockState() }
    }
    return opened
  }

  /// Under the store's lock: throws the refusal when the key may not be tried now (recording a
  /// lock-out the count has reached), else with `taking` takes the attempt's slot — the failure
  /// count raised and the record written before any PIN is tried.
  static func admitAttempt(kid: String, in store: any UserKeyStore, policy: LockPolicy, at time: Int, taking: Bool) throws {
    let outcome = try store.update(kid: kid) { key -> BindingFailure? in
      if let refusal = Self.refusal(key.lock, policy: policy, kid: kid, now: time) {
        if case .lock(let attempts) = policy, key.lock.failures >= attempts { key.lock.lockedOut = true }
        return refusal
      }
      if taking {
        key.lock.failures += 1
        key.lock.lastFailure = time
      }
      return nil
    }
    guard let outcome else { throw BindingFailure(.clientNotRegistered, "the key \(kid) is gone") }
    if let refusal = outcome { throw refusal }
  }

  /// Why an attempt may not try a PIN now: the key is locked out, or under `delay` the wait since
  /// the last failure has not passed. Nil when it may.
  static func refusal(_ lock: PINLockState, policy: LockPolicy, kid: String, now: Int) -> BindingFailure? {
    if lock.lockedOut {
      return BindingFailure(.abort, "the key \(kid) is locked after \(lock.failures) wrong PINs; bind this device again")
    }
    switch policy {
    case .lock(let attempts) where lock.failures >= attempts:
      return BindingFailure(.abort, "the key \(kid) is locked after \(lock.failures) wrong PINs; bind this device again")
    case .delay where lock.failures > 0:
      let wait = lock.lastFailure + LockPolicy.delaySeconds(failures: lock.failures) - now
      if wait > 0 {
        return BindingFailure(.abort, "\(lock.failures) wrong PINs: the key \(kid) can be tried again in \(wait) s")
      }
      return nil
    default:
      return nil
    }
  }
}
