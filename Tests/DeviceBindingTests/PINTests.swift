import DeviceBinding
import Foundation
import Testing

@Suite(.timeLimit(.minutes(10))) struct PINPolicyTests {
  @Test("HID's example policy: exactly 6 to 10 digits, nothing else")
  func hidExamplePolicy() async throws {
    let policy = try PINPolicy(parsing: "MINLEN=6;MAXLEN=10;NUM=6;MNUM=10;UP=0;MUP=0;LOW=0;MLOW=0;ALPHA=0;MALPHA=0;NALPHA=0;MNALPHA=0")
    #expect(policy.violation("271828") == nil)
    #expect(policy.violation("2718281828") == nil)
    #expect(policy.violation("27182") != nil)  // too short
    #expect(policy.violation("27182818284") != nil)  // too long
    #expect(policy.violation("27182a") != nil)  // a letter
    #expect(policy.violation("271 828") != nil)  // a non-alphanumeric
  }

  @Test func sequencesAndRepeats() async throws {
    let policy = try PINPolicy(parsing: "MINLEN=4;SEQ=3;REP=2")
    #expect(policy.violation("1234") != nil)
    #expect(policy.violation("9876") != nil)
    #expect(policy.violation("abcd") != nil)
    #expect(policy.violation("1235") == nil)
    #expect(policy.violation("1113") != nil)
    #expect(policy.violation("1131") == nil)
  }

  @Test func classMinimums() async throws {
    let policy = try PINPolicy(parsing: "MINLEN=4;UP=1;LOW=1;NUM=1;NALPHA=1")
    #expect(policy.violation("aB3!") == nil)
    #expect(policy.violation("ab3!")?.contains("upper-case") == true)
    #expect(policy.violation("AB3!")?.contains("lower-case") == true)
  }

  @Test func violationsNeverEchoThePIN() async throws {
    let pin = "1234567"
    #expect(PINPolicy.default.violation(pin).map { !$0.contains(pin) } == true)
  }

  @Test func badPolicyTextIsAnError() {
    for text in ["MINLEN", "MINLEN=x", "FOO=1", "MINLEN=8;MAXLEN=6", "NUM=4;MNUM=2", "MINLEN=0"] {
      #expect(throws: PINPolicyError.self, "\(text)") { try PINPolicy(parsing: text) }
    }
  }

  @Test func lockPolicies() async throws {
    #expect(try LockPolicy(parsing: "none") == .none)
    #expect(try LockPolicy(parsing: "lock") == .lock(attempts: 5))
    #expect(try LockPolicy(parsing: "lock:3") == .lock(attempts: 3))
    #expect(try LockPolicy(parsing: "delay") == .delay)
    #expect(try LockPolicy(parsing: "silent") == .silent)
    #expect(throws: PINPolicyError.self) { try LockPolicy(parsing: "lock:0") }
    #expect(throws: PINPolicyError.self) { try LockPolicy(parsing: "forever") }
    #expect(LockPolicy.delaySeconds(failures: 1) == 1 && LockPolicy.delaySeconds(failures: 4) == 8)
    #expect(LockPolicy.delaySeconds(failures: 40) == 3600)
  }
}

