#!/usr/bin/env bash
# Checks that the release binary (`make release`: lld symbol ordering, the hidden
# -function-sections frontend flag) prints the golden profiles of the fixture machines, byte
# for byte, as the debug build does in `make test` (Tests/CLITests/CollectCommandTests), and
# that it took our argv start-up (Sources/CStartup) instead of the Swift runtime's
# /proc/self/maps search. It also checks the link: a dynamically linked executable (a program
# interpreter) whose NEEDED libraries are only glibc's (libc.so.6, libm.so.6, the interpreter
# itself) and possibly libstdc++.so.6 / libgcc_s.so.1; everything optional (libudev, libcurl,
# libtss2, libpam) is loaded with dlopen; and that no test seam was compiled in. Needs binutils
# (nm, readelf, strings), sed and cmp; works on an installed binary too
# (packaging/check-distros.sh runs it inside Debian roots).
# `make check-deb` (in `make test`), `make bench` and `make check-distros` run it.
#
#   bench/release-golden.sh [BINARY]      (default .build-release/release/fr-profile)
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${1:-.build-release/release/fr-profile}
state=$(mktemp -d)
trap 'rm -rf "$state"' EXIT
status=0
# Not `grep -q`: it stops at the first match, nm dies of SIGPIPE, and under pipefail the pipeline
# then fails, so a binary that does link ArgvGrabber passed this check.
if nm "$BIN" 2>/dev/null | grep argvGrabber >/dev/null; then
  echo "release-golden: $BIN still links the Swift runtime's ArgvGrabber (Sources/CStartup/swift-argv.c did not replace it)" >&2
  status=1
else
  echo "release-golden: argv from Sources/CStartup, not the runtime's /proc/self/maps search"
fi
# No test seam in the shipped binary (issue 19): the PAM configuration directory is the
# system's. Only the test-only executable fr-profile-seams (Tests/Seams) reads
# FR_PROFILE_TEST_PAM_CONFDIR and FR_PROFILE_TEST_POLICY_ROOT and sets the commands' TestSeams
# from them; fr-profile, built from the same objects, must not contain either name (a literal
# that long is a C string in .rodata, which `strings` finds). Option names of 15 bytes or less are
# Swift small strings, folded into instructions, which `strings` cannot see: so --pam-confdir is
# checked by asking the binary, which must refuse it as a usage error (64). Not `grep -q`, for
# the reason above. The tests' software security keys (Tests/SoftFIDO2, FR_PROFILE_TEST_SECURITY_KEYS)
# are in fr-profile-seams alone too: no type of theirs may name itself in fr-profile's metadata.
seams=$(strings -a "$BIN" | grep -E 'FR_PROFILE_TEST_|SoftAuthenticator|SoftFIDO2|SoftKeyState' | sort -u | tr '\n' ' ' || true)
pam_status=0
"$BIN" policy --state-dir "$state/s" --pam-confdir "$state" >/dev/null 2>&1 || pam_status=$?
if [[ -n $seams ]]; then
  echo "release-golden: $BIN contains a test seam: $seams" >&2
  status=1
elif [[ $pam_status != 64 ]]; then
  echo "release-golden: $BIN accepts --pam-confdir (exit $pam_status, not 64)" >&2
  status=1
else
  echo "release-golden: no test seam (no FR_PROFILE_TEST_* in the binary, --pam-confdir is a usage error)"
fi
allowed_needed=" libc.so.6 libm.so.6 libstdc++.so.6 libgcc_s.so.1 "
interpreter=$(readelf -lW "$BIN" | sed -n 's/.*\[Requesting program interpreter: \(.*\)\]/\1/p')
needed=$(readelf -dW "$BIN" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
unexpected=""
for library in $needed; do
  [[ $allowed_needed == *" $library "* || $library == "${interpreter##*/}" ]] || unexpected+=" $library"
done
if [[ -z $interpreter ]]; then
  echo "release-golden: $BIN has no program interpreter: it must be a dynamically linked executable" >&2
  status=1
elif [[ -n $unexpected ]]; then
  echo "release-golden: $BIN needs libraries beyond glibc, libstdc++ and libgcc_s (load them with dlopen):$unexpected" >&2
  status=1
else
  echo "release-golden: dynamically linked ($interpreter), needs only ${needed% }"
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
