#!/usr/bin/env bash
# Smoke test of oauth-am.py: walks the journey, the authorization code flow with PKCE, the
# id_token (verified with PyJWT against the JWKS), refresh, revocation, logout, the control
# endpoints and the refresh delay, with curl and Debian's /usr/bin/python3 only.
# Prints PASS/FAIL per step; exits non-zero on any FAIL.
set -u

HERE=$(cd "$(dirname "$0")" && pwd)
SERVER="$HERE/oauth-am.py"
PY=/usr/bin/python3
WORK=$(mktemp -d)
FAILS=0
REDIRECT_URI="http://127.0.0.1/fr-profile/callback"
SRV_PID=""

cleanup() {
  if [ -n "$SRV_PID" ] && kill -0 "$SRV_PID" 2>/dev/null; then kill "$SRV_PID" 2>/dev/null; fi
  [ -n "${KEEP_LOG:-}" ] && cp "$WORK/server.log" "$KEEP_LOG"; rm -rf "$WORK"
}
trap cleanup EXIT

pass() { echo "PASS $*"; }
fail() { echo "FAIL $*"; FAILS=$((FAILS + 1)); }
# check NAME COMMAND...: PASS when the command succeeds
check() { local name=$1; shift; if "$@"; then pass "$name"; else fail "$name"; fi; }

cat >"$WORK/h.py" <<'EOF'
import base64, hashlib, json, secrets, sys, time
from urllib.parse import urlsplit, parse_qs, unquote
cmd, args = sys.argv[1], sys.argv[2:]
def load(p):
    with open(p) as f:
        return json.load(f)
if cmd == "get":            # get FILE KEY -> value (JSON for non-strings), exit 1 if absent
    d = load(args[0])
    for k in args[1].split("."):
        if not isinstance(d, dict) or k not in d:
            sys.exit(1)
        d = d[k]
    print(d if isinstance(d, str) else json.dumps(d))
elif cmd == "pkce":         # -> verifier challenge state nonce
    v = secrets.token_urlsafe(32)
    c = base64.urlsafe_b64encode(hashlib.sha256(v.encode()).digest()).rstrip(b"=").decode()
    print(v, c, secrets.token_urlsafe(12), secrets.token_urlsafe(12))
elif cmd == "location":     # location HEADERS_FILE
    for line in open(args[0], encoding="latin-1"):
        if line.lower().startswith("location:"):
            print(line.split(":", 1)[1].strip())
            break
    else:
        sys.exit(1)
elif cmd == "param":        # param URL NAME
    q = parse_qs(urlsplit(args[0]).query)
    if args[1] not in q:
        sys.exit(1)
    print(q[args[1]][0])
elif cmd == "unquote":
    print(unquote(args[0]))
elif cmd == "verify":       # verify ID_TOKEN JWKS_FILE ISS AUD NONCE|- -> prints claims or the error
    import jwt
    token, jwks, iss, aud, nonce = args
    try:
        header = jwt.get_unverified_header(token)
        keys = {k["kid"]: k for k in load(jwks)["keys"]}
        jwk = keys.get(header.get("kid"), keys["rsa-1"])   # PyJWT, not a missing kid, judges alg none
        key = jwt.algorithms.RSAAlgorithm.from_jwk(json.dumps(jwk))
        claims = jwt.decode(token, key, algorithms=["RS256"], audience=aud, issuer=iss,
                            options={"require": ["exp", "iat", "iss", "aud", "sub"]})
        if nonce != "-" and claims.get("nonce") != nonce:
            raise ValueError("nonce %r != %r" % (claims.get("nonce"), nonce))
        if nonce == "-" and "nonce" in claims:
            raise ValueError("unexpected nonce")
        if claims["sub"] != "demo" or "auth_time" not in claims or header.get("kid") != "rsa-1":
            raise ValueError("sub/auth_time/kid")
        print("OK", json.dumps(claims, sort_keys=True))
    except Exception as e:
        print("REJECTED", type(e).__name__, e)
        sys.exit(1)