@Suite(.timeLimit(.minutes(10))) struct PINKeyTests {
  func bindPINKey(_ lock: LockPolicy, store: InMemoryUserKeyStore, pins: FixedPINs) throws -> DeviceBinder {
    let binder = makeBinder(store: store, pins: pins, lockPolicy: lock)
    _ = try binder.bind(bindingRequest(.applicationPIN))
    return binder
  }

  @Test func theStoredKeyIsSealedAndTheRightPINSigns() async throws {
    let store = InMemoryUserKeyStore()
    let pins = FixedPINs("271828")
    let binder = try bindPINKey(.lock(attempts: 3), store: store, pins: pins)
    let stored = try #require(try store.records().first.flatMap { try store.key(kid: $0.kid) })
    guard case .pinProtected(let sealed) = stored.material else {
      Issue.record("PIN key stored in plain")
      return
    }
    #expect(sealed.salt.count == 16 && sealed.sealed.count == 12 + 32 + 16)
    #expect(try binder.sign(signingRequest()).jws.isEmpty == false)
  }

  @Test func aPINAgainstThePolicyIsRefusedAtBinding() async throws {
    let binder = makeBinder(pins: FixedPINs("1234"))
    guard case .failure(let failure) = try binder.bindOrFail(bindingRequest(.applicationPIN)) else {
      Issue.record("expected this to fail; it succeeded")
      return
    }
    #expect(failure.clientError == .abort && failure.reason.contains("PIN policy"))
    #expect(try binder.store.records().isEmpty)
  }

  @Test func noPINSourceIsUnsupported() async throws {
    guard case .failure(let failure) = try makeBinder().bindOrFail(bindingRequest(.applicationPIN)) else {
      Issue.record("expected this to fail; it succeeded")
      return
    }
    #expect(failure.clientError == .unsupported)
  }

  @Test("lock: after N wrong PINs the key refuses even the right PIN")
  func lockPolicyLocks() async throws {
    let store = InMemoryUserKeyStore()
    let pins = FixedPINs("271828", "000000", "000000", "000000", "271828")
    let binder = try bindPINKey(.lock(attempts: 3), store: store, pins: pins)
    for attempt in 1...3 {
      guard case .failure(let failure) = try binder.signOrFail(signingRequest()) else {
        Issue.record("a wrong PIN signed")
        return
      }
      #expect(failure.clientError == .abort)
      #expect(failure.reason.contains(attempt < 3 ? "\(attempt) of 3" : "now locked"))
    }
    guard case .failure(let locked) = try binder.signOrFail(signingRequest()) else {
      Issue.record("a locked key signed")
      return
    }
    #expect(locked.reason.contains("bind this device again"))
    #expect(try store.records().first.flatMap { try store.key(kid: $0.kid) }?.lock.lockedOut == true)
  }

  @Test("a right PIN resets the count of wrong ones")
  func successResetsTheCounter() async throws {
    let store = InMemoryUserKeyStore()
    let binder = try bindPINKey(.lock(attempts: 3), store: store, pins: FixedPINs("271828", "000000", "271828"))
    _ = try binder.signOrFail(signingRequest())
    #expect(try store.records().first.flatMap { try store.key(kid: $0.kid) }?.lock.failures == 1)
    _ = try binder.sign(signingRequest())
    #expect(try store.records().first.flatMap { try store.key(kid: $0.kid) }?.lock.failures == 0)
  }

  @Test("delay: a wrong PIN makes the next attempt wait, persisted with the key")
  func delayPolicyWaits() async throws {
    let store = InMemoryUserKeyStore()
    let clock = Clock(start: 1_800_000_000)
    let pins = FixedPINs("271828", "000000", "000000", "271828")
    let binder = makeBinder(store: store, pins: pins, lockPolicy: .delay, now: { clock.now })
    _ = try binder.bind(bindingRequest(.applicationPIN))
    guard case .failure(let first) = try binder.signOrFail(signingRequest()) else {
      Issue.record("expected this to fail; it succeeded")
      return
    }
    #expect(first.reason.contains("next attempt in 1 s"))
    guard case .failure(let waiting) = try binder.signOrFail(signingRequest()) else {
      Issue.record("expected this to fail; it succeeded")
      return
    }
    #expect(waiting.reason.contains("again in 1 s"))
    clock.advance(2)
    guard case .failure(let second) = try binder.signOrFail(signingRequest()) else {
      Issue.record("expected this to fail; it succeeded")
      return
    }
    #expect(second.reason.contains("next attempt in 2 s"))
    clock.advance(3)
    #expect(try binder.sign(signingRequest()).jws.isEmpty == false)
  }

  @Test("silent: a wrong PIN signs with a different key, which the server rejects")
  func silentPolicySignsWithTheWrongKey() async throws {
    let store = InMemoryUserKeyStore()
    let binder = makeBinder(store: store, pins: FixedPINs("271828", "000000", "271828"), lockPolicy: .silent)
    let bound = try binder.bind(bindingRequest(.applicationPIN))
    let jwk = try #require(try DecodedJWS(bound.jws).header["jwk"])
    let stored = try #require(try store.key(kid: bound.kid))
    #expect(stored.publicKey == nil)  // nothing in the file to test a guess against
    let wrong = try DecodedJWS(try binder.sign(signingRequest()).jws)
    #expect(!wrong.verifies(x: jwk["x"]!.stringValue!, y: jwk["y"]!.stringValue!))
    let right = try DecodedJWS(try binder.sign(signingRequest()).jws)
    #expect(right.verifies(x: jwk["x"]!.stringValue!, y: jwk["y"]!.stringValue!))
    #expect(try store.key(kid: bound.kid)?.lock.failures == 0)
  }

  @Test("none: wrong PINs cost nothing but the derivation")
  func nonePolicyNeverLocks() async throws {
    let store = InMemoryUserKeyStore()
    let binder = makeBinder(store: store, pins: FixedPINs("271828", "000000", "000000", "000000", "000000", "271828"), lockPolicy: .none)
    _ = try binder.bind(bindingRequest(.applicationPIN))
    for _ in 0..<4 { _ = try binder.signOrFail(signingRequest()) }
    #expect(try binder.sign(signingRequest()).jws.isEmpty == false)
  }
}

