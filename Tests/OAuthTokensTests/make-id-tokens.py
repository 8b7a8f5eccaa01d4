#!/usr/bin/python3
"""ID tokens signed by PyJWT (Debian python3-jwt) for IDTokenTests: an implementation this
project did not write makes the signatures the Swift verifier must accept.

usage: make-id-tokens.py ISSUER CLIENT NONCE NOW
Prints {"jwks": {...}, "tokens": {"RS256": ..., "PS256": ..., "ES256": ..., "RS256-no-kid": ...}}.
"""
import json
import sys

import jwt
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from jwt.algorithms import ECAlgorithm, RSAAlgorithm

issuer, client, nonce, now = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
rsa_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
ec_key = ec.generate_private_key(ec.SECP256R1())

rsa_jwk = json.loads(RSAAlgorithm.to_jwk(rsa_key.public_key()))
rsa_jwk.update({"kid": "rsa", "use": "sig"})
ec_jwk = json.loads(ECAlgorithm.to_jwk(ec_key.public_key()))
ec_jwk.update({"kid": "ec", "use": "sig"})

claims = {"iss": issuer, "aud": client, "sub": "demo", "iat": now, "exp": now + 3600, "nonce": nonce}
tokens = {
    "RS256": jwt.encode(claims, rsa_key, algorithm="RS256", headers={"kid": "rsa"}),
    "PS256": jwt.encode(claims, rsa_key, algorithm="PS256", headers={"kid": "rsa"}),
    "ES256": jwt.encode(claims, ec_key, algorithm="ES256", headers={"kid": "ec"}),
    "RS256-no-kid": jwt.encode(claims, rsa_key, algorithm="RS256"),
    "HS256": jwt.encode(claims, "a shared secret", algorithm="HS256"),
    "aud-list-azp": jwt.encode(dict(claims, aud=[client, "other"], azp=client), rsa_key, algorithm="RS256", headers={"kid": "rsa"}),
    "aud-list-other-azp": jwt.encode(dict(claims, aud=[client, "other"], azp="other"), rsa_key, algorithm="RS256", headers={"kid": "rsa"}),
    "no-sub": jwt.encode({k: v for k, v in claims.items() if k != "sub"}, rsa_key, algorithm="RS256", headers={"kid": "rsa"}),
}
print(json.dumps({"jwks": {"keys": [rsa_jwk, ec_jwk, {"kty": "oct", "k": "c2VjcmV0", "kid": "hmac"}]}, "tokens": tokens}))
