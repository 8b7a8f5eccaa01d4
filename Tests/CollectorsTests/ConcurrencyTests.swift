import Collectors
import DeviceFacts
import Foundation
import ProfileJSON
import Synchronization
import TestSupport
import Testing

/// Embedders (and the iOS SDK's design) run collectors concurrently over one context: the shared
/// facts and the diagnostics must hold up, and the result must equal a sequential collection.
@Suite(.timeLimit(.minutes(10))) struct ConcurrentCollectionTests {
  @Test(arguments: FixtureMachine.allCases)
  func collectorsOnManyThreadsAgreeWithOneThread(machine: FixtureMachine) async throws {
    let collectors = DeviceProfile.defaultCollectors()
    let sequential = collectors.map { JSONWriter.compact($0.collect(machine.context()) ?? .null) }
    let sequentialNotes = Set(notes(of: machine.context(), collectors))
    let expectedCount = 4 * notes(of: machine.context(), collectors).count

    for _ in 0..<20 {
      // One context shared by every thread: its SharedFacts and Diagnostics are hit at once.
      // Threads of their own (four per collector), not tasks: hundreds of blocking collections
      // queued on the cooperative pool held every other test's continuation for minutes.
      let context = machine.context()
      let concurrent = try await onOwnThread {
        onThreads(collectors.count * 4) { slot in JSONWriter.compact(collectors[slot / 4].collect(context) ?? .null) }
      }
      for (slot, text) in concurrent.enumerated() {
        #expect(text == sequential[slot / 4], "\(collectors[slot / 4].name) differs when run concurrently")
      }
      // Every note of a sequential run is there (four times over), none is lost or torn.
      let noted = context.diagnostics.notes
      #expect(noted.count == expectedCount)
      #expect(Set(noted.map { "\($0.level) \($0.key) \($0.message)" }) == sequentialNotes)
    }
  }

  @Test func diagnosticsKeepEveryNoteFromManyThreads() {
    let diagnostics = Diagnostics()
    DispatchQueue.concurrentPerform(iterations: 8) { thread in
      for index in 0..<500 { diagnostics.detail("t\(thread)", "\(index)") }
    }
    let notes = diagnostics.notes
    #expect(notes.count == 4000)
    for thread in 0..<8 {
      #expect(notes.filter { $0.key == "t\(thread)" }.map(\.message) == (0..<500).map { "\($0)" })
    }
  }

  @Test func sharedFactsReadOnceAgreeAcrossThreads() {
    let facts = FixtureMachine.laptop.context().facts
    let expected = FixtureMachine.laptop.context().facts
    let results = Mutex<[String]>([])
    DispatchQueue.concurrentPerform(iterations: 16) { _ in
      let line =
        "\(facts.osRelease["VERSION_ID"] ?? "-") \(facts.cpuInfo?.modelName ?? "-") \(facts.dmi("sys_vendor") ?? "-") \(facts.virtualization)"
      results.withLock { $0.append(line) }
    }
    let want =
      "\(expected.osRelease["VERSION_ID"] ?? "-") \(expected.cpuInfo?.modelName ?? "-") \(expected.dmi("sys_vendor") ?? "-") \(expected.virtualization)"
    #expect(results.withLock { $0 } == Array(repeating: want, count: 16))
  }

  private func notes(of context: CollectionContext, _ collectors: [any DeviceCollector]) -> [String] {
    for collector in collectors { _ = collector.collect(context) }
    return context.diagnostics.notes.map { "\($0.level) \($0.key) \($0.message)" }
  }
}
