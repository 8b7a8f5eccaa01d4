#!/usr/bin/env bash
# Checks that the release binary (`make release`: statically linked, lld symbol ordering, the
# hidden -function-sections frontend flag) prints the golden profiles of the fixture machines,
# byte for byte, as the debug build does in `make test` (Tests/CLITests/CollectCommandTests),
# and that the static link took our argv start-up (Sources/CStartup) instead of the Swift
# runtime's /proc/self/maps search. It also checks that the binary is statically linked (no
# program interpreter, no needed libraries), and that a statically linked glibc loads libudev
# through Sources/CUdev's dlopen loader and lists the same devices as a dynamic build: the
# release fr-profile asks libudev only about drm, video4linux and bluetooth, which this machine
# may lack, so bench/udev-probe.c asks about "net" (every Linux machine has lo).
# `make check-deb` (in `make test`) and `make bench` run it.
#
#   bench/release-golden.sh [BINARY]      (default .build-release/release/fr-profile)
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${1:-.build-release/release/fr-profile}
state=$(mktemp -d)
trap 'rm -rf "$state"' EXIT
status=0
if nm "$BIN" | grep -q argvGrabber; then
  echo "release-golden: $BIN still links the Swift runtime's ArgvGrabber (Sources/CStartup/swift-argv.c did not replace it)" >&2
  status=1
else
  echo "release-golden: argv from Sources/CStartup, not the runtime's /proc/self/maps search"
fi
if readelf -lW "$BIN" | grep -q 'INTERP' || readelf -dW "$BIN" | grep -q 'NEEDED'; then
  echo "release-golden: $BIN is not statically linked: $(readelf -dW "$BIN" | grep NEEDED | tr -s ' ' | tr '\n' ' ')" >&2
  status=1
else
  echo "release-golden: statically linked (no interpreter, no needed libraries)"
fi
probe_flags=(-O2 -Wall -I Sources/CUdev/include bench/udev-probe.c Sources/CUdev/udev-loader.c)
# The link warns that a static glibc's dlopen needs its own version at run time: known, and why
# the .deb depends on this glibc release.
gcc -static -o "$state/probe-static" "${probe_flags[@]}" 2>"$state/gcc.txt" || cat "$state/gcc.txt" >&2
gcc -o "$state/probe-dynamic" "${probe_flags[@]}"
if "$state/probe-static" net >"$state/static.txt" && "$state/probe-dynamic" net >"$state/dynamic.txt" \
  && cmp -s "$state/static.txt" "$state/dynamic.txt"; then
  echo "release-golden: static dlopen of libudev lists the same $(grep -c '^/' "$state/static.txt") net devices as a dynamic build"
else
  echo "release-golden: the statically linked udev probe failed or differs from the dynamic one" >&2
  diff "$state/dynamic.txt" "$state/static.txt" >&2 || true
  status=1
fi
for machine in laptop raspberry-pi cloud-vm container; do
  # The two values a fixture cannot pin, as the CLI test normalises them.
  "$BIN" collect --root "Tests/CollectorsTests/Fixtures/machines/$machine" --state-dir "$state/s" \
    | sed -E 's/"identifier":"([0-9a-f]{16}-)?[0-9a-f]{40}"/"identifier":"<identifier>"/; s/"storage":[1-9][0-9]*/"storage":"<storage>"/' \
    >"$state/$machine.json"
  if cmp -s "$state/$machine.json" "Tests/CLITests/Fixtures/golden/$machine.json"; then
    echo "release-golden: $machine identical"
  else
    echo "release-golden: $machine DIFFERS from Tests/CLITests/Fixtures/golden/$machine.json" >&2
    diff "Tests/CLITests/Fixtures/golden/$machine.json" "$state/$machine.json" >&2 || true
    status=1
  fi
done
exit $status
