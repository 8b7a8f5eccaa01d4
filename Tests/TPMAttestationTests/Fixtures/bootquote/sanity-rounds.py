#!/usr/bin/python3
"""All rounds of am/fr-tpm-attestation.js's first node against a software TPM, through
Tests/AMScript/harness.js: request -> credential challenge -> (tpm2_activatecredential) answer,
then, with CONFIG.boot.quote on, the boot quote over the node's own nonce (tpm2_quote, no event
log, requireSecureBoot off) -> "activated"; with it off, "activated" right after the answer.

    /usr/bin/python3 Tests/TPMAttestationTests/Fixtures/bootquote/sanity-rounds.py

Needs what make-cases.py and run-am-script.sh need. Prints one line per run; exits 1 on a failure.
"""

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", "..", ".."))
spec = importlib.util.spec_from_file_location("make_cases", os.path.join(HERE, "make-cases.py"))
cases = importlib.util.module_from_spec(spec)
spec.loader.exec_module(cases)
STUBS = os.environ.get("AM_STUBS", "/tmp/amstubs")


def node(work, shared, callbacks, config):
    context = os.path.join(work, "context.json")
    with open(context, "w") as f:
        json.dump({"sharedState": shared, "transientState": {}, "callbacks": callbacks, "config": config}, f)
    result = subprocess.run(["java", "-Dfile.encoding=UTF-8", "-cp", "/usr/share/java/rhino.jar:" + STUBS,
                             "org.mozilla.javascript.tools.shell.Main", os.path.join(ROOT, "Tests/AMScript/harness.js"),
                             os.path.join(ROOT, "am/fr-tpm-attestation.js"), context], capture_output=True, check=True)
    return json.loads(result.stdout)


