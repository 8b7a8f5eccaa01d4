import Foundation

/// The recorded machine trees of Tests/CollectorsTests/Fixtures/machines, shared by the test targets.
public enum FixtureMachine: String, CaseIterable, Sendable {
  case laptop
  case raspberryPi = "raspberry-pi"
  case cloudVM = "cloud-vm"
  case container

  public var root: String {
    URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .appendingPathComponent("CollectorsTests/Fixtures/machines/\(rawValue)").path
  }

}

/// A throw-away machine tree built by a test; removed when the test ends (call `remove()`).
public final class TemporaryTree {
  public let root: String

  public init() throws {
    var template = Array((NSTemporaryDirectory() + "/fr-profile-tree.XXXXXX").utf8CString)
    guard let made = mkdtemp(&template) else { throw CocoaError(.fileWriteUnknown) }
    root = String(cString: made)
  }

  public func write(_ path: String, _ content: String, mode: mode_t = 0o644) throws {
    try write(path, bytes: Array(content.utf8), mode: mode)
  }

  public func write(_ path: String, bytes: [UInt8], mode: mode_t = 0o644) throws {
    let full = root + path
    try FileManager.default.createDirectory(atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
    try Data(bytes).write(to: URL(fileURLWithPath: full))
    chmod(full, mode)
  }

  public func makeDirectory(_ path: String, mode: mode_t = 0o755) throws {
    try FileManager.default.createDirectory(atPath: root + path, withIntermediateDirectories: true)
    chmod(root + path, mode)
  }

  public func remove() { try? FileManager.default.removeItem(atPath: root) }
}
