/*
 * fr-profile TPM attestation: a Scripted Decision node script for PingAM's legacy JavaScript
 * engine (Rhino, with Java classes). Outcomes:
 *   "activated"  the TPM released the credential: its attestation key is kept (first node only)
 *   "true"       a JWS's TPM evidence was verified, and nothing else ends "true" (second node only)
 *   "false"      anything else; the reason is logged and left in sharedState "frTpmAttestation.refused"
 *
 * Place two Scripted Decision nodes with this script in the journey (docs/tpm.md "TPM attestation"):
 *
 *   ... Username -> Password -> [this script] -activated-> Device Binding -> Device Signing Verifier
 *       -> [this script] -true-> success
 *
 * Wire "activated" only in the first node and "true" only in the second; every other outcome of
 * either node goes to failure. An activation proves a TPM, not that a key is in it, so an
 * "activated" that reached success would pass a journey that never verified a JWS.
 *
 * The first node runs the credential-activation rounds: it asks the device for its endorsement
 * key (EK), EK certificate and attestation key (AK) in a HiddenValueCallback
 * "frTpmAttestationRequest", checks the certificate against the TPM manufacturer roots below,
 * seals a credential to the EK for the AK (TPM2_MakeCredential) in a HiddenValueCallback
 * "frTpmAttestationChallenge", and keeps the AK once the device's TPM released the credential.
 * The second node reads the JWS the Device Signing Verifier node leaves in transient state
 * ("DeviceSigningVerifierNode.JWT") and checks its "tpmEvidence" claim: TPM2_Certify of the
 * signing key by that AK over SHA-256 of the JWS's challenge, a key made in the TPM that cannot
 * leave it (fixedTPM, fixedParent, sensitiveDataOrigin), and the JWS signed by that key.
 * A file key's JWS carries no evidence and is refused.
 *
 * Java classes used (add them to the legacy engine's class allowlist, "Java class whitelist"):
 *   java.security.*, java.security.spec.*, java.security.cert.*, javax.crypto.*,
 *   javax.crypto.spec.*, java.math.BigInteger, java.util.Base64 and its Encoder/Decoder,
 *   java.util.ArrayList, java.util.HashSet, java.io.ByteArrayInputStream,
 *   com.sun.identity.authentication.callbacks.HiddenValueCallback,
 *   org.forgerock.openam.auth.node.api.Action and its ActionBuilder.
 */

/* ---- Configuration: the TPM manufacturer roots an EK certificate must chain to (PEM), their
 * issuing CAs when TPMs store only the leaf, and EK names (hex) trusted without a certificate.
 * A harness may define FR_TPM_ATTESTATION_CONFIG before this script to replace it. */
var CONFIG = (typeof FR_TPM_ATTESTATION_CONFIG !== "undefined") ? FR_TPM_ATTESTATION_CONFIG : {
  rootsPem: "",
  intermediatesPem: "",
  trustedEkNames: []
};

var fr = JavaImporter(
  org.forgerock.openam.auth.node.api.Action,
  com.sun.identity.authentication.callbacks.HiddenValueCallback
);

var STATE_KEY = "frTpmAttestation";
var REQUEST_ID = "frTpmAttestationRequest";
var CHALLENGE_ID = "frTpmAttestationChallenge";
var JWT_KEY = "DeviceSigningVerifierNode.JWT";

/* ---- Bounds, checked before any JSON.parse or base64 decode. Rhino's JSON.parse recurses once
 * per nesting level and its StackOverflowError is beyond JavaScript's catch (the node would end
 * without a reason), and a megabyte JWS costs seconds of CPU in the byte loops below. The
 * largest genuine document is a request with an RSA EK certificate, 2-3 KB, and none nests
 * deeper than 2 (claims -> tpmEvidence): 64 Ki characters and 16 levels leave ample room. */
var MAX_LENGTH = 65536;
var MAX_DEPTH = 16;

