#!/usr/bin/python3
"""A PingAM (ForgeRock AM) stand-in for fr-profile's WebAuthn tests: AM's WebAuthn Registration
node and WebAuthn Authentication node, on 127.0.0.1, with what the client posts back judged by
python-fido2's Fido2Server (Debian 12's python3-fido2 0.9.1), so the client is judged by an
implementation that is not ours.

usage: /usr/bin/python3 webauthn-am.py --port-file FILE --record FILE [--state FILE]
           [--tree register-then-authenticate|register|authenticate|usernameless]
           [--shape am7|am65] [--json-response] [--rp-id ID] [--rp-id-unset] [--origin URL]...
           [--user-verification preferred|required|discouraged] [--timeout-ms N]
           [--resident-key required|discouraged] [--attestation none|direct|indirect]
           [--exclude-registered]

Binds 127.0.0.1 port 0, writes the port (decimal, newline) to --port-file (atomically: a temporary
file renamed) and prints "PORT <n>" to stdout. Serves until SIGTERM/SIGINT, or until stdin reaches
EOF when stdin is a pipe (as oauth-am.py does); exits 0. Requests are logged to stderr as
"webauthn-am: METHOD PATH STATUS".

Endpoint: POST /am/json/realms/root/realms/alpha/authenticate (also /am/json/realms/root/authenticate),
query authIndexType=service&authIndexValue=<any tree name>, header Accept-API-Version
"resource=2.1, protocol=1.0" (pairs in any order, as AuthenticateServer.swift reads it; anything else
is 400). A body without authId starts the journey. Pages are {"authId","callbacks","header",
"description"}; each callback carries "_id" (0, 1, ...) and its inputs are named IDToken<n>, n the
callback's 1-based position, as AM names them. Success is 200 {"tokenId","successUrl":"/am/console",
"realm":"/alpha"}; every failure is 401 {"code":401,"reason":"Unauthorized","message":"Login failure"}.

Trees (--tree):
  register-then-authenticate  NameCallback -> WebAuthn Registration -> WebAuthn Authentication -> success
  register                    NameCallback -> WebAuthn Registration -> success
  authenticate                NameCallback -> WebAuthn Authentication -> success   (needs --state with
                              the user's credential; a user without one takes AM's "noDevice" outcome: 401)
  usernameless                WebAuthn Authentication (empty allow list, resident key required; the user
                              comes from the user handle) -> success
A refused outcome takes the node's Failure outcome, "ERROR::<DOMException name>:<message>" the Error
outcome, "unsupported" the Unsupported outcome: each is a 401 here, and is recorded.

Shapes (--shape), as the ForgeRock JavaScript SDK's recorded mocks show them
(packages/javascript-sdk/src/fr-webauthn/fr-webauthn.mock.data.ts, commit 24a0af2 and later) and as
AM's nodes build them (WebAuthnRegistrationNode/WebAuthnAuthenticationNode.getScriptContext and
ClientScriptUtilities, whose public source was read for the field names and their encodings):
  am7   AM 7.0+ and PingOne Advanced Identity Cloud with "Return challenge as JavaScript" off: a
        MetadataCallback whose output "data" is
          registration: {_action:"webauthn_registration", challenge:<standard base64, padded>,
            attestationPreference, userName, userId:<base64url of the user's id>, relyingPartyName:
            "ForgeRock", authenticatorSelection:<JSON text>, _authenticatorSelection:<object>,
            pubKeyCredParams:'[ { "type": "public-key", "alg": -257 }, { "type": "public-key", "alg": -7 } ]',
            _pubKeyCredParams:[{type,alg}...], timeout:"60000", excludeCredentials:<'{ "type": "public-key",
            "id": new Int8Array([..]).buffer }' items joined with ',', or ''>, _excludeCredentials:
            [{type:"public-key", id:[signed bytes]}...], displayName, relyingPartyId:'id: "localhost",' or '',
            _relyingPartyId:"localhost" or "", extensions:{}, _type:"WebAuthn", supportsJsonResponse?:true}
          authentication: {_action:"webauthn_authentication", challenge, allowCredentials:
            'allowCredentials: [{ "type": "public-key", "id": new Int8Array([..]).buffer },...]' or '',
            _allowCredentials:[{type:"public-key", id:[signed bytes]}...], timeout:"60000",
            userVerification, relyingPartyId:'rpId: "localhost",' or '', _relyingPartyId, _type:"WebAuthn",
            supportsJsonResponse?:true}
        The _allowCredentials/_excludeCredentials element shape, {"type":"public-key","id":[Java Byte[] of
        the credential id, i.e. signed -128..127]}, is ClientScriptUtilities.getDevicesAsJson's.
        Then a HiddenValueCallback, output [{value:"false"},{id:"webAuthnOutcome"}], input IDToken2.
  am65  AM 6.5 (and 7.x with "Return challenge as JavaScript" on): two TextOutputCallbacks of
        messageType "4" (the first a script whose literals are AM's: "challenge: new Int8Array([..]).buffer",
        "rp: { id: "localhost", name: "ForgeRock" }", "user: { id: Uint8Array.from("<userId>", ...), name,
        displayName }", "pubKeyCredParams: [...]", "attestation", "timeout: 60000", "excludeCredentials:
        [...]", "authenticatorSelection: {...}"; for authentication "var acceptableCredentials = [...]",
        "allowCredentials: acceptableCredentials", "userVerification", "rpId"; the second the "Waiting for
        local device..." spinner) and the HiddenValueCallback with input IDToken3. The scripts' wording
        around those literals is ours, not AM's.
  The HiddenValueCallback's input value is "webAuthnOutcome", as every recorded mock has it; an empty
  answer (or that placeholder unchanged) is refused as malformed.

The posted webAuthnOutcome is parsed as AM's ClientScriptUtilities does: split on "::";
  registration:   clientDataJSON :: attestationObject as comma-separated signed bytes :: credential id
                  (base64url, no padding) [:: device name]   (the name only when there are exactly 4 parts)
  authentication: clientDataJSON :: authenticatorData signed bytes :: signature signed bytes ::
                  credential id [:: user handle]   (the JavaScript SDK's user handle is the text of the
                  handle's bytes, i.e. the userId it was given; AM base64url-decodes it to the user's id)
  "unsupported", "ERROR::<name>:<message>"; and with --json-response also
  {"authenticatorAttachment":"...","legacyData":"<one of the above>"}.
Signed bytes are decimal integers in -128..127 with no blanks (Java's Byte.parseByte); anything else is
refused as malformed. Then Fido2Server judges the ceremony: type, origin (--origin, any of them), the
challenge, the rp id hash (--rp-id), user presence, user verification when --user-verification required,
the signature; registration also checks the attestation statement (fmt "none" with an empty statement,
"packed" self attestation, and "packed" with x5c whose signature is checked but whose chain is not, there
being no trust store), that the credential's algorithm was offered (-257, -7), and that the posted
credential id is the attested one; authentication also checks the credential is the user's and the
signature counter (a new count must exceed the stored one; both zero is allowed, as WebAuthn allows it).

--record FILE gets one JSON line per judged outcome:
  {"time": <unix seconds>, "node": "registration"|"authentication", "shape": "am7"|"am65",
   "verdict": "ok"|"refused", "outcome": "success"|"failure"|"error"|"unsupported"|"noDevice",
   "reason": <why refused, or the DOM exception "Name:message", or "">, "user": <username or null>,
   "credentialId": <base64url or null>, "signCount": <int or null>, "previousSignCount": <int or null>,
   "userHandle": <as posted, or null>, "deviceName": <or null>, "attestation": <"none"|"packed-self"|
   "packed-basic"|null>, "alg": <COSE alg or null>, "authenticatorAttachment": <from a JSON outcome or
   null>, "json": <true when the outcome was the JSON form>, "userVerified": <bool or null>,
   "raw": <the posted outcome string>, "headers": {<request headers, names lower-cased>}}
  plus "domException": "<Name>" on an "error" outcome. A user without credentials at the
  Authentication node gives a line with outcome "noDevice" and raw "" (AM's noDevice outcome).
  Reasons are short words first: "malformed: ...", "origin: ...", "challenge: ...", "type: ...",
  "rp: ...", "up: ...", "uv: ...", "signature: ...", "attestation: ...", "alg: ...", "credential: ...",
  "counter: <new> <= <stored>", "user: ...", "timeout: ...", "duplicate: ...".

--state FILE (JSON, rewritten atomically after each change; read afresh for each journey so a second
server process sees the first's registrations):
  {"users": {"<username>": {"id": "<uuid>", "credentials": [{"credentialId": "<base64url>",
     "credentialData": "<hex of the attested credential data: aaguid|len|id|COSE key>", "alg": -7,
     "signCount": <int>, "deviceName": <str or null>, "attestation": "none"|"packed-self"|"packed-basic",
     "created": <unix seconds>, "lastUsed": <unix seconds, after an accepted assertion>}]}}}
  userId on the wire is base64url (no padding) of the user's "id" (36 characters, so 48 base64
  characters, never padded).
"""
import argparse
import base64
import json
import os
import secrets
import signal
import stat
import sys
import threading
import time
import traceback
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, urlsplit

