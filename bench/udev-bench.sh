#!/usr/bin/env bash
# What the udev collectors (display, camera, bluetooth) cost `fr-profile collect`, beside the C floor.
#
#   bench/udev-bench.sh [BINARY] [BASELINE]          ROUNDS=500 by default
#
# BINARY    fr-profile with the udev collectors (default .build-release/release/fr-profile, `make release`)
# BASELINE  optional: the same build with the udev collectors left out of DeviceProfile.defaultCollectors,
#           so the difference is the collectors' own work
# UMOCKDEV_BINARY  the fr-profile of the umockdev round (default: BINARY; umockdev fakes devices
#           through LD_PRELOAD, which reaches the dynamically linked release binary)
#
# Two rounds, each interleaved (every round runs each command once, in a shuffled order, spawned
# without a shell and reaped with wait4; medians), because on a shared 2-core machine sequential
# runs (hyperfine) mostly measure what the neighbours were doing at the time:
#   live      this machine as it is (CI VMs have no drm, video4linux or bluetooth devices: the cost is
#             three `stat`s; libudev is not even loaded)
#   umockdev  inside one umockdev testbed holding a laptop's devices (eDP + HDMI with EDIDs, a webcam,
#             a bluetooth adapter); every command, the C floor included, pays umockdev's LD_PRELOAD
#             on each file access, so compare the commands with each other, not with the live round
# The C floor is bench/floor.c built with libudev, and with -DNO_UDEV (a sysfs walk).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${1:-.build-release/release/fr-profile}
BASE=${2:-}
OUT=bench/out
FIX=Tests/CLITests/Fixtures/umockdev
mkdir -p "$OUT"
for tool in gcc pkg-config python3 umockdev-run; do
  command -v "$tool" >/dev/null || { echo "udev-bench: $tool is missing (apt-get install gcc pkg-config python3 umockdev)" >&2; exit 1; }
done
[ -x "$BIN" ] || { echo "udev-bench: $BIN is missing; run 'make release' first" >&2; exit 1; }
UMOCKDEV_BIN=${UMOCKDEV_BINARY:-$BIN}
if ! readelf -lW "$UMOCKDEV_BIN" | grep -q INTERP; then
  echo "udev-bench: $UMOCKDEV_BIN is statically linked: umockdev's LD_PRELOAD cannot reach it; give a dynamic build" >&2
  exit 1
fi

gcc -O2 -o "$OUT/limit" bench/floor.c $(pkg-config --cflags --libs libudev)
gcc -O2 -DNO_UDEV -o "$OUT/limit-sysfs" bench/floor.c

STATE=$(mktemp -d /dev/shm/fr-profile-bench.XXXXXX)
trap 'rm -rf "$STATE"' EXIT
chmod 700 "$STATE"
export FR_PROFILE_HOME="$STATE/state"
"$BIN" collect >/dev/null  # create the device key once, outside the timings
"$UMOCKDEV_BIN" collect >/dev/null

cat >"$OUT/interleave.py" <<'PY'
import os, random, statistics, sys, time
rounds = int(os.environ.get("ROUNDS", "500"))
commands = [arg.split("=", 1) for arg in sys.argv[1:]]
def once(argv):
    devnull = os.open(os.devnull, os.O_WRONLY)
    start = time.perf_counter_ns()
    pid = os.posix_spawn(argv[0], argv, os.environ, file_actions=[(os.POSIX_SPAWN_DUP2, devnull, 1), (os.POSIX_SPAWN_DUP2, devnull, 2)])
    _, status, _ = os.wait4(pid, 0)
    os.close(devnull)
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{' '.join(argv)} exited with {os.waitstatus_to_exitcode(status)}")
    return (time.perf_counter_ns() - start) / 1e6
times = {name: [] for name, _ in commands}
for _ in range(20):
    for _, command in commands:
        once(command.split())
for _ in range(rounds):
    order = list(commands)
    random.shuffle(order)
    for name, command in order:
        times[name].append(once(command.split()))
for name, _ in commands:
    t = sorted(times[name])
    print(f"{name:<45} median {statistics.median(t):6.2f} ms   p10 {t[len(t) // 10]:6.2f}   p90 {t[9 * len(t) // 10]:6.2f}")
PY

commands=("C floor (libudev)=$OUT/limit" "C floor (sysfs)=$OUT/limit-sysfs" "fr-profile collect=$BIN collect")
[ -z "$BASE" ] || commands+=("fr-profile collect without udev collectors=$BASE collect")

echo "== live machine ($(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg))"
python3 "$OUT/interleave.py" "${commands[@]}"

echo "== umockdev testbed: eDP + HDMI, webcam, bluetooth ($UMOCKDEV_BIN, dynamically linked)"
commands=("C floor (libudev)=$OUT/limit" "C floor (sysfs)=$OUT/limit-sysfs" "fr-profile collect=$UMOCKDEV_BIN collect")
TMPDIR=/dev/shm umockdev-run --device "$FIX/laptop-edp-hdmi.umockdev" --device "$FIX/webcam.umockdev" \
  --device "$FIX/bluetooth.umockdev" -- python3 "$OUT/interleave.py" "${commands[@]}"
