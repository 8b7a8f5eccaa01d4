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
FR_PROFILE_HOME="$work/state" SWIFT_DETERMINISTIC_HASHING=1 valgrind --tool=callgrind --demangle=no \
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
cat "$work/functions" "$work/data" >bench/collect-order.txt
echo "bench/collect-order.txt: $(wc -l <"$work/functions") functions, $(wc -l <"$work/data") data objects"