function boundedJSON(text, what) {
  text = String(text);
  if (text.length > MAX_LENGTH) throw new Error(what + " is longer than " + MAX_LENGTH + " characters");
  var depth = 0;
  var inString = false;
  for (var i = 0; i < text.length; i++) {
    var c = text.charAt(i);
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
    } else if (c === '"') {
      inString = true;
    } else if (c === "[" || c === "{") {
      if (++depth > MAX_DEPTH) throw new Error(what + " is nested deeper than " + MAX_DEPTH + " levels");
    } else if ((c === "]" || c === "}") && --depth < 0) {
      throw new Error(what + " is not JSON");
    }
  }
  return JSON.parse(text);
}

/* Text for a log line: control characters (C0, DEL, C1, U+2028/2029) replaced, so nothing in
 * it starts a line a log reader would take for another entry. */
function loggable(text, limit) {
  text = String(text);
  if (text.length > limit) {
    var end = /[\ud800-\udbff]/.test(text.charAt(limit - 1)) ? limit - 1 : limit; /* not half a surrogate pair */
    text = text.substring(0, end) + "...";
  }
  return text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, "?");
}

/* What a device chose (its error text, a callback id), quoted in a reason: 200 characters. */
function deviceText(text) { return loggable(text, 200); }

/* ---- Bytes: JavaScript arrays of 0..255; Java byte[] only at the Java boundary. */

function toJava(bytes) {
  var out = java.lang.reflect.Array.newInstance(java.lang.Byte.TYPE, bytes.length);
  for (var i = 0; i < bytes.length; i++) out[i] = (bytes[i] << 24) >> 24;
  return out;
}

function fromJava(javaBytes) {
  var out = [];
  for (var i = 0; i < javaBytes.length; i++) out.push(javaBytes[i] & 0xff);
  return out;
}

function utf8(text) { return fromJava(new java.lang.String(text).getBytes("UTF-8")); }

function b64uDecode(text) {
  if (typeof text !== "string" || text.length > MAX_LENGTH || !/^[A-Za-z0-9_-]*$/.test(text)) throw new Error("not base64url");
  var bytes = fromJava(java.util.Base64.getUrlDecoder().decode(new java.lang.String(text)));
  /* One byte string, one spelling: Java's decoder ignores unused bits that are not zero ("QR"
   * and "QQ" are both "A"), so the text must be what the bytes encode to (as the Swift side). */
  if (b64uEncode(bytes) !== text) throw new Error("not canonical base64url");
  return bytes;
}

function b64uEncode(bytes) {
  return String(java.util.Base64.getUrlEncoder().withoutPadding().encodeToString(toJava(bytes)));
}

function equal(a, b) {
  if (a.length !== b.length) return false;
  var diff = 0;
  for (var i = 0; i < a.length; i++) diff |= a[i] ^ b[i];
  return diff === 0;
}

function hex(bytes) {
  var s = "";
  for (var i = 0; i < bytes.length; i++) s += (bytes[i] < 16 ? "0" : "") + bytes[i].toString(16);
  return s;
}

function u32(value) { return [(value >>> 24) & 0xff, (value >>> 16) & 0xff, (value >>> 8) & 0xff, value & 0xff]; }

function sized(bytes) { return [(bytes.length >> 8) & 0xff, bytes.length & 0xff].concat(bytes); }

function sha256(bytes) {
  return fromJava(java.security.MessageDigest.getInstance("SHA-256").digest(toJava(bytes)));
}

function hmac(key, data) {
  var mac = javax.crypto.Mac.getInstance("HmacSHA256");
  mac.init(new javax.crypto.spec.SecretKeySpec(toJava(key), "HmacSHA256"));
  return fromJava(mac.doFinal(toJava(data)));
}

function randomBytes(count) {
  var out = java.lang.reflect.Array.newInstance(java.lang.Byte.TYPE, count);
  new java.security.SecureRandom().nextBytes(out);
  return fromJava(out);
}