elif cmd == "stats":        # stats FILE k=v ... -> exit 1 on a mismatch, printing it
    d = load(args[0]); bad = []
    for kv in args[1:]:
        k, v = kv.split("=")
        if d.get(k) != int(v):
            bad.append("%s=%s (want %s)" % (k, d.get(k), v))
    print(" ".join(bad) if bad else "counters as expected")
    sys.exit(1 if bad else 0)
EOF
h() { "$PY" "$WORK/h.py" "$@"; }

# req METHOD URL [curl args...]: CODE, $WORK/body, $WORK/hdr
req() {
  local method=$1 url=$2; shift 2
  CODE=$(curl -s -X "$method" -o "$WORK/body" -D "$WORK/hdr" -w '%{http_code}' "$@" "$url")
}

# counters the server should report at the end
N_AUTHN=0 N_AUTHZ=0 N_CODE=0 N_REFRESH=0 N_TOKEN_ERR=0 N_REVOKE=0 N_LOGOUT=0 N_JWKS=0 N_DISC=0

start_server() {
  coproc SRV { exec "$PY" "$SERVER" "$@" 2>>"$WORK/server.log"; }
  SRV_OUT=${SRV[0]} SRV_IN=${SRV[1]}
  local word=""
  PORT=""
  read -r -t 30 -u "$SRV_OUT" word PORT
  if [ "$word" = PORT ] && [ -n "$PORT" ]; then pass "server${*:+ $*} printed PORT $PORT"; else fail "server${*:+ $*} printed no PORT"; exit 1; fi
  BASE="http://127.0.0.1:$PORT/am"
  ISSUER="$BASE/oauth2/realms/root/realms/alpha"
  AUTHN="$BASE/json/realms/root/realms/alpha/authenticate?authIndexType=service&authIndexValue=Login"
  LOGOUT="$BASE/json/realms/root/realms/alpha/sessions?_action=logout"
  N_AUTHN=0 N_AUTHZ=0 N_CODE=0 N_REFRESH=0 N_TOKEN_ERR=0 N_REVOKE=0 N_LOGOUT=0 N_JWKS=0 N_DISC=0
}

stop_server_by_stdin() {
  local pid=$SRV_PID
  eval "exec ${SRV_IN}>&- ${SRV_OUT}<&-"
  wait "$pid"; local rc=$?
  SRV_PID=""
  check "closing stdin ends the server with status 0 (got $rc)" [ "$rc" -eq 0 ]
}

stop_server_by_sigterm() {
  local pid=$SRV_PID
  kill -TERM "$pid"
  wait "$pid"; local rc=$?
  eval "exec ${SRV_IN}>&- ${SRV_OUT}<&-"
  SRV_PID=""
  check "SIGTERM ends the server with status 0 (got $rc)" [ "$rc" -eq 0 ]
}

API=(-H 'Accept-API-Version: resource=2.1, protocol=1.0' -H 'Content-Type: application/json')

# login: sets SSO (the tokenId)
login() {
  req POST "$AUTHN" "${API[@]}" -d '{}'; N_AUTHN=$((N_AUTHN + 1))
  local auth_id; auth_id=$(h get "$WORK/body" authId)
  req POST "$AUTHN" "${API[@]}" -d "{\"authId\":\"$auth_id\",\"callbacks\":[{\"type\":\"NameCallback\",\"input\":[{\"name\":\"IDToken1\",\"value\":\"demo\"}],\"_id\":0},{\"type\":\"PasswordCallback\",\"input\":[{\"name\":\"IDToken2\",\"value\":\"Secret123!\"}],\"_id\":1}]}"
  N_AUTHN=$((N_AUTHN + 1))
  SSO=$(h get "$WORK/body" tokenId)
}

