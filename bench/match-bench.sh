#!/usr/bin/env bash
# Replays 100,000 generated stored profiles (JSON Lines, ~1.4 KB each) against one incoming
# profile with the release build of fr-profile and reports throughput and peak RSS:
#
#   fr-profile match --each --summary --config match-config.json STORED.jsonl INCOMING
#
# Usage: bench/match-bench.sh [COUNT] [RUNS]     (defaults: 100000 profiles, 5 runs; best run reported)
# Environment: FR_PROFILE (a prebuilt binary; default: swift build -c release), BENCH_OUT (bench/out),
# DEVICE_MATCH_SCRIPT (the device-match script's dist/script.js, outside this repository: when set,
# node replays the same file right after, reading it whole and line by line (bench/match-node.js),
# best of RUNS each, and both ratios are printed).
set -euo pipefail
cd "$(dirname "$0")/.."
count="${1:-100000}"
runs="${2:-5}"
out="${BENCH_OUT:-bench/out}"

if [[ -z "${FR_PROFILE:-}" ]]; then
  swift build -c release --product fr-profile >&2
  FR_PROFILE="$(swift build -c release --show-bin-path)/fr-profile"
fi

if [[ ! -s "$out/stored.jsonl" || "$(wc -l < "$out/stored.jsonl")" -ne "$count" ]]; then
  python3 bench/gen-profiles.py --count "$count" --out "$out" >&2
fi
bytes=$(stat -c %s "$out/stored.jsonl")

best_seconds=""
best_rss=""
for run in $(seq 1 "$runs"); do
  report=$(mktemp)
  started=$(date +%s%N)
  /usr/bin/time -f '%M' -o "$report" \
    "$FR_PROFILE" match --each --summary --config match-config.json "$out/stored.jsonl" "$out/incoming.json" \
    > "$out/summary.txt" || true   # the exit code is the script's answer (0/1/3), not a failure
  finished=$(date +%s%N)
  seconds=$(awk -v a="$started" -v b="$finished" 'BEGIN { printf "%.3f", (b - a) / 1e9 }')
  rss_kib=$(tail -n 1 "$report")
  rm -f "$report"
  echo "run $run: ${seconds} s, peak RSS ${rss_kib} KiB" >&2
  if [[ -z "$best_seconds" ]] || awk "BEGIN{exit !($seconds < $best_seconds)}"; then best_seconds=$seconds; fi
  if [[ -z "$best_rss" ]] || (( rss_kib > best_rss )); then best_rss=$rss_kib; fi
done

cat "$out/summary.txt"
awk -v n="$count" -v s="$best_seconds" -v r="$best_rss" -v b="$bytes" 'BEGIN {
  if (s <= 0) s = 0.005
  printf "fr-profile match --each --summary: %d profiles (%.0f bytes each) in %.3f s (best run, wall)\n", n, b / n, s
  printf "throughput: %.0f profiles/s (%.0f MB/s); peak RSS (max over runs): %.1f MiB\n", n / s, b / s / 1e6, r / 1024
}'

# Yardsticks in the same run: what only reading the file costs (cat to /dev/null: read(2) from
# the page cache) and reading it with one byte scan (wc -l: a newline search), best of RUNS each.
# No replay can be faster than the first; one that parses JSON is slower than the second.
best_of() {
  local best="" started finished ms
  for _ in $(seq 1 "$runs"); do
    started=$(date +%s%N)
    "$@" >/dev/null
    finished=$(date +%s%N)
    ms=$(( (finished - started) / 1000000 ))
    if [[ -z "$best" ]] || (( ms < best )); then best=$ms; fi
  done
  echo "$best"
}
cat_ms=$(best_of cat "$out/stored.jsonl")
wc_ms=$(best_of wc -l "$out/stored.jsonl")
awk -v c="$cat_ms" -v w="$wc_ms" -v s="$best_seconds" 'BEGIN {
  printf "reading the file alone (same run, best of runs): cat > /dev/null %d ms, wc -l %d ms; fr-profile %d ms\n", c, w, s * 1000
}'

if [[ -n "${DEVICE_MATCH_SCRIPT:-}" ]]; then
  # node twice: reading the whole file first (faster, memory grows with the file) and line by line
  # (bounded memory, as fr-profile reads it). Both time from after node's start-up and the
  # script's compilation, so the ratio is conservative.
  for stream in 0 1; do
    node_best=""
    for run in $(seq 1 "$runs"); do
      rate=$(MATCH_NODE_STREAM=$stream DEVICE_MATCH_SCRIPT="$DEVICE_MATCH_SCRIPT" node bench/match-node.js \
        "$out/stored.jsonl" "$out/incoming.json" match-config.json | awk '/profiles\/s/ { print $(NF - 1) }')
      echo "node run $run (stream=$stream): $rate profiles/s" >&2
      if [[ -z "$node_best" ]] || (( rate > node_best )); then node_best=$rate; fi
    done
    mode=$([[ $stream == 1 ]] && echo "line by line" || echo "whole file")
    awk -v n="$count" -v s="$best_seconds" -v r="$node_best" -v m="$mode" 'BEGIN {
      if (s <= 0) s = 0.005
      printf "node (%s, same run, best of runs): %d profiles/s; fr-profile / node: %.1fx (25x would take %.0f ms)\n", m, r, n / s / r, n / r / 25 * 1000
    }'
  done
fi
