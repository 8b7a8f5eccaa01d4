#!/usr/bin/python3
"""A PingAM (ForgeRock AM) stand-in for the OAuth tests of fr-profile: base path /am, realm alpha,
on 127.0.0.1. PKCE, the authorization-code and refresh grants, the id_token and revocation are
Authlib's (1.2.0, Debian's python3-authlib), driven through its framework-agnostic core, so the
client is judged by an implementation that is not ours.

usage: /usr/bin/python3 oauth-am.py [--expires-in SECONDS] [--rotate-refresh] [--refresh-delay-ms N]
                                   [--tls CERT KEY]

Binds 127.0.0.1 port 0, prints one line "PORT <n>" to stdout, serves until stdin reaches EOF or
SIGTERM, then exits 0. Requests are logged to stderr as "METHOD PATH STATUS" (no query, no body).

BASE = http://127.0.0.1:<port>/am, ISSUER = BASE/oauth2/realms/root/realms/alpha.
  POST /am/json/realms/root/realms/alpha/authenticate?authIndexType=service&authIndexValue=Login
       (Accept-API-Version: resource=2.1) user "demo", password "Secret123!"
  POST /am/json/realms/root/realms/alpha/sessions?_action=logout   (header or cookie iPlanetDirectoryPro)
  GET  ISSUER/.well-known/openid-configuration   (path /am/oauth2/realms/root/realms/alpha/...)
  GET  ISSUER/authorize          session cookie iPlanetDirectoryPro
  POST ISSUER/access_token       authorization_code (PKCE required) and refresh_token grants
  POST ISSUER/token/revoke       RFC 7009
  GET  ISSUER/connect/jwk_uri
  GET  /api/whoami               Authorization: Bearer <access token> (also ISSUER/userinfo)
  GET  /control/stats, POST /control/revoke-refresh-tokens, /control/id-token, /control/state,
       /control/expire-access-tokens, /control/token-response (hostile expires_in, error_description)
Clients: "fr-cli" (public, consent implied) and "needs-consent" (public, consent page), both with
the redirect URI http://127.0.0.1/fr-profile/callback.
"""
import argparse
import base64
import html
import json
import os
import secrets
import signal
import sys
import threading
import time
import traceback
from http.cookies import SimpleCookie, CookieError
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, quote, urlencode, urlsplit, urlunsplit

# Authlib refuses http:// URIs unless told otherwise; this server is plain HTTP on the loopback.
os.environ["AUTHLIB_INSECURE_TRANSPORT"] = "1"

from cryptography.hazmat.primitives import serialization  # noqa: E402
from cryptography.hazmat.primitives.asymmetric import rsa  # noqa: E402
from authlib.jose import JsonWebKey, jwt as authlib_jwt  # noqa: E402
from authlib.oauth2 import OAuth2Error  # noqa: E402
from authlib.oauth2.rfc6749 import (  # noqa: E402
    AuthorizationServer, ClientMixin, HttpRequest, OAuth2Request, ResourceProtector,
    list_to_scope, scope_to_list,
)
from authlib.oauth2.rfc6749 import grants  # noqa: E402
from authlib.oauth2.rfc6750 import BearerTokenGenerator, BearerTokenValidator  # noqa: E402
from authlib.oauth2.rfc7009 import RevocationEndpoint  # noqa: E402
from authlib.oauth2.rfc7636 import CodeChallenge  # noqa: E402
from authlib.oidc.core import UserInfo  # noqa: E402
from authlib.oidc.core.grants import OpenIDCode, OpenIDToken  # noqa: E402

REALM_PATH = "/realms/root/realms/alpha"
JSON_PREFIX = "/am/json" + REALM_PATH
OAUTH_PREFIX = "/am/oauth2" + REALM_PATH
REDIRECT_URI = "http://127.0.0.1/fr-profile/callback"
SCOPES = ["openid", "profile", "email"]
USERNAME, PASSWORD = "demo", "Secret123!"
CODE_LIFETIME = 600            # seconds; RFC 6749 recommends at most 10 minutes
REFRESH_LIFETIME = 7 * 86400   # AM's default refresh token lifetime
ID_TOKEN_LIFETIME = 3600       # AM's default id_token lifetime
ID_TOKEN_MODES = ("normal", "bad-signature", "other-key", "wrong-aud", "wrong-iss", "expired",
                  "wrong-nonce", "alg-none")
STATE_MODES = ("normal", "wrong")
# /control/token-response: what a hostile token endpoint answers instead of Authlib's response.
TOKEN_RESPONSE_MODES = ("normal", "expires-in-1e300", "expires-in-1e19", "expires-in-0", "hostile-error")

