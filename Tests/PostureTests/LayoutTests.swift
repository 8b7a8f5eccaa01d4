import Foundation
import Posture
import ProfileJSON
import SystemCalls
import Testing

/// Tests/PostureTests/Fixtures/<layout>: recorded and reconstructed machine trees (README.md there).
func layout(_ name: String) -> SystemSource {
  let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/\(name)").path
  return SystemSource(root: root, environment: [:])
}

/// Every fact of every layout, as docs/posture.md's table says it should be.
@Suite(.timeLimit(.minutes(10))) struct LayoutTests {
  let now: Int64 = 1_800_000_000

  func report(_ name: String, uid: UInt32 = 1000) -> PostureReport {
    PostureReport.evaluate(layout(name), uid: uid, now: now)
  }

  func value(_ report: PostureReport, _ name: String) -> Bool?? {
    guard let fact = report[name] else { return .none }
    return .some(fact.holds)
  }

  @Test func plainExt4RecordedHere() throws {
    let report = report("plain-ext4", uid: 0)
    #expect(report["distributionId"]?.value == "debian")
    #expect(report["distributionVersion"]?.value == "12")
    let root = try #require(report["rootEncrypted"])
    #expect(root.holds == false)
    #expect(root.reason.contains("vda (254:0), a disk or partition with no dm-crypt above it"))
    #expect(report["homeEncrypted"]?.holds == false)
    #expect(report["homeEncrypted"]?.reason.hasPrefix("/home is not a mount of its own") == true)
    #expect(report["swapEncrypted"]?.holds == true)
    #expect(report["swapEncrypted"]?.reason.contains("no swap area is active") == true)
    #expect(report["secureBootEnabled"]?.holds == false)
    #expect(report["secureBootEnabled"]?.reason.contains("not started by UEFI") == true)
    #expect(report["secureBootSetupMode"]?.holds == false)
    #expect(report["firewallServiceEnabled"]?.holds == false)
    #expect(report["screenLockOnIdle"]?.isUnknown == true)
    #expect(report["passwordQualityEnforced"]?.holds == false)
    #expect(report["passwordQualityEnforced"]?.reason.contains("obscure") == true)
    #expect(report["selinuxEnforcing"]?.holds == false)
    #expect(report["apparmorEnabled"]?.holds == false)
    #expect(report["kernelRelease"]?.value == "6.18.44-fc-v782")
  }

  @Test func loopDeviceOverAPlainFileIsNotEncryption() throws {
    let report = report("loop-home", uid: 0)
    let home = try #require(report["homeEncrypted"])
    #expect(home.holds == false)
    #expect(home.reason.contains("loop0 (7:0), a loop device over /tmp/posture-loop.Mvkb/home.img"))
    #expect(home.reason.contains("vda (254:0)"))
    #expect(report["rootEncrypted"]?.holds == false)
  }

  @Test func luksBtrfsFedora() throws {
    let report = report("luks")
    let root = try #require(report["rootEncrypted"])
    #expect(root.holds == true)
    #expect(root.reason.contains("dm-0 (253:0), the dm-crypt mapping luks-5d4c7e2a-0b6f-4f7e-9a3e-2f1c8d9b7a61 (LUKS2)"))
    #expect(report["homeEncrypted"]?.holds == true)
    #expect(report["swapEncrypted"]?.holds == true)
    #expect(report["swapEncrypted"]?.reason.contains("zram") == true)
    #expect(report["secureBootEnabled"]?.holds == true)
    #expect(report["secureBootSetupMode"]?.holds == false)
    #expect(report["firewallServiceEnabled"]?.holds == true)
    #expect(report["firewallServiceEnabled"]?.reason.contains("firewalld.service") == true)
    let lock = try #require(report["screenLockOnIdle"])
    #expect(lock.holds == true)
    // The system database locks idle-delay at 300: the user's 600 does not count.
    #expect(lock.details.first?.1 == .number(300))
    #expect(lock.reason.contains("idle-delay = 300 (locked in /etc/dconf/db/local)"))
    let password = try #require(report["passwordQualityEnforced"])
    #expect(password.holds == true)
    #expect(password.details.map(\.0) == ["module", "minimumLength"])
    #expect(password.details.last?.1 == .number(8))
    #expect(report["selinuxEnforcing"]?.holds == true)
    #expect(report["apparmorEnabled"]?.holds == false)
    #expect(report["distributionId"]?.value == "fedora")
    #expect(report["daysSincePackageChange"]?.details.first?.1 == "/usr/lib/sysimage/rpm/rpmdb.sqlite")
  }

  @Test func lvmOnLuksDebian() throws {
    let report = report("lvm-on-luks")
    let root = try #require(report["rootEncrypted"])
    #expect(root.holds == true)
    #expect(
      root.reason.contains("dm-1 (254:1), the LVM logical volume debian--vg-root, on dm-0 (254:0), the dm-crypt mapping sda3_crypt (LUKS2)")
    )
    #expect(report["homeEncrypted"]?.holds == true)
    #expect(report["homeEncrypted"]?.reason.contains("debian--vg-home") == true)
    #expect(report["swapEncrypted"]?.holds == true)
    #expect(report["swapEncrypted"]?.reason.contains("debian--vg-swap_1") == true)
    // shim does not verify: Secure Boot on in the firmware does not make the fact true.
    #expect(report["secureBootEnabled"]?.holds == false)
    #expect(report["secureBootEnabled"]?.reason.contains("MokSBStateRT") == true)
    #expect(report["firewallServiceEnabled"]?.holds == true)
    #expect(report["screenLockOnIdle"]?.holds == false)
    #expect(report["screenLockOnIdle"]?.reason.contains("Autolock=false") == true)
    #expect(report["passwordQualityEnforced"]?.holds == true)
    #expect(report["passwordQualityEnforced"]?.details.last?.1 == .number(12))
    #expect(report["apparmorEnabled"]?.holds == true)
    #expect(report["apparmorEnabled"]?.reason.contains("only a caller allowed to view policy") == true)
  }

  @Test func encryptedSwapOnly() throws {
    let report = report("encrypted-swap-only", uid: 0)
    #expect(report["rootEncrypted"]?.holds == false)
    #expect(report["homeEncrypted"]?.holds == false)
    let swap = try #require(report["swapEncrypted"])
    #expect(swap.holds == true)
    #expect(swap.reason.contains("the dm-crypt mapping cryptswap (PLAIN)"))
    #expect(report["secureBootEnabled"]?.holds == false)
    #expect(report["secureBootSetupMode"]?.holds == true)
    #expect(report["firewallServiceEnabled"]?.reason.contains("nftables.service") == true)
    #expect(report["apparmorEnabled"]?.holds == true)
    #expect(report["screenLockOnIdle"]?.isUnknown == true)
  }

  @Test func zfsNativeEncryptionIsUnknown() throws {
    let report = report("zfs")
    let root = try #require(report["rootEncrypted"])
    #expect(root.isUnknown)
    #expect(root.reason.contains("zfs get encryption,keystatus rpool/ROOT/ubuntu_k3t1lb"))
    #expect(report["homeEncrypted"]?.isUnknown == true)
    #expect(report["swapEncrypted"]?.holds == true)
    #expect(report["secureBootEnabled"]?.holds == true)
    #expect(report["firewallServiceEnabled"]?.holds == false)
    #expect(report["firewallServiceEnabled"]?.reason.contains("ENABLED=no") == true)
    let lock = try #require(report["screenLockOnIdle"])
    #expect(lock.holds == false)
    #expect(lock.reason.contains("lock-enabled = false (/home/jo/.config/dconf/user)"))
    #expect(report["apparmorEnabled"]?.details.first?.1 == .number(3))
    #expect(report["distributionVersion"]?.value == "22.04")
  }

  @Test func everyFactOfEveryLayoutHasAReason() {
    for name in ["plain-ext4", "loop-home", "luks", "lvm-on-luks", "encrypted-swap-only", "zfs"] {
      let report = report(name)
      #expect(report.stable.count == 12 && report.volatile.count == 2, "\(name)")
      for (fact, value) in report.stable + report.volatile {
        #expect(!value.reason.isEmpty, "\(name) \(fact)")
      }
    }
  }
}