/* ---- TPM structures (TPM 2.0 part 2), big-endian. */

function Reader(bytes) { this.bytes = bytes; this.index = 0; }
Reader.prototype.take = function (count) {
  if (count < 0 || this.index + count > this.bytes.length) throw new Error("a TPM structure is truncated");
  var out = this.bytes.slice(this.index, this.index + count);
  this.index += count;
  return out;
};
Reader.prototype.u16 = function () { var b = this.take(2); return (b[0] << 8) | b[1]; };
Reader.prototype.u32 = function () { var b = this.take(4); return ((b[0] << 24) | (b[1] << 16) | (b[2] << 8) | b[3]) >>> 0; };
Reader.prototype.sized = function () { return this.take(this.u16()); };
Reader.prototype.atEnd = function () { return this.index === this.bytes.length; };

/* RSA keys: an odd public exponent of at least 3 and a 2048-4096-bit modulus. Anything else is
 * no sound key, and a huge modulus only buys a device the verifier's time. */
function checkRSA(exponent, modulus) {
  if (exponent < 3 || exponent % 2 === 0) throw new Error("an RSA key with exponent " + exponent + " (it must be odd and at least 3)");
  var i = 0;
  while (i < modulus.length && modulus[i] === 0) i++;
  var bits = (modulus.length - i) * 8;
  if (i < modulus.length) for (var top = modulus[i]; top < 0x80; top <<= 1) bits--;
  if (bits < 2048 || bits > 4096) throw new Error("an RSA key of " + bits + " bits (it must have 2048 to 4096)");
}

var ATTR = { fixedTPM: 0x2, fixedParent: 0x10, sensitiveDataOrigin: 0x20, restricted: 0x10000, decrypt: 0x20000, sign: 0x40000 };

/* A TPM2B_PUBLIC of an ECC P-256 or RSA key: its area, name, attributes and key. */
function parsePublic(tpm2b) {
  var outer = new Reader(tpm2b);
  var area = outer.sized();
  if (!outer.atEnd()) throw new Error("a public area has trailing bytes");
  var r = new Reader(area);
  var key = { area: area, name: [0x00, 0x0b].concat(sha256(area)) };
  key.type = r.u16();
  var nameAlg = r.u16();
  key.attributes = r.u32();
  r.sized(); /* authPolicy */
  if (nameAlg !== 0x000b) throw new Error("a name algorithm other than SHA-256");
  if (r.u16() !== 0x0010) { r.u16(); r.u16(); } /* symmetric */
  var scheme = r.u16();
  if (scheme !== 0x0010) r.u16();
  if (key.type === 0x0001) {
    r.u16(); /* keyBits */
    var exponent = r.u32();
    key.exponent = exponent === 0 ? 65537 : exponent;
    key.modulus = r.sized();
    checkRSA(key.exponent, key.modulus);
  } else if (key.type === 0x0023) {
    var curve = r.u16();
    if (r.u16() !== 0x0010) r.u16(); /* kdf */
    key.x = r.sized();
    key.y = r.sized();
    if (curve !== 0x0003 || key.x.length > 32 || key.y.length > 32) throw new Error("a curve other than NIST P-256");
  } else {
    throw new Error("a public area neither ECC nor RSA");
  }
  if (!r.atEnd()) throw new Error("a public area has trailing bytes");
  key.has = function (attribute) { return (this.attributes & attribute) !== 0; };
  return key;
}

function padded(bytes) { while (bytes.length < 32) bytes = [0].concat(bytes); return bytes; }

function ecParameters() {
  var parameters = java.security.AlgorithmParameters.getInstance("EC");
  parameters.init(new java.security.spec.ECGenParameterSpec("secp256r1"));
  return parameters.getParameterSpec(java.security.spec.ECParameterSpec);
}