# authorize [CLIENT]: sets VERIFIER CHALLENGE STATE NONCE AUTHZ_URL, CODE (HTTP), LOCATION, AUTH_CODE
authorize() {
  local client=${1:-fr-cli}
  read -r VERIFIER CHALLENGE STATE NONCE < <(h pkce)
  AUTHZ_URL="$ISSUER/authorize?client_id=$client&response_type=code&redirect_uri=http%3A%2F%2F127.0.0.1%2Ffr-profile%2Fcallback&scope=openid%20profile%20email&state=$STATE&nonce=$NONCE&code_challenge=$CHALLENGE&code_challenge_method=S256"
  req GET "$AUTHZ_URL" -H "Cookie: iPlanetDirectoryPro=$SSO"; N_AUTHZ=$((N_AUTHZ + 1))
  LOCATION=$(h location "$WORK/hdr" || true)
  AUTH_CODE=$(h param "$LOCATION" code 2>/dev/null || true)
}

# exchange CODE VERIFIER: HTTP CODE, body in $WORK/body
exchange() {
  req POST "$ISSUER/access_token" --data-urlencode grant_type=authorization_code \
    --data-urlencode "code=$1" --data-urlencode "redirect_uri=$REDIRECT_URI" \
    --data-urlencode client_id=fr-cli --data-urlencode "code_verifier=$2"
  N_CODE=$((N_CODE + 1)); [ "$CODE" -ge 400 ] && N_TOKEN_ERR=$((N_TOKEN_ERR + 1))
  return 0
}

refresh() {   # refresh RT
  req POST "$ISSUER/access_token" --data-urlencode grant_type=refresh_token \
    --data-urlencode "refresh_token=$1" --data-urlencode client_id=fr-cli
  N_REFRESH=$((N_REFRESH + 1)); [ "$CODE" -ge 400 ] && N_TOKEN_ERR=$((N_TOKEN_ERR + 1))
  return 0
}

