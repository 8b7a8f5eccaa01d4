#!/usr/bin/python3
"""Writes the machine trees of the layouts this build machine cannot make (its kernel has no
device mapper): luks, lvm-on-luks, encrypted-swap-only, zfs. README.md says where each
layout's shape comes from. The dconf databases (*.gvdb beside this script) were compiled by
`dconf compile` (make-dconf.sh). Run from anywhere; rewrites the four directories.
"""
import os
import shutil

HERE = os.path.dirname(os.path.abspath(__file__))

# The mounts every Linux machine has, in the shape of /proc/self/mountinfo.
BASE_MOUNTS = """22 {root} 0:21 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - proc proc rw
23 {root} 0:22 / /sys rw,nosuid,nodev,noexec,relatime shared:2 - sysfs sysfs rw
24 {root} 0:5 / /dev rw,nosuid,relatime shared:8 - devtmpfs udev rw,size=8052560k,nr_inodes=2013140,mode=755
26 24 0:25 / /dev/shm rw,nosuid,nodev shared:9 - tmpfs tmpfs rw
28 {root} 0:26 / /run rw,nosuid,nodev,noexec,relatime shared:11 - tmpfs tmpfs rw,size=1614460k,mode=755
"""

GNOME_SCREENSAVER = """<?xml version="1.0" encoding="UTF-8"?>
<!-- Excerpt in the shape of gsettings-desktop-schemas' org.gnome.desktop.screensaver.gschema.xml. -->
<schemalist gettext-domain="gsettings-desktop-schemas">
  <schema id="org.gnome.desktop.screensaver" path="/org/gnome/desktop/screensaver/">
    <key name="idle-activation-enabled" type="b">
      <default>true</default>
      <summary>Activate when idle</summary>
    </key>
    <key name="lock-enabled" type="b">
      <default>true</default>
      <summary>Lock on activation</summary>
    </key>
    <key name="lock-delay" type="u">
      <default>0</default>
      <summary>Time before locking</summary>
    </key>
  </schema>
</schemalist>
"""

GNOME_SESSION = """<?xml version="1.0" encoding="UTF-8"?>
<!-- Excerpt in the shape of gsettings-desktop-schemas' org.gnome.desktop.session.gschema.xml. -->
<schemalist gettext-domain="gsettings-desktop-schemas">
  <schema id="org.gnome.desktop.session" path="/org/gnome/desktop/session/">
    <key name="idle-delay" type="u">
      <default>300</default>
      <summary>Time before session is considered idle</summary>
    </key>
  </schema>
</schemalist>
"""

DEBIAN_COMMON_PASSWORD_UNIX = """# /etc/pam.d/common-password - password-related modules common to all services
# (as pam-auth-update writes it on Debian 12 without libpam-pwquality)
password	[success=1 default=ignore]	pam_unix.so obscure yescrypt
password	requisite			pam_deny.so
password	required			pam_permit.so
"""

DEBIAN_PASSWD = """# The PAM configuration file for the Shadow `passwd' service
@include common-password
"""

GLOBAL = "8be4df61-93ca-11d2-aa0d-00e098032b8c"
SHIM = "605dab50-e046-4300-abb6-3dd810dd8b23"