/// A PIN source that parks every caller until `release()`, then hands each one its PIN in turn:
/// many signings past the lock check at once, as an attacker with FIFO PIN files arranges.
final class GatedPINs: PINSource, @unchecked Sendable {
  private let lock = NSLock()
  private var pins: [String]
  private let gate = DispatchSemaphore(value: 0)
  private let arrived = DispatchSemaphore(value: 0)
  init(_ pins: [String]) { self.pins = pins }
  func newPIN(prompt: String, policy: PINPolicy, deadline: Double) throws(BindingFailure) -> String? { nil }
  func existingPIN(prompt: String, deadline: Double) throws(BindingFailure) -> String? {
    arrived.signal()
    gate.wait()
    return lock.withLock { pins.isEmpty ? nil : pins.removeFirst() }
  }
  /// Waits until `count` callers are parked, then lets them all go.
  func release(after count: Int) {
    for _ in 0..<count { arrived.wait() }
    for _ in 0..<count { gate.signal() }
  }
}

@Suite(.timeLimit(.minutes(10))) struct PINAttemptRaceTests {
  /// Runs `count` signings with `binder` on threads of their own, all parked at the PIN prompt
  /// and then let go together; returns their outcomes.
  func parallelSignings(_ binder: DeviceBinder, pins: GatedPINs, count: Int) -> [Result<DeviceBinder.SigningResult, BindingFailure>] {
    let results = NSLock()
    nonisolated(unsafe) var outcomes: [Result<DeviceBinder.SigningResult, BindingFailure>] = []
    let group = DispatchGroup()
    for _ in 0..<count {
      group.enter()
      Thread.detachNewThread {
        let outcome = (try? binder.signOrFail(signingRequest())) ?? .failure(BindingFailure(.abort, "store error"))
        results.withLock { outcomes.append(outcome) }
        group.leave()
      }
    }
    pins.release(after: count)
    group.wait()
    return outcomes
  }

  /// How many of `outcomes` had a PIN tried: a wrong PIN or a signature.
  func triedPINs(_ outcomes: [Result<DeviceBinder.SigningResult, BindingFailure>]) -> Int {
    outcomes.filter { outcome in
      switch outcome {
      case .success: true
      case .failure(let failure): failure.reason.hasPrefix("wrong PIN for")
      }
    }.count
  }

  @Test("lock:3 — 30 signings parked past the check try at most 3 PINs, the right one among the last refused")
  func parallelAttemptsCannotOutrunTheLock() throws {
    let directory = try makeTemporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let store = try FileUserKeyStore(stateDirectory: directory + "/state")
    _ = try makeBinder(store: store, pins: FixedPINs("271828"), lockPolicy: .lock(attempts: 3)).bind(bindingRequest(.applicationPIN))
    let pins = GatedPINs(Array(repeating: "000000", count: 29) + ["271828"])
    let outcomes = parallelSignings(makeBinder(store: store, pins: pins, lockPolicy: .lock(attempts: 3)), pins: pins, count: 30)
    #expect(outcomes.count == 30)
    #expect(triedPINs(outcomes) <= 3, "\(triedPINs(outcomes)) PINs were tried under lock:3")
    let key = try #require(try store.records().first.flatMap { try store.key(kid: $0.kid) })
    if outcomes.contains(where: { (try? $0.get()) != nil }) {
      #expect(key.lock.failures < 3 && !key.lock.lockedOut)
    } else {
      #expect(key.lock.lockedOut && key.lock.failures == 3)
    }
  }

  @Test("delay — parallel signings under one clock second try one PIN, not nine")
  func parallelAttemptsWaitTheirTurnUnderDelay() throws {
    let directory = try makeTemporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let store = try FileUserKeyStore(stateDirectory: directory + "/state")
    let clock = Clock(start: 1_800_000_000)
    _ = try makeBinder(store: store, pins: FixedPINs("271828"), lockPolicy: .delay, now: { clock.now }).bind(
      bindingRequest(.applicationPIN))
    let pins = GatedPINs(Array(repeating: "000000", count: 9))
    let binder = makeBinder(store: store, pins: pins, lockPolicy: .delay, now: { clock.now })
    let outcomes = parallelSignings(binder, pins: pins, count: 9)
    #expect(triedPINs(outcomes) == 1)
    #expect(outcomes.filter { (try? $0.get()) == nil && "\($0)".contains("tried again in") }.count == 8)
  }
}

/// A settable wall clock.
final class Clock: @unchecked Sendable {
  private let lock = NSLock()
  private var value: Double
  init(start: Double) { value = start }
  var now: Double { lock.withLock { value } }
  func advance(_ seconds: Double) { lock.withLock { value += seconds } }
}
