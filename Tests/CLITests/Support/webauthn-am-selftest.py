#!/usr/bin/python3
"""Self-test of webauthn-am.py: plays a small software authenticator and client of its own (P-256 keys
from `cryptography`, its own CBOR, authenticator data, "none" and "packed" self attestation,
assertions with a counter; python-fido2 is not used here) that answers the server's pages with outcome
strings in exactly the ForgeRock JavaScript SDK's format, and checks the server's verdicts and its
--record lines. Prints PASS/FAIL per check; exits 0 only when all pass. Temp dir, cleaned up.

usage: /usr/bin/python3 webauthn-am-selftest.py [-v]
"""
import base64
import hashlib
import json
import os
import re
import secrets
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec

HERE = os.path.dirname(os.path.abspath(__file__))
SERVER = os.path.join(HERE, "webauthn-am.py")
ORIGIN = "https://localhost:8443"
RP_ID = "localhost"
VERBOSE = "-v" in sys.argv[1:]
FAILS = []


def check(name, ok, detail=""):
    print(("PASS " if ok else "FAIL ") + name + ("" if ok or not detail else "  -- " + str(detail)[:600]))
    if not ok:
        FAILS.append(name)
    return ok


# ---------------------------------------------------------------------------------------------
# A tiny CBOR encoder (canonical enough for what an authenticator sends)
# ---------------------------------------------------------------------------------------------

def _head(major, n):
    if n < 24:
        return bytes([major << 5 | n])
    for add, fmt in ((24, ">B"), (25, ">H"), (26, ">I"), (27, ">Q")):
        if n < 1 << (8 * struct.calcsize(fmt)):
            return bytes([major << 5 | add]) + struct.pack(fmt, n)
    raise ValueError(n)


def cbor(v):
    if isinstance(v, bool):
        return b"\xf5" if v else b"\xf4"
    if isinstance(v, int):
        return _head(0, v) if v >= 0 else _head(1, -1 - v)
    if isinstance(v, bytes):
        return _head(2, len(v)) + v
    if isinstance(v, str):
        b = v.encode("utf-8")
        return _head(3, len(b)) + b
    if isinstance(v, list):
        return _head(4, len(v)) + b"".join(cbor(x) for x in v)
    if isinstance(v, dict):
        items = sorted(((cbor(k), cbor(x)) for k, x in v.items()), key=lambda kv: (len(kv[0]), kv[0]))
        return _head(5, len(v)) + b"".join(k + x for k, x in items)
    raise TypeError(type(v))


def b64url(b):
    return base64.urlsafe_b64encode(b).rstrip(b"=").decode()


def int8(b):
    """new Int8Array(buffer).toString()"""
    return ",".join(str(x - 256 if x > 127 else x) for x in b)


def from_int8(numbers):
    return bytes(n & 0xFF for n in numbers)


# ---------------------------------------------------------------------------------------------
# The software authenticator and the JavaScript SDK's outcome strings
# ---------------------------------------------------------------------------------------------