class Tree:
    def __init__(self, name):
        self.root = os.path.join(HERE, name)
        shutil.rmtree(self.root, ignore_errors=True)
        os.makedirs(self.root)

    def write(self, path, content, mode=0o644):
        full = self.root + path
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "wb") as handle:
            handle.write(content if isinstance(content, bytes) else content.encode())
        os.chmod(full, mode)

    def link(self, path, target):
        full = self.root + path
        os.makedirs(os.path.dirname(full), exist_ok=True)
        os.symlink(target, full)

    def relative_link(self, path, target):
        """A link at `path` to the absolute `target` inside the tree, written relative (as sysfs does)."""
        self.link(path, os.path.relpath(target, os.path.dirname(path)))

    def block(self, name, number, syspath, dm=None, slaves=(), backing_dev=None):
        """A block device as /sys shows it: the two links that name it, `dev`, dm/name and
        dm/uuid, and a `slaves/` link per device below it (given by sysfs path)."""
        self.relative_link(f"/sys/dev/block/{number}", syspath)
        self.relative_link(f"/sys/class/block/{name}", syspath)
        self.write(f"{syspath}/dev", number + "\n")
        if dm:
            self.write(f"{syspath}/dm/name", dm[0] + "\n")
            self.write(f"{syspath}/dm/uuid", dm[1] + "\n")
        for slave in slaves:
            self.relative_link(f"{syspath}/slaves/{os.path.basename(slave)}", slave)
        if backing_dev:
            self.write(f"{syspath}/backing_dev", backing_dev + "\n")

    def efi(self, **variables):
        for name, value in variables.items():
            guid = SHIM if name == "MokSBStateRT" else GLOBAL
            self.write(f"/sys/firmware/efi/efivars/{name}-{guid}", bytes([0x06, 0, 0, 0, value]))

    def gvdb(self, path, source):
        with open(os.path.join(HERE, source), "rb") as handle:
            self.write(path, handle.read())

    def enable(self, target, unit, prefix="/lib/systemd/system"):
        self.link(f"/etc/systemd/system/{target}.wants/{unit}", f"{prefix}/{unit}")

    def common(self, os_release, kernel, passwd_extra=""):
        self.write("/etc/os-release", os_release)
        self.write("/proc/sys/kernel/osrelease", kernel + "\n")
        self.write("/etc/passwd", "root:x:0:0:root:/root:/bin/bash\n" + passwd_extra
                   + "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n")
        self.write("/sys/firmware/acpi/pm_profile", "2\n")
        self.write("/sys/module/loop/parameters/max_loop", "0\n")


def debian(version="12", codename="bookworm"):
    return (f'PRETTY_NAME="Debian GNU/Linux {version} ({codename})"\nNAME="Debian GNU/Linux"\n'
            f'VERSION_ID="{version}"\nVERSION="{version} ({codename})"\nVERSION_CODENAME={codename}\nID=debian\n')