def b64d(text):
    import base64
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def run(quote_on):
    work = tempfile.mkdtemp(prefix="fr-rounds-")
    os.mkdir(os.path.join(work, "state"))
    tpm = cases.SoftwareTPM(os.path.join(work, "state"))
    try:
        tpm.run("tpm2_createek", "-c", "ek.ctx", "-G", "ecc", "-u", "ek.pub", cwd=work)
        tpm.run("tpm2_createak", "-C", "ek.ctx", "-c", "ak.ctx", "-G", "ecc", "-g", "sha256", "-s", "ecdsa",
                "-u", "ak.pub", "-n", "ak.name", cwd=work)
        tpm.run("tpm2_flushcontext", "-t", cwd=work)
        ek_pub, ak_pub = cases.read(os.path.join(work, "ek.pub")), cases.read(os.path.join(work, "ak.pub"))
        config = {"rootsPem": "", "intermediatesPem": "", "trustedEkNames": [cases.name_of(ek_pub).hex()],
                  "boot": {"quote": quote_on, "requireSecureBoot": False}}
        shared = {}
        first = node(work, shared, [], config)
        assert first["callbacks"][0]["id"] == "frTpmAttestationRequest", first
        request = {"v": 1, "ekType": "eccP256", "ekPublic": cases.b64u(ek_pub), "akPublic": cases.b64u(ak_pub)}
        second = node(work, shared, [{"id": "frTpmAttestationRequest", "value": json.dumps(request)}], config)
        assert second["callbacks"] and second["callbacks"][0]["id"] == "frTpmAttestationChallenge", second
        shared = second["sharedState"]
        challenge = json.loads(second["callbacks"][0]["value"])
        blob, secret = b64d(challenge["credentialBlob"]), b64d(challenge["encryptedSecret"])
        # tpm2-tools' credential file: magic, version, TPM2B_ID_OBJECT, TPM2B_ENCRYPTED_SECRET.
        with open(os.path.join(work, "cred"), "wb") as f:
            f.write(bytes.fromhex("badcc0de00000001") + len(blob).to_bytes(2, "big") + blob
                    + len(secret).to_bytes(2, "big") + secret)
        tpm.run("tpm2_createek", "-c", "ek.ctx", "-G", "ecc", "-u", "ek.pub", cwd=work)
        tpm.run("tpm2_startauthsession", "--policy-session", "-S", "session.ctx", cwd=work)
        tpm.run("tpm2_policysecret", "-S", "session.ctx", "-c", "e", cwd=work)
        tpm.run("tpm2_activatecredential", "-c", "ak.ctx", "-C", "ek.ctx", "-i", "cred", "-o", "released",
                "-P", "session:session.ctx", cwd=work)
        tpm.run("tpm2_flushcontext", "session.ctx", cwd=work)
        tpm.run("tpm2_flushcontext", "-t", cwd=work)
        answer = {"v": 1, "secret": cases.b64u(cases.read(os.path.join(work, "released")))}
        third = node(work, shared, [{"id": "frTpmAttestationChallenge", "value": json.dumps(answer)}], config)
        shared = third["sharedState"]
        if not quote_on:
            state = json.loads(shared["frTpmAttestation"])
            ok = third["outcome"] == "activated" and state["activated"] is True and "frTpmAttestation.boot" not in shared
            return ok, "quote off: %s after the answer, %d callbacks" % (third["outcome"], len(third["callbacks"]))
        assert third["callbacks"] and third["callbacks"][0]["id"] == "frTpmBootQuote", third
        assert json.loads(shared["frTpmAttestation"])["activated"] is False
        nonce = b64d(json.loads(third["callbacks"][0]["value"])["nonce"])
        assert len(nonce) == 32
        tpm.run("tpm2_quote", "-c", "ak.ctx", "-l", "sha256:0,1,2,3,4,5,6,7,14", "-q", nonce.hex(), "-m", "msg",
                "-s", "sig", "-o", "pcrs", "-g", "sha256", cwd=work)
        tpm.run("tpm2_flushcontext", "-t", cwd=work)
        tpm.run("tpm2_pcrread", "sha256:0,1,2,3,4,5,6,7,14", "-o", "values", cwd=work)
        values = cases.read(os.path.join(work, "values"))
        pcrs = {pcr: values[32 * i:32 * i + 32] for i, pcr in enumerate(cases.QUOTED)}
        doc = {"v": 1, "attest": cases.b64u(cases.read(os.path.join(work, "msg"))),
               "signature": cases.b64u(cases.raw_signature(cases.read(os.path.join(work, "sig")))),
               "akPublic": cases.b64u(ak_pub), "pcrs": {str(p): cases.b64u(v) for p, v in pcrs.items()},
               "eventLogMissing": "swtpm has no firmware"}
        fourth = node(work, shared, [{"id": "frTpmBootQuote", "value": json.dumps(doc)}], config)
        boot = json.loads(fourth["sharedState"].get("frTpmAttestation.boot", "{}"))
        state = json.loads(fourth["sharedState"]["frTpmAttestation"])
        ok = fourth["outcome"] == "activated" and state["activated"] is True and boot.get("method") == "quoteOnly"
        replay = node(work, fourth["sharedState"], [{"id": "frTpmBootQuote", "value": json.dumps(doc)}], config)
        ok = ok and replay["outcome"] == "false"
        return ok, "quote on: %s after the quote (method %s, refused: %s); the same quote again: %s (%s)" % (
            fourth["outcome"], boot.get("method"), fourth["sharedState"].get("frTpmAttestation.refused"),
            replay["outcome"], replay["sharedState"].get("frTpmAttestation.refused"))
    finally:
        tpm.close()
        shutil.rmtree(work, ignore_errors=True)


def main():
    if not os.path.exists(os.path.join(STUBS, "org/forgerock/openam/auth/node/api/Action.class")):
        sources = [os.path.join(d, f) for d, _, fs in os.walk(os.path.join(ROOT, "Tests/AMScript/stubs")) for f in fs
                   if f.endswith(".java")]
        subprocess.run(["javac", "-d", STUBS] + sources, check=True)
    failed = False
    for quote_on in (True, False):
        ok, line = run(quote_on)
        print(("ok " if ok else "FAIL ") + line)
        failed = failed or not ok
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