class Authenticator:
    UP, UV, AT = 0x01, 0x04, 0x40

    def __init__(self, uv=False):
        self.key = ec.generate_private_key(ec.SECP256R1())
        self.cred_id = secrets.token_bytes(32)
        self.counter = 0
        self.uv = uv
        self.user_id = None   # the user handle bytes it stores (resident key)

    def cose_key(self):
        nums = self.key.public_key().public_numbers()
        return {1: 2, 3: -7, -1: 1, -2: nums.x.to_bytes(32, "big"), -3: nums.y.to_bytes(32, "big")}

    def flags(self, extra=0):
        return self.UP | (self.UV if self.uv else 0) | extra

    def sign(self, data):
        return self.key.sign(data, ec.ECDSA(hashes.SHA256()))

    def make_credential(self, challenge, user_id, fmt="none", origin=ORIGIN, rp_id=RP_ID):
        self.user_id = user_id
        cdj = json.dumps({"type": "webauthn.create", "challenge": b64url(challenge), "origin": origin,
                          "crossOrigin": False}, separators=(",", ":"))
        attested = bytes(16) + struct.pack(">H", len(self.cred_id)) + self.cred_id + cbor(self.cose_key())
        auth_data = (hashlib.sha256(rp_id.encode()).digest() + bytes([self.flags(self.AT)])
                     + struct.pack(">I", self.counter) + attested)
        if fmt == "packed":
            stmt = {"alg": -7, "sig": self.sign(auth_data + hashlib.sha256(cdj.encode()).digest())}
        elif fmt == "packed-x5c":   # basic attestation: a separate attestation key and its certificate
            att_key, cert = attestation_certificate()
            stmt = {"alg": -7, "sig": att_key.sign(auth_data + hashlib.sha256(cdj.encode()).digest(),
                                                   ec.ECDSA(hashes.SHA256())), "x5c": [cert]}
            fmt = "packed"
        else:
            stmt = {}
        att_obj = cbor({"fmt": fmt, "authData": auth_data, "attStmt": stmt})
        return cdj + "::" + int8(att_obj) + "::" + b64url(self.cred_id)

    def get_assertion(self, challenge, origin=ORIGIN, rp_id=RP_ID, counter_step=1, tamper=False,
                      send_handle=True):
        self.counter += counter_step
        cdj = json.dumps({"type": "webauthn.get", "challenge": b64url(challenge), "origin": origin,
                          "crossOrigin": False}, separators=(",", ":"))
        auth_data = hashlib.sha256(rp_id.encode()).digest() + bytes([self.flags()]) + struct.pack(">I", self.counter)
        sig = bytearray(self.sign(auth_data + hashlib.sha256(cdj.encode()).digest()))
        if tamper:
            sig[-1] ^= 0x01
        out = cdj + "::" + int8(auth_data) + "::" + int8(bytes(sig)) + "::" + b64url(self.cred_id)
        if send_handle and self.user_id:
            out += "::" + self.user_id.decode("latin-1")   # String.fromCharCode over the handle's bytes
        return out


def attestation_certificate():
    """A self-signed certificate meeting WebAuthn's packed attestation requirements (§8.2.1)."""
    import datetime
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization
    from cryptography.x509.oid import NameOID
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COUNTRY_NAME, "SE"),
                      x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Selftest"),
                      x509.NameAttribute(NameOID.ORGANIZATIONAL_UNIT_NAME, "Authenticator Attestation"),
                      x509.NameAttribute(NameOID.COMMON_NAME, "webauthn-am selftest")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    return key, cert.public_bytes(serialization.Encoding.DER)


def json_outcome(legacy):
    return json.dumps({"authenticatorAttachment": "cross-platform", "legacyData": legacy})


# ---------------------------------------------------------------------------------------------
# The client side of AM's pages
# ---------------------------------------------------------------------------------------------

class Server:
    def __init__(self, work, name, *args):
        self.port_file = os.path.join(work, name + ".port")
        self.record = os.path.join(work, name + ".record")
        self.log = open(os.path.join(work, name + ".log"), "w")
        self.proc = subprocess.Popen(
            ["/usr/bin/python3", SERVER, "--port-file", self.port_file, "--record", self.record] + list(args),
            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=self.log)
        deadline = time.time() + 10
        while not (os.path.exists(self.port_file) and open(self.port_file).read().strip()):
            if self.proc.poll() is not None or time.time() > deadline:
                raise RuntimeError("server %s did not start (see its log)" % name)
            time.sleep(0.02)
        self.port = int(open(self.port_file).read())
        self.base = "http://127.0.0.1:%d/am/json/realms/root/realms/alpha/authenticate" % self.port

    def post(self, body, query="?authIndexType=service&authIndexValue=WebAuthn"):
        req = urllib.request.Request(self.base + query, data=json.dumps(body).encode(), method="POST", headers={
            "Content-Type": "application/json", "Accept-API-Version": "resource=2.1, protocol=1.0",
            "X-Requested-With": "fr-profile-selftest"})
        try:
            with urllib.request.urlopen(req, timeout=10) as r:
                return r.status, json.loads(r.read())
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read() or b"null")

    def records(self):
        if not os.path.exists(self.record):
            return []
        return [json.loads(line) for line in open(self.record)]

    def stop(self):
        try:
            self.proc.stdin.close()
            self.proc.wait(5)
        except Exception:
            self.proc.kill()
        self.log.close()


def answer(page, value_by_type):
    """Fills inputs: value_by_type maps a callback type to the value of its (first) input."""
    out = json.loads(json.dumps(page))
    for cb in out["callbacks"]:
        if cb["type"] in value_by_type:
            cb["input"][0]["value"] = value_by_type[cb["type"]]
    return out


