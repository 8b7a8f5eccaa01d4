import Foundation
import Posture
import Synchronization
import TestSupport
import Testing

/// `posture --user OTHER` as root reads another user's files: what that user can plant there (a
/// FIFO, a link to a file of root's, a file given to someone else, a database that claims
/// more than it holds) gives unknown with the reason, promptly, and is never followed or trusted.
@Suite(.timeLimit(.minutes(10))) struct UserFileTests {
  static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures").path

  /// A machine where uid 1001, kim, has a GNOME session and the schemas' defaults lock the screen
  /// after 300 s; kim's own database (dconf-lock-disabled.gvdb) turns the lock off.
  func gnomeMachine() throws -> TemporaryTree {
    let tree = try TemporaryTree()
    try tree.write("/etc/passwd", "kim:x:1001:1001::/home/kim:/bin/sh\n")
    try tree.write("/run/systemd/sessions/6", "UID=1001\nTYPE=wayland\nDESKTOP=GNOME\n")
    let schemas = "/usr/share/glib-2.0/schemas"
    try tree.write(
      schemas + "/org.gnome.desktop.screensaver.gschema.xml",
      """
      <schemalist><schema id="org.gnome.desktop.screensaver">
      <key name="lock-enabled" type="b"><default>true</default></key>
      <key name="idle-activation-enabled" type="b"><default>true</default></key>
      <key name="lock-delay" type="u"><default>0</default></key>
      </schema></schemalist>
      """)
    try tree.write(
      schemas + "/org.gnome.desktop.session.gschema.xml",
      """
      <schemalist><schema id="org.gnome.desktop.session">
      <key name="idle-delay" type="u"><default>300</default></key>
      </schema></schemalist>
      """)
    try tree.makeDirectory("/home/kim/.config/dconf")
    return tree
  }

  var lockDisabled: [UInt8] {
    get throws { Array(try Data(contentsOf: URL(fileURLWithPath: Self.fixtures + "/dconf-lock-disabled.gvdb"))) }
  }

  /// `body` on a thread of its own, waited for at most `seconds`; nil when it has not returned
  /// by then. `unblock` runs until it has (a hung open of a FIFO returns once a writer opens it).
  func within<T: Sendable>(_ seconds: Double, run body: @escaping @Sendable () -> T, unblocking unblock: () -> Void) -> T? {
    let done = DispatchSemaphore(value: 0)
    let result = Mutex<T?>(nil)
    Thread.detachNewThread {
      let value = body()
      result.withLock { $0 = value }
      done.signal()
    }
    if done.wait(timeout: .now() + seconds) == .success { return result.withLock { $0 } }
    while done.wait(timeout: .now() + 0.1) == .timedOut { unblock() }
    return nil
  }

  @Test func theUsersOwnDatabaseCounts() throws {
    let tree = try gnomeMachine()
    defer { tree.remove() }
    let defaults = ScreenLock(system: tree.system, uid: 1001).fact()
    #expect(defaults.holds == true && defaults.details.first?.1 == .number(300), "\(defaults.reason)")
    try tree.write("/home/kim/.config/dconf/user", bytes: try lockDisabled)
    let fact = ScreenLock(system: tree.system, uid: 1001).fact()
    #expect(fact.holds == false && fact.reason.contains("lock-enabled = false (/home/kim/.config/dconf/user)"), "\(fact.reason)")
  }

  @Test func aFIFOAsTheDatabaseIsUnknownAndDoesNotHang() throws {
    let tree = try gnomeMachine()
    defer { tree.remove() }
    let fifo = tree.root + "/home/kim/.config/dconf/user"
    #expect(mkfifo(fifo, 0o644) == 0)
    let system = tree.system
    let fact = within(20, run: { ScreenLock(system: system, uid: 1001).fact() }, unblocking: { close(open(fifo, O_WRONLY | O_NONBLOCK)) })
    let answered = try #require(fact, "the screen lock waited on a FIFO in the user's home")
    #expect(answered.isUnknown)
    #expect(answered.reason.contains("/home/kim/.config/dconf/user is a FIFO, not a regular file"), "\(answered.reason)")
  }

  @Test func aLinkAsTheDatabaseIsNotFollowed() throws {
    let tree = try gnomeMachine()
    defer { tree.remove() }
    try tree.write("/root/dconf-user", bytes: try lockDisabled, mode: 0o600)
    try tree.link("/home/kim/.config/dconf/user", to: tree.root + "/root/dconf-user")
    let fact = ScreenLock(system: tree.system, uid: 1001).fact()
    #expect(fact.isUnknown)
    #expect(fact.reason.contains("/home/kim/.config/dconf/user is a symbolic link, not followed"), "\(fact.reason)")
  }

  @Test func aLinkedConfigDirectoryIsNotFollowed() throws {
    let tree = try gnomeMachine()
    defer { tree.remove() }
    try tree.write("/root/.config/dconf/user", bytes: try lockDisabled, mode: 0o600)
    try FileManager.default.removeItem(atPath: tree.root + "/home/kim/.config")
    try tree.link("/home/kim/.config", to: tree.root + "/root/.config")
    let fact = ScreenLock(system: tree.system, uid: 1001).fact()
    #expect(fact.isUnknown)
    #expect(fact.reason.contains("/home/kim/.config is a symbolic link, not followed"), "\(fact.reason)")
    // KDE's file below the same link: unknown too.
    try tree.write("/run/systemd/sessions/6", "UID=1001\nTYPE=wayland\nDESKTOP=KDE\n")
    try tree.write("/root/.config/kscreenlockerrc", "[Daemon]\nAutolock=false\n")
    let kde = ScreenLock(system: tree.system, uid: 1001).fact()
    #expect(kde.isUnknown && kde.reason.contains("/home/kim/.config is a symbolic link, not followed"), "\(kde.reason)")
  }

  @Test(.enabled(if: geteuid() == 0, "needs root to give a file away"))
  func aDatabaseOwnedBySomeoneElseIsNotTrusted() throws {
    let tree = try gnomeMachine()
    defer { tree.remove() }
    try tree.write("/home/kim/.config/dconf/user", bytes: try lockDisabled)
    #expect(chown(tree.root + "/home/kim/.config/dconf/user", 65534, 65534) == 0)
    let fact = ScreenLock(system: tree.system, uid: 1001).fact()
    #expect(fact.isUnknown)
    #expect(fact.reason.contains("/home/kim/.config/dconf/user belongs to uid 65534, not to uid 1001 or root"), "\(fact.reason)")
    // The user's own file is theirs to show; so is a directory above it given to them.
    #expect(chown(tree.root + "/home/kim/.config/dconf/user", 1001, 1001) == 0)
    #expect(chown(tree.root + "/home/kim/.config", 1001, 1001) == 0)
    #expect(ScreenLock(system: tree.system, uid: 1001).fact().holds == false)
    // A directory on the way given to someone else: what is below it is theirs to choose.
    #expect(chown(tree.root + "/home/kim/.config/dconf", 65534, 65534) == 0)
    let below = ScreenLock(system: tree.system, uid: 1001).fact()
    #expect(below.isUnknown && below.reason.contains("/home/kim/.config/dconf belongs to uid 65534"), "\(below.reason)")
  }

  @Test func aDatabaseLargerThanDconfWritesIsUnknown() throws {
    let tree = try gnomeMachine()
    defer { tree.remove() }
    let big = tree.root + "/home/kim/.config/dconf/user"
    #expect(FileManager.default.createFile(atPath: big, contents: nil))
    #expect(truncate(big, (4 << 20) + 1) == 0)
    let fact = ScreenLock(system: tree.system, uid: 1001).fact()
    #expect(fact.isUnknown && fact.reason.contains("/home/kim/.config/dconf/user is larger than 4 MiB"), "\(fact.reason)")
  }

  /// A 1 MiB database whose 43,690 items each name the same 64 KiB key, chained 60 deep by their
  /// parents: full names would take gigabytes. Refused from its bytes, nothing built.
  @Test func aDatabaseClaimingMoreThanItHoldsIsRefusedWithoutAllocating() throws {
    func le32(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }
    let count = 43_690
    let size = 32 + 24 * count
    var file = Array("GVariant".utf8) + le32(0) + le32(0) + le32(24) + le32(UInt32(size))
    file += le32(0) + le32(0)  // no bloom words, no buckets
    for index in 0..<count {
      let parent = index % 60 == 0 ? UInt32.max : UInt32(index - 1)
      file += le32(0) + le32(parent) + le32(0) + [0xFF, 0xFF, UInt8(ascii: "v"), 0] + le32(0) + le32(0)
    }
    #expect(file.count == size)
    #expect(throws: GVDBFile.Failure.self) { try GVDBFile(file) }
    // Headers that claim 2^27 bloom words and 2^32 buckets in a table of 8 bytes.
    var counts = Array(file[0..<32])
    counts.replaceSubrange(20..<24, with: le32(32))
    counts.replaceSubrange(24..<32, with: le32((1 << 27) - 1) + le32(UInt32.max))
    #expect(throws: GVDBFile.Failure.self) { try GVDBFile(counts) }
  }
}
