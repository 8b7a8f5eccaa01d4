import SystemCalls

/// The volatile facts: `kernelRelease` ← /proc/sys/kernel/osrelease (the running kernel, as
/// `uname -r`); `daysSincePackageChange` ← whole days since the package database was last
/// written, by its modification time: dpkg's /var/lib/dpkg/status (rewritten whenever a package
/// is installed, upgraded, removed or marked), rpm's rpmdb.sqlite or Packages, apk's installed,
/// pacman's local directory — the first that exists.
///
/// What it does not say: whether updates are pending (that needs the repositories' indexes),
/// nor whether the change that touched the database was an upgrade at all.
package struct Freshness {
  let system: SystemSource
  /// Seconds since the epoch, now.
  let now: Int64

  package init(system: SystemSource, now: Int64) {
    self.system = system
    self.now = now
  }

  static let packageDatabases = [
    ("/var/lib/dpkg/status", "dpkg"), ("/usr/lib/sysimage/rpm/rpmdb.sqlite", "rpm"), ("/var/lib/rpm/rpmdb.sqlite", "rpm"),
    ("/var/lib/rpm/Packages", "rpm"), ("/lib/apk/db/installed", "apk"), ("/var/lib/pacman/local", "pacman"),
  ]

  func kernel() -> PostureFact {
    guard let release = system.readLine("/proc/sys/kernel/osrelease") else {
      return .unknown("/proc/sys/kernel/osrelease cannot be read")
    }
    return PostureFact(.string(release), "/proc/sys/kernel/osrelease: the running kernel")
  }

  package func packageAge() -> PostureFact {
    for (path, manager) in Self.packageDatabases {
      guard let modified = system.modificationTime(path) else { continue }
      guard modified <= now + 300 else {
        return .unknown("\(path) (\(manager)) was modified in the future (\(modified - now) s from now): the clock is wrong")
      }
      let days = max(0, (now - modified) / 86400)
      return PostureFact(
        .number(Double(days)), "\(path), \(manager)'s package database, was last written \(days) days ago (its modification time)",
        details: [("source", .string(path))])
    }
    return .unknown(
      "no package database found (\(Self.packageDatabases.map(\.0).joined(separator: ", "))): the package manager is not one fr-profile knows"
    )
  }
}