def webauthn_options(page):
    """What the JavaScript SDK would read from the page: node kind, challenge, user id, allow/exclude ids."""
    types = [cb["type"] for cb in page["callbacks"]]
    if "MetadataCallback" in types:
        data = page["callbacks"][types.index("MetadataCallback")]["output"][0]["value"]
        kind = "registration" if "pubKeyCredParams" in data else "authentication"
        challenge = base64.b64decode(data["challenge"], validate=True)
        ids = [from_int8(d["id"]) for d in data.get("_allowCredentials", data.get("_excludeCredentials", []))]
        listed = re.findall(r"new Int8Array\(\[([^\]]*)\]\)", data.get("allowCredentials", data.get("excludeCredentials", "")))
        return {"kind": kind, "challenge": challenge, "userId": data.get("userId"), "ids": ids,
                "listed": [from_int8(json.loads("[" + x + "]")) for x in listed], "data": data}
    script = page["callbacks"][0]["output"][0]["value"]
    kind = "registration" if "pubKeyCredParams" in script else "authentication"
    challenge = from_int8(json.loads(re.search(r"challenge\s*:\s*new Int8Array\((\[[^\]]*\])\)", script).group(1)))
    user = re.search(r'id:\s*Uint8Array\.from\("([^"]+)"', script)
    listed = re.findall(r'"id": new Int8Array\(\[([^\]]*)\]\)', script)
    return {"kind": kind, "challenge": challenge, "userId": user.group(1) if user else None,
            "ids": [from_int8(json.loads("[" + x + "]")) for x in listed], "listed": None, "script": script}


def start_named(server, user):
    status, page = server.post({})
    assert status == 200 and page["callbacks"][0]["type"] == "NameCallback", page
    return server.post(answer(page, {"NameCallback": user}))


def hidden(value):
    return {"HiddenValueCallback": value}


# ---------------------------------------------------------------------------------------------
# Checks
# ---------------------------------------------------------------------------------------------

def journey_register_then_authenticate(work, shape, json_response, fmt, device_name=None):
    label = "%s%s %s" % (shape, "+json" if json_response else "", fmt)
    args = ["--tree", "register-then-authenticate", "--shape", shape, "--state", os.path.join(work, "s-" + label.replace(" ", "-").replace("+", "_") + ".json")]
    if json_response:
        args.append("--json-response")
    srv = Server(work, "rta-" + label.replace(" ", "-").replace("+", "_"), *args)
    try:
        auth = Authenticator()
        status, page = start_named(srv, "demo")
        opts = webauthn_options(page)
        check("%s: registration page" % label, status == 200 and opts["kind"] == "registration", page)
        hv = [cb for cb in page["callbacks"] if cb["type"] == "HiddenValueCallback"][0]
        check("%s: outcome input is %s" % (label, "IDToken2" if shape == "am7" else "IDToken3"),
              hv["input"][0]["name"] == ("IDToken2" if shape == "am7" else "IDToken3"), hv)
        legacy = auth.make_credential(opts["challenge"], opts["userId"].encode(), fmt=fmt)
        if device_name:
            legacy += "::" + device_name
        status, page = srv.post(answer(page, hidden(json_outcome(legacy) if json_response else legacy)))
        opts = webauthn_options(page) if status == 200 and "callbacks" in page else {}
        check("%s: registration accepted, authentication page next" % label,
              status == 200 and opts.get("kind") == "authentication", (status, page, srv.records()))
        check("%s: allow list holds the new credential" % label, opts.get("ids") == [auth.cred_id]
              and (opts.get("listed") in (None, [auth.cred_id])), opts)
        status, done = srv.post(answer(page, hidden(json_outcome(auth.get_assertion(opts["challenge"]))
                                                    if json_response else auth.get_assertion(opts["challenge"]))))
        check("%s: authentication accepted, success" % label,
              status == 200 and done.get("tokenId") and done.get("realm") == "/alpha", (status, done, srv.records()))
        recs = srv.records()
        check("%s: record lines" % label,
              [(r["node"], r["verdict"]) for r in recs] == [("registration", "ok"), ("authentication", "ok")]
              and recs[0]["attestation"] == {"none": "none", "packed": "packed-self", "packed-x5c": "packed-basic"}[fmt]
              and recs[0]["credentialId"] == b64url(auth.cred_id) and recs[1]["signCount"] == 1
              and recs[1]["previousSignCount"] == 0 and recs[0]["json"] == json_response
              and (recs[0]["deviceName"] == device_name)
              and recs[1]["headers"].get("x-requested-with") == "fr-profile-selftest"
              and (not json_response or recs[1]["authenticatorAttachment"] == "cross-platform"), recs)
    finally:
        srv.stop()


