#!/usr/bin/env bash
# Regenerates bench/collect-order.txt: the functions one `fr-profile collect` runs (callgrind),
# then the data objects it reads or writes (valgrind's lackey memory trace, in first-touch order),
# as lld's --symbol-ordering-file (one symbol per line; glibc's and the Swift runtime's included).
# `make release` links each group next to each other, so a collect touches fewer pages: the kernel
# maps code in 64 KB windows around each page touched, and every data page written is a fault of
# its own (bench/README.md). lld moves whole input sections: the Swift standard library keeps
# most of its functions in one 1.6 MB section, which stays where it is, and our own modules' globals
# are not in sections of their own. A stale list still links; it only orders less of what runs.
#
#   bench/collect-order.sh [BINARY]     (default .build-release/release/fr-profile; needs valgrind)
#
# Run it after changing what collect executes, then `make release` (which relinks fr-profile when
# this file is newer than the binary).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${1:-.build-release/release/fr-profile}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
strip --strip-debug -o "$work/fr-profile" "$BIN"
FR_PROFILE_HOME="$work/state" "$work/fr-profile" identifier >/dev/null
# Without SWIFT_DETERMINISTIC_HASHING (which the instruction counts use): a real collect seeds its
# hashing with swift_stdlib_random, and that function belongs with the others.
FR_PROFILE_HOME="$work/state" valgrind --tool=callgrind --demangle=no \
  --callgrind-out-file="$work/callgrind.out" "$work/fr-profile" collect >/dev/null 2>"$work/valgrind.log"
nm --defined-only "$BIN" | awk '$2 ~ /[tTwWiI]/ { print $3 }' | sort -u >"$work/defined"
sed -n 's/^c\{0,1\}fn=([0-9]*) //p' "$work/callgrind.out" | sort -u >"$work/called"
comm -12 "$work/defined" "$work/called" >"$work/functions"
FR_PROFILE_HOME="$work/state" valgrind --tool=lackey --trace-mem=yes --log-file="$work/lackey.txt" \
  "$work/fr-profile" collect >/dev/null
nm -S --defined-only "$work/fr-profile" >"$work/nm"
python3 - "$work/nm" "$work/lackey.txt" >"$work/data" <<'PY'
import bisect, sys
objects = []  # (address, size, name) of data symbols: .data, .bss, .rodata, relro
for line in open(sys.argv[1]):
    fields = line.split()
    if len(fields) == 4 and fields[2] in "dDbBrRvV":
        objects.append((int(fields[0], 16), int(fields[1], 16), fields[3]))
objects.sort()
starts = [start for start, _, _ in objects]
seen = set()
for line in open(sys.argv[2]):
    if len(line) < 4 or line[0] != " " or line[1] not in "LSM":
        continue  # instruction fetches and valgrind's own lines
    address = int(line[3:].split(",")[0], 16)
    index = bisect.bisect_right(starts, address) - 1
    if index < 0:
        continue
    start, size, name = objects[index]
    if start <= address < start + max(size, 1) and name not in seen:
        seen.add(name)
        print(name)
PY
# lld gives a listed symbol's whole input section its place, and a name defined more than once
# (local symbols such as `objectdestroyTm`, in ten objects) its place in every object that has it.
# So a symbol of the Swift runtime's archives that shares its section with others would pull in far
# more than itself: Swift.o keeps most of the standard library in one 1.6 MiB .text, _RegexParser.o
# all of its code in one 476 KiB .text. Such symbols go after everything else, their sections
# smallest first, so that they no longer split the functions collect runs into pieces
# 1.6 MiB apart (bench/README.md "Peak RSS"). A name also defined elsewhere stays in place when
# its largest shared section is at most 64 KiB, and is left out otherwise (which definition ran is
# unknown, and lld would move all of them).
swift_static=${SWIFT_STATIC:-$(dirname "$(readlink -f "$(command -v swiftc || echo /opt/swift/usr/bin/swiftc)")")/../lib/swift_static/linux}
nm --defined-only "$BIN" | awk '{ print $3 }' | sort | uniq -d >"$work/ambiguous"
for archive in "$swift_static"/*.a; do
  objdump -t "$archive" >>"$work/archive-symbols" 2>/dev/null || true
  objdump -h "$archive" >>"$work/archive-sections" 2>/dev/null || true
done
nm --defined-only "$BIN" | awk '{ print $3 }' | sort -u >"$work/all-defined"
python3 - "$work" >bench/collect-order.txt <<'PY'
import re, sys
work = sys.argv[1]
ambiguous = set(open(f"{work}/ambiguous").read().split())
defined = set(open(f"{work}/all-defined").read().split())
def members(path):  # (archive member, line) for objdump's output of many archives
    archive = member = None
    for line in open(path):
        header = re.match(r"In archive (.*):$", line) or re.match(r"(\S+):\s+file format", line)
        if header and line.startswith("In archive"):
            archive = header[1]
        elif header:
            member = (archive, header[1])
        else:
            yield member, line
sizes = {}  # (member, section) -> size, from objdump -h
for member, line in members(f"{work}/archive-sections"):
    fields = line.split()
    if len(fields) >= 3 and fields[0].isdigit():
        sizes[(member, fields[1])] = int(fields[2], 16)
linked = set()  # members that define a global symbol the binary defines: the ones linked in
candidates = []
for member, line in members(f"{work}/archive-symbols"):
    if "\t" not in line:
        continue
    left, right = line.rstrip("\n").split("\t", 1)
    flags, section, name = left[17:24], left.split()[-1], right.split()[-1]
    if section.startswith("*"):
        continue
    if "g" in flags and name in defined:
        linked.add(member)
    if not section.endswith("." + name):
        candidates.append((name, sizes.get((member, section), 0), member, section))
shared = {}  # symbol -> (size, member, section): the largest shared section of a linked member defining it
for name, size, member, section in candidates:
    if member in linked and size >= shared.get(name, (0,))[0]:
        shared[name] = (size, member, section)
names = [n for n in open(f"{work}/functions").read().split()
         if not (n in ambiguous and n in shared and shared[n][0] > 65536)]
own = [n for n in names if n not in shared or n in ambiguous]
later = sorted((n for n in names if n in shared and n not in ambiguous),
               key=lambda n: (shared[n][0], shared[n][1:], names.index(n)))
print("\n".join(own + later))
print(f"functions: {len(own)} in sections of their own, then {len(later)} in shared sections", file=sys.stderr)
# The data objects as before, in first-touch order: the shared data sections are small (Swift.o's
# largest 84 KiB), and moving data moves the metadata whose addresses the runtime's caches hash.
print(open(f"{work}/data").read(), end="")
PY
echo "bench/collect-order.txt: $(wc -l <bench/collect-order.txt) symbols"