function javaECKey(key) {
  var point = new java.security.spec.ECPoint(
    new java.math.BigInteger(1, toJava(key.x)), new java.math.BigInteger(1, toJava(key.y)));
  return java.security.KeyFactory.getInstance("EC").generatePublic(new java.security.spec.ECPublicKeySpec(point, ecParameters()));
}

function javaRSAKey(key) {
  return java.security.KeyFactory.getInstance("RSA").generatePublic(new java.security.spec.RSAPublicKeySpec(
    new java.math.BigInteger(1, toJava(key.modulus)), java.math.BigInteger.valueOf(key.exponent)));
}

/* ECDSA P-256 / SHA-256 over data, signature as raw R||S (the TPM's and JWS ES256's form). */
function verifiesES256(key, data, rawSignature) {
  if (rawSignature.length !== 64) return false;
  var verifier = java.security.Signature.getInstance("SHA256withECDSAinP1363Format");
  verifier.initVerify(javaECKey(key));
  verifier.update(toJava(data));
  return verifier.verify(toJava(rawSignature));
}

/* ---- TPM2_MakeCredential (TPM 2.0 part 1, "Credential Protection", "Secret Sharing"). */

function kdfa(key, label, contextU, contextV, bits) {
  var out = [];
  for (var counter = 1; out.length * 8 < bits; counter++) {
    out = out.concat(hmac(key, u32(counter).concat(utf8(label), [0], contextU, contextV, u32(bits))));
  }
  return out.slice(0, bits / 8);
}

function makeCredential(ek, objectName, credential) {
  var seed, encryptedSecret;
  if (ek.type === 0x0023) {
    var generator = java.security.KeyPairGenerator.getInstance("EC");
    generator.initialize(new java.security.spec.ECGenParameterSpec("secp256r1"));
    var ephemeral = generator.generateKeyPair();
    var agreement = javax.crypto.KeyAgreement.getInstance("ECDH");
    agreement.init(ephemeral.getPrivate());
    agreement.doPhase(javaECKey(ek), true);
    var z = padded(fromJava(agreement.generateSecret()));
    var w = ephemeral.getPublic().getW();
    var ex = padded(fromJava(w.getAffineX().toByteArray()).slice(-32));
    var ey = padded(fromJava(w.getAffineY().toByteArray()).slice(-32));
    seed = sha256(u32(1).concat(z, utf8("IDENTITY"), [0], ex, padded(ek.x)));
    encryptedSecret = sized(ex).concat(sized(ey));
  } else {
    seed = randomBytes(32);
    var cipher = javax.crypto.Cipher.getInstance("RSA/ECB/OAEPPadding");
    var oaep = new javax.crypto.spec.OAEPParameterSpec("SHA-256", "MGF1", java.security.spec.MGF1ParameterSpec.SHA256,
      new javax.crypto.spec.PSource.PSpecified(toJava(utf8("IDENTITY").concat([0]))));
    cipher.init(javax.crypto.Cipher.ENCRYPT_MODE, javaRSAKey(ek), oaep);
    encryptedSecret = fromJava(cipher.doFinal(toJava(seed)));
  }
  var symmetricKey = kdfa(seed, "STORAGE", objectName, [], 128);
  var aes = javax.crypto.Cipher.getInstance("AES/CFB/NoPadding");
  aes.init(javax.crypto.Cipher.ENCRYPT_MODE, new javax.crypto.spec.SecretKeySpec(toJava(symmetricKey), "AES"),
    new javax.crypto.spec.IvParameterSpec(toJava(zeros(16))));
  var encIdentity = fromJava(aes.doFinal(toJava(sized(credential))));
  var integrity = hmac(kdfa(seed, "INTEGRITY", [], [], 256), encIdentity.concat(objectName));
  return { credentialBlob: sized(integrity).concat(encIdentity), encryptedSecret: encryptedSecret };
}

function zeros(count) { var out = []; for (var i = 0; i < count; i++) out.push(0); return out; }