SHARED = {}


def refused_case(work, name, make_outcome, want_reason, extra=(), want_outcome="failure", want_http=401):
    """Registers (tree register-then-authenticate, UV on), then answers the authentication page with
    make_outcome (UV off). One server per distinct `extra`, shared by the cases."""
    key = tuple(extra)
    if key not in SHARED:
        SHARED[key] = Server(work, "ref-%d" % len(SHARED), "--tree", "register-then-authenticate", *extra)
    srv = SHARED[key]
    auth = Authenticator(uv=True)
    status, page = start_named(srv, "alice-" + name)
    opts = webauthn_options(page)
    status, page = srv.post(answer(page, hidden(auth.make_credential(opts["challenge"], opts["userId"].encode(),
                                                                    fmt="packed"))))
    if not check("%s: registered" % name, status == 200 and "callbacks" in page, (status, page)):
        return {}
    auth.uv = False
    opts = webauthn_options(page)
    status, body = srv.post(answer(page, hidden(make_outcome(auth, opts))))
    recs = srv.records()
    last = recs[-1] if recs else {}
    check("%s: refused with %d, recorded %s/%s" % (name, want_http, want_outcome, want_reason),
          status == want_http and body == {"code": 401, "reason": "Unauthorized", "message": "Login failure"}
          and last.get("node") == "authentication" and last.get("verdict") == "refused"
          and last.get("outcome") == want_outcome and str(last.get("reason", "")).startswith(want_reason),
          (status, body, last))
    return last


def registration_refusals(work):
    """Refusals at the Registration node (default server shared with refused_case)."""
    if () not in SHARED:
        SHARED[()] = Server(work, "ref-%d" % len(SHARED), "--tree", "register-then-authenticate")
    srv = SHARED[()]

    def tampered_packed(a, o):
        out = a.make_credential(o["challenge"], o["userId"].encode(), fmt="packed")
        cdj, att, cid = out.split("::")
        nums = att.split(",")
        nums[-1] = str((int(nums[-1]) + 1 + 128) % 256 - 128)   # the last byte of the packed signature
        return "::".join([cdj, ",".join(nums), cid])

    cases = [
        ("registration wrong origin", lambda a, o: a.make_credential(o["challenge"], o["userId"].encode(),
                                                                     origin="http://127.0.0.1"), "failure", "origin:"),
        ("registration tampered packed signature", tampered_packed, "failure", "attestation:"),
        ("registration other credential id", lambda a, o: a.make_credential(o["challenge"], o["userId"].encode())
         .rsplit("::", 1)[0] + "::" + b64url(secrets.token_bytes(32)), "failure", "credential:"),
        ("registration JSON outcome not advertised", lambda a, o: json_outcome(
            a.make_credential(o["challenge"], o["userId"].encode())), "failure", "malformed:"),
        ("registration DOM error", lambda a, o: "ERROR::InvalidStateError:An attempt was made to use an object",
         "error", "InvalidStateError:"),
    ]
    for name, make, want_outcome, want_reason in cases:
        auth = Authenticator()
        status, page = start_named(srv, "carol")
        opts = webauthn_options(page)
        status, body = srv.post(answer(page, hidden(make(auth, opts))))
        last = srv.records()[-1]
        check("%s: 401, recorded %s/%s" % (name, want_outcome, want_reason),
              status == 401 and last["node"] == "registration" and last["verdict"] == "refused"
              and last["outcome"] == want_outcome and last["reason"].startswith(want_reason), (status, body, last))


