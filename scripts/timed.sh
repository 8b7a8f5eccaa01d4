#!/usr/bin/env bash
# Times the phases of `make test` and keeps the times in LOG, so CI's own output says where its
# minutes went (issue 30) instead of a README section that every session appends to. Phases run
# side by side (make -j), so each output line is prefixed with its phase's name.
#
#   scripts/timed.sh LOG --start              notes the wall-clock start
#   scripts/timed.sh LOG NAME COMMAND...      runs COMMAND; prints and records "NAME  S s"
#   scripts/timed.sh LOG --summary            prints every recorded phase and the wall clock
#
# COMMAND's exit status is passed on; a failed phase is recorded (and summarised) too.
set -uo pipefail
log="$1"
shift
case "${1:-}" in
  --start)
    mkdir -p "$(dirname "$log")"
    date +%s >"$log.start"
    : >"$log"
    exit 0
    ;;
  --summary)
    [[ -f $log ]] || exit 0
    echo "== make test phases (seconds; phases of one step ran side by side)"
    awk '{ printf "  %-22s %6d %s\n", $1, $2, $3 }' "$log"
    if [[ -f $log.start ]]; then printf '  %-22s %6d\n' "wall clock" $(($(date +%s) - $(cat "$log.start"))); fi
    exit 0
    ;;
esac
name="$1"
shift
mkdir -p "$(dirname "$log")"
start=$(date +%s)
"$@" 2>&1 | sed -u "s/^/[$name] /"
status=${PIPESTATUS[0]}
elapsed=$(($(date +%s) - start))
if [[ $status -eq 0 ]]; then mark=""; else mark="(failed:$status)"; fi
echo "$name $elapsed $mark" >>"$log"
echo "== phase $name: ${elapsed} s $mark"
if [[ $status -ne 0 ]]; then "$0" "$log" --summary; fi
exit "$status"
