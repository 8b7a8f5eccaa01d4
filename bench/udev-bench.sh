#!/usr/bin/env bash
# What the udev collectors (display, camera, bluetooth) cost `fr-profile collect`, beside the C floor.
#
#   bench/udev-bench.sh [BINARY] [BASELINE]
#
# BINARY    fr-profile with the udev collectors (default .build-static/release/fr-profile, `make release`)
# BASELINE  optional: an fr-profile built without them (e.g. the release binary of the commit before
#           the udev merge), to time the difference end to end
#
# Two rounds with hyperfine -N (no shell), warm-up 20:
#   live      this machine as it is (CI VMs have no drm, video4linux or bluetooth devices: the cost is
#             loading libudev and three empty enumerations)
#   umockdev  inside one umockdev testbed holding a laptop's devices (eDP + HDMI with EDIDs, a webcam,
#             a bluetooth adapter); every command, the C floor included, pays umockdev's LD_PRELOAD
#             alike, so compare the commands with each other, not with the live round
# The C floor is ../shared/bench/limit.c, built with libudev and with -DNO_UDEV (sysfs walk).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${1:-.build-static/release/fr-profile}
BASE=${2:-}
OUT=bench/out
FIX=Tests/CLITests/Fixtures/umockdev
mkdir -p "$OUT"
for tool in hyperfine gcc pkg-config umockdev-run; do
  command -v "$tool" >/dev/null || { echo "udev-bench: $tool is missing (apt-get install hyperfine gcc pkg-config umockdev)" >&2; exit 1; }
done
[ -x "$BIN" ] || { echo "udev-bench: $BIN is missing; run 'make release' first" >&2; exit 1; }

gcc -O2 -o "$OUT/limit" ../shared/bench/limit.c $(pkg-config --cflags --libs libudev)
gcc -O2 -DNO_UDEV -o "$OUT/limit-sysfs" ../shared/bench/limit.c

STATE=$(mktemp -d /dev/shm/fr-profile-bench.XXXXXX)
trap 'rm -rf "$STATE"' EXIT
chmod 700 "$STATE"
export FR_PROFILE_HOME="$STATE/state"
"$BIN" collect >/dev/null  # create the device key once, outside the timings

commands=("$OUT/limit" "$OUT/limit-sysfs" "$BIN collect")
names=(-n "C floor (libudev)" -n "C floor (sysfs)" -n "fr-profile collect")
if [ -n "$BASE" ]; then
  commands+=("$BASE collect")
  names+=(-n "fr-profile collect without udev collectors")
fi

echo "== live machine"
hyperfine -N --warmup 20 --runs "${RUNS:-300}" "${names[@]}" "${commands[@]}" --export-markdown "$OUT/udev-live.md"

echo "== umockdev testbed: eDP + HDMI, webcam, bluetooth"
TMPDIR=/dev/shm umockdev-run --device "$FIX/laptop-edp-hdmi.umockdev" --device "$FIX/webcam.umockdev" \
  --device "$FIX/bluetooth.umockdev" -- \
  hyperfine -N --warmup 20 --runs "${RUNS:-300}" "${names[@]}" "${commands[@]}" --export-markdown "$OUT/udev-umockdev.md"