from fido2.attestation.base import AttestationType, InvalidAttestation, InvalidSignature, NoneAttestation
from fido2.attestation.packed import PackedAttestation
from fido2.client import ClientData
from fido2.cose import CoseKey
from fido2.ctap2 import AttestationObject, AttestedCredentialData, AuthenticatorData
from fido2.server import Fido2Server
from fido2.webauthn import PublicKeyCredentialRpEntity

AUTH_PATHS = ("/am/json/realms/root/realms/alpha/authenticate", "/am/json/realms/root/authenticate")
FAILURE = {"code": 401, "reason": "Unauthorized", "message": "Login failure"}
TOKEN = "AQIC5wM2LY4Sfcz-webauthn-am-token.*AAJTSQACMDE.*"
ALGS = [-257, -7]          # AM's default accepted signing algorithms, in the order its mocks list them
RP_NAME = "ForgeRock"
TREES = {
    "register-then-authenticate": ["name", "registration", "authentication"],
    "register": ["name", "registration"],
    "authenticate": ["name", "authentication"],
    "usernameless": ["authentication"],
}

ARGS = None
LOCK = threading.RLock()
JOURNEYS = {}   # authId -> dict(step index, user, challenge, fido state, page issued time, ...)


def log(message):
    try:
        sys.stderr.write("webauthn-am: " + message + "\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def b64url_decode(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def signed(data):
    """bytes -> Java's Arrays.toString(byte[]) numbers: signed -128..127."""
    return [b - 256 if b > 127 else b for b in data]


def java_array(data):
    return "[" + ", ".join(str(n) for n in signed(data)) + "]"


class Refused(Exception):
    pass


def parse_signed_bytes(text, what):
    out = bytearray()
    if text == "":
        raise Refused("malformed: empty %s" % what)
    for part in text.split(","):
        # Byte.parseByte: an optional sign and decimal digits, nothing else
        body = part[1:] if part[:1] in ("-", "+") else part
        if not body.isdigit() or not body.isascii():
            raise Refused("malformed: %s is not comma-separated signed bytes (%r)" % (what, part[:20]))
        n = int(part)
        if n < -128 or n > 127:
            raise Refused("malformed: %s byte %d out of -128..127" % (what, n))
        out.append(n & 0xFF)
    return bytes(out)


# ---------------------------------------------------------------------------------------------
# State and record
# ---------------------------------------------------------------------------------------------

def load_state():
    if not ARGS.state or not os.path.exists(ARGS.state):
        return {"users": {}}
    with open(ARGS.state, encoding="utf-8") as f:
        text = f.read()
    if not text.strip():
        return {"users": {}}
    data = json.loads(text)
    data.setdefault("users", {})
    return data


def save_state(state):
    if not ARGS.state:
        return
    tmp = ARGS.state + ".tmp.%d" % os.getpid()
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(state, f, indent=1, sort_keys=True)
        f.write("\n")
    os.replace(tmp, ARGS.state)


MEMORY_STATE = {"users": {}}   # without --state, registrations live as long as the process


def get_state():
    return load_state() if ARGS.state else MEMORY_STATE


def put_state(state):
    global MEMORY_STATE
    if ARGS.state:
        save_state(state)
    else:
        MEMORY_STATE = state


def user_entry(state, username, create):
    users = state["users"]
    if username not in users and create:
        users[username] = {"id": str(uuid.uuid4()), "credentials": []}
    return users.get(username)


def record(line):
    line = dict(line)
    line.setdefault("time", round(time.time(), 3))
    with LOCK:
        with open(ARGS.record, "a", encoding="utf-8") as f:
            f.write(json.dumps(line, sort_keys=True) + "\n")


# ---------------------------------------------------------------------------------------------
# Pages
# ---------------------------------------------------------------------------------------------

def callback(ctype, outputs, inputs=None):
    cb = {"type": ctype, "output": [{"name": n, "value": v} for n, v in outputs]}
    if inputs is not None:
        cb["input"] = [{"name": "IDToken?", "value": v} for v in inputs]
    return cb


def number(callbacks):
    """AM numbers callbacks with _id and names inputs IDToken<position>."""
    for i, cb in enumerate(callbacks):
        for inp in cb.get("input", []):
            inp["name"] = "IDToken%d" % (i + 1)
        cb["_id"] = i
    return callbacks


def hidden_outcome():
    return callback("HiddenValueCallback", [("value", "false"), ("id", "webAuthnOutcome")], ["webAuthnOutcome"])


def descriptor_js(cred_id):
    return '{ "type": "public-key", "id": new Int8Array(%s).buffer }' % java_array(cred_id)


def descriptor_json(cred_id):
    return {"type": "public-key", "id": signed(cred_id)}


def authenticator_selection():
    sel = {"userVerification": ARGS.user_verification}
    if ARGS.resident_key == "required":
        sel["residentKey"] = "required"
        sel["requireResidentKey"] = True
    return sel


def unsupported_js():
    return ("if (!window.PublicKeyCredential) {\n"
            "    document.getElementById('webAuthnOutcome').value = \"unsupported\";\n"
            "    document.getElementById(\"loginButton_0\").click();\n"
            "}\n\n")


SPINNER_JS = (
    "/* Stand-in for AM's spinner: shows that the browser is talking to the authenticator. */\n"
    "var holder = document.getElementById(\"wrapper\");\n"
    "var html = '<div class=\"form-group\"><h4 class=\"awaiting-response\">"
    "Waiting for local device... </h4></div>';\n"
    "if (!document.getElementById(\"loginButton_0\")) {\n"
    "    html += '<input id=\"loginButton_0\" role=\"button\" type=\"submit\" hidden>';\n"
    "}\n"
    "holder.getElementsByTagName(\"fieldset\")[0].innerHTML += html;\n")


def registration_page(j):
    challenge, user, exclude = j["challenge"], j["user"], j["exclude"]
    rp_id = None if ARGS.rp_id_unset else ARGS.rp_id
    sel = authenticator_selection()
    if ARGS.shape == "am7":
        data = {
            "_action": "webauthn_registration",
            "challenge": base64.b64encode(challenge).decode("ascii"),
            "attestationPreference": ARGS.attestation,
            "userName": user["name"],
            "userId": user["userId"],
            "relyingPartyName": RP_NAME,
            "authenticatorSelection": json.dumps(sel, separators=(",", ":")),
            "_authenticatorSelection": sel,
            "pubKeyCredParams": "[ " + ", ".join('{ "type": "public-key", "alg": %d }' % a for a in ALGS) + " ]",
            "_pubKeyCredParams": [{"type": "public-key", "alg": a} for a in ALGS],
            "timeout": str(ARGS.timeout_ms),
            "excludeCredentials": ",".join(descriptor_js(c) for c in exclude),
            "_excludeCredentials": [descriptor_json(c) for c in exclude],
            "displayName": user["name"],
            "relyingPartyId": 'id: "%s",' % rp_id if rp_id is not None else "",
            "_relyingPartyId": rp_id or "",
            "extensions": {},
            "_type": "WebAuthn",
        }
        if ARGS.json_response:
            data["supportsJsonResponse"] = True
        return [callback("MetadataCallback", [("data", data)]), hidden_outcome()]
    script = (
        "/* WebAuthn registration, as AM's Registration node asks for it (stand-in script). */\n\n"
        + unsupported_js()
        + "var publicKey = {\n"
        + "    challenge: new Int8Array(%s).buffer,\n" % java_array(challenge)
        + "    // Relying Party:\n"
        + "    rp: {\n"
        + ("        id: \"%s\",\n" % rp_id if rp_id is not None else "        \n")
        + "        name: \"%s\"\n" % RP_NAME
        + "    },\n"
        + "    // User:\n"
        + "    user: {\n"
        + "        id: Uint8Array.from(\"%s\", function (c) { return c.charCodeAt(0) }),\n" % user["userId"]
        + "        name: \"%s\",\n" % user["name"]
        + "        displayName: \"%s\"\n" % user["name"]
        + "    },\n"
        + "    pubKeyCredParams: [ " + ", ".join('{ "type": "public-key", "alg": %d }' % a for a in ALGS) + " ],\n"
        + "    attestation: \"%s\",\n" % ARGS.attestation
        + "    timeout: %d,\n" % ARGS.timeout_ms
        + "    excludeCredentials: [%s],\n" % ",".join(descriptor_js(c) for c in exclude)
        + "    authenticatorSelection: %s\n" % json.dumps(sel, separators=(",", ":"))
        + "};\n\n"
        + "navigator.credentials.create({publicKey: publicKey}).then(function (created) {\n"
        + "    var clientData = String.fromCharCode.apply(null, new Uint8Array(created.response.clientDataJSON));\n"
        + "    var attestation = new Int8Array(created.response.attestationObject).toString();\n"
        + "    document.getElementById('webAuthnOutcome').value = clientData + \"::\" + attestation + \"::\" + created.id;\n"
        + "    document.getElementById(\"loginButton_0\").click();\n"
        + "}).catch(function (err) {\n"
        + "    document.getElementById('webAuthnOutcome').value = \"ERROR\" + \"::\" + err;\n"
        + "    document.getElementById(\"loginButton_0\").click();\n"
        + "});\n")
    return [callback("TextOutputCallback", [("message", script), ("messageType", "4")]),
            callback("TextOutputCallback", [("message", SPINNER_JS), ("messageType", "4")]),
            hidden_outcome()]


def authentication_page(j):
    challenge, allow = j["challenge"], j["allow"]
    rp_id = None if ARGS.rp_id_unset else ARGS.rp_id
    if ARGS.shape == "am7":
        data = {
            "_action": "webauthn_authentication",
            "challenge": base64.b64encode(challenge).decode("ascii"),
            "allowCredentials": ("allowCredentials: [" + ",".join(descriptor_js(c) for c in allow) + "]") if allow else "",
            "_allowCredentials": [descriptor_json(c) for c in allow],
            "timeout": str(ARGS.timeout_ms),
            "userVerification": ARGS.user_verification,
            "relyingPartyId": 'rpId: "%s",' % rp_id if rp_id is not None else "",
            "_relyingPartyId": rp_id or "",
            "_type": "WebAuthn",
        }
        if ARGS.json_response:
            data["supportsJsonResponse"] = True
        return [callback("MetadataCallback", [("data", data)]), hidden_outcome()]
    script = "/* WebAuthn authentication, as AM's Authentication node asks for it (stand-in script). */\n\n"
    script += unsupported_js()
    if allow:
        script += ("var acceptableCredentials = [\n    "
                   + ",\n    ".join(descriptor_js(c) for c in allow) + "\n];\n\n")
    script += "var options = {\n"
    script += ("    rpId: \"%s\",\n" % rp_id) if rp_id is not None else "    \n"
    script += "    challenge: new Int8Array(%s).buffer,\n" % java_array(challenge)
    script += "    timeout: %d,\n" % ARGS.timeout_ms
    script += "    userVerification: \"%s\"%s\n" % (ARGS.user_verification, "," if allow else "")
    if allow:
        script += "    allowCredentials: acceptableCredentials\n"
    script += (
        "};\n\n"
        "navigator.credentials.get({ \"publicKey\" : options }).then(function (assertion) {\n"
        "    var r = assertion.response;\n"
        "    var clientData = String.fromCharCode.apply(null, new Uint8Array(r.clientDataJSON));\n"
        "    var out = clientData + \"::\" + new Int8Array(r.authenticatorData).toString() + \"::\"\n"
        "        + new Int8Array(r.signature).toString() + \"::\" + assertion.id;\n"
        "    if (r.userHandle) {\n"
        "        out += \"::\" + String.fromCharCode.apply(null, new Uint8Array(r.userHandle));\n"
        "    }\n"
        "    document.getElementById('webAuthnOutcome').value = out;\n"
        "    document.getElementById(\"loginButton_0\").click();\n"
        "}).catch(function (err) {\n"
        "    document.getElementById('webAuthnOutcome').value = \"ERROR\" + \"::\" + err;\n"
        "    document.getElementById(\"loginButton_0\").click();\n"
        "});\n")
    return [callback("TextOutputCallback", [("message", script), ("messageType", "4")]),
            callback("TextOutputCallback", [("message", SPINNER_JS), ("messageType", "4")]),
            hidden_outcome()]


def name_page():
    return [callback("NameCallback", [("prompt", "User Name")], [""])]


def page_body(auth_id, callbacks):
    return {"authId": auth_id, "callbacks": number(callbacks), "header": "Sign in", "description": ""}


# ---------------------------------------------------------------------------------------------
# Judging
# ---------------------------------------------------------------------------------------------

def make_server():
    def verify_origin(origin):
        return origin in ARGS.origin
    return Fido2Server(PublicKeyCredentialRpEntity(ARGS.rp_id, RP_NAME), attestation="direct",
                       verify_origin=verify_origin, verify_attestation=judge_attestation)


def judge_attestation(attestation_object, client_data_hash):
    """Fido2Server's verify_attestation hook: none, packed self, packed with x5c (chain unchecked)."""
    fmt = attestation_object.fmt
    if fmt == "none":
        verifier = NoneAttestation()
    elif fmt == "packed":
        verifier = PackedAttestation()
    else:
        raise Refused("attestation: unsupported format %r" % fmt)
    result = verifier.verify(attestation_object.att_statement, attestation_object.auth_data, client_data_hash)
    kind = {AttestationType.SELF: "packed-self", AttestationType.BASIC: "packed-basic"}.get(result.attestation_type)
    attestation_object.judged_kind = "none" if fmt == "none" else (kind or "packed-other")


def fido_error(e):
    """Fido2Server's ValueError messages -> our reason words."""
    text = str(e)
    low = text.lower()
    for key, word in (("origin", "origin"), ("challenge", "challenge"), ("incorrect type", "type"),
                      ("rp id", "rp"), ("user present", "up"), ("user verif", "uv"),
                      ("signature", "signature"), ("unknown credential", "credential")):
        if key in low:
            return "%s: %s" % (word, text)
    return "refused: %s" % text


def unwrap_outcome(raw, j, line):
    """The legacy outcome string, unwrapping the JSON form when the page advertised it. The legacy
    string itself begins with "{" (clientDataJSON) but is not JSON as a whole, as AM tells them apart."""
    if ARGS.json_response and ARGS.shape == "am7" and raw.startswith("{"):
        try:
            obj = json.loads(raw)
        except ValueError:
            return raw
        if not isinstance(obj, dict) or not isinstance(obj.get("legacyData"), str):
            raise Refused("malformed: JSON outcome without legacyData")
        line["json"] = True
        line["authenticatorAttachment"] = obj.get("authenticatorAttachment")
        return obj["legacyData"]
    return raw


def client_refused(raw, line):
    """The client's own refusal, as the SDKs post it: `unsupported` (AM's Unsupported outcome) or
    `ERROR::<DOMException name>:<message>` (its Error outcome). Recorded; True when it was one."""
    if raw == "unsupported":
        line.update(outcome="unsupported", verdict="refused", reason="unsupported")
        return True
    if raw.startswith("ERROR::"):
        line.update(outcome="error", verdict="refused", reason=raw[len("ERROR::"):],
                    domException=raw[len("ERROR::"):].split(":", 1)[0])
        return True
    return False


def judge_registration(j, raw, line):
    if client_refused(raw, line):
        return False
    parts = raw.split("::")
    if len(parts) < 3:
        raise Refused("malformed: %d parts, registration needs 3 or 4" % len(parts))
    client_json, att_text, cred_id_text = parts[0], parts[1], parts[2]
    if len(parts) == 4:
        line["deviceName"] = parts[3]
    line["credentialId"] = cred_id_text
    try:
        client_data = ClientData(client_json.encode("utf-8"))
    except Exception as e:
        raise Refused("malformed: clientDataJSON (%s)" % e)
    att_bytes = parse_signed_bytes(att_text, "attestationObject")
    try:
        att = AttestationObject(att_bytes)
    except Exception as e:
        raise Refused("malformed: attestationObject (%s)" % e)
    if time.time() - j["issued"] > ARGS.timeout_ms / 1000.0:
        raise Refused("timeout: answered after %d ms" % ARGS.timeout_ms)
    try:
        auth_data = make_server().register_complete(j["fido"], client_data, att)
    except Refused:
        raise
    except InvalidSignature as e:
        raise Refused("attestation: invalid signature %s" % e)
    except InvalidAttestation as e:
        raise Refused("attestation: %s: %s" % (type(e).__name__, e))
    except ValueError as e:
        raise Refused(fido_error(e))
    except Exception as e:
        raise Refused("attestation: %s: %s" % (type(e).__name__, e))
    line["attestation"] = getattr(att, "judged_kind", att.fmt)
    line["userVerified"] = auth_data.is_user_verified()
    line["signCount"] = auth_data.counter
    cred = auth_data.credential_data
    if cred is None:
        raise Refused("malformed: no attested credential data")
    try:
        key = CoseKey.parse(cred.public_key)
        alg = key.ALGORITHM
    except Exception as e:
        raise Refused("alg: %s" % e)
    line["alg"] = alg
    if alg not in ALGS:
        raise Refused("alg: %s was not offered" % alg)
    try:
        posted_id = b64url_decode(cred_id_text)
    except Exception:
        raise Refused("malformed: credential id is not base64url")
    if posted_id != cred.credential_id or b64url(posted_id) != cred_id_text:
        raise Refused("credential: posted id %s is not the attested %s" % (cred_id_text, b64url(cred.credential_id)))
    with LOCK:
        state = get_state()
        entry = user_entry(state, j["user"]["name"], create=True)
        for other in state["users"].values():
            if any(c["credentialId"] == cred_id_text for c in other["credentials"]):
                raise Refused("duplicate: credential %s is already registered" % cred_id_text)
        entry["credentials"].append({
            "credentialId": cred_id_text, "credentialData": bytes(cred).hex(), "alg": alg,
            "signCount": auth_data.counter, "deviceName": line.get("deviceName"),
            "attestation": line["attestation"], "created": round(time.time(), 3)})
        put_state(state)
    return True


def judge_authentication(j, raw, line):
    if client_refused(raw, line):
        return False
    parts = raw.split("::")
    if len(parts) < 4:
        raise Refused("malformed: %d parts, authentication needs 4 or 5" % len(parts))
    client_json, ad_text, sig_text, cred_id_text = parts[:4]
    handle = parts[4] if len(parts) > 4 else None
    line["credentialId"] = cred_id_text
    line["userHandle"] = handle
    try:
        client_data = ClientData(client_json.encode("utf-8"))
    except Exception as e:
        raise Refused("malformed: clientDataJSON (%s)" % e)
    try:
        auth_data = AuthenticatorData(parse_signed_bytes(ad_text, "authenticatorData"))
    except Refused:
        raise
    except Exception as e:
        raise Refused("malformed: authenticatorData (%s)" % e)
    signature = parse_signed_bytes(sig_text, "signature")
    try:
        cred_id = b64url_decode(cred_id_text)
    except Exception:
        raise Refused("malformed: credential id is not base64url")
    line["signCount"] = auth_data.counter
    line["userVerified"] = auth_data.is_user_verified()
    if time.time() - j["issued"] > ARGS.timeout_ms / 1000.0:
        raise Refused("timeout: answered after %d ms" % ARGS.timeout_ms)
    with LOCK:
        state = get_state()
        username = j["user"]["name"] if j["user"] else None
        if j["usernameless"]:
            if not handle:
                raise Refused("user: no user handle (resident key required)")
            try:
                user_id = b64url_decode(handle).decode("utf-8")
            except Exception:
                raise Refused("user: user handle %r is not base64url" % handle[:60])
            username = next((name for name, u in state["users"].items()
                             if u["id"] == user_id or name == user_id), None)
            if username is None:
                raise Refused("user: no user for handle %r" % handle[:60])
            line["user"] = username
        entry = user_entry(state, username, create=False)
        creds = entry["credentials"] if entry else []
        if not creds:
            line.update(outcome="noDevice", verdict="refused", reason="user: %s has no device" % username)
            return False
        stored = next((c for c in creds if c["credentialId"] == cred_id_text), None)
        if stored is None:
            raise Refused("credential: %s is not one of %s's" % (cred_id_text, username))
        if not j["usernameless"] and j["allow"] and cred_id not in j["allow"]:
            raise Refused("credential: %s was not in allowCredentials" % cred_id_text)
        attested = [AttestedCredentialData(bytes.fromhex(c["credentialData"])) for c in creds]
        try:
            make_server().authenticate_complete(j["fido"], attested, cred_id, client_data, auth_data, signature)
        except ValueError as e:
            raise Refused(fido_error(e))
        except Exception as e:
            raise Refused("signature: %s: %s" % (type(e).__name__, e))
        line["previousSignCount"] = stored["signCount"]
        if not (auth_data.counter > stored["signCount"] or (auth_data.counter == 0 and stored["signCount"] == 0)):
            raise Refused("counter: %d <= %d" % (auth_data.counter, stored["signCount"]))
        stored["signCount"] = auth_data.counter
        stored["lastUsed"] = round(time.time(), 3)
        put_state(state)
        j["user"] = {"name": username}
    return True


# ---------------------------------------------------------------------------------------------
# The tree
# ---------------------------------------------------------------------------------------------

def new_auth_id():
    return "webauthn-am." + secrets.token_urlsafe(24)


def enter(j):
    """Prepares the page of the journey's current node; returns (status, body)."""
    steps = TREES[ARGS.tree]
    if j["step"] >= len(steps):
        return 200, {"tokenId": TOKEN, "successUrl": "/am/console", "realm": "/alpha"}
    node = steps[j["step"]]
    j["node"] = node
    j["issued"] = time.time()
    j["authId"] = new_auth_id()   # AM's authId (a JWT there) changes with every page
    if node == "name":
        return 200, page_body(j["authId"], name_page())
    challenge = secrets.token_bytes(32)
    j["challenge"] = challenge
    state = get_state()
    server = make_server()
    if node == "registration":
        with LOCK:
            state = get_state()
            entry = user_entry(state, j["user"]["name"], create=True)
            put_state(state)
        j["user"]["userId"] = b64url(entry["id"].encode("utf-8"))
        j["exclude"] = ([b64url_decode(c["credentialId"]) for c in entry["credentials"]]
                        if ARGS.exclude_registered else [])
        _, j["fido"] = server.register_begin(
            {"id": entry["id"].encode("utf-8"), "name": j["user"]["name"], "displayName": j["user"]["name"]},
            challenge=challenge, user_verification=ARGS.user_verification,
            resident_key=ARGS.resident_key == "required")
        return 200, page_body(j["authId"], registration_page(j))
    # authentication
    j["usernameless"] = ARGS.tree == "usernameless"
    if j["usernameless"]:
        j["allow"] = []
    else:
        entry = user_entry(state, j["user"]["name"], create=False)
        creds = entry["credentials"] if entry else []
        if not creds:   # AM's "noDevice" outcome, before any page
            record({"node": "authentication", "shape": ARGS.shape, "verdict": "refused", "outcome": "noDevice",
                    "reason": "user: %s has no device" % j["user"]["name"], "user": j["user"]["name"],
                    "credentialId": None, "signCount": None, "previousSignCount": None, "userHandle": None,
                    "deviceName": None, "attestation": None, "alg": None, "authenticatorAttachment": None,
                    "json": False, "userVerified": None, "raw": "", "headers": j.get("headers", {})})
            return 401, FAILURE
        j["allow"] = [b64url_decode(c["credentialId"]) for c in creds]
    _, j["fido"] = server.authenticate_begin(challenge=challenge, user_verification=ARGS.user_verification)
    return 200, page_body(j["authId"], authentication_page(j))


def answer_value(callbacks, ctype, input_name=None):
    for cb in callbacks:
        if isinstance(cb, dict) and cb.get("type") == ctype:
            if ctype == "HiddenValueCallback":
                ids = [o.get("value") for o in cb.get("output", []) if isinstance(o, dict) and o.get("name") == "id"]
                if ids and ids[0] != "webAuthnOutcome":
                    continue
            for inp in cb.get("input", []) or []:
                if isinstance(inp, dict) and (input_name is None or inp.get("name") == input_name):
                    return inp.get("value")
    return None


def advance(j, body, headers):
    node = j["node"]
    callbacks = body.get("callbacks") if isinstance(body.get("callbacks"), list) else []
    if node == "name":
        name = answer_value(callbacks, "NameCallback")
        if not isinstance(name, str) or not name:
            return 401, FAILURE
        j["user"] = {"name": name}
        j["step"] += 1
        return enter(j)
    raw = answer_value(callbacks, "HiddenValueCallback", "IDToken2" if ARGS.shape == "am7" else "IDToken3")
    line = {"node": node, "shape": ARGS.shape, "verdict": "ok", "outcome": "success", "reason": "",
            "user": j["user"]["name"] if j.get("user") else None, "credentialId": None, "signCount": None,
            "previousSignCount": None, "userHandle": None, "deviceName": None, "attestation": None,
            "alg": None, "authenticatorAttachment": None, "json": False, "userVerified": None,
            "raw": raw if isinstance(raw, str) else json.dumps(raw), "headers": headers}
    try:
        if not isinstance(raw, str) or raw in ("", "webAuthnOutcome", "false"):
            raise Refused("malformed: no webAuthnOutcome answer (%r)" % (raw if isinstance(raw, str) else raw,))
        legacy = unwrap_outcome(raw, j, line)
        ok = (judge_registration if node == "registration" else judge_authentication)(j, legacy, line)
    except Refused as e:
        ok = False
        line.update(verdict="refused", outcome="failure", reason=str(e))
    except Exception as e:
        ok = False
        line.update(verdict="refused", outcome="failure", reason="internal: %s: %s" % (type(e).__name__, e))
        log(traceback.format_exc())
    if j.get("user"):
        line["user"] = j["user"]["name"]
    record(line)
    log("%s %s%s" % (node, line["verdict"], (": " + line["reason"]) if line["reason"] else ""))
    if not ok:
        return 401, FAILURE
    j["step"] += 1
    return enter(j)


def version_ok(header):
    if header is None:
        return False
    pairs = {}
    for part in header.split(","):
        kv = [s.strip() for s in part.split("=", 1)]
        if len(kv) != 2 or kv[0] in pairs:
            return False
        pairs[kv[0]] = kv[1]
    return pairs == {"resource": "2.1", "protocol": "1.0"}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "webauthn-am"
    sys_version = ""

    def log_request(self, code="-", size="-"):
        log("%s %s %s" % (self.command, urlsplit(self.path).path, code))

    def log_message(self, format, *args):
        pass

    def send(self, status, obj):
        body = json.dumps(obj).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json;charset=UTF-8")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-cache, no-store, must-revalidate")
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        self.send(404, {"code": 404, "reason": "Not Found", "message": "Not Found"})

    def do_POST(self):
        try:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            url = urlsplit(self.path)
            if url.path not in AUTH_PATHS:
                return self.send(404, {"code": 404, "reason": "Not Found", "message": "Not Found"})
            if not version_ok(self.headers.get("Accept-API-Version")):
                return self.send(400, {"code": 400, "reason": "Bad Request",
                                       "message": "Accept-API-Version must be resource=2.1, protocol=1.0"})
            query = dict(parse_qsl(url.query))
            if query.get("authIndexType", "service") != "service":
                return self.send(400, {"code": 400, "reason": "Bad Request", "message": "authIndexType"})
            try:
                body = json.loads(raw.decode("utf-8")) if raw.strip() else {}
            except ValueError:
                return self.send(400, {"code": 400, "reason": "Bad Request", "message": "Invalid JSON"})
            if not isinstance(body, dict):
                return self.send(400, {"code": 400, "reason": "Bad Request", "message": "Invalid JSON"})
            headers = {k.lower(): v for k, v in self.headers.items()}
            auth_id = body.get("authId")
            with LOCK:
                if not auth_id:
                    j = {"step": 0, "user": None, "headers": headers,
                         "tree": query.get("authIndexValue")}
                    status, out = enter(j)
                else:
                    j = JOURNEYS.pop(auth_id, None)
                    if j is None:
                        return self.send(401, FAILURE)
                    j["headers"] = headers
                    status, out = advance(j, body, headers)
                if status == 200 and "authId" in out:
                    JOURNEYS[out["authId"]] = j
            self.send(status, out)
        except Exception:
            log(traceback.format_exc())
            try:
                self.send(500, {"code": 500, "reason": "Internal Server Error", "message": "Internal Server Error"})
            except OSError:
                pass


