#!/usr/bin/env bash
# Builds the embedder examples (Examples/Embedders: one program on the OAuthTokens product, one
# on TPMAttestation), runs each on a known input, and checks what they link: neither holds a
# symbol of Collectors or of the libudev loader, and neither module was even built for them.
#
#   scripts/check-examples.sh FR_PROFILE_BINARY     (make test runs it; SWIFT names the toolchain)
#
# FR_PROFILE_BINARY (which links both) shows the patterns find what they look for. Its own
# scratch directory (.build-examples, debug: 80 s from nothing on 2 cores, most of it
# swift-crypto's C), so the main build's objects are never touched.
set -euo pipefail
cd "$(dirname "$0")/.."
main=${1:?usage: scripts/check-examples.sh FR_PROFILE_BINARY}
out=.build-examples
swift=${SWIFT:-swift}
scripts/private-tmp.sh "$PWD/$out/tmp" "$swift" build --package-path Examples/Embedders --scratch-path "$out" -c debug
bin=$out/debug
forbidden='\$s10Collectors|frp_udev_'
status=0
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Symbol lists in files: `nm | grep -q` would end nm with SIGPIPE, a failure under pipefail.
nm "$main" >"$work/main.nm"
grep -Eq "$forbidden" "$work/main.nm" || { echo "check-examples: no Collectors or udev symbol in $main: the pattern is wrong" >&2; exit 1; }
for program in token-list ek-check; do
  nm "$bin/$program" >"$work/$program.nm"
  if grep -E "$forbidden" "$work/$program.nm" >"$work/$program.hits"; then
    head -3 "$work/$program.hits"
    echo "check-examples: $program links Collectors or the libudev loader" >&2
    status=1
  fi
done
# SwiftPM lays out a directory for every target of the package; only what is built has a module
# (Swift) or objects (C).
if [ -e "$bin/Modules/Collectors.swiftmodule" ] || compgen -G "$bin/CUdev.build/*.o" >/dev/null; then
  echo "check-examples: Collectors or CUdev was compiled for the examples" >&2
  status=1
fi

fixtures=Tests/TPMAttestationTests/Fixtures/recorded
# The recorded request's EK certificate, validated at the time it was recorded (2026-12-01).
"$bin/ek-check" "$fixtures/request.json" "$fixtures/roots.pem" "$fixtures/intermediates.pem" 1796180000 >"$work/ek.txt"
grep -q 'certified: true' "$work/ek.txt" || { echo "check-examples: ek-check: $(cat "$work/ek.txt")" >&2; status=1; }
if "$bin/ek-check" "$fixtures/request.json" "$fixtures/roots.pem" "$fixtures/intermediates.pem" 0 2>/dev/null; then
  echo "check-examples: ek-check accepted certificates at a time before they were issued (1970)" >&2
  status=1
fi
mkdir -m 700 "$work/state" "$work/state/tokens"
"$bin/token-list" "$work/state" >"$work/tokens.txt"
[ ! -s "$work/tokens.txt" ] || { echo "check-examples: token-list listed tokens of an empty store" >&2; status=1; }
if "$bin/token-list" "$work/missing" 2>/dev/null; then
  echo "check-examples: token-list read a state directory that does not exist" >&2
  status=1
fi
[ $status = 0 ] && echo "check-examples: token-list (OAuthTokens) and ek-check (TPMAttestation) build, run, and link no Collectors or libudev"
exit $status
