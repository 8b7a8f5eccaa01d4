#!/usr/bin/env bash
# Times the phases of `make test` and keeps the times in LOG, so CI's own output says where its
# minutes went (issue 30) instead of a README section that every session appends to. Phases run
# side by side (make -j), so each output line is prefixed with its phase's name.
#
#   scripts/timed.sh LOG --start              notes the wall-clock start
#   scripts/timed.sh LOG NAME COMMAND...      runs COMMAND; prints and records its wall-clock and
#                                             CPU seconds (user+sys of COMMAND and the children it
#                                             waited for)
#   scripts/timed.sh LOG --summary            prints every recorded phase and the wall clock
#   scripts/timed.sh LOG --failures           the summary, then again what each failed phase said
#                                             of its failures: the end of CI's output names them,
#                                             whatever the phases beside it printed after
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
    echo "== make test phases (seconds; phases of one step ran side by side; CPU = user+sys)"
    printf '  %-22s %6s %6s\n' phase wall CPU
    awk '{ printf "  %-22s %6d %6d %s\n", $1, $2, $3, $4; cpu += $3 } END { printf "  %-22s %6s %6d\n", "all phases", "", cpu }' "$log"
    if [[ -f $log.start ]]; then printf '  %-22s %6d\n' "wall clock" $(($(date +%s) - $(cat "$log.start"))); fi
    exit 0
    ;;
  --failures)
    "$0" "$log" --summary
    [[ -f $log ]] || exit 0
    awk '$4 ~ /failed/ { print $1 }' "$log" | while read -r phase; do
      echo "== what failed in phase $phase (the last 40 such lines of $log.$phase.out):"
      grep -aE '✘|recorded an issue|error:|FAIL|Error [0-9]|not ok' "$log.$phase.out" | grep -avE '✔|passed after' | tail -40
    done
    exit 0
    ;;
esac
name="$1"
shift
mkdir -p "$(dirname "$log")"
# CPU seconds of the children this shell has waited for: the second line of `times`, which runs
# in this shell (a $(...) subshell would report its own, empty, children).
cpu_file=$(mktemp)
trap 'rm -f "$cpu_file"' EXIT
children_cpu() {
  awk 'NR == 2 { n = 0; for (i = 1; i <= 2; i++) { split($i, t, /[ms]/); n += t[1] * 60 + t[2] } printf "%.1f", n }' "$cpu_file"
}
start=$(date +%s)
times >"$cpu_file"
cpu_start=$(children_cpu)
"$@" 2>&1 | tee "$log.$name.out" | sed -u "s/^/[$name] /"
status=${PIPESTATUS[0]}
elapsed=$(($(date +%s) - start))
times >"$cpu_file"
cpu=$(awk -v a="$(children_cpu)" -v b="$cpu_start" 'BEGIN { printf "%d", a - b + 0.5 }')
if [[ $status -eq 0 ]]; then mark=""; else mark="(failed:$status)"; fi
echo "$name $elapsed $cpu $mark" >>"$log"
echo "== phase $name: ${elapsed} s, ${cpu} CPU-s $mark"
if [[ $status -ne 0 ]]; then "$0" "$log" --summary; fi
exit "$status"
