#!/usr/bin/env bash
# Regenerates bench/collect-order.txt: the functions one `fr-profile collect` runs, as the
# gold linker's --section-ordering-file (".text.<mangled name>" per line). `make release` links
# them next to each other, so a collect touches fewer pages of the 13 MB of code: the kernel
# maps file pages in 64 KB windows around each one touched, and those windows are most of the
# peak RSS (README "Benchmark"). A stale list still links; it only orders less of what runs.
#
#   bench/collect-order.sh [BINARY]     (default .build-static/release/fr-profile; needs valgrind)
#
# Run it after changing what collect executes, then `make release` (relinks only).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${1:-.build-static/release/fr-profile}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
strip --strip-debug -o "$work/fr-profile" "$BIN"
FR_PROFILE_HOME="$work/state" "$work/fr-profile" identifier >/dev/null
FR_PROFILE_HOME="$work/state" SWIFT_DETERMINISTIC_HASHING=1 valgrind --tool=callgrind --demangle=no \
  --callgrind-out-file="$work/callgrind.out" "$work/fr-profile" collect >/dev/null 2>"$work/valgrind.log"
nm --defined-only "$BIN" | awk '$2 ~ /[tTwW]/ { print $3 }' | sort -u >"$work/defined"
sed -n 's/^c\{0,1\}fn=([0-9]*) //p' "$work/callgrind.out" | sort -u >"$work/called"
comm -12 "$work/defined" "$work/called" | sed 's/^/.text./' >bench/collect-order.txt
echo "bench/collect-order.txt: $(wc -l <bench/collect-order.txt) functions"
