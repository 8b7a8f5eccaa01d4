#!/usr/bin/env bash
# Times one phase of `make test` and keeps the times in LOG, so CI's own output says where its
# minutes went (issue 30) instead of a README section that every session appends to.
#
#   scripts/timed.sh LOG NAME COMMAND...   runs COMMAND; prints and records "NAME  S s"
#   scripts/timed.sh LOG --summary         prints every recorded phase and their total
#
# COMMAND's exit status is passed on; a failed phase is recorded (and summarised) too.
set -uo pipefail
log="$1"
shift
if [[ ${1:-} == --summary ]]; then
  [[ -f $log ]] || exit 0
  echo "== make test phases (wall clock, seconds)"
  awk '{ printf "  %-22s %6d %s\n", $1, $2, $3; total += $2 } END { printf "  %-22s %6d\n", "total", total }' "$log"
  exit 0
fi
name="$1"
shift
mkdir -p "$(dirname "$log")"
start=$(date +%s)
"$@"
status=$?
elapsed=$(($(date +%s) - start))
if [[ $status -eq 0 ]]; then mark=""; else mark="(failed:$status)"; fi
echo "$name $elapsed $mark" >>"$log"
echo "== phase $name: ${elapsed} s $mark"
if [[ $status -ne 0 ]]; then "$0" "$log" --summary; fi
exit "$status"