/* ---- The EK certificate: PKIX path to a configured root, and it certifies this EK. */

/* The EK's authPolicy in the TCG EK Credential Profile's templates: PolicySecret(TPM_RH_ENDORSEMENT). */
var EK_POLICY = [
  0x83, 0x71, 0x97, 0x67, 0x44, 0x84, 0xb3, 0xf8, 0x1a, 0x90, 0xcc, 0x8d, 0x46, 0xa5, 0xd7, 0x24,
  0xfd, 0x52, 0xd7, 0x6e, 0x06, 0x52, 0x0b, 0x64, 0xf2, 0xa1, 0xda, 0x1b, 0x33, 0x14, 0x69, 0xaa
];

/* `value` big-endian in exactly `length` bytes. */
function unsigned(value, length) {
  var bytes = fromJava(value.toByteArray());
  while (bytes.length > length && bytes[0] === 0) bytes = bytes.slice(1);
  if (value.signum() < 0 || bytes.length > length) throw new Error("a key value longer than " + length + " bytes");
  while (bytes.length < length) bytes = [0].concat(bytes);
  return bytes;
}

function isP256(parameters) {
  var p256 = ecParameters();
  return parameters.getCurve().equals(p256.getCurve()) && parameters.getGenerator().equals(p256.getGenerator())
    && parameters.getOrder().equals(p256.getOrder()) && parameters.getCofactor() === p256.getCofactor();
}

/* The TPMT_PUBLIC a TPM makes for the certified key from template L-1 (RSA 2048) or L-2 (ECC
 * P-256). The sent area must be exactly this: any other bytes that still carry the same key (a
 * zero-padded unique, another policy, symmetric key or exponent) give the one TPM another EK
 * name, so it could enrol under many. */
function ekTemplate(certified) {
  var head = [0x00, 0x0b].concat(u32(0x000300b2), sized(EK_POLICY), [0x00, 0x06, 0x00, 0x80, 0x00, 0x43, 0x00, 0x10]);
  var algorithm = String(certified.getAlgorithm());
  if (algorithm === "RSA") {
    if (!certified.getPublicExponent().equals(java.math.BigInteger.valueOf(65537)) || certified.getModulus().bitLength() !== 2048) {
      throw new Error("the EK certificate's RSA key is not 2048 bits with exponent 65537 (template L-1)");
    }
    return [0x00, 0x01].concat(head, [0x08, 0x00], u32(0), sized(unsigned(certified.getModulus(), 256)));
  }
  if (algorithm === "EC") {
    if (!isP256(certified.getParams())) throw new Error("the EK certificate's EC key is not on NIST P-256 (template L-2)");
    var w = certified.getW();
    return [0x00, 0x23].concat(head, [0x00, 0x03, 0x00, 0x10], sized(unsigned(w.getAffineX(), 32)), sized(unsigned(w.getAffineY(), 32)));
  }
  throw new Error("the EK certificate's key is neither RSA nor EC");
}

function certificates(pem) {
  var factory = java.security.cert.CertificateFactory.getInstance("X.509");
  var list = new java.util.ArrayList();
  if (pem) {
    var all = factory.generateCertificates(new java.io.ByteArrayInputStream(new java.lang.String(pem).getBytes("US-ASCII")));
    list.addAll(all);
  }
  return list;
}