def parse_args(argv):
    p = argparse.ArgumentParser(description="PingAM WebAuthn nodes stand-in for fr-profile's tests")
    p.add_argument("--port-file", required=True, metavar="FILE", help="the port is written here")
    p.add_argument("--record", required=True, metavar="FILE", help="one JSON line per judged outcome")
    p.add_argument("--state", metavar="FILE", help="registered credentials, kept across processes")
    p.add_argument("--tree", choices=sorted(TREES), default="register-then-authenticate")
    p.add_argument("--shape", choices=("am7", "am65"), default="am7")
    p.add_argument("--json-response", action="store_true", help="am7: supportsJsonResponse: true")
    p.add_argument("--rp-id", default="localhost", help="the relying party id judged (default localhost)")
    p.add_argument("--rp-id-unset", action="store_true",
                   help="send no rp id in the page (AM with no Relying Party Identifier configured)")
    p.add_argument("--origin", action="append", metavar="URL",
                   help="an accepted clientData origin; repeatable (default https://localhost:8443)")
    p.add_argument("--user-verification", choices=("preferred", "required", "discouraged"), default="preferred")
    p.add_argument("--timeout-ms", type=int, default=60000, metavar="N")
    p.add_argument("--resident-key", choices=("required", "discouraged"), default=None,
                   help="default: required for --tree usernameless, else discouraged")
    p.add_argument("--attestation", choices=("none", "direct", "indirect"), default="none")
    p.add_argument("--exclude-registered", action="store_true",
                   help="list the user's registered credentials in excludeCredentials")
    args = p.parse_args(argv)
    if not args.origin:
        args.origin = ["https://localhost:8443"]
    if args.resident_key is None:
        args.resident_key = "required" if args.tree == "usernameless" else "discouraged"
    return args


