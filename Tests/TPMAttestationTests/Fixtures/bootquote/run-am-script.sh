#!/usr/bin/env bash
# Runs every boot-quote case (*.json next to this script) through am/fr-tpm-attestation.js the
# way AM runs it (Tests/AMScript/harness.js: Rhino with Java classes), as the node's quote
# round: shared state as after a verified activation (the case's akPublic and ekName) with the
# case's nonce pending, the case's quote document in the frTpmBootQuote callback, and the case's
# policy as CONFIG.boot. Prints "ok <name>" or "FAIL <name>: expected ... got ..." comparing the
# outcome and sharedState "frTpmAttestation.refusedCheck" (and, on accepts, the boot object's
# method and secureBoot, and shimValidation and dmaProtectionDisabled where the case expects
# them); exits 1 on any FAIL.
#
#   Tests/TPMAttestationTests/Fixtures/bootquote/run-am-script.sh [CASE.json...]
#
# Needs rhino and openjdk-17-jdk-headless (javac compiles the AM stubs once, into
# ${AM_STUBS:-/tmp/amstubs}).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/am-script-common.sh"
compile_stubs
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ $# -eq 0 ]; then set -- "$here"/*.json; fi

failed=0
for case in "$@"; do
  name=$(basename "$case" .json)
  write_context "$case" "$work/context.json"
  if ! java -XX:-UsePerfData -Dfile.encoding=UTF-8 -cp /usr/share/java/rhino.jar:"$stubs" org.mozilla.javascript.tools.shell.Main \
    "$root/Tests/AMScript/harness.js" "$root/am/fr-tpm-attestation.js" "$work/context.json" >"$work/result.json" 2>"$work/stderr"; then
    echo "FAIL $name: the script did not run: $(head -c 500 "$work/stderr")"
    failed=1
    continue
  fi
  if ! /usr/bin/python3 - "$case" "$work/result.json" <<'EOF'; then failed=1; fi
import json, sys
name = json.load(open(sys.argv[1]))["name"]
expect = json.load(open(sys.argv[1]))["expect"]
result = json.load(open(sys.argv[2]))
shared = result["sharedState"]
got_check = shared.get("frTpmAttestation.refusedCheck")
reason = shared.get("frTpmAttestation.refused", "")
if expect["verdict"] == "accept":
    wanted = "outcome activated, method %s, secureBoot %s" % (expect["method"], json.dumps(expect["secureBoot"]))
    boot = json.loads(shared["frTpmAttestation.boot"]) if "frTpmAttestation.boot" in shared else {}
    state = json.loads(shared.get("frTpmAttestation", "{}"))
    got = "outcome %s, method %s, secureBoot %s" % (result["outcome"], boot.get("method"), json.dumps(boot.get("secureBoot")))
    for key in ("shimValidation", "dmaProtectionDisabled"):
        if key in expect:
            wanted += ", %s %s" % (key, json.dumps(expect[key]))
            got += ", %s %s" % (key, json.dumps(boot.get(key)))
    ok = wanted == got and state.get("activated") is True and "quoteNonce" not in state and got_check is None
    if not ok and reason:
        got += " (refused %s: %s)" % (got_check, reason)
else:
    wanted = "outcome false, check %s" % expect["check"]
    got = "outcome %s, check %s" % (result["outcome"], got_check)
    ok = wanted == got and "frTpmAttestation.boot" not in shared
    got += " (%s)" % reason
print(("ok %s" % name) if ok else ("FAIL %s: expected %s got %s" % (name, wanted, got)))
sys.exit(0 if ok else 1)
EOF
done
exit $failed
