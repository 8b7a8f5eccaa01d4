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

/// The PAM test seam of `fr-profile-seams`: the directory of PAM services it uses instead of
/// /etc/pam.d (Sources/FRProfileCommands/Support/TestSeams.swift). `fr-profile` has no such
/// seam; tests that must run against it (check-installed) use `withPAMServices` instead.
let pamConfigurationVariable = "FR_PROFILE_TEST_PAM_CONFDIR"

/// True when this process can give a child a private mount namespace (root, util-linux unshare).
var canUseMountNamespace: Bool {
  geteuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare")
    && FileManager.default.isExecutableFile(atPath: "/bin/mount")
}

/// A `run` prefix that shows the child `directory` as /etc/pam.d: a private mount namespace
/// (unshare --mount, propagation private, so the host's /etc/pam.d is untouched) with
/// `directory` bind-mounted over it. Works for any binary, the release one included.
func withPAMServices(_ directory: String) -> [String] {
  [
    "/usr/bin/unshare", "--mount", "--propagation", "private", "--", "/bin/sh", "-c", #"mount --bind "$0" /etc/pam.d && exec "$@""#,
    directory,
  ]
}
