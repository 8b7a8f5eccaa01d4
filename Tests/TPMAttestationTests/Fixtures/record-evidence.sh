#!/usr/bin/env bash
# Records attestation documents from a TPM manufactured by swtpm_setup (an RSA 2048 EK with a
# certificate from swtpm_localca's CA, as Tests/TestSupport/Manufacture.swift makes one), so
# the verifier's tests run without swtpm (issue 29). Run once with a built fr-profile; the
# output is committed:
#
#   Tests/TPMAttestationTests/Fixtures/record-evidence.sh .build/debug/fr-profile Tests/TPMAttestationTests/Fixtures/recorded
#
# Writes request.json (EK, EK certificate, AK), roots.pem and intermediates.pem (the CA),
# evidence.json (the identity key certified by the AK over the challenge "recorded-challenge").
set -euo pipefail
binary=$(realpath "$1")
out=$(realpath -m "$2")
mkdir -p "$out"
work=$(mktemp -d)
trap 'kill "$pid" 2>/dev/null || true; rm -rf "$work"' EXIT
mkdir -p "$work/state" "$work/ca"
printf 'statedir = %s\nsigningkey = %s/signkey.pem\nissuercert = %s/issuercert.pem\ncertserial = %s/certserial\n' \
  "$work/ca" "$work/ca" "$work/ca" "$work/ca" > "$work/localca.conf"
printf -- '--platform-manufacturer fr-profile-test\n--platform-version 2.1\n--platform-model swtpm\n' > "$work/localca.options"
printf 'create_certs_tool = /usr/bin/swtpm_localca\ncreate_certs_tool_config = %s/localca.conf\ncreate_certs_tool_options = %s/localca.options\nactive_pcr_banks = sha256\n' \
  "$work" "$work" > "$work/setup.conf"
swtpm_setup --tpm2 --tpmstate "$work/state" --create-ek-cert --create-platform-cert --config "$work/setup.conf" --overwrite >/dev/null
port=$((20000 + RANDOM % 20000 * 2 / 2))
# --daemon: swtpm binds and listens on both sockets before it forks into the background, so
# when this command returns the TPM answers (no sleep); its pid is in the pid file.
swtpm socket --tpm2 --tpmstate dir="$work/state" --server type=tcp,port=$port,bindaddr=127.0.0.1 \
  --ctrl type=tcp,port=$((port + 1)),bindaddr=127.0.0.1 --flags not-need-init,startup-clear \
  --daemon --pid file="$work/swtpm.pid"
pid=$(cat "$work/swtpm.pid")
tcti="swtpm:host=127.0.0.1,port=$port"
device=("--state-dir" "$work/device" "--tcti" "$tcti")
"$binary" identifier --move-to-tpm "${device[@]}" >/dev/null 2>&1
"$binary" attest request "${device[@]}" -o "$out/request.json"
"$binary" attest certify --identity --challenge recorded-challenge "${device[@]}" -o "$out/evidence.json"
cp "$work/ca/swtpm-localca-rootca-cert.pem" "$out/roots.pem"
cp "$work/ca/issuercert.pem" "$out/intermediates.pem"
openssl x509 -in "$out/roots.pem" -noout -enddate
