#!/usr/bin/env bash
# Runs each libFuzzer target for SECONDS with the committed seed corpus (Fuzz/Corpus/<target>)
# plus a working corpus under the fuzz build directory, and prints executions per target and
# in total. Any crash, leak or broken invariant stops with a non-zero exit; libFuzzer writes
# the input to Fuzz/Crashes/<target>-crash-<sha1>, which then belongs in the seed corpus
# (and a named test) once fixed.
#
# Usage: [FUZZ_JOBS=N] Fuzz/run.sh SECONDS BIN_DIR TARGET...      (make fuzz FUZZ_SECONDS=… calls it)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="$1"
bin="$2"
shift 2
work="${FUZZ_WORK:-.build-fuzz/corpus}"
mkdir -p Fuzz/Crashes
# FUZZ_JOBS targets at a time (default 1): each libFuzzer process uses one core.
jobs=${FUZZ_JOBS:-1}

# One target's run; its verdict in $work/$target.status (exit status) and .runs (executions).
fuzz_one() {
  local target=$1 log="$work/$1.log" status=0 runs
  mkdir -p "$work/$target"
  # -rss_limit_mb: well above any target's need; -max_len: profiles are a few KB.
  # The Swift runtime's backtracer would walk memory under ASan; libFuzzer reports instead.
  SWIFT_BACKTRACE=enable=no "$bin/$target" "$work/$target" "Fuzz/Corpus/$target" -max_total_time="$seconds" -print_final_stats=1 \
    -max_len=16384 -rss_limit_mb=2048 -timeout=10 -artifact_prefix="Fuzz/Crashes/$target-" >"$log" 2>&1 || status=$?
  runs=$(awk '/stat::number_of_executed_units/ { print $2 }' "$log" | tail -n 1)
  echo "${runs:-0}" >"$work/$target.runs"
  echo "$status" >"$work/$target.status"
  if [[ $status -eq 0 ]]; then echo "$target: ${runs:-0} executions in ${seconds} s, no crash"; fi
}

running=0
for target in "$@"; do
  rm -f "$work/$target.status" "$work/$target.runs"
  if [[ $running -ge $jobs ]]; then
    wait -n || true
    running=$((running - 1))
  fi
  fuzz_one "$target" &
  running=$((running + 1))
done
wait

total=0
failed=0
for target in "$@"; do
  status=$(cat "$work/$target.status" 2>/dev/null || echo 1)
  runs=$(cat "$work/$target.runs" 2>/dev/null || echo 0)
  total=$((total + runs))
  if [[ $status -ne 0 ]]; then
    tail -n 40 "$work/$target.log" >&2
    echo "$target: FAILED after $runs executions (exit $status); see $work/$target.log and Fuzz/Crashes/" >&2
    failed=1
  fi
done
[[ $failed -eq 0 ]] || exit 1
echo "total: $total executions, 0 crashes"