def main(argv):
    global ARGS
    ARGS = parse_args(argv)
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    port = httpd.server_address[1]
    tmp = ARGS.port_file + ".tmp.%d" % os.getpid()
    with open(tmp, "w") as f:
        f.write("%d\n" % port)
    os.replace(tmp, ARGS.port_file)

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())

    def watch_stdin():
        try:
            while os.read(0, 65536):
                pass
        except OSError:
            pass
        stop.set()

    threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, name="serve", daemon=True).start()
    try:
        if stat.S_ISFIFO(os.fstat(0).st_mode):
            threading.Thread(target=watch_stdin, name="stdin", daemon=True).start()
    except OSError:
        pass
    try:
        sys.stdout.write("PORT %d\n" % port)
        sys.stdout.flush()
    except OSError:
        pass
    log("listening on 127.0.0.1:%d (tree %s, shape %s, json-response %s, rp-id %s, origins %s, uv %s, "
        "resident-key %s, attestation %s)" % (port, ARGS.tree, ARGS.shape, ARGS.json_response, ARGS.rp_id,
                                              ",".join(ARGS.origin), ARGS.user_verification,
                                              ARGS.resident_key, ARGS.attestation))
    while not stop.wait(0.05):
        pass
    httpd.shutdown()
    httpd.server_close()
    log("stopped")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
