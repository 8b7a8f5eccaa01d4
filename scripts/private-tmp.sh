#!/usr/bin/env bash
# Runs a command with a TMPDIR of its own under the build directory, removed when it ends.
#
#   scripts/private-tmp.sh DIR COMMAND [ARG...]
#
# The Swift driver leaves an empty /tmp/TemporaryDirectory.* (a .keep-directory, batch mode's
# supplementaryOutputs-N) behind for many of the compile jobs of a `swift build`: 63 of them
# after one build of this package (2026-11-28), thousands on a developer's machine over a few
# weeks. Builds and SwiftPM runs in the Makefile go through here, so none reaches /tmp.
set -u
parent=$1
shift
mkdir -p "$parent"
dir=$(mktemp -d "$parent/tmp.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT
TMPDIR=$dir "$@"
