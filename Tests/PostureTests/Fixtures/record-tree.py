#!/usr/bin/python3
"""Records what `fr-profile posture` reads from this machine into a tree (README.md beside this).

usage: record-tree.py OUT [MOUNTPOINT...]

Copies the files posture reads (/proc/self/mountinfo, /proc/swaps, os-release, the PAM password
stack, ufw.conf, the unit symlinks of /etc/systemd/system, efivars, the security modules'
files) and, for every block device under a mount or a swap area, the /sys entries that describe
it — the /sys/dev/block/M:m and /sys/class/block/NAME links, `dev`, `dm/name`, `dm/uuid`,
`loop/backing_file`, `backing_dev` and the `slaves/` links — following slaves and loop backing
files down. Links are kept as the kernel shows them (relative), so the tree resolves inside
itself. /etc/passwd keeps root and nobody only; the package database is recorded as its first
lines (its modification time is what posture reads, and the tests set it). MOUNTPOINTs: other
mounts whose devices are recorded too (/ and /home always are).
"""
import os
import re
import sys

OUT = None


def put(path, data):
    target = OUT + path
    os.makedirs(os.path.dirname(target), exist_ok=True)
    with open(target, "wb") as handle:
        handle.write(data)


def copy(path, limit=1 << 20):
    try:
        with open(path, "rb") as handle:
            put(path, handle.read(limit))
    except OSError:
        pass


def link(path):
    """Records the symbolic link at `path` (inside /sys, /etc) as it is."""
    try:
        target = os.readlink(path)
    except OSError:
        return None
    full = OUT + path
    os.makedirs(os.path.dirname(full), exist_ok=True)
    if os.path.lexists(full):
        os.unlink(full)
    os.symlink(target, full)
    return target


def sys_dir(path):
    """The real directory a /sys link leads to, as a path under /sys."""
    return os.path.realpath(path)


def record_device(number, seen, mounts):
    if number in seen:
        return
    seen.add(number)
    base = f"/sys/dev/block/{number}"
    if link(base) is None:
        return
    real = sys_dir(base)
    name = os.path.basename(real)
    link(f"/sys/class/block/{name}")
    for attribute in ["dev", "dm/name", "dm/uuid", "loop/backing_file", "backing_dev"]:
        copy(f"{real}/{attribute}", 4096)
    slaves = f"{real}/slaves"
    if os.path.isdir(slaves):
        for slave in sorted(os.listdir(slaves)):
            link(f"{slaves}/{slave}")
            with open(f"{slaves}/{slave}/dev") as handle:
                number_below = handle.read().strip()
            record_device(number_below, seen, mounts)
    backing = read(f"{real}/loop/backing_file")
    if backing:
        record_file(backing, seen, mounts)


def read(path):
    try:
        with open(path) as handle:
            return handle.read().strip()
    except OSError:
        return None


def record_file(path, seen, mounts):
    best = None
    for entry in mounts:
        point = entry["point"]
        if point == "/" or path == point or path.startswith(point + "/"):
            if best is None or len(point) >= len(best["point"]):
                best = entry
    if best and best["number"].split(":")[0] != "0":
        record_device(best["number"], seen, mounts)


def main(arguments):
    global OUT
    if not arguments:
        sys.exit(__doc__)
    also = arguments[1:]
    OUT = os.path.abspath(arguments[0])
    for path in ["/proc/self/mountinfo", "/proc/swaps", "/proc/sys/kernel/osrelease", "/etc/os-release",
                 "/etc/pam.d/passwd", "/etc/pam.d/common-password", "/etc/security/pwquality.conf",
                 "/etc/ufw/ufw.conf", "/sys/fs/selinux/enforce", "/sys/kernel/security/lsm",
                 "/sys/module/apparmor/parameters/enabled", "/sys/firmware/acpi/pm_profile",
                 "/sys/module/loop/parameters/max_loop"]:
        copy(path)
    with open("/etc/passwd") as handle:
        kept = [line for line in handle if line.split(":")[0] in ("root", "nobody")]
    put("/etc/passwd", "".join(kept).encode())
    with open("/var/lib/dpkg/status", "rb") as handle:
        put("/var/lib/dpkg/status", b"".join(handle.readlines()[:12]))
    efivars = "/sys/firmware/efi/efivars"
    if os.path.isdir(efivars):
        for name in os.listdir(efivars):
            if re.match(r"(SecureBoot|SetupMode|MokSBStateRT)-", name):
                copy(f"{efivars}/{name}", 64)
    units = "/etc/systemd/system"
    for entry in sorted(os.listdir(units)):
        if entry.endswith((".wants", ".requires")) and os.path.isdir(f"{units}/{entry}"):
            for unit in sorted(os.listdir(f"{units}/{entry}")):
                link(f"{units}/{entry}/{unit}")
        elif os.path.islink(f"{units}/{entry}") and os.readlink(f"{units}/{entry}") == "/dev/null":
            link(f"{units}/{entry}")
    mounts = []
    with open("/proc/self/mountinfo") as handle:
        for line in handle:
            fields = line.split()
            mounts.append({"number": fields[2], "point": fields[4]})
    seen = set()
    for entry in mounts:
        if entry["point"] in ["/", "/home"] + also or entry["point"].startswith("/home/"):
            if not entry["number"].startswith("0:"):
                record_device(entry["number"], seen, mounts)
    with open("/proc/swaps") as handle:
        for line in handle.readlines()[1:]:
            path, kind = line.split()[:2]
            if kind == "partition":
                number = read(f"/sys/class/block/{os.path.basename(path)}/dev")
                if number:
                    record_device(number, seen, mounts)
            else:
                record_file(path, seen, mounts)


if __name__ == "__main__":
    main(sys.argv[1:])