def luks():
    """Fedora 39 Workstation, "Encrypt my data": btrfs subvolumes on LUKS2, swap on zram."""
    t = Tree("luks")
    t.common('NAME="Fedora Linux"\nVERSION="39 (Workstation Edition)"\nID=fedora\nVERSION_ID=39\n', "6.5.6-300.fc39.x86_64",
             "alex:x:1000:1000:Alex:/home/alex:/bin/bash\n")
    nvme = "/sys/devices/pci0000:00/0000:00:1d.0/0000:3d:00.0/nvme/nvme0/nvme0n1"
    t.block("nvme0n1p1", "259:1", f"{nvme}/nvme0n1p1")
    t.block("nvme0n1p2", "259:2", f"{nvme}/nvme0n1p2")
    t.block("nvme0n1p3", "259:3", f"{nvme}/nvme0n1p3")
    uuid = "5d4c7e2a-0b6f-4f7e-9a3e-2f1c8d9b7a61"
    t.block("dm-0", "253:0", "/sys/devices/virtual/block/dm-0",
            dm=(f"luks-{uuid}", f"CRYPT-LUKS2-{uuid.replace('-', '')}-luks-{uuid}"), slaves=[f"{nvme}/nvme0n1p3"])
    t.block("zram0", "252:0", "/sys/devices/virtual/block/zram0", backing_dev="none")
    t.write("/proc/self/mountinfo", BASE_MOUNTS.format(root=60).replace("udev", "devtmpfs") + f"""60 1 0:31 /root / rw,relatime shared:1 - btrfs /dev/mapper/luks-{uuid} rw,seclabel,compress=zstd:1,ssd,discard=async,space_cache=v2,subvolid=257,subvol=/root
94 60 259:2 / /boot rw,relatime shared:48 - ext4 /dev/nvme0n1p2 rw,seclabel
95 94 259:1 / /boot/efi rw,relatime shared:50 - vfat /dev/nvme0n1p1 rw,fmask=0077,dmask=0077,codepage=437,iocharset=ascii,shortname=winnt,errors=remount-ro
97 60 0:31 /home /home rw,relatime shared:52 - btrfs /dev/mapper/luks-{uuid} rw,seclabel,compress=zstd:1,ssd,discard=async,space_cache=v2,subvolid=256,subvol=/home
""")
    t.write("/proc/swaps", "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n/dev/zram0                              partition\t8388604\t\t0\t\t100\n")
    t.efi(SecureBoot=1, SetupMode=0)
    t.write("/sys/fs/selinux/enforce", "1")
    t.write("/sys/kernel/security/lsm", "lockdown,capability,yama,selinux,bpf,landlock")
    t.enable("multi-user.target", "firewalld.service", "/usr/lib/systemd/system")
    t.write("/etc/pam.d/passwd", """#%PAM-1.0
auth       include	system-auth
account    include	system-auth
password   substack	system-auth
-password   optional	pam_gnome_keyring.so use_authtok
password   substack	postlogin
""")
    t.write("/etc/pam.d/system-auth", """# Generated by authselect
auth        required                                     pam_env.so
auth        sufficient                                   pam_unix.so nullok
auth        required                                     pam_deny.so
account     required                                     pam_unix.so
password    requisite                                    pam_pwquality.so local_users_only
password    sufficient                                   pam_unix.so yescrypt shadow nullok use_authtok
password    required                                     pam_deny.so
session     required                                     pam_unix.so
""")
    t.write("/etc/pam.d/postlogin", "# Generated by authselect\nsession optional pam_umask.so silent\n")
    t.write("/etc/security/pwquality.conf", "# Configuration for systemwide password quality limits\n#\n# minlen = 8\n")
    t.write("/run/systemd/sessions/2", """# This is private data. Do not parse.
UID=1000
USER=alex
ACTIVE=1
IS_DISPLAY=1
STATE=active
REMOTE=0
TYPE=wayland
ORIGINAL_TYPE=wayland
CLASS=user
SCOPE=session-2.scope
SERVICE=gdm-password
DESKTOP=gnome
SEAT=seat0
""")
    t.gvdb("/home/alex/.config/dconf/user", "dconf-idle-600.gvdb")
    t.write("/etc/dconf/profile/user", "user-db:user\nsystem-db:local\n")
    t.gvdb("/etc/dconf/db/local", "dconf-local-idle-300-locked.gvdb")
    t.write("/usr/share/glib-2.0/schemas/org.gnome.desktop.screensaver.gschema.xml", GNOME_SCREENSAVER)
    t.write("/usr/share/glib-2.0/schemas/org.gnome.desktop.session.gschema.xml", GNOME_SESSION)
    t.write("/usr/lib/sysimage/rpm/rpmdb.sqlite", "stand-in: posture reads only the modification time\n")


