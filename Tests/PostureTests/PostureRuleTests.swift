import Foundation
import Posture
import ProfileJSON
import SystemCalls
import TestSupport
import Testing

extension TemporaryTree {
  var system: SystemSource { SystemSource(root: root, environment: [:]) }

  /// A symbolic link at `path` (inside the tree) whose target is `target`, as written.
  func link(_ path: String, to target: String) throws {
    try FileManager.default.createDirectory(
      atPath: ((root + path) as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
    try FileManager.default.createSymbolicLink(atPath: root + path, withDestinationPath: target)
  }

  /// A block device: its /sys/dev/block link, `dev`, dm files and slaves (names under virtual/block).
  func block(_ name: String, _ number: String, uuid: String? = nil, slaves: [String] = []) throws {
    let directory = "/sys/devices/virtual/block/\(name)"
    try link("/sys/dev/block/\(number)", to: "../../devices/virtual/block/\(name)")
    try link("/sys/class/block/\(name)", to: "../../devices/virtual/block/\(name)")
    try write(directory + "/dev", number + "\n")
    if let uuid {
      try write(directory + "/dm/uuid", uuid + "\n")
      try write(directory + "/dm/name", name + "-map\n")
    }
    for slave in slaves { try link(directory + "/slaves/\(slave)", to: "../../\(slave)") }
  }
}

/// The parsers, each rule on its own, and bad input that must give unknown with a reason.
@Suite(.timeLimit(.minutes(10))) struct PostureRuleTests {
  @Test func mountinfoUndoesOctalEscapesAndSkipsMalformedLines() {
    let text = """
      36 27 0:32 /@home /home/my\\040files rw,relatime shared:3 master:1 - btrfs /dev/mapper/luks-0f1e rw,subvol=/@home
      garbage line
      27 1 254:0 / / rw - ext4 /dev/vda rw
      """
    let (mounts, malformed) = parseMountInfo(text)
    #expect(malformed == 1)
    #expect(mounts.map(\.mountPoint) == ["/home/my files", "/"])
    #expect(mounts.first?.source == "/dev/mapper/luks-0f1e" && mounts.first?.fileSystem == "btrfs" && mounts.first?.major == 0)
    #expect(mount(holding: "/home/my files/x", in: mounts)?.mountPoint == "/home/my files")
    #expect(mount(holding: "/home/my filesx", in: mounts)?.mountPoint == "/")
  }

  @Test func swapsParsesPartitionsAndFiles() {
    let (areas, malformed) = parseSwaps(
      "Filename\tType\tSize\tUsed\tPriority\n/dev/dm-1  partition\t8388604\t0\t-2\n/swap\\040file file 2097148 0 -3\n")
    #expect(malformed == 0)
    #expect(areas == [SwapArea(path: "/dev/dm-1", type: "partition"), SwapArea(path: "/swap file", type: "file")])
  }

  @Test func gvariantTextAndSchemaDefaults() {
    #expect(parseGVariantText("uint32 600", type: "u") == .uint32(600))
    #expect(parseGVariantText("300", type: "u") == .uint32(300))
    #expect(parseGVariantText("false", type: "b") == .boolean(false))
    #expect(parseGVariantText("yes", type: "b") == nil)
    let xml = """
      <schema id="org.gnome.desktop.screensaver"><key name="lock-delay" type="u"><default>0</default></key>
      <key name="lock-enabled" type="b"><summary>x</summary><default>true</default></key></schema>
      <schema id="other"><key name="lock-enabled" type="b"><default>false</default></key></schema>
      """
    #expect(xmlDefault(xml, schema: "org.gnome.desktop.screensaver", key: "lock-enabled")?.text == "true")
    #expect(xmlDefault(xml, schema: "other", key: "lock-enabled")?.text == "false")
    #expect(xmlDefault(xml, schema: "org.gnome.desktop.screensaver", key: "idle-delay") == nil)
  }

  @Test func gvdbReadsDconfsFilesAndRefusesGarbage() throws {
    let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures").path
    let user = try GVDBFile(Array(try Data(contentsOf: URL(fileURLWithPath: fixtures + "/dconf-lock-disabled.gvdb"))))
    #expect(user.value("/org/gnome/desktop/screensaver/lock-enabled") == .boolean(false))
    #expect(user.value("/org/gnome/desktop/session/idle-delay") == nil)
    #expect(!user.isLocked("/org/gnome/desktop/screensaver/lock-enabled"))
    let local = try GVDBFile(Array(try Data(contentsOf: URL(fileURLWithPath: fixtures + "/dconf-local-idle-300-locked.gvdb"))))
    #expect(local.value("/org/gnome/desktop/session/idle-delay") == .uint32(300))
    #expect(local.isLocked("/org/gnome/desktop/session/idle-delay"))
    #expect(!local.isLocked("/org/gnome/desktop/session/idle"))
    #expect(!local.isLocked("/org/gnome/desktop/screensaver/lock-enabled"))
    #expect(throws: GVDBFile.Failure.notGVDB) { try GVDBFile(Array("not a database at all".utf8)) }
    var cut = Array(try Data(contentsOf: URL(fileURLWithPath: fixtures + "/dconf-idle-600.gvdb")))
    cut.removeLast(40)
    #expect(throws: GVDBFile.Failure.self) { try GVDBFile(cut) }
    // Every truncation and every flipped byte of a real database: an error or a value, never a crash.
    let whole = Array(try Data(contentsOf: URL(fileURLWithPath: fixtures + "/dconf-idle-600.gvdb")))
    for length in 0..<whole.count { _ = (try? GVDBFile(Array(whole[0..<length])))?.value("/org/gnome/desktop/session/idle-delay") }
    for index in 0..<whole.count {
      var flipped = whole
      flipped[index] ^= 0xFF
      _ = (try? GVDBFile(flipped))?.value("/org/gnome/desktop/session/idle-delay")
    }
  }

  @Test func aLoopOfSlavesIsUnknownNotAHang() throws {
    let tree = try TemporaryTree()
    defer { tree.remove() }
    try tree.block("dm-0", "254:0", uuid: "LVM-abc", slaves: ["dm-1"])
    try tree.block("dm-1", "254:1", uuid: "LVM-def", slaves: ["dm-0"])
    try tree.write("/proc/self/mountinfo", "27 1 254:0 / / rw - ext4 /dev/mapper/vg-root rw\n")
    try tree.write("/proc/swaps", "Filename Type Size Used Priority\n")
    let facts = DiskEncryption(system: tree.system).facts()
    #expect(facts.root.isUnknown)
    #expect(facts.root.reason.contains("deeper than 12 steps"))
  }

  @Test func lvmSpanningAnEncryptedAndAPlainDeviceIsNotEncrypted() throws {
    let tree = try TemporaryTree()
    defer { tree.remove() }
    try tree.block("sda2", "8:2")
    try tree.block("sdb1", "8:17")
    try tree.block("dm-0", "254:0", uuid: "CRYPT-LUKS2-00112233445566778899aabbccddeeff-crypt", slaves: ["sda2"])
    try tree.block("dm-1", "254:1", uuid: "LVM-vgid-lvid", slaves: ["dm-0", "sdb1"])
    try tree.write("/proc/self/mountinfo", "27 1 254:1 / / rw - ext4 /dev/mapper/vg-root rw\n")
    #expect(DiskEncryption(system: tree.system).facts().root.holds == false)
    // dm-verity over an encrypted device is followed through: encrypted; over a plain one: not.
    try tree.block("dm-2", "254:2", uuid: "CRYPT-VERITY-0011-root", slaves: ["dm-0"])
    try tree.write("/proc/self/mountinfo", "27 1 254:2 / / ro - ext4 /dev/mapper/root rw\n")
    let verity = DiskEncryption(system: tree.system).facts().root
    #expect(verity.holds == true && verity.reason.contains("integrity, not encryption"))
  }

  @Test func luksInAFileOverALoopDeviceIsEncryptedAndASwapFileFollowsItsMount() throws {
    let tree = try TemporaryTree()
    defer { tree.remove() }
    try tree.block("vda", "254:16")
    try tree.block("loop0", "7:0")
    try tree.write("/sys/devices/virtual/block/loop0/loop/backing_file", "/vault.img\n")
    try tree.block("dm-0", "253:0", uuid: "CRYPT-LUKS2-0011-vault", slaves: ["loop0"])
    try tree.write(
      "/proc/self/mountinfo", "27 1 254:16 / / rw - ext4 /dev/vda rw\n40 27 253:0 / /home rw - ext4 /dev/mapper/vault rw\n")
    try tree.write("/proc/swaps", "Filename Type Size Used Priority\n/home/swapfile file 1024 0 -2\n")
    let facts = DiskEncryption(system: tree.system).facts()
    #expect(facts.home.holds == true)
    #expect(facts.swap.holds == true && facts.swap.reason.hasPrefix("the swap file /home/swapfile is in /home"))
    #expect(facts.root.holds == false)
  }

  @Test func efiVariablesOfTheWrongSizeAreUnknown() throws {
    let tree = try TemporaryTree()
    defer { tree.remove() }
    let name = "/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c"
    try tree.write(name, bytes: [6, 0, 0, 0, 1, 1])
    #expect(SecureBoot(system: tree.system).facts().enabled.isUnknown)
    try tree.write(name, bytes: [6, 0, 0, 0, 2])
    #expect(SecureBoot(system: tree.system).facts().enabled.reason.contains("holds 2"))
    try tree.write(name, bytes: [6, 0, 0, 0, 1])
    #expect(SecureBoot(system: tree.system).facts().enabled.holds == true)
    #expect(SecureBoot(system: tree.system).facts().setupMode.isUnknown)
    // A masked /sys/firmware (a container): unknown, not "no UEFI".
    let masked = try TemporaryTree()
    defer { masked.remove() }
    try masked.makeDirectory("/sys/firmware")
    #expect(SecureBoot(system: masked.system).facts().enabled.isUnknown)
  }

  @Test func pamIncludeCyclesAndOptionalModules() throws {
    let tree = try TemporaryTree()
    defer { tree.remove() }
    try tree.write("/etc/pam.d/passwd", "@include passwd\n")
    let cycle = PasswordQuality(system: tree.system).fact()
    #expect(cycle.isUnknown && cycle.reason.contains("deeper than 8"))
    try tree.write("/etc/pam.d/passwd", "password optional pam_pwquality.so minlen=20\npassword required pam_unix.so\n")
    let optional = PasswordQuality(system: tree.system).fact()
    #expect(optional.holds == false && optional.reason.contains("pam_pwquality.so is only optional"))
    try tree.write("/etc/pam.d/passwd", "password requisite /usr/lib/x86_64-linux-gnu/security/pam_pwquality.so minlen=20\n")
    let argument = PasswordQuality(system: tree.system).fact()
    #expect(argument.holds == true && argument.details.last?.1 == .number(20))
  }

  @Test func maskedUnitsAreNotEnabled() throws {
    let tree = try TemporaryTree()
    defer { tree.remove() }
    try tree.link("/etc/systemd/system/multi-user.target.wants/firewalld.service", to: "/usr/lib/systemd/system/firewalld.service")
    #expect(Firewall(system: tree.system).fact().holds == true)
    try tree.link("/etc/systemd/system/firewalld.service", to: "/dev/null")
    let masked = Firewall(system: tree.system).fact()
    #expect(masked.holds == false && masked.reason.contains("firewalld.service is masked"))
  }

  @Test func packageAgeInWholeDaysAndAFutureClockIsUnknown() throws {
    let tree = try TemporaryTree()
    defer { tree.remove() }
    try tree.write("/var/lib/dpkg/status", "Package: x\n")
    var times = [timespec(tv_sec: 1_700_000_000, tv_nsec: 0), timespec(tv_sec: 1_700_000_000, tv_nsec: 0)]
    #expect(utimensat(AT_FDCWD, tree.root + "/var/lib/dpkg/status", &times, 0) == 0)
    let age = Freshness(system: tree.system, now: 1_700_000_000 + 86400 * 45 + 3600).packageAge()
    #expect(age.value == .number(45))
    #expect(age.reason.hasPrefix("/var/lib/dpkg/status, dpkg's package database, was last written 45 days ago"))
    #expect(Freshness(system: tree.system, now: 1_600_000_000).packageAge().isUnknown)
  }

  @Test func screenLockNeedsAGraphicalSessionAndReadsKDEDefaults() throws {
    let tree = try TemporaryTree()
    defer { tree.remove() }
    try tree.write("/etc/passwd", "kim:x:1001:1001::/home/kim:/bin/sh\n")
    try tree.write("/run/systemd/sessions/5", "UID=1001\nTYPE=tty\n")
    #expect(ScreenLock(system: tree.system, uid: 1001).fact().isUnknown)
    try tree.write("/run/systemd/sessions/6", "UID=1001\nTYPE=wayland\nDESKTOP=KDE\n")
    let defaults = ScreenLock(system: tree.system, uid: 1001).fact()
    #expect(defaults.holds == true && defaults.details.first?.1 == .number(300))
    try tree.write("/home/kim/.config/kscreenlockerrc", "[Daemon][$i]\nTimeout=0\n")
    #expect(ScreenLock(system: tree.system, uid: 1001).fact().holds == false)
    try tree.write("/run/systemd/sessions/6", "UID=1001\nTYPE=x11\nDESKTOP=XFCE\n")
    #expect(ScreenLock(system: tree.system, uid: 1001).fact().reason.contains("only GNOME's and KDE Plasma's"))
  }

  @Test func theCallersHomeComesFromHOMEWhenPasswdDoesNotListThem() throws {
    let tree = try TemporaryTree()
    defer { tree.remove() }
    try tree.write("/etc/passwd", "someone:x:4242:4242::/home/someone:/bin/sh\n")
    try tree.write("/run/systemd/sessions/7", "UID=\(getuid() + 1)\nTYPE=wayland\nDESKTOP=KDE\n")
    try tree.write("/run/systemd/sessions/8", "UID=\(getuid())\nTYPE=wayland\nDESKTOP=KDE\n")
    try tree.write("/srv/me/.config/kscreenlockerrc", "[Daemon]\nTimeout=10\n")
    let listed = ScreenLock(system: SystemSource(root: tree.root, environment: ["HOME": "/srv/me"]), uid: getuid()).fact()
    #expect(listed.holds == true && listed.details.first?.1 == .number(600))
    let other = ScreenLock(system: SystemSource(root: tree.root, environment: ["HOME": "/srv/me"]), uid: getuid() + 1).fact()
    #expect(other.isUnknown && other.reason.contains("no home directory"))
  }
}