function checkEndorsementCertificate(der, ek) {
  var factory = java.security.cert.CertificateFactory.getInstance("X.509");
  var leaf = factory.generateCertificate(new java.io.ByteArrayInputStream(toJava(der)));
  var template = ekTemplate(leaf.getPublicKey());
  var anchors = new java.util.HashSet();
  var roots = certificates(CONFIG.rootsPem);
  for (var i = 0; i < roots.size(); i++) anchors.add(new java.security.cert.TrustAnchor(roots.get(i), null));
  if (anchors.isEmpty()) return "no TPM manufacturer roots are configured";
  var selector = new java.security.cert.X509CertSelector();
  selector.setCertificate(leaf);
  var parameters = new java.security.cert.PKIXBuilderParameters(anchors, selector);
  parameters.setRevocationEnabled(false);
  var pool = certificates(CONFIG.intermediatesPem);
  pool.add(leaf);
  parameters.addCertStore(java.security.cert.CertStore.getInstance("Collection",
    new java.security.cert.CollectionCertStoreParameters(pool)));
  try {
    java.security.cert.CertPathBuilder.getInstance("PKIX").build(parameters);
  } catch (e) {
    return "the EK certificate does not chain to a trusted TPM manufacturer root (" + e + ")";
  }
  return equal(template, ek.area) ? null : "the EK public area is not the TCG template for its certificate's key";
}

/* ---- The rounds. */

function message(text) {
  var value = boundedJSON(text, "the callback value");
  if (value === null || typeof value !== "object") throw new Error("not a JSON object");
  if (typeof value.error === "string") throw new Error("the client cannot attest: " + deviceText(value.error));
  if (value.v !== 1) throw new Error("not version 1");
  return value;
}

function send(id, value) {
  action = fr.Action.send(new fr.HiddenValueCallback(id, JSON.stringify(value))).build();
}

/* Java's exception messages in a reason can quote a certificate, so the whole reason is
 * made loggable too. */
function refuse(reason) {
  reason = loggable(reason, 1000);
  logger.error("fr-profile TPM attestation refused: " + reason);
  sharedState.put(STATE_KEY + ".refused", reason);
  outcome = "false";
}

var EK_TYPES = { eccP256: 0x0023, rsa2048: 0x0001 };

function challengeRound(request) {
  if (request.ekType !== "eccP256" && request.ekType !== "rsa2048") return refuse("unknown ekType");
  var ek = parsePublic(b64uDecode(request.ekPublic));
  if (ek.type !== EK_TYPES[request.ekType]) return refuse("the ekType is not the type of the EK public area");
  var ak = parsePublic(b64uDecode(request.akPublic));
  var certified = false;
  if (typeof request.ekCertificate === "string") {
    var problem = checkEndorsementCertificate(b64uDecode(request.ekCertificate), ek);
    if (problem) return refuse(problem);
    certified = true;
  } else if (CONFIG.trustedEkNames.indexOf(hex(ek.name)) < 0) {
    return refuse("the TPM sent no EK certificate and its endorsement key is not among the trusted ones");
  }
  if (!(ek.has(ATTR.restricted) && ek.has(ATTR.decrypt))) return refuse("the endorsement key is not a restricted decryption key");
  if (!(ak.has(ATTR.restricted) && ak.has(ATTR.sign) && ak.has(ATTR.fixedTPM) && ak.has(ATTR.fixedParent)
    && ak.has(ATTR.sensitiveDataOrigin)) || ak.has(ATTR.decrypt) || ak.type !== 0x0023) {
    return refuse("the attestation key is not a restricted TPM signing key");
  }
  var credential = randomBytes(32);
  var sealed = makeCredential(ek, ak.name, credential);
  sharedState.put(STATE_KEY, JSON.stringify({
    akPublic: request.akPublic, credentialDigest: b64uEncode(sha256(credential)), ekName: hex(ek.name),
    ekCertified: certified, activated: false
  }));
  send(CHALLENGE_ID, { v: 1, credentialBlob: b64uEncode(sealed.credentialBlob), encryptedSecret: b64uEncode(sealed.encryptedSecret) });
}

function activationRound(answer, pending) {
  if (!equal(sha256(b64uDecode(answer.secret)), b64uDecode(pending.credentialDigest))) {
    return refuse("the answer is not the credential sealed to the endorsement key: that TPM did not release it");
  }
  pending.activated = true;
  delete pending.credentialDigest;
  sharedState.put(STATE_KEY, JSON.stringify(pending));
  outcome = "activated";
}