def lvm_on_luks():
    """Debian 12, installer's "Guided - use entire disk and set up encrypted LVM", separate /home."""
    t = Tree("lvm-on-luks")
    t.common(debian(), "6.1.0-13-amd64", "sam:x:1000:1000:Sam,,,:/home/sam:/bin/bash\n")
    sda = "/sys/devices/pci0000:00/0000:00:17.0/ata1/host0/target0:0:0/0:0:0:0/block/sda"
    for n in (1, 2, 3):
        t.block(f"sda{n}", f"8:{n}", f"{sda}/sda{n}")
    crypt = "/sys/devices/virtual/block/dm-0"
    t.block("dm-0", "254:0", crypt, dm=("sda3_crypt", "CRYPT-LUKS2-0b1e3c9d7a2f4e61b85c9d40e3f2a718-sda3_crypt"),
            slaves=[f"{sda}/sda3"])
    vg = "tV3q8KfYw0mJ2cLxR5nB7hD9gS1aZ4eU"
    for minor, lv, lvid in ((1, "root", "pQ6sW2xC8vB4nM0kJ7hG5fD3aS1zX9lK"), (2, "swap_1", "eR4tY6uI8oP0aS2dF4gH6jK8lZ0xC2vB"),
                            (3, "home", "mN1bV3cX5zL7kJ9hG1fD3sA5pO7iU9yT")):
        t.block(f"dm-{minor}", f"254:{minor}", f"/sys/devices/virtual/block/dm-{minor}",
                dm=(f"debian--vg-{lv}", f"LVM-{vg}{lvid}"), slaves=[crypt])
    t.write("/proc/self/mountinfo", BASE_MOUNTS.format(root=27) + """27 1 254:1 / / rw,relatime shared:1 - ext4 /dev/mapper/debian--vg-root rw,errors=remount-ro
61 27 8:2 / /boot rw,relatime shared:32 - ext2 /dev/sda2 rw
64 61 8:1 / /boot/efi rw,relatime shared:34 - vfat /dev/sda1 rw,fmask=0077,dmask=0077,codepage=437,iocharset=ascii,shortname=mixed,utf8,errors=remount-ro
67 27 254:3 / /home rw,relatime shared:36 - ext4 /dev/mapper/debian--vg-home rw
""")
    t.write("/proc/swaps", "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n/dev/dm-2                               partition\t999420\t\t0\t\t-2\n")
    t.efi(SecureBoot=1, SetupMode=0, MokSBStateRT=1)
    t.write("/sys/kernel/security/lsm", "lockdown,capability,landlock,yama,apparmor")
    t.write("/etc/ufw/ufw.conf", "# /etc/ufw/ufw.conf\n#\n\n# Set to yes to start on boot.\nENABLED=yes\n\nLOGLEVEL=low\n")
    t.enable("multi-user.target", "ufw.service")
    t.write("/etc/pam.d/passwd", DEBIAN_PASSWD)
    t.write("/etc/pam.d/common-password", """# /etc/pam.d/common-password (pam-auth-update, with libpam-pwquality)
password	requisite			pam_pwquality.so retry=3
password	[success=1 default=ignore]	pam_unix.so obscure use_authtok try_first_pass yescrypt
password	requisite			pam_deny.so
password	required			pam_permit.so
""")
    t.write("/etc/security/pwquality.conf", "# Configuration for systemwide password quality limits\n# minlen = 8\nminlen = 12\n")
    t.write("/run/systemd/sessions/3", "UID=1000\nUSER=sam\nACTIVE=1\nSTATE=active\nTYPE=x11\nCLASS=user\nDESKTOP=KDE\nSERVICE=sddm\n")
    t.write("/home/sam/.config/kscreenlockerrc", "[Daemon]\nAutolock=false\nLockOnResume=true\n")
    t.write("/var/lib/dpkg/status", "Package: base-files\nStatus: install ok installed\n")


def encrypted_swap_only():
    """Debian 12: / on a plain ext4 partition, swap on a plain dm-crypt mapping with a random key
    per boot (/etc/crypttab "cryptswap /dev/nvme0n1p3 /dev/urandom swap,cipher=aes-xts-plain64")."""
    t = Tree("encrypted-swap-only")
    t.common(debian(), "6.1.0-13-amd64")
    nvme = "/sys/devices/pci0000:00/0000:00:1d.0/0000:3d:00.0/nvme/nvme0/nvme0n1"
    for n in (1, 2, 3):
        t.block(f"nvme0n1p{n}", f"259:{n}", f"{nvme}/nvme0n1p{n}")
    t.block("dm-0", "254:0", "/sys/devices/virtual/block/dm-0", dm=("cryptswap", "CRYPT-PLAIN-cryptswap"),
            slaves=[f"{nvme}/nvme0n1p3"])
    t.write("/proc/self/mountinfo", BASE_MOUNTS.format(root=27) + """27 1 259:2 / / rw,relatime shared:1 - ext4 /dev/nvme0n1p2 rw,errors=remount-ro
61 27 259:1 / /boot/efi rw,relatime shared:32 - vfat /dev/nvme0n1p1 rw,fmask=0077,dmask=0077,codepage=437,iocharset=ascii,shortname=mixed,utf8,errors=remount-ro
""")
    t.write("/proc/swaps", "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n/dev/dm-0                               partition\t4194300\t\t0\t\t-2\n")
    t.efi(SecureBoot=0, SetupMode=1)
    t.write("/sys/module/apparmor/parameters/enabled", "Y\n")
    t.enable("sysinit.target", "nftables.service")
    t.write("/etc/pam.d/passwd", DEBIAN_PASSWD)
    t.write("/etc/pam.d/common-password", DEBIAN_COMMON_PASSWORD_UNIX)
    t.write("/var/lib/dpkg/status", "Package: base-files\nStatus: install ok installed\n")