ARGS = None
BASE = ISSUER = ""
SCHEME = "http"
LOCK = threading.RLock()       # every store below
CODE_EXCHANGE_LOCK = threading.Lock()   # one authorization_code exchange at a time: a code is used once

STATS = {"authenticate": 0, "authorize": 0, "token_authorization_code": 0, "token_refresh_token": 0,
         "token_errors": 0, "revoke": 0, "logout": 0, "jwks": 0, "discovery": 0,
         "max_concurrent_refresh": 0}
REFRESH_IN_PROGRESS = 0
MODES = {"id_token": "normal", "state": "normal", "token_response": "normal"}

JOURNEYS = {}     # authId -> created (time)
SESSIONS = {}     # tokenId -> Principal
CODES = {}        # code -> AuthCode
USED_NONCES = {}  # client_id -> set of nonces that went into a code
REFRESH = {}      # refresh token -> RefreshRecord
ACCESS = {}       # access token -> AccessRecord


def log(message):
    try:
        sys.stderr.write("oauth-am: " + message + "\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


def count(name, n=1):
    with LOCK:
        STATS[name] += n


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def b64url_decode(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


# ---------------------------------------------------------------------------------------------
# Keys
# ---------------------------------------------------------------------------------------------

def make_rsa_jwk(kid):
    private = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = private.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption())
    return JsonWebKey.import_key(pem, {"kty": "RSA", "kid": kid})


SIGNING_KEY = None   # kid rsa-1, published in the JWKS
OTHER_KEY = None     # also kid rsa-1, never published (id-token mode other-key)


def jwks_document():
    public = SIGNING_KEY.as_dict(is_private=False)
    return {"keys": [{"kty": "RSA", "kid": "rsa-1", "use": "sig", "alg": "RS256",
                      "n": public["n"], "e": public["e"]}]}


# ---------------------------------------------------------------------------------------------
# Models (in memory)
# ---------------------------------------------------------------------------------------------

class Principal:
    """The resource owner of a session, a code or a token."""

    def __init__(self, username, auth_time):
        self.username = username
        self.auth_time = auth_time

    def get_user_id(self):
        return self.username


class Client(ClientMixin):
    def __init__(self, client_id, consent_implied):
        self.client_id = client_id
        self.consent_implied = consent_implied
        self.redirect_uris = [REDIRECT_URI]
        self.grant_types = ["authorization_code", "refresh_token"]
        self.response_types = ["code"]
        self.scope = " ".join(SCOPES)
        self.token_endpoint_auth_method = "none"

    def get_client_id(self):
        return self.client_id

    def get_default_redirect_uri(self):
        return self.redirect_uris[0]

    def get_allowed_scope(self, scope):
        if not scope:
            return ""
        allowed = set(scope_to_list(self.scope))
        return list_to_scope([s for s in scope_to_list(scope) if s in allowed])

    def check_redirect_uri(self, redirect_uri):
        return redirect_uri in self.redirect_uris

    def check_client_secret(self, client_secret):
        return False   # public clients have no secret

    def check_endpoint_auth_method(self, method, endpoint):
        # token and revocation endpoints alike: a public client authenticates with "none"
        return method == self.token_endpoint_auth_method

    def check_response_type(self, response_type):
        return response_type in self.response_types

    def check_grant_type(self, grant_type):
        return grant_type in self.grant_types


CLIENTS = {
    "fr-cli": Client("fr-cli", consent_implied=True),
    "needs-consent": Client("needs-consent", consent_implied=False),
}


class AuthCode:
    def __init__(self, code, client_id, redirect_uri, scope, principal, code_challenge,
                 code_challenge_method, nonce):
        self.code = code
        self.client_id = client_id
        self.redirect_uri = redirect_uri
        self.scope = scope
        self.principal = principal
        self.code_challenge = code_challenge
        self.code_challenge_method = code_challenge_method
        self.nonce = nonce
        self.expires_at = time.time() + CODE_LIFETIME

    # AuthorizationCodeMixin
    def get_redirect_uri(self):
        return self.redirect_uri

    def get_scope(self):
        return self.scope

    # what OpenIDCode.process_token reads
    def get_nonce(self):
        return self.nonce

    def get_auth_time(self):
        return self.principal.auth_time


class Family:
    """The tokens of one authorization (one code): revoking its refresh token ends them all."""

    def __init__(self, client_id, principal, scope):
        self.client_id = client_id
        self.principal = principal
        self.scope = scope
        self.revoked = False


class RefreshRecord:
    def __init__(self, token, family):
        self.token = token
        self.family = family
        self.client_id = family.client_id
        self.expires_at = time.time() + REFRESH_LIFETIME
        self.revoked = False     # /control/revoke-refresh-tokens
        self.consumed = False    # rotated away (--rotate-refresh)

    def usable(self):
        return not (self.revoked or self.consumed or self.family.revoked
                    or time.time() >= self.expires_at)

    # TokenMixin, as RefreshTokenGrant and RevocationEndpoint use it
    def check_client(self, client):
        return self.client_id == client.get_client_id()

    def get_scope(self):
        return self.family.scope

    def get_expires_in(self):
        return ARGS.expires_in

    # what OpenIDToken.process_token reads on a refresh
    def get_nonce(self):
        return None

    def get_auth_time(self):
        return self.family.principal.auth_time


class AccessRecord:
    def __init__(self, token, family, scope, expires_in):
        self.token = token
        self.family = family
        self.client_id = family.client_id
        self.scope = scope
        self.expires_at = time.time() + expires_in
        self.revoked = False

    def check_client(self, client):
        return self.client_id == client.get_client_id()

    def get_scope(self):
        return self.scope

    def get_expires_in(self):
        return ARGS.expires_in

    def is_expired(self):
        return time.time() >= self.expires_at

    def is_revoked(self):
        return self.revoked or self.family.revoked


# ---------------------------------------------------------------------------------------------
# Authlib: grants, extensions, endpoints, server
# ---------------------------------------------------------------------------------------------

PUBLIC_CLIENT_AUTH = ["none", "client_secret_post"]


class AMAuthorizationCodeGrant(grants.AuthorizationCodeGrant):
    TOKEN_ENDPOINT_AUTH_METHODS = PUBLIC_CLIENT_AUTH

    def save_authorization_code(self, code, request):
        data = request.data
        record = AuthCode(
            code=code,
            client_id=request.client.get_client_id(),
            redirect_uri=request.redirect_uri,
            scope=request.scope,
            principal=request.user,
            code_challenge=data.get("code_challenge"),
            code_challenge_method=data.get("code_challenge_method"),
            nonce=data.get("nonce"),
        )
        with LOCK:
            CODES[code] = record
            if record.nonce:
                USED_NONCES.setdefault(record.client_id, set()).add(record.nonce)

    def query_authorization_code(self, code, client):
        with LOCK:
            record = CODES.get(code)
        if record and record.client_id == client.get_client_id() and time.time() < record.expires_at:
            return record
        return None

    def delete_authorization_code(self, authorization_code):
        with LOCK:
            CODES.pop(authorization_code.code, None)

    def authenticate_user(self, authorization_code):
        return authorization_code.principal


class AMRefreshTokenGrant(grants.RefreshTokenGrant):
    TOKEN_ENDPOINT_AUTH_METHODS = PUBLIC_CLIENT_AUTH

    def __init__(self, request, server):
        super().__init__(request, server)
        self.INCLUDE_NEW_REFRESH_TOKEN = ARGS.rotate_refresh
        self._claimed = None

    def validate_token_request(self):
        if ARGS.refresh_delay_ms > 0:
            # Stands for a slow token endpoint (--refresh-delay-ms), so that concurrent callers
            # overlap; it waits for nothing that could be waited on.
            time.sleep(ARGS.refresh_delay_ms / 1000.0)
        try:
            super().validate_token_request()
        except OAuth2Error:
            self._release_claim()
            raise

    def create_token_response(self):
        try:
            return super().create_token_response()
        except OAuth2Error:
            self._release_claim()
            raise

    def _release_claim(self):
        if self._claimed is not None:
            with LOCK:
                self._claimed.consumed = False
            self._claimed = None

    def authenticate_refresh_token(self, refresh_token):
        with LOCK:
            record = REFRESH.get(refresh_token)
            if record is None or not record.usable():
                return None
            if ARGS.rotate_refresh:
                # Claimed now, under the lock: of two refreshes racing with one rotating refresh
                # token, one gets it and the other an invalid_grant (from Authlib, as None is).
                record.consumed = True
                self._claimed = record
            return record

    def authenticate_user(self, credential):
        return credential.family.principal

    def revoke_old_credential(self, credential):
        if ARGS.rotate_refresh:
            with LOCK:
                credential.consumed = True
        # without rotation the refresh token stays valid


class AMOpenIDMixin:
    """id_token claims and keys, bent by /control/id-token."""

    def _mode(self, request):
        return getattr(request, "_id_token_mode", "normal")

    def get_jwt_config(self, grant):
        mode = self._mode(grant.request)
        return {
            "key": OTHER_KEY if mode == "other-key" else SIGNING_KEY,
            "alg": "RS256",
            "iss": ISSUER + "-wrong" if mode == "wrong-iss" else ISSUER,
            "exp": ID_TOKEN_LIFETIME,
        }

    def get_audiences(self, request):
        client_id = request.client.get_client_id()
        if self._mode(request) == "wrong-aud":
            return "not-" + client_id
        return client_id   # a string, as AM writes it

    def generate_user_info(self, user, scope):
        return UserInfo(sub=user.username, subname=user.username, realm="/alpha",
                        tokenName="id_token")

    def exists_nonce(self, nonce, request):
        with LOCK:
            return nonce in USED_NONCES.get(request.client_id, set())

    def process_token(self, grant, token):
        with LOCK:
            mode = MODES["id_token"]
        grant.request._id_token_mode = mode
        token = super().process_token(grant, token)
        if token.get("id_token"):
            token["id_token"] = bend_id_token(token["id_token"], mode, grant.request)
        return token


class AMOpenIDCode(AMOpenIDMixin, OpenIDCode):
    pass


class AMOpenIDToken(AMOpenIDMixin, OpenIDToken):
    """The id_token on a refresh_token grant (no nonce there)."""


def bend_id_token(id_token, mode, request):
    """Authlib signed id_token; the modes Authlib's config cannot express are made from it."""
    if mode not in ("bad-signature", "expired", "wrong-nonce", "alg-none"):
        return id_token
    header_b64, payload_b64, signature_b64 = id_token.split(".")
    if mode == "bad-signature":
        signature = bytearray(b64url_decode(signature_b64))
        signature[len(signature) // 2] ^= 0x01
        return ".".join([header_b64, payload_b64, b64url(bytes(signature))])
    if mode == "alg-none":
        # kid kept, so a client that picks the key by kid and then trusts the header's alg is caught
        header = b64url(json.dumps({"alg": "none", "typ": "JWT", "kid": "rsa-1"},
                                   separators=(",", ":")).encode())
        return header + "." + payload_b64 + "."
    payload = json.loads(b64url_decode(payload_b64))
    if mode == "expired":
        now = int(time.time())
        payload["iat"] = now - 2 * ID_TOKEN_LIFETIME
        payload["exp"] = now - ID_TOKEN_LIFETIME
        payload["auth_time"] = min(payload.get("auth_time", now), payload["iat"])
    elif mode == "wrong-nonce":
        payload["nonce"] = "not-" + secrets.token_urlsafe(16)
    signed = authlib_jwt.encode({"alg": "RS256"}, payload, SIGNING_KEY)
    return signed.decode("ascii") if isinstance(signed, bytes) else signed


class AMRevocationEndpoint(RevocationEndpoint):
    CLIENT_AUTH_METHODS = PUBLIC_CLIENT_AUTH

    def query_token(self, token_string, token_type_hint):
        with LOCK:
            access, refresh = ACCESS.get(token_string), REFRESH.get(token_string)
        if token_type_hint == "access_token":
            return access or refresh
        return refresh or access

    def revoke_token(self, token, request):
        with LOCK:
            if isinstance(token, RefreshRecord):
                token.family.revoked = True    # the refresh token and every access token it begot
            else:
                token.revoked = True


class AMBearerTokenValidator(BearerTokenValidator):
    def authenticate_token(self, token_string):
        with LOCK:
            return ACCESS.get(token_string)


class FrameworkRequest:
    """What this server hands Authlib: method, absolute URI, form fields, headers."""

    def __init__(self, method, uri, form, headers, body=b""):
        self.method = method
        self.uri = uri
        self.form = form
        self.headers = headers
        self.body = body


class AMAuthorizationServer(AuthorizationServer):
    def query_client(self, client_id):
        return CLIENTS.get(client_id)

    def save_token(self, token, request):
        with LOCK:
            if request.grant_type == "refresh_token":
                family = request.credential.family
            else:
                family = Family(request.client.get_client_id(), request.user,
                                token.get("scope") or request.credential.get_scope())
            if token.get("refresh_token"):
                REFRESH[token["refresh_token"]] = RefreshRecord(token["refresh_token"], family)
            ACCESS[token["access_token"]] = AccessRecord(
                token["access_token"], family, token.get("scope"), int(token["expires_in"]))

    def create_oauth2_request(self, request):
        if isinstance(request, OAuth2Request):
            return request
        return OAuth2Request(request.method, request.uri, request.form, request.headers)

    def create_json_request(self, request):
        try:
            data = json.loads(request.body or b"{}")
        except ValueError:
            data = {}
        return HttpRequest(request.method, request.uri, data, request.headers)

    def handle_response(self, status, body, headers):
        if isinstance(body, (dict, list)):
            body = json.dumps(body)
        if isinstance(body, str):
            body = body.encode("utf-8")
        return status, body or b"", list(headers or [])

    def send_signal(self, name, *args, **kwargs):
        pass


def generate_bearer_token(grant_type, client, user=None, scope=None, expires_in=None,
                          include_refresh_token=True):
    generator = BearerTokenGenerator(
        access_token_generator=lambda **_: secrets.token_urlsafe(32),
        refresh_token_generator=lambda **_: secrets.token_urlsafe(32),
    )
    token = generator.generate(grant_type, client, user=user, scope=scope,
                               expires_in=ARGS.expires_in,
                               include_refresh_token=include_refresh_token)
    token["expires_in"] = ARGS.expires_in   # also when it is 0 (Authlib leaves a 0 out)
    return token


def build_authorization_server():
    server = AMAuthorizationServer(scopes_supported=SCOPES)
    server.register_token_generator("default", generate_bearer_token)
    server.register_grant(AMAuthorizationCodeGrant,
                          [CodeChallenge(required=True), AMOpenIDCode(require_nonce=False)])
    server.register_grant(AMRefreshTokenGrant, [AMOpenIDToken()])
    server.register_endpoint(AMRevocationEndpoint)
    return server


AUTH_SERVER = None
RESOURCE_PROTECTOR = ResourceProtector()
RESOURCE_PROTECTOR.register_token_validator(AMBearerTokenValidator())


# ---------------------------------------------------------------------------------------------
# HTTP
# ---------------------------------------------------------------------------------------------

def am_error(status, reason, message):
    return status, {"code": status, "reason": reason, "message": message}


def discovery_document():
    return {
        "issuer": ISSUER,
        "authorization_endpoint": ISSUER + "/authorize",
        "token_endpoint": ISSUER + "/access_token",
        "revocation_endpoint": ISSUER + "/token/revoke",
        "jwks_uri": ISSUER + "/connect/jwk_uri",
        "end_session_endpoint": ISSUER + "/connect/endSession",
        "response_types_supported": ["code"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "code_challenge_methods_supported": ["S256", "plain"],
        "id_token_signing_alg_values_supported": ["RS256"],
        "token_endpoint_auth_methods_supported": ["none", "client_secret_post"],
        "subject_types_supported": ["public"],
        "scopes_supported": SCOPES,
    }


def journey_step():
    auth_id = secrets.token_urlsafe(32)
    with LOCK:
        JOURNEYS[auth_id] = time.time()
    return {
        "authId": auth_id,
        "callbacks": [
            {"type": "NameCallback", "output": [{"name": "prompt", "value": "User Name"}],
             "input": [{"name": "IDToken1", "value": ""}], "_id": 0},
            {"type": "PasswordCallback", "output": [{"name": "prompt", "value": "Password"}],
             "input": [{"name": "IDToken2", "value": ""}], "_id": 1},
        ],
    }


def callback_inputs(body):
    values = {}
    callbacks = body.get("callbacks")
    if isinstance(callbacks, list):
        for callback in callbacks:
            inputs = callback.get("input") if isinstance(callback, dict) else None
            if isinstance(inputs, list):
                for item in inputs:
                    if isinstance(item, dict) and isinstance(item.get("name"), str):
                        values[item["name"]] = item.get("value")
    return values


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def version_string(self):
        return "oauth-am"

    # --- logging: method, path without query, status; nothing else --------------------------
    def log_request(self, code="-", size="-"):
        path = urlsplit(self.path).path if isinstance(self.path, str) else "?"
        log(f"{self.command} {path} {code}")

    def log_error(self, format, *args):
        pass   # send_error's message may quote the request line; the status is logged anyway

    def log_message(self, format, *args):
        pass

    # --- plumbing -------------------------------------------------------------------------------
    def read_body(self):
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            chunks = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    break
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
            return b"".join(chunks)
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length > 0 else b""

    def send(self, status, body=b"", headers=(), content_type=None):
        if isinstance(body, (dict, list)):
            body = json.dumps(body).encode("utf-8")
            content_type = content_type or "application/json"
        elif isinstance(body, str):
            body = body.encode("utf-8")
        self.send_response(status)
        names = {name.lower() for name, _ in headers}
        for name, value in headers:
            self.send_header(name, value)
        if content_type and "content-type" not in names:
            self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def send_triple(self, triple):
        status, body, headers = triple
        self.send(status, body, headers)

    def absolute_uri(self):
        return "%s://127.0.0.1:%d%s" % (SCHEME, self.server.server_address[1], self.path)

    def form(self, body):
        ctype = (self.headers.get("Content-Type") or "").lower()
        if "application/x-www-form-urlencoded" in ctype or (body and not ctype):
            return dict(parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True))
        return {}

    def framework_request(self, body):
        return FrameworkRequest(self.command, self.absolute_uri(), self.form(body), self.headers, body)

    def sso_token(self, header_too=False):
        if header_too:
            value = self.headers.get("iPlanetDirectoryPro")
            if value:
                return value.strip()
        raw = self.headers.get("Cookie")
        if raw:
            jar = SimpleCookie()
            try:
                jar.load(raw)
            except CookieError:
                return None
            if "iPlanetDirectoryPro" in jar:
                return jar["iPlanetDirectoryPro"].value
        return None

    def session(self, header_too=False):
        token = self.sso_token(header_too)
        if not token:
            return None, None
        with LOCK:
            return token, SESSIONS.get(token)

    # --- dispatch -------------------------------------------------------------------------------
    def do_GET(self):
        self.dispatch()

    def do_POST(self):
        self.dispatch()

    def do_PUT(self):
        self.dispatch()

    def do_DELETE(self):
        self.dispatch()

    def dispatch(self):
        try:
            body = self.read_body()
            self.route(body)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
        except Exception as error:  # a bug here must show, without the values it carried
            log("internal error %s:\n%s" % (type(error).__name__,
                                             "".join(traceback.format_tb(error.__traceback__))))
            try:
                self.send(500, {"code": 500, "reason": "Internal Server Error",
                                "message": type(error).__name__})
            except OSError:
                pass
            self.close_connection = True

    def route(self, body):
        path = urlsplit(self.path).path
        method = self.command
        routes = {
            JSON_PREFIX + "/authenticate": ("POST", self.authenticate),
            JSON_PREFIX + "/sessions": ("POST", self.sessions),
            OAUTH_PREFIX + "/.well-known/openid-configuration": ("GET", self.discovery),
            OAUTH_PREFIX + "/authorize": ("GET", self.authorize),
            OAUTH_PREFIX + "/access_token": (None, self.token),   # Authlib judges the method
            OAUTH_PREFIX + "/token/revoke": ("POST", self.revoke),
            OAUTH_PREFIX + "/connect/jwk_uri": ("GET", self.jwks),
            "/api/whoami": ("GET", self.whoami),
            OAUTH_PREFIX + "/userinfo": ("GET", self.whoami),   # AM's userinfo, for the README's curl
            "/control/stats": ("GET", self.control_stats),
            "/control/revoke-refresh-tokens": ("POST", self.control_revoke_refresh),
            "/control/id-token": ("POST", self.control_id_token),
            "/control/state": ("POST", self.control_state),
            "/control/expire-access-tokens": ("POST", self.control_expire_access),
            "/control/token-response": ("POST", self.control_token_response),
        }
        entry = routes.get(path)
        if entry is None:
            self.send(*am_error(404, "Not Found", "Not Found"))
            return
        allowed, handler = entry
        if allowed is not None and method != allowed:
            self.send(*am_error(405, "Method Not Allowed", "Method Not Allowed"),
                      headers=[("Allow", allowed)])
            return
        handler(body)

    # --- AM: journey and sessions ---------------------------------------------------------------
    def authenticate(self, body):
        count("authenticate")
        versions = [part.strip().replace(" ", "")
                    for part in (self.headers.get("Accept-API-Version") or "").split(",")]
        if "resource=2.1" not in versions:
            self.send(*am_error(400, "Bad Request", "missing Accept-API-Version"))
            return
        query = dict(parse_qsl(urlsplit(self.path).query, keep_blank_values=True))
        if (query.get("authIndexType", "service"), query.get("authIndexValue", "Login")) != ("service", "Login"):
            self.send(*am_error(400, "Bad Request", "No Configuration found"))
            return
        try:
            request = json.loads(body.decode("utf-8")) if body.strip() else {}
        except ValueError:
            request = None
        if not isinstance(request, dict):
            self.send(*am_error(400, "Bad Request", "Invalid JSON"))
            return
        auth_id = request.get("authId")
        if not auth_id:
            self.send(200, journey_step())
            return
        with LOCK:
            started = JOURNEYS.pop(auth_id, None) if isinstance(auth_id, str) else None
        inputs = callback_inputs(request)
        if (started is None or inputs.get("IDToken1") != USERNAME
                or not isinstance(inputs.get("IDToken2"), str)
                or not secrets.compare_digest(inputs["IDToken2"].encode(), PASSWORD.encode())):
            self.send(*am_error(401, "Unauthorized", "Login failure"))
            return
        token_id = secrets.token_urlsafe(36)
        with LOCK:
            SESSIONS[token_id] = Principal(USERNAME, int(time.time()))
        self.send(200, {"tokenId": token_id, "successUrl": "/am/console", "realm": "/alpha"},
                  headers=[("Set-Cookie", "iPlanetDirectoryPro=%s; Path=/; HttpOnly" % token_id)])

    def sessions(self, body):
        query = dict(parse_qsl(urlsplit(self.path).query, keep_blank_values=True))
        if query.get("_action") != "logout":
            self.send(*am_error(400, "Bad Request", "Action %s not implemented" % query.get("_action", "")))
            return
        count("logout")
        token, principal = self.session(header_too=True)
        if principal is None:
            self.send(*am_error(401, "Unauthorized", "Access Denied"))
            return
        with LOCK:
            SESSIONS.pop(token, None)
        self.send(200, {"result": "Successfully logged out"})

    # --- OAuth 2 / OIDC -------------------------------------------------------------------------
    def discovery(self, body):
        count("discovery")
        self.send(200, discovery_document())

    def jwks(self, body):
        count("jwks")
        self.send(200, jwks_document())

    def authorize(self, body):
        count("authorize")
        request = self.framework_request(body)
        _, principal = self.session()
        # Authlib validates first (client, redirect URI, response type, scope, PKCE method, nonce
        # replay, prompt); its errors go out as it makes them.
        try:
            grant = AUTH_SERVER.get_consent_grant(request, end_user=principal)
        except OAuth2Error as error:
            self.send_triple(AUTH_SERVER.handle_error_response(None, error))
            return
        if principal is None:
            goto = quote(self.absolute_uri(), safe="")
            self.send(302, headers=[("Location", "%s/XUI/?realm=/alpha&goto=%s" % (BASE, goto)),
                                    ("Cache-Control", "no-store")])
            return
        if not grant.client.consent_implied:
            page = CONSENT_PAGE.format(client=html.escape(grant.client.get_client_id()),
                                       scope=html.escape(grant.request.scope or ""))
            self.send(200, page, headers=[("Cache-Control", "no-store")],
                      content_type="text/html; charset=utf-8")
            return
        status, out, headers = AUTH_SERVER.create_authorization_response(request, grant_user=principal)
        with LOCK:
            wrong_state = MODES["state"] == "wrong"
        if wrong_state and status == 302:
            headers = [(n, wrong_state_location(v) if n.lower() == "location" else v) for n, v in headers]
        self.send(status, out, headers)

    def token(self, body):
        global REFRESH_IN_PROGRESS
        request = self.framework_request(body)
        grant_type = request.form.get("grant_type")
        refreshing = grant_type == "refresh_token"
        with LOCK:
            if grant_type == "authorization_code":
                STATS["token_authorization_code"] += 1
            elif refreshing:
                STATS["token_refresh_token"] += 1
                REFRESH_IN_PROGRESS += 1
                STATS["max_concurrent_refresh"] = max(STATS["max_concurrent_refresh"],
                                                      REFRESH_IN_PROGRESS)
        try:
            if grant_type == "authorization_code":
                with CODE_EXCHANGE_LOCK:
                    triple = AUTH_SERVER.create_token_response(request)
            else:
                triple = AUTH_SERVER.create_token_response(request)
        finally:
            if refreshing:
                with LOCK:
                    REFRESH_IN_PROGRESS -= 1
        if triple[0] >= 400:
            count("token_errors")
        with LOCK:
            mode = MODES["token_response"]
        status, out, headers = triple
        if mode.startswith("expires-in-") and status == 200:
            document = json.loads(out)
            document["expires_in"] = float(mode[len("expires-in-"):])
            triple = (200, json.dumps(document), headers)
        elif mode == "hostile-error":
            # newlines that would forge lines of the client's own, and 200 KB of text
            description = ("refused\nfr-profile: note: forged by the server\n\x1b[31m"
                           + "x" * 200_000)
            triple = (400, json.dumps({"error": "invalid_request", "error_description": description}),
                      [("Content-Type", "application/json")])
        self.send_triple(triple)

    def revoke(self, body):
        count("revoke")
        self.send_triple(AUTH_SERVER.create_endpoint_response(
            RevocationEndpoint.ENDPOINT_NAME, self.framework_request(body)))

    def whoami(self, body):
        request = HttpRequest(self.command, self.absolute_uri(), None, self.headers)
        try:
            token = RESOURCE_PROTECTOR.validate_request(scopes=None, request=request)
        except OAuth2Error as error:
            self.send_triple(AUTH_SERVER.handle_response(*error()))
            return
        self.send(200, {"sub": token.family.principal.username, "client_id": token.client_id})

    # --- control --------------------------------------------------------------------------------
    def control_json(self, body):
        try:
            data = json.loads(body.decode("utf-8")) if body.strip() else {}
        except ValueError:
            return None
        return data if isinstance(data, dict) else None

    def control_stats(self, body):
        with LOCK:
            self.send(200, dict(STATS))

    def control_revoke_refresh(self, body):
        with LOCK:
            for record in REFRESH.values():
                record.revoked = True
            n = len(REFRESH)
        self.send(200, {"revoked_refresh_tokens": n})

    def control_expire_access(self, body):
        now = time.time()
        with LOCK:
            for record in ACCESS.values():
                record.expires_at = min(record.expires_at, now - 1)
            n = len(ACCESS)
        self.send(200, {"expired_access_tokens": n})

    def control_mode(self, body, key, allowed):
        data = self.control_json(body)
        mode = data.get("mode") if data else None
        if mode not in allowed:
            self.send(400, {"error": "mode must be one of: " + ", ".join(allowed)})
            return
        with LOCK:
            MODES[key] = mode
        self.send(200, {"mode": mode})

    def control_id_token(self, body):
        self.control_mode(body, "id_token", ID_TOKEN_MODES)

    def control_state(self, body):
        self.control_mode(body, "state", STATE_MODES)

    def control_token_response(self, body):
        self.control_mode(body, "token_response", TOKEN_RESPONSE_MODES)


def wrong_state_location(location):
    parts = urlsplit(location)
    query = parse_qsl(parts.query, keep_blank_values=True)
    if not any(name == "code" for name, _ in query):
        return location
    query = [(n, v) for n, v in query if n != "state"] + [("state", "not-" + secrets.token_urlsafe(12))]
    return urlunsplit(parts._replace(query=urlencode(query)))


CONSENT_PAGE = """<!DOCTYPE html>
<html><head><title>PingAM</title></head>
<body><h1>Allow access</h1>
<p>The application <b>{client}</b> asks for: {scope}.</p>
<p>(oauth-am test server: consent is not implied for this client, and this page takes no answer.)</p>
</body></html>
"""


# ---------------------------------------------------------------------------------------------
# main
# ---------------------------------------------------------------------------------------------

def parse_args(argv):
    parser = argparse.ArgumentParser(description="PingAM stand-in for fr-profile's OAuth tests")
    parser.add_argument("--expires-in", type=int, default=3600, metavar="SECONDS",
                        help="access token lifetime (default 3600)")
    parser.add_argument("--rotate-refresh", action="store_true",
                        help="each refresh returns a new refresh token; the old one stops working")
    parser.add_argument("--refresh-delay-ms", type=int, default=0, metavar="N",
                        help="sleep N ms inside each refresh_token grant before answering")
    parser.add_argument("--tls", nargs=2, metavar=("CERT", "KEY"),
                        help="serve HTTPS with this PEM certificate and key (kubectl uses exec credential plugins only over TLS)")
    args = parser.parse_args(argv)
    if args.expires_in < 0 or args.refresh_delay_ms < 0:
        parser.error("--expires-in and --refresh-delay-ms take non-negative numbers")
    return args


def main(argv):
    global ARGS, BASE, ISSUER, SIGNING_KEY, OTHER_KEY, AUTH_SERVER, SCHEME
    ARGS = parse_args(argv)
    SIGNING_KEY = make_rsa_jwk("rsa-1")
    OTHER_KEY = make_rsa_jwk("rsa-1")
    AUTH_SERVER = build_authorization_server()

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    port = httpd.server_address[1]
    if ARGS.tls:
        import ssl
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(ARGS.tls[0], ARGS.tls[1])
        # The handshake happens in each request's thread, not in the accepting loop.
        httpd.socket = context.wrap_socket(httpd.socket, server_side=True, do_handshake_on_connect=False)
        SCHEME = "https"
    BASE = "%s://127.0.0.1:%d/am" % (SCHEME, port)
    ISSUER = BASE + "/oauth2" + REALM_PATH

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

    serving = threading.Thread(target=httpd.serve_forever, name="serve", daemon=True)
    serving.start()
    threading.Thread(target=watch_stdin, name="stdin", daemon=True).start()
    try:
        sys.stdout.write("PORT %d\n" % port)
        sys.stdout.flush()
    except OSError:
        stop.set()
    log("listening on 127.0.0.1:%d (expires-in %d, rotate-refresh %s, refresh-delay-ms %d)"
        % (port, ARGS.expires_in, ARGS.rotate_refresh, ARGS.refresh_delay_ms))
    while not stop.wait(1.0):
        pass
    httpd.shutdown()
    httpd.server_close()
    log("stopped")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
