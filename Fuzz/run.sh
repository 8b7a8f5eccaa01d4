#!/usr/bin/env bash
# Runs each libFuzzer target for SECONDS with the committed seed corpus (Fuzz/Corpus/<target>)
# plus a working corpus under the fuzz build directory, and prints executions per target and
# in total. Any crash, leak or broken invariant stops with a non-zero exit; libFuzzer writes
# the input to Fuzz/Crashes/<target>-crash-<sha1>, which then belongs in the seed corpus
# (and a named test) once fixed.
#
# Usage: Fuzz/run.sh SECONDS BIN_DIR TARGET...      (make fuzz FUZZ_SECONDS=… calls it)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="$1"
bin="$2"
shift 2
work="${FUZZ_WORK:-.build-fuzz/corpus}"
mkdir -p Fuzz/Crashes
total=0
for target in "$@"; do
  mkdir -p "$work/$target"
  log="$work/$target.log"
  status=0
  # -rss_limit_mb: well above any target's need; -max_len: profiles are a few KB.
  # The Swift runtime's backtracer would walk memory under ASan; libFuzzer reports instead.
  SWIFT_BACKTRACE=enable=no "$bin/$target" "$work/$target" "Fuzz/Corpus/$target" -max_total_time="$seconds" -print_final_stats=1 \
    -max_len=16384 -rss_limit_mb=2048 -timeout=10 -artifact_prefix="Fuzz/Crashes/$target-" >"$log" 2>&1 || status=$?
  runs=$(awk '/stat::number_of_executed_units/ { print $2 }' "$log" | tail -n 1)
  runs=${runs:-0}
  total=$((total + runs))
  if [[ $status -ne 0 ]]; then
    tail -n 40 "$log" >&2
    echo "$target: FAILED after $runs executions (exit $status); see $log and Fuzz/Crashes/" >&2
    exit 1
  fi
  echo "$target: $runs executions in ${seconds} s, no crash"
done
echo "total: $total executions, 0 crashes"