def zfs():
    """Ubuntu 22.04 desktop installer, "Erase disk and use ZFS" with "Encryption": ZFS native
    encryption on rpool, swap on a plain dm-crypt mapping (cryptoswap) over a partition."""
    t = Tree("zfs")
    t.common('PRETTY_NAME="Ubuntu 22.04.3 LTS"\nNAME="Ubuntu"\nVERSION_ID="22.04"\nVERSION="22.04.3 LTS (Jammy Jellyfish)"\n'
             'ID=ubuntu\nID_LIKE=debian\n', "5.15.0-88-generic", "jo:x:1000:1000:Jo,,,:/home/jo:/bin/bash\n")
    nvme = "/sys/devices/pci0000:00/0000:00:1d.0/0000:3d:00.0/nvme/nvme0/nvme0n1"
    for n in (1, 2, 3, 4):
        t.block(f"nvme0n1p{n}", f"259:{n}", f"{nvme}/nvme0n1p{n}")
    t.block("dm-0", "253:0", "/sys/devices/virtual/block/dm-0", dm=("cryptoswap", "CRYPT-PLAIN-cryptoswap"),
            slaves=[f"{nvme}/nvme0n1p2"])
    t.write("/proc/self/mountinfo", BASE_MOUNTS.format(root=25) + """25 1 0:25 / / rw,relatime shared:1 - zfs rpool/ROOT/ubuntu_k3t1lb rw,xattr,posixacl
95 25 0:50 / /boot rw,nodev,relatime shared:56 - zfs bpool/BOOT/ubuntu_k3t1lb rw,xattr,posixacl
99 95 259:1 / /boot/efi rw,relatime shared:58 - vfat /dev/nvme0n1p1 rw,fmask=0022,dmask=0022,codepage=437,iocharset=iso8859-1,shortname=mixed,errors=remount-ro
104 25 0:56 / /home/jo rw,relatime shared:62 - zfs rpool/USERDATA/jo_x7f3q2 rw,xattr,posixacl
108 25 0:58 / /root rw,relatime shared:64 - zfs rpool/USERDATA/root_x7f3q2 rw,xattr,posixacl
""")
    t.write("/proc/swaps", "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n/dev/dm-0                               partition\t2097148\t\t0\t\t-2\n")
    t.efi(SecureBoot=1, SetupMode=0)
    t.write("/sys/kernel/security/lsm", "lockdown,capability,landlock,yama,apparmor")
    t.write("/sys/kernel/security/apparmor/profiles",
            "/usr/sbin/cupsd (enforce)\nnvidia_modprobe (enforce)\n/usr/lib/snapd/snap-confine (enforce)\nfirefox (complain)\n")
    t.write("/etc/ufw/ufw.conf", "# /etc/ufw/ufw.conf\n#\n\n# Set to yes to start on boot.\nENABLED=no\n\nLOGLEVEL=low\n")
    t.enable("multi-user.target", "ufw.service")
    t.write("/etc/pam.d/passwd", DEBIAN_PASSWD)
    t.write("/etc/pam.d/common-password", DEBIAN_COMMON_PASSWORD_UNIX)
    t.write("/run/systemd/sessions/2", "UID=1000\nUSER=jo\nACTIVE=1\nSTATE=active\nTYPE=wayland\nCLASS=user\nDESKTOP=ubuntu\nSERVICE=gdm-password\n")
    t.gvdb("/home/jo/.config/dconf/user", "dconf-lock-disabled.gvdb")
    t.write("/usr/share/glib-2.0/schemas/org.gnome.desktop.screensaver.gschema.xml", GNOME_SCREENSAVER)
    t.write("/usr/share/glib-2.0/schemas/org.gnome.desktop.session.gschema.xml", GNOME_SESSION)
    t.write("/var/lib/dpkg/status", "Package: base-files\nStatus: install ok installed\n")


if __name__ == "__main__":
    luks()
    lvm_on_luks()
    encrypted_swap_only()
    zfs()
