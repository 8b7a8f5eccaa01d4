import Foundation

/// Runs `body` on a thread of its own and awaits its result.
///
/// swift-testing runs every test, synchronous or not, on Swift concurrency's cooperative pool,
/// which has one thread per core: two on CI's machine. A test that computes or waits for minutes
/// in one synchronous stretch (24,000 differential cases, twelve TPM sessions fighting for three
/// object slots) holds one of them throughout; two such tests at once stopped every other test
/// for two minutes, and async tests that were waiting to resume passed their time limits (CI run
/// of 2026-11-27). Such a body runs here instead, and the pool stays free.
///
/// `body` runs outside the test's task, where swift-testing cannot attribute an issue to the
/// test: it returns what it found, and the caller expects on that.
public func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
  try await withCheckedThrowingContinuation { continuation in
    let thread = Thread { continuation.resume(with: Result { try body() }) }
    thread.stackSize = 8 << 20
    thread.start()
  }
}

/// Runs `work` for each index on threads of their own, all at once, and waits for every one: real
/// concurrency of `count` threads, none of them the cooperative pool's.
public func onThreads<T: Sendable>(_ count: Int, _ work: @escaping @Sendable (Int) -> T) -> [T] {
  let results = ResultSlots<T>(count)
  let group = DispatchGroup()
  for index in 0..<count {
    group.enter()
    Thread.detachNewThread {
      results.set(index, work(index))
      group.leave()
    }
  }
  group.wait()
  return results.values
}

/// Slots filled from several threads.
private final class ResultSlots<T>: @unchecked Sendable {
  private let lock = NSLock()
  private var slots: [T?]
  init(_ count: Int) { slots = Array(repeating: nil, count: count) }
  func set(_ index: Int, _ value: T) { lock.withLock { slots[index] = value } }
  var values: [T] { lock.withLock { slots.map { $0! } } }
}