def usernameless_and_counter(work):
    state = os.path.join(work, "shared-state.json")
    reg = Server(work, "reg", "--tree", "register", "--resident-key", "required", "--state", state,
                 "--exclude-registered")
    auth = Authenticator(uv=True)
    try:
        status, page = start_named(reg, "bob")
        opts = webauthn_options(page)
        sel = opts["data"]["_authenticatorSelection"]
        check("register: resident key required in the page",
              sel.get("requireResidentKey") is True and sel.get("residentKey") == "required"
              and json.loads(opts["data"]["authenticatorSelection"]) == sel, opts["data"])
        status, done = reg.post(answer(page, hidden(auth.make_credential(opts["challenge"], opts["userId"].encode()))))
        check("register: success", status == 200 and "tokenId" in done, (status, done, reg.records()))
        # A second registration: the first credential is now in excludeCredentials.
        status, page = start_named(reg, "bob")
        opts = webauthn_options(page)
        check("register --exclude-registered: excludeCredentials lists the credential",
              opts["ids"] == [auth.cred_id] and opts["listed"] == [auth.cred_id], opts["data"])
    finally:
        reg.stop()
    st = json.load(open(state))
    check("state file: bob's credential with sign count 0",
          st["users"]["bob"]["credentials"][0]["credentialId"] == b64url(auth.cred_id)
          and st["users"]["bob"]["credentials"][0]["signCount"] == 0, st)

    for shape in ("am7", "am65"):
        ul = Server(work, "ul-" + shape, "--tree", "usernameless", "--shape", shape, "--state", state,
                    "--user-verification", "required")
        try:
            status, page = ul.post({})
            opts = webauthn_options(page)
            check("usernameless %s: first page is authentication with an empty allow list" % shape,
                  status == 200 and opts["kind"] == "authentication" and opts["ids"] == []
                  and (shape != "am7" or (opts["data"]["allowCredentials"] == "" and opts["data"]["_allowCredentials"] == [])),
                  page)
            status, done = ul.post(answer(page, hidden(auth.get_assertion(opts["challenge"]))))
            recs = ul.records()
            check("usernameless %s: user from the user handle, success" % shape,
                  status == 200 and "tokenId" in done and recs and recs[-1]["user"] == "bob"
                  and recs[-1]["verdict"] == "ok" and recs[-1]["userHandle"] == auth.user_id.decode(),
                  (status, done, recs))
            # No user handle: refused.
            status, page = ul.post({})
            opts = webauthn_options(page)
            status, done = ul.post(answer(page, hidden(auth.get_assertion(opts["challenge"], send_handle=False))))
            check("usernameless %s: no user handle refused" % shape,
                  status == 401 and ul.records()[-1]["reason"].startswith("user:"), ul.records()[-1])
        finally:
            ul.stop()

    # A later process (tree authenticate) with the same state: the stored counter is enforced.
    again = Server(work, "auth", "--tree", "authenticate", "--state", state, "--shape", "am65")
    try:
        status, page = start_named(again, "bob")
        opts = webauthn_options(page)
        check("authenticate (second process): allow list from the state file",
              status == 200 and opts["kind"] == "authentication" and opts["ids"] == [auth.cred_id]
              and "var acceptableCredentials" in opts["script"], page)
        auth.counter = json.load(open(state))["users"]["bob"]["credentials"][0]["signCount"]
        status, done = again.post(answer(page, hidden(auth.get_assertion(opts["challenge"], counter_step=0))))
        rec = again.records()[-1]
        check("counter: a repeated sign count refused, recorded 'counter'",
              status == 401 and rec["reason"].startswith("counter:") and rec["signCount"] == auth.counter, rec)
        status, page = start_named(again, "bob")
        opts = webauthn_options(page)
        status, done = again.post(answer(page, hidden(auth.get_assertion(opts["challenge"], counter_step=-1))))
        check("counter: a lower sign count refused", status == 401
              and again.records()[-1]["reason"].startswith("counter:"), again.records()[-1])
        status, page = start_named(again, "bob")
        opts = webauthn_options(page)
        status, done = again.post(answer(page, hidden(auth.get_assertion(opts["challenge"], counter_step=5))))
        check("counter: a higher sign count accepted", status == 200 and "tokenId" in done, again.records()[-1])
        status, page = start_named(again, "nobody")
        check("authenticate: a user without a device takes noDevice (401)",
              status == 401 and again.records()[-1]["outcome"] == "noDevice", again.records()[-1])
    finally:
        again.stop()


