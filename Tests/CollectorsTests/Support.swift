import Foundation
import ProfileJSON

@testable import Collectors

/// The recorded machine trees under Fixtures/machines.
enum FixtureMachine: String, CaseIterable {
  case laptop
  case raspberryPi = "raspberry-pi"
  case cloudVM = "cloud-vm"
  case container

  var root: String {
    URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/machines/\(rawValue)").path
  }

  func context(environment: [String: String] = [:]) -> CollectionContext {
    CollectionContext(system: SystemSource(root: root, environment: environment))
  }
}

/// A throw-away machine tree built by a test; removed when the test ends (call `remove()`).
final class TemporaryTree {
  let root: String

  init() throws {
    var template = Array((NSTemporaryDirectory() + "/fr-profile-tree.XXXXXX").utf8CString)
    guard let made = mkdtemp(&template) else { throw CocoaError(.fileWriteUnknown) }
    root = String(cString: made)
  }

  func write(_ path: String, _ content: String, mode: mode_t = 0o644) throws {
    try write(path, bytes: Array(content.utf8), mode: mode)
  }

  func write(_ path: String, bytes: [UInt8], mode: mode_t = 0o644) throws {
    let full = root + path
    try FileManager.default.createDirectory(atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
    try Data(bytes).write(to: URL(fileURLWithPath: full))
    chmod(full, mode)
  }

  func makeDirectory(_ path: String, mode: mode_t = 0o755) throws {
    try FileManager.default.createDirectory(atPath: root + path, withIntermediateDirectories: true)
    chmod(root + path, mode)
  }

  func context(environment: [String: String] = [:]) -> CollectionContext {
    CollectionContext(system: SystemSource(root: root, environment: environment))
  }

  func remove() { try? FileManager.default.removeItem(atPath: root) }
}