revoke() {   # revoke TOKEN [HINT]
  local hint=()
  [ $# -ge 2 ] && hint=(--data-urlencode "token_type_hint=$2")
  req POST "$ISSUER/token/revoke" --data-urlencode "token=$1" --data-urlencode client_id=fr-cli "${hint[@]}"
  N_REVOKE=$((N_REVOKE + 1))
}

whoami() { req GET "http://127.0.0.1:$PORT/api/whoami" -H "Authorization: Bearer $1"; }

# full_flow: login-less (uses SSO); sets AT RT IDT (and NONCE)
full_flow() {
  authorize
  exchange "$AUTH_CODE" "$VERIFIER"
  AT=$(h get "$WORK/body" access_token) RT=$(h get "$WORK/body" refresh_token) IDT=$(h get "$WORK/body" id_token)
}

concurrent_refreshes() {   # two refreshes of $1 at once: $WORK/parcode1, $WORK/parcode2
  local pids=() i
  for i in 1 2; do
    curl -s -o "$WORK/par$i" -w '%{http_code}' -X POST "$ISSUER/access_token" --data-urlencode grant_type=refresh_token \
      --data-urlencode "refresh_token=$1" --data-urlencode client_id=fr-cli >"$WORK/parcode$i" &
    pids+=($!)
  done
  wait "${pids[@]}"
}

is_error() {   # is_error STATUS ERROR: last response has that status and Authlib's error
  [ "$CODE" = "$1" ] && [ "$(h get "$WORK/body" error)" = "$2" ]
}

############################################################################################
echo "== server with defaults"
start_server

# 1. journey
req POST "$AUTHN" -H 'Content-Type: application/json' -d '{}'; N_AUTHN=$((N_AUTHN + 1))
check "authenticate without Accept-API-Version: 400 ($CODE)" \
  [ "$CODE" = 400 -a "$(h get "$WORK/body" message)" = "missing Accept-API-Version" ]

req POST "$AUTHN" "${API[@]}" -d '{}'; N_AUTHN=$((N_AUTHN + 1))
AUTH_ID=$(h get "$WORK/body" authId)
check "authenticate {}: 200 with authId, NameCallback IDToken1, PasswordCallback IDToken2" \
  [ "$CODE" = 200 -a -n "$AUTH_ID" -a "$(h get "$WORK/body" callbacks | tr -d ' ')" = \
    '[{"type":"NameCallback","output":[{"name":"prompt","value":"UserName"}],"input":[{"name":"IDToken1","value":""}],"_id":0},{"type":"PasswordCallback","output":[{"name":"prompt","value":"Password"}],"input":[{"name":"IDToken2","value":""}],"_id":1}]' ]

req POST "$AUTHN" "${API[@]}" -d "{\"authId\":\"$AUTH_ID\",\"callbacks\":[{\"type\":\"NameCallback\",\"input\":[{\"name\":\"IDToken1\",\"value\":\"demo\"}],\"_id\":0},{\"type\":\"PasswordCallback\",\"input\":[{\"name\":\"IDToken2\",\"value\":\"wrong\"}],\"_id\":1}]}"
N_AUTHN=$((N_AUTHN + 1))
check "authenticate with a wrong password: 401 Login failure ($CODE)" \
  [ "$CODE" = 401 -a "$(h get "$WORK/body" message)" = "Login failure" ]

login
check "authenticate demo/Secret123!: 200 tokenId (${#SSO} chars) successUrl /am/console realm /alpha" \
  [ "$CODE" = 200 -a "${#SSO}" -ge 40 -a "$(h get "$WORK/body" successUrl)" = /am/console -a "$(h get "$WORK/body" realm)" = /alpha ]
check "tokenId is URL-safe" bash -c '[[ "$0" =~ ^[A-Za-z0-9_-]+$ ]]' "$SSO"

# 2. discovery
req GET "$ISSUER/.well-known/openid-configuration"; N_DISC=$((N_DISC + 1))
check "discovery: issuer and endpoints" [ "$CODE" = 200 \
  -a "$(h get "$WORK/body" issuer)" = "$ISSUER" \
  -a "$(h get "$WORK/body" authorization_endpoint)" = "$ISSUER/authorize" \
  -a "$(h get "$WORK/body" token_endpoint)" = "$ISSUER/access_token" \
  -a "$(h get "$WORK/body" revocation_endpoint)" = "$ISSUER/token/revoke" \
  -a "$(h get "$WORK/body" jwks_uri)" = "$ISSUER/connect/jwk_uri" \
  -a "$(h get "$WORK/body" end_session_endpoint)" = "$ISSUER/connect/endSession" \
  -a "$(h get "$WORK/body" code_challenge_methods_supported)" = '["S256", "plain"]' \
  -a "$(h get "$WORK/body" token_endpoint_auth_methods_supported)" = '["none", "client_secret_post"]' \
  -a "$(h get "$WORK/body" id_token_signing_alg_values_supported)" = '["RS256"]' \
  -a "$(h get "$WORK/body" response_types_supported)" = '["code"]' ]

# 3. authorize without a session -> XUI
SAVED_SSO=$SSO; SSO=not-a-session
authorize
SSO=$SAVED_SSO
GOTO=$(h param "$LOCATION" goto 2>/dev/null || true)
check "authorize without a valid session: 302 to XUI with goto = the authorize URL" \
  [ "$CODE" = 302 -a "${LOCATION%%goto=*}" = "$BASE/XUI/?realm=/alpha&" -a "$GOTO" = "$AUTHZ_URL" ]

# 3/4. authorize with the session, wrong verifier, then a fresh code with the right one
authorize
check "authorize with the session: 302 to the redirect URI with code and the same state" \
  [ "$CODE" = 302 -a "${LOCATION%%\?*}" = "$REDIRECT_URI" -a -n "$AUTH_CODE" -a "$(h param "$LOCATION" state)" = "$STATE" ]
WRONG_VERIFIER=$(h pkce | cut -d' ' -f1)
exchange "$AUTH_CODE" "$WRONG_VERIFIER"
check "token with a wrong code_verifier: 400 invalid_grant ($CODE $(cat "$WORK/body"))" is_error 400 invalid_grant

authorize
exchange "$AUTH_CODE" "$VERIFIER"
cp "$WORK/body" "$WORK/token1"
AT=$(h get "$WORK/token1" access_token) RT=$(h get "$WORK/token1" refresh_token) IDT=$(h get "$WORK/token1" id_token)
check "token with a fresh code and the right verifier: 200 Bearer, expires_in 3600, access/refresh/id tokens" \
  [ "$CODE" = 200 -a "$(h get "$WORK/token1" token_type)" = Bearer -a "$(h get "$WORK/token1" expires_in)" = 3600 -a -n "$AT" -a -n "$RT" -a -n "$IDT" ]
exchange "$AUTH_CODE" "$VERIFIER"
check "the same code a second time: 400 invalid_grant ($CODE)" is_error 400 invalid_grant

# 5. JWKS and the id_token
req GET "$ISSUER/connect/jwk_uri"; N_JWKS=$((N_JWKS + 1)); cp "$WORK/body" "$WORK/jwks"
check "JWKS: one RSA key rsa-1, use sig, alg RS256" [ "$CODE" = 200 -a \
  "$("$PY" -c 'import json,sys; k=json.load(open(sys.argv[1]))["keys"]; print(len(k), k[0]["kty"], k[0]["kid"], k[0]["use"], k[0]["alg"], bool(k[0]["n"]), k[0]["e"])' "$WORK/jwks")" = "1 RSA rsa-1 sig RS256 True AQAB" ]
OUT=$(h verify "$IDT" "$WORK/jwks" "$ISSUER" fr-cli "$NONCE")
check "id_token verified by PyJWT (RS256, kid rsa-1, iss, aud fr-cli, nonce, sub demo): ${OUT:0:60}..." [ "${OUT%% *}" = OK ]

# 8. whoami
whoami "$AT"
check "whoami with the access token: 200 sub demo client_id fr-cli" \
  [ "$CODE" = 200 -a "$(h get "$WORK/body" sub)" = demo -a "$(h get "$WORK/body" client_id)" = fr-cli ]
whoami "not-a-token"
check "whoami with an unknown token: 401 ($CODE)" [ "$CODE" = 401 ]

# 4. refresh
refresh "$RT"
AT2=$(h get "$WORK/body" access_token); IDT2=$(h get "$WORK/body" id_token)
NEW_RT=$(h get "$WORK/body" refresh_token || true)
check "refresh: 200 with a new access token and no new refresh token (not rotating)" \
  [ "$CODE" = 200 -a -n "$AT2" -a "$AT2" != "$AT" -a -z "$NEW_RT" ]
OUT=$(h verify "$IDT2" "$WORK/jwks" "$ISSUER" fr-cli -)
check "refresh id_token verified (no nonce)" [ "${OUT%% *}" = OK ]
whoami "$AT2"
check "whoami with the refreshed access token: 200" [ "$CODE" = 200 ]
refresh "$RT"
AT3=$(h get "$WORK/body" access_token)
check "the kept refresh token works again: 200" [ "$CODE" = 200 ]

# 6. revocation
revoke "$RT" refresh_token
check "revoke the refresh token: 200 ($CODE)" [ "$CODE" = 200 ]
refresh "$RT"
check "refresh after revocation: 400 invalid_grant ($CODE)" is_error 400 invalid_grant
whoami "$AT"; C1=$CODE; whoami "$AT3"; C3=$CODE
check "access tokens issued with the revoked refresh token: 401 ($C1 $C3)" [ "$C1" = 401 -a "$C3" = 401 ]
revoke "unknown-token"
check "revoke an unknown token: 200 ($CODE)" [ "$CODE" = 200 ]
full_flow
revoke "$AT" access_token
C1=$CODE; whoami "$AT"; C2=$CODE; refresh "$RT"
check "revoke an access token: 200, it is refused (401), its refresh token still works (200): $C1 $C2 $CODE" \
  [ "$C1" = 200 -a "$C2" = 401 -a "$CODE" = 200 ]

# Authlib's answers to requests it refuses
req GET "$ISSUER/authorize?client_id=fr-cli&response_type=code&redirect_uri=http%3A%2F%2Fevil.example%2Fcb&scope=openid&state=s1&code_challenge=abc&code_challenge_method=S256" \
  -H "Cookie: iPlanetDirectoryPro=$SSO"; N_AUTHZ=$((N_AUTHZ + 1))
check "authorize with an unregistered redirect_uri: Authlib's 400 invalid_request ($CODE $(cat "$WORK/body"))" is_error 400 invalid_request
req GET "$ISSUER/authorize?client_id=nobody&response_type=code&redirect_uri=http%3A%2F%2F127.0.0.1%2Ffr-profile%2Fcallback&scope=openid&state=s1" \
  -H "Cookie: iPlanetDirectoryPro=$SSO"; N_AUTHZ=$((N_AUTHZ + 1))
check "authorize with an unknown client: Authlib's 400 invalid_client ($CODE)" is_error 400 invalid_client
req GET "$ISSUER/authorize?client_id=fr-cli&response_type=code&redirect_uri=http%3A%2F%2F127.0.0.1%2Ffr-profile%2Fcallback&scope=openid&state=s2&code_challenge=abc&code_challenge_method=S512" \
  -H "Cookie: iPlanetDirectoryPro=$SSO"; N_AUTHZ=$((N_AUTHZ + 1))
LOCATION=$(h location "$WORK/hdr" || true)
ERR_STATE=$(h param "$LOCATION" state 2>/dev/null || echo "(none)")
check "authorize with an unsupported code_challenge_method: Authlib redirects with error=invalid_request (state in it: $ERR_STATE)" \
  [ "$CODE" = 302 -a "${LOCATION%%\?*}" = "$REDIRECT_URI" -a "$(h param "$LOCATION" error)" = invalid_request ]
# Without code_challenge, Authlib 1.2.0 issues the code; CodeChallenge(required=True) refuses it at the token endpoint
req GET "$ISSUER/authorize?client_id=fr-cli&response_type=code&redirect_uri=http%3A%2F%2F127.0.0.1%2Ffr-profile%2Fcallback&scope=openid&state=s3" \
  -H "Cookie: iPlanetDirectoryPro=$SSO"; N_AUTHZ=$((N_AUTHZ + 1))
LOCATION=$(h location "$WORK/hdr" || true); NOPKCE_CODE=$(h param "$LOCATION" code 2>/dev/null || true)
echo "INFO authorize without code_challenge: HTTP $CODE, code issued: $([ -n "$NOPKCE_CODE" ] && echo yes || echo no)"
req POST "$ISSUER/access_token" --data-urlencode grant_type=authorization_code --data-urlencode "code=$NOPKCE_CODE" \
  --data-urlencode "redirect_uri=$REDIRECT_URI" --data-urlencode client_id=fr-cli
N_CODE=$((N_CODE + 1)); N_TOKEN_ERR=$((N_TOKEN_ERR + 1))
check "a code without PKCE exchanged without code_verifier: Authlib's 400 invalid_request ($CODE $(cat "$WORK/body"))" is_error 400 invalid_request
exchange "$NOPKCE_CODE" "$VERIFIER"
check "a code without PKCE exchanged with some code_verifier: Authlib's 400 invalid_grant ($CODE)" is_error 400 invalid_grant
req POST "$ISSUER/access_token" --data-urlencode grant_type=password --data-urlencode client_id=fr-cli
N_TOKEN_ERR=$((N_TOKEN_ERR + 1))
check "token with grant_type=password: Authlib's 400 unsupported_grant_type ($CODE)" is_error 400 unsupported_grant_type

# consent page
authorize needs-consent
CTYPE=$(grep -i '^content-type:' "$WORK/hdr" | tr -d '\r' | cut -d' ' -f2-)
check "authorize for needs-consent: 200 text/html consent page ($CODE $CTYPE)" \
  [ "$CODE" = 200 -a "${CTYPE%%;*}" = text/html -a -z "$AUTH_CODE" ]

# wrong state
req POST "http://127.0.0.1:$PORT/control/state" -d '{"mode":"wrong"}'
authorize
GOT_STATE=$(h param "$LOCATION" state)
check "state mode wrong: the redirect carries a code and another state" [ "$CODE" = 302 -a -n "$AUTH_CODE" -a "$GOT_STATE" != "$STATE" ]
req POST "http://127.0.0.1:$PORT/control/state" -d '{"mode":"normal"}'
authorize
check "state mode normal again: same state" [ "$(h param "$LOCATION" state)" = "$STATE" ]

# id_token modes: each one refused by PyJWT (or by the nonce/sub check)
for mode in bad-signature other-key wrong-aud wrong-iss expired wrong-nonce alg-none; do
  req POST "http://127.0.0.1:$PORT/control/id-token" -d "{\"mode\":\"$mode\"}"
  full_flow
  OUT=$(h verify "$IDT" "$WORK/jwks" "$ISSUER" fr-cli "$NONCE")
  check "id-token mode $mode: rejected (${OUT:0:90})" [ "${OUT%% *}" = REJECTED ]
done
req POST "http://127.0.0.1:$PORT/control/id-token" -d '{"mode":"alg-none"}'
full_flow
check "alg-none header is {alg: none, kid: rsa-1} and the signature is empty" \
  [ "$("$PY" -c 'import base64,json,sys; h,p,s=sys.argv[1].split("."); d=json.loads(base64.urlsafe_b64decode(h+"==")); print(d["alg"], d.get("kid"), repr(s))' "$IDT")" = "none rsa-1 ''" ]
req POST "http://127.0.0.1:$PORT/control/id-token" -d '{"mode":"sideways"}'
check "id-token mode unknown: 400 ($CODE)" [ "$CODE" = 400 ]
req POST "http://127.0.0.1:$PORT/control/id-token" -d '{"mode":"normal"}'
full_flow
OUT=$(h verify "$IDT" "$WORK/jwks" "$ISSUER" fr-cli "$NONCE")
check "id-token mode normal again: verified" [ "${OUT%% *}" = OK ]

# expire-access-tokens, revoke-refresh-tokens
req POST "http://127.0.0.1:$PORT/control/expire-access-tokens"
whoami "$AT"; C1=$CODE
refresh "$RT"; AT4=$(h get "$WORK/body" access_token); C2=$CODE
whoami "$AT4"
check "expire-access-tokens: old access token 401, refresh 200, new access token 200 ($C1 $C2 $CODE)" \
  [ "$C1" = 401 -a "$C2" = 200 -a "$CODE" = 200 ]
req POST "http://127.0.0.1:$PORT/control/revoke-refresh-tokens"
refresh "$RT"
check "revoke-refresh-tokens: refresh 400 invalid_grant ($CODE)" is_error 400 invalid_grant

# 7. logout
req POST "$LOGOUT" "${API[@]}" -H "iPlanetDirectoryPro: $SSO"; N_LOGOUT=$((N_LOGOUT + 1))
check "logout with the session: 200 Successfully logged out ($CODE)" \
  [ "$CODE" = 200 -a "$(h get "$WORK/body" result)" = "Successfully logged out" ]
req POST "$LOGOUT" "${API[@]}" -H "iPlanetDirectoryPro: $SSO"; N_LOGOUT=$((N_LOGOUT + 1))
check "logout again: 401 Access Denied ($CODE)" [ "$CODE" = 401 -a "$(h get "$WORK/body" message)" = "Access Denied" ]
authorize
check "authorize with the ended session: 302 to XUI" [ "$CODE" = 302 -a "${LOCATION%%\?*}" = "$BASE/XUI/" ]
login
req POST "$LOGOUT" "${API[@]}" -H "Cookie: iPlanetDirectoryPro=$SSO"; N_LOGOUT=$((N_LOGOUT + 1))
check "logout with the session as a cookie: 200 ($CODE)" [ "$CODE" = 200 ]

# 9. stats
req GET "http://127.0.0.1:$PORT/control/stats"
OUT=$(h stats "$WORK/body" authenticate=$N_AUTHN authorize=$N_AUTHZ token_authorization_code=$N_CODE \
  token_refresh_token=$N_REFRESH token_errors=$N_TOKEN_ERR revoke=$N_REVOKE logout=$N_LOGOUT jwks=$N_JWKS \
  discovery=$N_DISC max_concurrent_refresh=1)
check "stats: $OUT ($(cat "$WORK/body"))" [ "$OUT" = "counters as expected" ]

stop_server_by_stdin

############################################################################################
echo "== server with --refresh-delay-ms 600 (two concurrent refreshes of one kept refresh token)"
start_server --refresh-delay-ms 600
login; full_flow
concurrent_refreshes "$RT"
P1=$(cat "$WORK/parcode1") P2=$(cat "$WORK/parcode2")
check "two concurrent refreshes: both 200 ($P1 $P2)" [ "$P1" = 200 -a "$P2" = 200 ]
req GET "http://127.0.0.1:$PORT/control/stats"
check "max_concurrent_refresh = 2 ($(h get "$WORK/body" max_concurrent_refresh))" [ "$(h get "$WORK/body" max_concurrent_refresh)" = 2 ]
stop_server_by_sigterm

############################################################################################
echo "== server with --rotate-refresh --refresh-delay-ms 600 --expires-in 120"
start_server --rotate-refresh --refresh-delay-ms 600 --expires-in 120
login; full_flow
check "expires_in 120" [ "$(h get "$WORK/body" expires_in)" = 120 ]
refresh "$RT"; RT2=$(h get "$WORK/body" refresh_token); AT2=$(h get "$WORK/body" access_token)
check "rotating refresh: 200 with a new refresh token" [ "$CODE" = 200 -a -n "$RT2" -a "$RT2" != "$RT" ]
refresh "$RT"
check "the rotated-away refresh token: 400 invalid_grant ($CODE)" is_error 400 invalid_grant
whoami "$AT"; C1=$CODE; whoami "$AT2"
check "access tokens from before and after the rotation still work ($C1 $CODE)" [ "$C1" = 200 -a "$CODE" = 200 ]
concurrent_refreshes "$RT2"
P=$(printf '%s\n' "$(cat "$WORK/parcode1")" "$(cat "$WORK/parcode2")" | sort | tr '\n' ' ')
check "two concurrent refreshes of one rotating refresh token: one 200, one 400 ($P)" [ "$P" = "200 400 " ]
req GET "http://127.0.0.1:$PORT/control/stats"
check "max_concurrent_refresh = 2 ($(h get "$WORK/body" max_concurrent_refresh))" [ "$(h get "$WORK/body" max_concurrent_refresh)" = 2 ]
stop_server_by_stdin

if grep -qE "$SSO|$RT2|Secret123" "$WORK/server.log"; then fail "server log carries a secret"; else pass "server log has no token or password ($(wc -l <"$WORK/server.log") lines)"; fi

echo
if [ "$FAILS" -eq 0 ]; then echo "ALL PASS"; exit 0; else echo "$FAILS FAIL"; exit 1; fi