def page_shapes(work):
    srv = Server(work, "shape7", "--tree", "register-then-authenticate", "--json-response", "--attestation", "direct")
    try:
        status, page = start_named(srv, "demo")
        data = page["callbacks"][0]["output"][0]["value"]
        want = ["_action", "challenge", "attestationPreference", "userName", "userId", "relyingPartyName",
                "authenticatorSelection", "_authenticatorSelection", "pubKeyCredParams", "_pubKeyCredParams",
                "timeout", "excludeCredentials", "_excludeCredentials", "displayName", "relyingPartyId",
                "_relyingPartyId", "extensions", "_type", "supportsJsonResponse"]
        check("am7 registration metadata fields", list(data) == want and data["_action"] == "webauthn_registration"
              and data["pubKeyCredParams"] == '[ { "type": "public-key", "alg": -257 }, { "type": "public-key", "alg": -7 } ]'
              and data["relyingPartyId"] == 'id: "localhost",' and data["timeout"] == "60000"
              and data["attestationPreference"] == "direct" and len(base64.b64decode(data["challenge"])) == 32
              and page["callbacks"][1] == {"type": "HiddenValueCallback", "output": [
                  {"name": "value", "value": "false"}, {"name": "id", "value": "webAuthnOutcome"}],
                  "input": [{"name": "IDToken2", "value": "webAuthnOutcome"}], "_id": 1}, page)
        if VERBOSE:
            print(json.dumps(page, indent=1))
        # A plain (non-JSON) outcome is still accepted when JSON is advertised: the SDK sends the legacy
        # string when the credential has no authenticatorAttachment.
        auth = Authenticator()
        status, page = srv.post(answer(page, hidden(auth.make_credential(base64.b64decode(data["challenge"]),
                                                                        data["userId"].encode(), fmt="packed"))))
        check("am7 --attestation direct: packed self attestation accepted", status == 200 and "callbacks" in page,
              (status, page, srv.records()))
        data = page["callbacks"][0]["output"][0]["value"]
        want = ["_action", "challenge", "allowCredentials", "_allowCredentials", "timeout", "userVerification",
                "relyingPartyId", "_relyingPartyId", "_type", "supportsJsonResponse"]
        check("am7 authentication metadata fields", list(data) == want
              and data["allowCredentials"].startswith('allowCredentials: [{ "type": "public-key", "id": new Int8Array([')
              and data["_allowCredentials"] == [{"type": "public-key", "id": [x - 256 if x > 127 else x for x in auth.cred_id]}]
              and data["relyingPartyId"] == 'rpId: "localhost",', page)
        # Not an outcome at all: the placeholder posted back unchanged.
        status, body = srv.post(page)
        check("the unchanged placeholder is refused as malformed",
              status == 401 and srv.records()[-1]["reason"].startswith("malformed:"), srv.records()[-1])
    finally:
        srv.stop()


def main():
    work = tempfile.mkdtemp(prefix="webauthn-am-selftest.")
    started = time.time()
    try:
        journey_register_then_authenticate(work, "am7", False, "none")
        journey_register_then_authenticate(work, "am7", True, "packed", device_name="My Key")
        journey_register_then_authenticate(work, "am7", True, "none")
        journey_register_then_authenticate(work, "am65", False, "packed")
        journey_register_then_authenticate(work, "am65", False, "none", device_name="Desk key")
        journey_register_then_authenticate(work, "am7", False, "packed-x5c")
        usernameless_and_counter(work)
        page_shapes(work)
        registration_refusals(work)
        refused_case(work, "wrong-origin",
                     lambda a, o: a.get_assertion(o["challenge"], origin="https://evil.example"), "origin:")
        refused_case(work, "tampered-signature",
                     lambda a, o: a.get_assertion(o["challenge"], tamper=True), "signature:")
        refused_case(work, "wrong-challenge",
                     lambda a, o: a.get_assertion(secrets.token_bytes(32)), "challenge:")
        refused_case(work, "wrong-rp-id",
                     lambda a, o: a.get_assertion(o["challenge"], rp_id="example.com"), "rp:")
        refused_case(work, "uv-required",
                     lambda a, o: a.get_assertion(o["challenge"]), "uv:", extra=("--user-verification", "required"))
        last = refused_case(work, "dom-error",
                            lambda a, o: "ERROR::NotAllowedError:The operation either timed out or was not allowed.",
                            "NotAllowedError:", want_outcome="error")
        check("dom-error: domException recorded", last.get("domException") == "NotAllowedError", last)
        refused_case(work, "unsupported", lambda a, o: "unsupported", "unsupported", want_outcome="unsupported")
        refused_case(work, "signed-bytes-out-of-range",
                     lambda a, o: re.sub(r"::(-?\d+),", "::200,", a.get_assertion(o["challenge"]), count=1), "malformed:")
    except Exception as e:
        import traceback
        traceback.print_exc()
        check("no exception", False, e)
    finally:
        for srv in SHARED.values():
            srv.stop()
        if VERBOSE:
            for name in sorted(os.listdir(work)):
                if name.endswith(".log"):
                    print("----", name)
                    print(open(os.path.join(work, name)).read())
        shutil.rmtree(work, ignore_errors=True)
    print("%s: %d failed, %.1f s" % ("FAIL" if FAILS else "OK", len(FAILS), time.time() - started))
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
