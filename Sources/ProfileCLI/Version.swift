import CBuildInfo
import Collectors

/// `--version`: the release and the commit it was built from, e.g.
/// "0.1.0 (commit 1a2b3c4)". The commit is "unknown" in builds not made by the Makefile.
package let versionText = "\(frProfileVersion) (commit \(buildCommit))"

/// The git commit linked in by `make release`, or "unknown".
package let buildCommit = String(cString: fr_profile_commit())
