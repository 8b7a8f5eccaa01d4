# Sourced by run-am-script.sh and time-am-script.sh: what both need to run a boot-quote case's
# quote round through am/fr-tpm-attestation.js under Rhino (Tests/AMScript/harness.js).
# Sets `root` and `stubs`; needs `here` (this directory).
root=$(cd "$here/../../../.." && pwd)
stubs=${AM_STUBS:-/tmp/amstubs}

# AM's classes the script uses, compiled from Tests/AMScript/stubs once into $stubs.
compile_stubs() {
  if [ ! -f "$stubs/org/forgerock/openam/auth/node/api/Action.class" ]; then
    mkdir -p "$stubs"
    javac -J-XX:-UsePerfData -d "$stubs" $(find "$root/Tests/AMScript/stubs" -name '*.java')
  fi
}

# write_context CASE.json OUT.json: the node's context for the case's quote round — shared
# state as after a verified activation (the case's akPublic and ekName) with the case's nonce
# pending, the case's quote in the frTpmBootQuote callback, the case's policy as CONFIG.boot.
write_context() {
  /usr/bin/python3 - "$1" "$2" <<'PY'
import json, sys
case = json.load(open(sys.argv[1]))
policy = case["policy"]
boot = {"quote": True, "requireSecureBoot": policy["requireSecureBoot"]}
if "enrolledPcrs" in policy:
    boot["enrolledPcrs"] = policy["enrolledPcrs"]
state = {"akPublic": case["akPublic"], "ekName": case["ekName"], "ekCertified": True, "activated": False,
         "quoteNonce": case["nonce"]}
context = {
    "sharedState": {"frTpmAttestation": json.dumps(state)},
    "transientState": {},
    "callbacks": [{"id": "frTpmBootQuote", "value": json.dumps(case["quote"])}],
    "config": {"rootsPem": "", "intermediatesPem": "", "trustedEkNames": [], "boot": boot},
}
json.dump(context, open(sys.argv[2], "w"))
PY
}
