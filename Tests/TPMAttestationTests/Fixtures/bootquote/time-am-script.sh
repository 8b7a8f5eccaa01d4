#!/usr/bin/env bash
# The AM script's CPU time on boot-quote cases' quote rounds, in one warm JVM: runs every case 3
# times untimed (JIT warm-up), then each case RUNS times (default 10) as run-am-script.sh does
# (Tests/AMScript/harness.js under Rhino) and prints each run's CPU time, the running thread's
# (ThreadMXBean) and the whole JVM's (with its JIT and GC threads), and their medians; with
# several cases, one line per case and the largest and the median of the cases' medians. The JVM's
# start is not counted. Rhino runs at the optimisation level AM gives its JavaScript engine, -1
# (interpreted: OpenAM's StandardScriptEngineManager sets RhinoScriptEngineFactory.INTERPRETED);
# RHINO_OPT=N runs at another level, AM_SCRIPT=FILE another version of the script; with MAX_MS=N
# it exits 1 when a case's median is above N ms (make bench: 50, issue 38's goal per real log).
#
#   Tests/TPMAttestationTests/Fixtures/bootquote/time-am-script.sh CASE.json... [RUNS]
#
# E.g. every real log of the corpus (make bench), or a log at the event-log bounds (issue 37):
#   Tests/TPMAttestationTests/Fixtures/bootquote/time-am-script.sh Tests/TPMAttestationTests/Fixtures/bootquote/corpus/*.json
#   /usr/bin/python3 Tests/TPMAttestationTests/Fixtures/bootquote/bound-cases.py /tmp/bounds
#   Tests/TPMAttestationTests/Fixtures/bootquote/time-am-script.sh /tmp/bounds/accept-at-event-bound.json
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/am-script-common.sh"
runs=10
if [ $# -gt 1 ] && [[ ${!#} =~ ^[0-9]+$ ]]; then
  runs=${!#}
  set -- "${@:1:$(($# - 1))}"
fi
compile_stubs
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
: >"$work/contexts"
for case in "$@"; do
  name=$(basename "$case" .json)
  write_context "$case" "$work/$name.context.json"
  printf '%s\t%s\n' "$name" "$work/$name.context.json" >>"$work/contexts"
done
cat >"$work/time.js" <<'JS'
var harness = arguments[0], script = arguments[1], list = String(readFile(arguments[2], "UTF-8")), runs = Number(arguments[3]), level = arguments[4];
var limit = arguments[5] ? Number(arguments[5]) : null;
var threads = java.lang.management.ManagementFactory.getThreadMXBean();
var os = java.lang.management.ManagementFactory.getPlatformMXBean(com.sun.management.OperatingSystemMXBean);
var shellPrint = print;
function median(values) {
  var sorted = values.slice().sort(function (a, b) { return a - b; });
  return sorted[sorted.length >> 1];
}
var cases = list.split("\n").filter(function (line) { return line.length > 0; }).map(function (line) { return line.split("\t"); });
var medians = [];
// Warm-up, and top-level loops: the harness reads the global `arguments`, which a function
// would shadow.
for (var pass = 0; pass < 3; pass++) {
  for (var index = 0; index < cases.length; index++) {
    arguments = [script, cases[index][1]];
    print = function () {};
    load(harness);
    print = shellPrint;
  }
}
for (var index = 0; index < cases.length; index++) {
  var item = cases[index];
  var times = [], processTimes = [], last = null, outcome = null;
  for (var run = 0; run < runs; run++) {
    arguments = [script, item[1]];
    print = function (text) { last = text; };
    var start = threads.getCurrentThreadCpuTime();
    var processStart = os.getProcessCpuTime();
    load(harness);
    var ms = (threads.getCurrentThreadCpuTime() - start) / 1e6;
    var processMs = (os.getProcessCpuTime() - processStart) / 1e6;
    print = shellPrint;
    times.push(ms);
    processTimes.push(processMs);
    var result = JSON.parse(last);
    outcome = result.outcome + (result.sharedState["frTpmAttestation.refusedCheck"] ? " (" + result.sharedState["frTpmAttestation.refusedCheck"] +
      ": " + result.sharedState["frTpmAttestation.refused"] + ")" : "");
    if (cases.length === 1) {
      print("run " + (run + 1) + ": " + ms.toFixed(1) + " ms CPU (JVM " + processMs.toFixed(1) + " ms), outcome " + outcome);
    }
  }
  medians.push(median(times));
  print((cases.length === 1 ? "median of " + runs + " runs: " : item[0] + ": median ") +
    median(times).toFixed(1) + " ms CPU (JVM " + median(processTimes).toFixed(1) + " ms)" + (cases.length === 1 ? "" : ", outcome " + outcome));
}
if (cases.length > 1) {
  var sorted = medians.slice().sort(function (a, b) { return a - b; });
  print(cases.length + " cases, " + runs + " runs each, Rhino optimisation level " + level + ": largest median " +
    sorted[sorted.length - 1].toFixed(1) + " ms CPU, median of medians " + sorted[sorted.length >> 1].toFixed(1) + " ms");
}
if (limit !== null && Math.max.apply(null, medians) > limit) {
  print("FAIL: a case's median is above " + limit + " ms");
  java.lang.System.exit(1);
}
JS
opt=${RHINO_OPT:--1}
java -XX:-UsePerfData -Dfile.encoding=UTF-8 -cp /usr/share/java/rhino.jar:"$stubs" org.mozilla.javascript.tools.shell.Main -opt "$opt" \
  "$work/time.js" "$root/Tests/AMScript/harness.js" "${AM_SCRIPT:-$root/am/fr-tpm-attestation.js}" "$work/contexts" "$runs" "$opt" "${MAX_MS:-}"
