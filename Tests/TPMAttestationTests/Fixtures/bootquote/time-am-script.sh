#!/usr/bin/env bash
# The AM script's CPU time on a boot-quote case's quote round, in one warm JVM: runs the case
# RUNS times (default 10) as run-am-script.sh does (Tests/AMScript/harness.js under Rhino) and
# prints each run's CPU time, the running thread's (ThreadMXBean) and the whole JVM's (with its
# JIT and GC threads), and their medians over the runs after the first three (JIT warm-up).
#
#   Tests/TPMAttestationTests/Fixtures/bootquote/time-am-script.sh CASE.json [RUNS]
#
# E.g. on a log at the event-log bounds (issue 37):
#   /usr/bin/python3 Tests/TPMAttestationTests/Fixtures/bootquote/bound-cases.py /tmp/bounds
#   Tests/TPMAttestationTests/Fixtures/bootquote/time-am-script.sh /tmp/bounds/accept-at-event-bound.json
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/am-script-common.sh"
compile_stubs
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
write_context "$1" "$work/context.json"
cat >"$work/time.js" <<'JS'
var harness = arguments[0], script = arguments[1], context = arguments[2], runs = Number(arguments[3]);
var threads = java.lang.management.ManagementFactory.getThreadMXBean();
var os = java.lang.management.ManagementFactory.getPlatformMXBean(com.sun.management.OperatingSystemMXBean);
var shellPrint = print;
var times = [];
var processTimes = [];
var last = null;
for (var run = 0; run < runs; run++) {
  arguments = [script, context];
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
  print("run " + (run + 1) + ": " + ms.toFixed(1) + " ms CPU (JVM " + processMs.toFixed(1) + " ms), outcome " + result.outcome +
    (result.sharedState["frTpmAttestation.refusedCheck"] ? " (" + result.sharedState["frTpmAttestation.refusedCheck"] + ": " +
      result.sharedState["frTpmAttestation.refused"] + ")" : ""));
}
function median(values) {
  var warm = values.slice(Math.min(3, values.length - 1)).sort(function (a, b) { return a - b; });
  return warm[warm.length >> 1].toFixed(1);
}
print("median of runs " + Math.min(4, runs) + "-" + runs + ": " + median(times) + " ms CPU (JVM " + median(processTimes) + " ms)");
JS
java -XX:-UsePerfData -Dfile.encoding=UTF-8 -cp /usr/share/java/rhino.jar:"$stubs" org.mozilla.javascript.tools.shell.Main \
  "$work/time.js" "$root/Tests/AMScript/harness.js" "$root/am/fr-tpm-attestation.js" "$work/context.json" "${2:-10}"
