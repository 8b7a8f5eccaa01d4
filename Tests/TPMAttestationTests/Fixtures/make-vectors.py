#!/usr/bin/env python3
"""Makes the known-answer data the attestation verifier's crypto is judged by (issue 29), with
implementations the project did not write: keys from OpenSSL, credentials from tpm2-tools'
tpm2_makecredential (--tcti none: OpenSSL in software), the RSA seed opened by OpenSSL with the
label "IDENTITY\\0", KDFa from Python's hmac. Run once; its output is committed:

    python3 Tests/TPMAttestationTests/Fixtures/make-vectors.py Tests/TPMAttestationTests/Fixtures

Writes rsa/<bits>-e<exponent>.pem (test keys, nothing else uses them), credential-ecc.json,
credential-rsa.json and kdfa.json.
"""
import hashlib, hmac, json, os, subprocess, sys, tempfile

out = sys.argv[1]
os.makedirs(out + "/rsa", exist_ok=True)


def run(*args, **kw):
    return subprocess.run(args, check=True, capture_output=True, **kw).stdout


# RSA test keys for the OAEP differential test: three sizes, three exponents.
for bits in (2048, 3072, 4096):
    for e in (3, 17, 65537):
        path = f"{out}/rsa/{bits}-e{e}.pem"
        if not os.path.exists(path):
            run("openssl", "genpkey", "-algorithm", "RSA", "-pkeyopt", f"rsa_keygen_bits:{bits}",
                "-pkeyopt", f"rsa_keygen_pubexp:{e}", "-out", path)

with tempfile.TemporaryDirectory() as work:
    def credential(kind):
        key = f"{work}/ek-{kind}.pem"
        if kind == "ecc":
            run("openssl", "ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", key)
        else:
            run("openssl", "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", key)
        run("openssl", "pkey", "-in", key, "-pubout", "-out", key + ".pub")
        secret = os.urandom(32)
        name = b"\x00\x0b" + os.urandom(32)
        open(f"{work}/secret", "wb").write(secret)
        run("tpm2_makecredential", "-T", "none", "-G", kind, "-u", key + ".pub", "-s", f"{work}/secret",
            "-n", name.hex(), "-o", f"{work}/cred")
        blob = open(f"{work}/cred", "rb").read()
        assert blob[:8] == bytes.fromhex("badcc0de00000001"), blob[:8].hex()
        size = int.from_bytes(blob[8:10], "big")
        identity = blob[10:10 + size]
        rest = blob[10 + size:]
        secret_size = int.from_bytes(rest[:2], "big")
        encrypted = rest[2:2 + secret_size]
        assert 2 + secret_size == len(rest)
        vector = {"ekPrivateKeyPEM": open(key).read(), "name": name.hex(), "credential": secret.hex(),
                  "credentialBlob": identity.hex(), "encryptedSecret": encrypted.hex()}
        if kind == "rsa":
            open(f"{work}/seed.enc", "wb").write(encrypted)
            vector["seed"] = run("openssl", "pkeyutl", "-decrypt", "-inkey", key, "-in", f"{work}/seed.enc",
                                 "-pkeyopt", "rsa_padding_mode:oaep", "-pkeyopt", "rsa_oaep_md:sha256",
                                 "-pkeyopt", "rsa_mgf1_md:sha256",
                                 "-pkeyopt", "rsa_oaep_label:" + b"IDENTITY\x00".hex()).hex()
        json.dump(vector, open(f"{out}/credential-{kind}.json", "w"), indent=1)
        open(f"{out}/credential-{kind}.json", "a").write("\n")

    credential("ecc")
    credential("rsa")


# KDFa (TPM 2.0 part 1, SP 800-108 counter mode, HMAC-SHA-256).
def kdfa(key, label, u, v, bits):
    out, counter = b"", 1
    while len(out) * 8 < bits:
        out += hmac.new(key, counter.to_bytes(4, "big") + label + b"\x00" + u + v + bits.to_bytes(4, "big"),
                        hashlib.sha256).digest()
        counter += 1
    return out[:bits // 8]


vectors = []
for label, bits in (("STORAGE", 128), ("INTEGRITY", 256), ("ATH", 512), ("CFB", 384)):
    key, u, v = os.urandom(32), os.urandom(34), os.urandom(16)
    vectors.append({"key": key.hex(), "label": label, "contextU": u.hex(), "contextV": v.hex(), "bits": bits,
                    "output": kdfa(key, label.encode(), u, v, bits).hex()})
json.dump(vectors, open(f"{out}/kdfa.json", "w"), indent=1)
open(f"{out}/kdfa.json", "a").write("\n")
