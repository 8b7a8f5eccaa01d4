import Foundation

/// Tests/CollectorsTests/Fixtures/machines/<name>: the recorded machine trees.
func machineRoot(_ name: String) -> String {
  URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("CollectorsTests/Fixtures/machines/\(name)").path
}

/// Tests/CLITests/Fixtures/<path>.
func cliFixture(_ path: String) -> String {
  URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Fixtures/\(path)").path
}

/// True when this process may switch to another user (tests of unprivileged callers).
var canDropPrivileges: Bool { geteuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv") }

/// Runs the command as `nobody` (uid/gid 65534) with no supplementary groups.
let asNobody = ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"]

func fileMode(_ path: String) -> mode_t {
  var info = stat()
  return stat(path, &info) == 0 ? info.st_mode & 0o7777 : 0
}