function verifyRound(jws, state) {
  jws = String(jws);
  if (jws.length > MAX_LENGTH) return refuse("the JWS is longer than " + MAX_LENGTH + " characters");
  var parts = jws.split(".");
  if (parts.length !== 3) return refuse("not a compact JWS");
  var header = boundedJSON(new java.lang.String(toJava(b64uDecode(parts[0])), "UTF-8"), "the JWS header");
  var claims = boundedJSON(new java.lang.String(toJava(b64uDecode(parts[1])), "UTF-8"), "the JWS claims");
  if (header.alg !== "ES256") return refuse("a JWS not signed with ES256");
  var evidence = claims.tpmEvidence;
  if (!evidence || typeof evidence !== "object") {
    return refuse("the JWS carries no tpmEvidence claim (a file key, or a client that does not attest)");
  }
  if (evidence.v !== 1) return refuse("the evidence is not version 1");
  var ak = parsePublic(b64uDecode(state.akPublic));
  if (!equal(parsePublic(b64uDecode(evidence.akPublic)).name, ak.name)) {
    return refuse("the attestation key was not activated with this TPM's endorsement key");
  }
  var attest = b64uDecode(evidence.attest);
  if (!verifiesES256(ak, attest, b64uDecode(evidence.signature))) {
    return refuse("the attestation's signature does not verify with the attestation key");
  }
  var r = new Reader(attest);
  if (r.u32() !== 0xff544347 || r.u16() !== 0x8017) return refuse("the signed structure is not a TPM2_Certify attestation");
  r.sized(); /* qualifiedSigner */
  var extraData = r.sized();
  r.take(8 + 4 + 4 + 1 + 8); /* clockInfo, firmwareVersion */
  var certifiedName = r.sized();
  if (typeof claims.challenge !== "string" || !equal(extraData, sha256(utf8(claims.challenge)))) {
    return refuse("the attestation is for another nonce (replayed?)");
  }
  var key = parsePublic(b64uDecode(evidence.keyPublic));
  if (!equal(certifiedName, key.name)) return refuse("the attestation certifies another key");
  if (!(key.type === 0x0023 && key.has(ATTR.fixedTPM) && key.has(ATTR.fixedParent) && key.has(ATTR.sensitiveDataOrigin)
    && key.has(ATTR.sign))) {
    return refuse("the certified key is not bound to its TPM (fixedTPM, fixedParent, sensitiveDataOrigin, sign)");
  }
  if (!verifiesES256(key, utf8(parts[0] + "." + parts[1]), b64uDecode(parts[2]))) {
    return refuse("the certified key is not the key in the JWS");
  }
  sharedState.put(STATE_KEY + ".key", b64uEncode(padded(key.x).concat(padded(key.y))));
  outcome = "true";
}

function main() {
  var stateText = sharedState.get(STATE_KEY);
  var state = stateText ? boundedJSON(stateText, "the shared state") : null;
  var jws = transientState.get(JWT_KEY);
  if (jws) {
    if (!(state && state.activated)) return refuse("a JWS but no activated attestation key in shared state");
    return verifyRound(jws, state);
  }
  /* An activated key and no JWS: this is the verification node and the JWS is missing. A new
   * activation here would end a journey in success with no key's evidence checked. */
  if (state && state.activated) return refuse("no JWS from the Device Signing Verifier node in transient state");
  if (callbacks.isEmpty()) return send(REQUEST_ID, { v: 1 });
  var callback = callbacks.get(0);
  var id = String(callback.getId());
  if (id === REQUEST_ID) return challengeRound(message(callback.getValue()));
  if (id === CHALLENGE_ID) {
    if (!state || typeof state.credentialDigest !== "string") return refuse("an answer without a pending activation");
    return activationRound(message(callback.getValue()), state);
  }
  return refuse("an unexpected callback " + deviceText(id));
}

try {
  main();
} catch (e) {
  refuse(String(e.message || e));
}
