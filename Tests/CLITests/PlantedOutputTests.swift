import Foundation
import ProfileJSON
import Testing

/// A file fr-profile writes for its caller is the caller's, with the mode the
/// command chooses — never another user's planted file, and never in a directory another user
/// can change. Every writer that needs no server or TPM, run as root against `nobody`'s plants;
/// the writers that do (journey -o, keys export -o, attest challenge --state) have the same
/// checks in their own suites.
@Suite(.timeLimit(.minutes(10)))
struct PlantedOutputTests {
  /// A writer: the arguments before `-o FILE`, and the mode its file must get.
  struct Writer: CustomTestStringConvertible, Sendable {
    var arguments: [String]
    var mode: mode_t
    var testDescription: String { arguments.prefix(2).joined(separator: " ") }
  }

  static let writers: [Writer] = [
    Writer(arguments: ["collect", "--no-metadata", "--root", machineRoot("laptop")], mode: 0o644),
    Writer(arguments: ["identifier", "--json"], mode: 0o644),
    Writer(arguments: ["tamper", "--json", "--root", machineRoot("laptop")], mode: 0o644),
    Writer(arguments: ["callback", cliFixture("callbacks/authenticate-device-profile-LocationOnly.json")], mode: 0o600),
    Writer(arguments: ["match", "--script-defaults", cliFixture("golden/laptop.json"), cliFixture("golden/laptop.json")], mode: 0o644),
  ]

  /// A root-owned 0755 directory for the test, its state directory inside.
  func withTop(_ body: (String, [String: String]) throws -> Void) throws {
    let top = normalized(try makeTemporaryDirectory("fr-profile-plant"))
    defer { removeTemporaryDirectory(top) }
    chmod(top, 0o755)
    try body(top, ["FR_PROFILE_HOME": top + "/state"])
  }

  @Test(.enabled(if: canDropPrivileges, "needs root to plant files as nobody"), arguments: writers)
  func nobodysFileInASharedStickyDirectoryIsRefusedAndKept(writer: Writer) throws {
    try withTop { top, environment in
      let shared = top + "/shared"
      mkdir(shared, 0o1777)
      chmod(shared, 0o1777)
      let planted = shared + "/out.json"
      let made = try run(["-c", "umask 0; echo planted > \(planted)"], executable: "/bin/sh", prefix: asNobody)
      #expect(made.status == 0, "\(made.stderr)")
      let result = try run(writer.arguments + ["-o", planted], environment: environment)
      #expect(result.status == 77, "\(writer): \(result.stderr)")
      #expect(result.stderr.contains("belongs to uid 65534") && result.stderr.contains(planted), "\(result.stderr)")
      #expect(fileOwner(planted) == 65534)
      #expect(try String(contentsOfFile: planted, encoding: .utf8) == "planted\n")
    }
  }

  @Test(.enabled(if: canDropPrivileges, "needs root to give a directory to nobody"), arguments: writers)
  func aDirectoryNobodyOwnsIsRefused(writer: Writer) throws {
    try withTop { top, environment in
      let theirs = top + "/theirs"
      mkdir(theirs, 0o755)
      chown(theirs, 65534, 65534)
      let result = try run(writer.arguments + ["-o", theirs + "/out.json"], environment: environment)
      #expect(result.status == 77, "\(writer): \(result.stderr)")
      #expect(result.stderr.contains(theirs) && result.stderr.contains("uid 65534"), "\(result.stderr)")
      #expect(!FileManager.default.fileExists(atPath: theirs + "/out.json"))
    }
  }

  @Test(arguments: writers)
  func aDirectoryOthersMayWriteWithoutTheStickyBitIsRefused(writer: Writer) throws {
    try withTop { top, environment in
      let open = top + "/open"
      mkdir(open, 0o777)
      chmod(open, 0o777)
      let result = try run(writer.arguments + ["-o", open + "/out.json"], environment: environment)
      #expect(result.status == 77, "\(writer): \(result.stderr)")
      #expect(result.stderr.contains("chmod go-w \(open)"), "\(result.stderr)")
      #expect(!FileManager.default.fileExists(atPath: open + "/out.json"))
    }
  }

  @Test(arguments: writers)
  func aReplacedFileGetsTheCommandsModeNotItsOwn(writer: Writer) throws {
    try withTop { top, environment in
      let target = top + "/out.json"
      try "old\n".write(toFile: target, atomically: false, encoding: .utf8)
      chmod(target, 0o666)
      let result = try run(writer.arguments + ["-o", target], environment: environment)
      #expect(result.status < 64, "\(writer): \(result.stderr)")
      #expect(fileMode(target) == writer.mode, "\(writer)")
      #expect(fileOwner(target) == geteuid())
      #expect(try String(contentsOfFile: target, encoding: .utf8) != "old\n")
    }
  }

  @Test("relative paths: NAME, ./NAME and ../NAME are written where they say")
  func relativePathsAreResolved() throws {
    try withTop { top, environment in
      mkdir(top + "/sub", 0o755)
      for path in ["a.txt", "./b.txt", "../c.txt", "../sub/./d.txt"] {
        let result = try run(["identifier", "-o", path], environment: environment, directory: top + "/sub")
        #expect(result.status == 0, "\(path): \(result.stderr)")
      }
      for written in ["sub/a.txt", "sub/b.txt", "c.txt", "sub/d.txt"] {
        #expect(FileManager.default.fileExists(atPath: top + "/" + written), "\(written)")
      }
    }
  }

  @Test(.enabled(if: canDropPrivileges, "needs root to plant a link as nobody"))
  func aLinkedDirectoryIsCheckedWhereItLeads() throws {
    try withTop { top, environment in
      let theirs = top + "/theirs"
      mkdir(theirs, 0o755)
      chown(theirs, 65534, 65534)
      symlink(theirs, top + "/link")
      let result = try run(["identifier", "-o", top + "/link/id.txt"], environment: environment)
      #expect(result.status == 77, "\(result.stderr)")
      #expect(!FileManager.default.fileExists(atPath: theirs + "/id.txt"))
      mkdir(top + "/mine", 0o755)
      symlink(top + "/mine", top + "/good-link")
      let written = try run(["identifier", "-o", top + "/good-link/id.txt"], environment: environment)
      #expect(written.status == 0, "\(written.stderr)")
      #expect(FileManager.default.fileExists(atPath: top + "/mine/id.txt"))
    }
  }
}

func fileOwner(_ path: String) -> uid_t {
  var info = stat()
  return lstat(path, &info) == 0 ? info.st_uid : uid_t.max
}
