import SystemCalls

/// `rootEncrypted`, `homeEncrypted`, `swapEncrypted` ← /proc/self/mountinfo, /proc/swaps and
/// the device chain in /sys (StorageEncryption says how it is followed and what it cannot see).
package struct DiskEncryption {
  let system: SystemSource

  package init(system: SystemSource) {
    self.system = system
  }

  /// The three facts, reading mountinfo once.
  package func facts() -> (root: PostureFact, home: PostureFact, swap: PostureFact) {
    guard let text = system.readText("/proc/self/mountinfo") else {
      let fact = PostureFact.unknown("/proc/self/mountinfo cannot be read")
      return (fact, fact, swap(StorageEncryption(system: system, mounts: [])))
    }
    let (mounts, malformed) = parseMountInfo(text)
    let note = malformed > 0 ? " (\(malformed) malformed lines of /proc/self/mountinfo skipped)" : ""
    let storage = StorageEncryption(system: system, mounts: mounts)
    guard let root = mounts.last(where: { $0.mountPoint == "/" }) else {
      let fact = PostureFact.unknown("/proc/self/mountinfo lists no mount at /\(note)")
      return (fact, fact, swap(storage))
    }
    let (rootVerdict, rootChain) = storage.mounted(root)
    let rootFact = fact(rootVerdict, rootChain + note)
    let home = mount(holding: "/home", in: mounts) ?? root
    let homeFact: PostureFact
    if home.mountPoint == "/" {
      homeFact = fact(rootVerdict, "/home is not a mount of its own: it is on /, and " + rootChain + note)
    } else {
      let (verdict, chain) = storage.mounted(home)
      homeFact = fact(verdict, chain + note)
    }
    return (rootFact, homeFact, swap(storage))
  }

  /// Whether every active swap area is stored encrypted (or not on a disk at all). With no swap
  /// area, nothing is swapped out, and the fact holds (the reason says so).
  func swap(_ storage: StorageEncryption) -> PostureFact {
    guard let text = system.readText("/proc/swaps") else { return .unknown("/proc/swaps cannot be read") }
    let (areas, malformed) = parseSwaps(text)
    if malformed > 0 { return .unknown("/proc/swaps has \(malformed) lines that are not swap areas") }
    if areas.isEmpty { return .holds(true, "no swap area is active (/proc/swaps lists none): no memory is written to swap") }
    var verdicts: [(Bool?, String)] = []
    for area in areas {
      if area.type == "partition" {
        guard let number = storage.deviceNumber(named: area.path) else {
          verdicts.append((nil, "the swap partition \(area.path), which /sys/class/block does not list"))
          continue
        }
        let (verdict, chain) = storage.device(number.major, number.minor, depth: 0)
        verdicts.append((verdict, "the swap partition \(area.path) is \(chain)"))
      } else {
        let (verdict, chain) = storage.file(area.path, depth: 0)
        verdicts.append((verdict, "the swap file \(area.path) is in \(chain)"))
      }
    }
    let verdict: Bool? =
      verdicts.contains(where: { $0.0 == false }) ? false : verdicts.allSatisfy({ $0.0 == true }) ? true : nil
    return fact(verdict, verdicts.map(\.1).joined(separator: "; "))
  }

  private func fact(_ verdict: Bool?, _ reason: String) -> PostureFact {
    verdict.map { .holds($0, reason) } ?? .unknown(reason)
  }
}
