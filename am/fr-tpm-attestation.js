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
 * The boot quote (CONFIG.boot.quote, true by default): once the TPM released the credential, the
 * first node does not end "activated" yet. It keeps a fresh 32-byte nonce in the pending state
 * and sends a HiddenValueCallback "frTpmBootQuote", value {"v":1,"nonce":"<b64url>"}. The device
 * answers in that callback (up to 1 Mi characters: the event log is in it) with
 *   {"v":1, "attest":"<b64url TPMS_ATTEST of TPM2_Quote>", "signature":"<b64url R||S, ECDSA
 *    P-256/SHA-256 by the AK>", "akPublic":"<b64url TPM2B_PUBLIC>", "pcrs":{"0":"<b64url sha256
 *    value>", ..., "7":..., "14":...}, "eventLog":"<b64url binary_bios_measurements>"}
 * with "eventLogMissing":"<why>" instead of "eventLog" when it cannot read the log, or
 * {"v":1,"error":"..."} when it cannot quote. Checked in this order; a refusal's check name is
 * left in sharedState "frTpmAttestation.refusedCheck" (and its reason in ".refused"):
 *   malformed      not v1, a member missing or of the wrong type, not base64url, pcrs not exactly
 *                  "0".."7","14" or a value not 32 bytes, both or neither of eventLog and
 *                  eventLogMissing; also a quote with no nonce pending
 *   cannotQuote    the device sent {"error": ...}
 *   signature      akPublic is not the activated AK, or the signature does not verify with it
 *   notQuote       not a TPMS_ATTEST of type TPM_ST_ATTEST_QUOTE, parsed whole
 *   nonce          extraData is not the nonce sent
 *   selection      not exactly one bank, sha256, PCRs 0-7 and 14
 *   pcrDigest      SHA-256 of the sent values (ascending PCR order) is not the quoted digest
 *   enrolledPcrs   CONFIG.boot.enrolledPcrs has values for this EK name and a quoted PCR differs
 *                  (with an event log or without one)
 * With an event log (TCG PC Client crypto-agile; a SHA-1 legacy log has no sha256 digests):
 *   eventLog       it does not parse, lacks the sha256 bank or an event's sha256 digest, or is
 *                  beyond a bound (MAX_LOG_SIZE bytes, MAX_EVENTS events, MAX_EVENT_SIZE bytes
 *                  an event: 512 KiB, 4096, 64 KiB), named in the reason
 *   replay         a quoted PCR is not what the log replays to (PCR 0 from the StartupLocality
 *                  event's locality, EV_NO_ACTION not extended): events altered, reordered,
 *                  left out, or an extend outside the log
 *   debugMode      "UEFI Debug Mode" EV_EFI_ACTION in PCR 7
 *   separators     a PCR 0-7 without its separator, a second one, or one not 0x00000000
 *   bootState      in PCR 7: a digest not the hash of its data, a malformed, duplicate or
 *                  unexpected variable, a Secure Boot variable after the separator, an
 *                  unexpected event type, no SecureBoot variable (PCR 4 actions' digests too),
 *                  shim's MokSBState not one byte 0 or 1; of malformed variables only one
 *                  shape is read: old shims' authority events after the separator, 6 bytes
 *                  longer than their length fields (shimLengthBugVariable)
 *   secureBootOff  SecureBoot is not 1 and CONFIG.boot.requireSecureBoot is true
 *   shimValidationOff  shim measured MokSBState = 1 into PCR 7 (mokutil --disable-validation:
 *                  GRUB and the kernel not verified) and CONFIG.boot.requireSecureBoot is true
 * Without an event log:
 *   noEventLog     CONFIG.boot.requireSecureBoot is true: Secure Boot cannot be read without the
 *                  firmware event log
 * On success the node ends "activated" with sharedState "frTpmAttestation.boot" = JSON
 * {"method":"eventLog"|"enrolledPCRs"|"quoteOnly", "secureBoot":true|false|null,
 *  "shimValidation":true|false|null (false: MokSBState = 1 measured; null without a log),
 *  "dmaProtectionDisabled":true|false|null ("DMA Protection Disabled" in PCR 7; null without a log),
 *  ("eventLog" whenever the log was read, enrolled values compared too or not; "enrolledPCRs"
 *  without a log),
 *  "bootApplications":["<hex sha256 of each PCR 4 EV_EFI_BOOT_SERVICES_APPLICATION>"...],
 *  "pcrs":{"0":"<hex>",...}, "note":"<what was and was not proven>"}.
 * The quote proves the TPM's PCRs; only the replayed log says what they measured, and only
 * enrolled values say they are the boot seen before. With CONFIG.boot.quote false the node ends
 * "activated" after the credential round, as before, and leaves no "frTpmAttestation.boot".
 *
 * Java classes used (add them to the legacy engine's class allowlist, "Java class whitelist"):
 *   java.security.*, java.security.spec.*, java.security.cert.*, javax.crypto.*,
 *   javax.crypto.spec.*, java.math.BigInteger, java.util.Base64 and its Encoder/Decoder,
 *   java.util.ArrayList, java.util.HashSet, java.io.ByteArrayInputStream,
 *   com.sun.identity.authentication.callbacks.HiddenValueCallback,
 *   org.forgerock.openam.auth.node.api.Action and its ActionBuilder; and, for moving bytes
 *   (toJava, fromJava), java.lang.String, java.lang.reflect.Array, java.util.Arrays and
 *   java.util.stream.IntStream (what String.chars() returns; its implementation classes are
 *   java.util.stream.*). The tests' Rhino has no class allowlist: these are read from the code.
 */

/* ---- Configuration: the TPM manufacturer roots an EK certificate must chain to (PEM), their
 * issuing CAs when TPMs store only the leaf, EK names (hex) trusted without a certificate, and
 * the boot quote's policy. A harness may define FR_TPM_ATTESTATION_CONFIG before this script to
 * replace it; a "boot" it lacks (or members of it) take the defaults below. */
var CONFIG = (typeof FR_TPM_ATTESTATION_CONFIG !== "undefined") ? FR_TPM_ATTESTATION_CONFIG : {
  rootsPem: "",
  intermediatesPem: "",
  trustedEkNames: [],
  /* The boot quote after activation (header, "The boot quote"): quote, whether to ask for it;
   * requireSecureBoot, refuse a boot whose Secure Boot is off or cannot be read; enrolledPcrs,
   * EK name (hex) -> {"0": b64url, ..., "7": ..., "14": ...} recorded at enrolment. */
  boot: { quote: true, requireSecureBoot: true, enrolledPcrs: {} }
};

/* A configuration without "boot", or with only some of its members, gets the defaults for the
 * rest. */
CONFIG.boot = (function (given) {
  var defaults = { quote: true, requireSecureBoot: true, enrolledPcrs: {} };
  var boot = {};
  for (var key in defaults) {
    boot[key] = (given && typeof given === "object" && given[key] !== undefined && given[key] !== null) ? given[key] : defaults[key];
  }
  return boot;
})(CONFIG.boot);

var fr = JavaImporter(
  org.forgerock.openam.auth.node.api.Action,
  com.sun.identity.authentication.callbacks.HiddenValueCallback
);

var STATE_KEY = "frTpmAttestation";
var REQUEST_ID = "frTpmAttestationRequest";
var CHALLENGE_ID = "frTpmAttestationChallenge";
var QUOTE_ID = "frTpmBootQuote";
var JWT_KEY = "DeviceSigningVerifierNode.JWT";

/* ---- Bounds, checked before any JSON.parse or base64 decode. Rhino's JSON.parse recurses once
 * per nesting level and its StackOverflowError is beyond JavaScript's catch (the node would end
 * without a reason), and a megabyte JWS costs seconds of CPU in the byte loops below. The
 * largest genuine document is a request with an RSA EK certificate, 2-3 KB, and none nests
 * deeper than 2 (claims -> tpmEvidence): 64 Ki characters and 16 levels leave ample room. */
var MAX_LENGTH = 65536;
var MAX_DEPTH = 16;
/* The boot quote carries the firmware event log, tens of kilobytes on a real machine (dbx
 * alone can be 15 KB) and rarely more than a few hundred: its callback value, and its eventLog
 * member, may have up to 1 Mi characters. */
var QUOTE_MAX_LENGTH = 1048576;

function boundedJSON(text, what, limit) {
  text = String(text);
  limit = limit || MAX_LENGTH;
  if (text.length > limit) throw new Error(what + " is longer than " + limit + " characters");
  var depth = 0;
  var inString = false;
  for (var i = 0; i < text.length; i++) {
    if (inString) {
      /* To the string's closing quote at once (a boot quote's event log is a megabyte string):
       * the next quote not escaped by an odd run of backslashes. */
      var quote = text.indexOf('"', i);
      if (quote < 0) break; /* unterminated: JSON.parse refuses it */
      var backslashes = 0;
      while (quote - backslashes - 1 >= i && text.charAt(quote - backslashes - 1) === "\\") backslashes++;
      if (backslashes % 2 === 0) inString = false;
      i = quote;
      continue;
    }
    var c = text.charAt(i);
    if (c === '"') {
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

/* Bytes cross the boundary in a few Java calls, not one LiveConnect element access (or one
 * interpreted loop step) per byte, which costs Rhino's interpreter (AM runs scripts interpreted)
 * about a microsecond each on a 20-50 KB event log: to Java as ISO-8859-1 text (each byte the
 * character of its value); from Java as that text's characters (0-255) listed by
 * Arrays.toString and read back with JSON.parse, both Java code. */
function toJava(bytes) {
  var text = "";
  for (var at = 0; at < bytes.length; at += 8192) text += String.fromCharCode.apply(null, bytes.slice(at, at + 8192));
  return new java.lang.String(text).getBytes("ISO-8859-1");
}

function fromJava(javaBytes) {
  return JSON.parse(String(java.util.Arrays.toString(new java.lang.String(javaBytes, "ISO-8859-1").chars().toArray())));
}

function utf8(text) { return fromJava(new java.lang.String(text).getBytes("UTF-8")); }

function b64uDecode(text, limit) {
  if (typeof text !== "string" || text.length > (limit || MAX_LENGTH) || !/^[A-Za-z0-9_-]*$/.test(text)) throw new Error("not base64url");
  var decoded = java.util.Base64.getUrlDecoder().decode(new java.lang.String(text));
  /* One byte string, one spelling: Java's decoder ignores unused bits that are not zero ("QR"
   * and "QQ" are both "A"), so the text must be what the bytes encode to (as the Swift side).
   * Re-encoded from the Java array: a megabyte event log is seconds of element copies in Rhino. */
  if (String(java.util.Base64.getUrlEncoder().withoutPadding().encodeToString(decoded)) !== text) {
    throw new Error("not canonical base64url");
  }
  return fromJava(decoded);
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
Reader.prototype.u8 = function () { return this.take(1)[0]; };
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
 * made loggable too. `check`, the boot quote's name for the check that failed, is left in
 * sharedState "frTpmAttestation.refusedCheck". */
function refuse(reason, check) {
  reason = loggable(reason, 1000);
  logger.error("fr-profile TPM attestation refused: " + reason);
  sharedState.put(STATE_KEY + ".refused", reason);
  if (check) sharedState.put(STATE_KEY + ".refusedCheck", check);
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
  delete pending.credentialDigest;
  if (CONFIG.boot.quote !== false) {
    /* Not activated yet: the key is kept once its quote of the boot verifies. */
    var nonce = randomBytes(32);
    pending.quoteNonce = b64uEncode(nonce);
    sharedState.put(STATE_KEY, JSON.stringify(pending));
    return send(QUOTE_ID, { v: 1, nonce: pending.quoteNonce });
  }
  pending.activated = true;
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

/* ---- The boot quote: TPM2_Quote of PCRs 0-7 and 14 by the activated AK, and the firmware
 * event log that explains them (TCG PC Client Platform Firmware Profile). The same rules as
 * Sources/TPMAttestation/BootLog (EventLog.swift, Replay.swift, SecureBootState.swift). */

var QUOTED_PCRS = [0, 1, 2, 3, 4, 5, 6, 7, 14];
var ALG_SHA1 = 0x0004;
var ALG_SHA256 = 0x000b;

/* An error naming the boot quote's check that failed (refuse() leaves it in shared state). */
function refusal(check, reason) {
  var error = new Error(reason);
  error.check = check;
  return error;
}

/* Runs `body`; whatever it throws without a check name is refused under `check`. */
function checking(check, body) {
  try {
    return body();
  } catch (e) {
    if (e && e.check) throw e;
    throw refusal(check, String((e && e.message) || e));
  }
}

function isObject(value) { return value !== null && typeof value === "object" && !Array.isArray(value); }

/* The device's quote document, every member checked for type, encoding and size. */
function quoteDocument(text) {
  return checking("malformed", function () {
    var doc = boundedJSON(text, "the boot quote", QUOTE_MAX_LENGTH);
    if (!isObject(doc)) throw new Error("the boot quote is not a JSON object");
    if (typeof doc.error === "string") throw refusal("cannotQuote", "the device cannot quote: " + deviceText(doc.error));
    if (doc.v !== 1) throw new Error("the boot quote is not version 1");
    function bytes(member, limit) {
      if (typeof doc[member] !== "string") throw new Error("the boot quote has no string " + member);
      try {
        return b64uDecode(doc[member], limit);
      } catch (e) {
        throw new Error("the boot quote's " + member + " is not base64url (" + (e.message || e) + ")");
      }
    }
    var quote = { attest: bytes("attest"), signature: bytes("signature"), akPublic: bytes("akPublic"), pcrs: {} };
    quote.key = parsePublic(quote.akPublic);
    if (!isObject(doc.pcrs)) throw new Error("the boot quote has no pcrs object");
    var keys = Object.keys(doc.pcrs).sort();
    var expected = QUOTED_PCRS.map(String).sort();
    if (keys.length !== expected.length || keys.join(",") !== expected.join(",")) {
      throw new Error("the boot quote's pcrs are not exactly PCRs 0-7 and 14");
    }
    QUOTED_PCRS.forEach(function (pcr) {
      var value = doc.pcrs[String(pcr)];
      var decoded = null;
      try { decoded = typeof value === "string" ? b64uDecode(value) : null; } catch (e) { decoded = null; }
      if (decoded === null || decoded.length !== 32) throw new Error("the boot quote's PCR " + pcr + " is not a base64url sha256 value");
      quote.pcrs[pcr] = decoded;
    });
    if (doc.eventLog !== undefined) {
      if (doc.eventLogMissing !== undefined) throw new Error("the boot quote has both an eventLog and an eventLogMissing");
      quote.eventLog = bytes("eventLog", QUOTE_MAX_LENGTH);
    } else if (typeof doc.eventLogMissing !== "string") {
      throw new Error("the boot quote has neither an eventLog nor an eventLogMissing text");
    } else {
      quote.eventLogMissing = doc.eventLogMissing;
    }
    return quote;
  });
}

/* TPMS_ATTEST of a TPM2_Quote (TPM 2.0 part 2, 10.12.12), parsed whole: every field read,
 * nothing after it. */
function quoteInfo(attest) {
  return checking("notQuote", function () {
    var r = new Reader(attest);
    if (r.u32() !== 0xff544347) throw new Error("the signed structure was not made by a TPM");
    var type = r.u16();
    if (type !== 0x8018) throw new Error("the signed structure is not a TPM2_Quote (type 0x" + type.toString(16) + ")");
    var info = { qualifiedSigner: r.sized(), extraData: r.sized(), selection: [] };
    r.take(8 + 4 + 4 + 1); /* clockInfo: clock, resetCount, restartCount, safe */
    r.take(8); /* firmwareVersion */
    var count = r.u32();
    /* TPM2_NUM_PCR_BANKS is 16 in the reference implementation; more is not a TPM's. */
    if (count > 16) throw new Error("a PCR selection of " + count + " banks");
    for (var i = 0; i < count; i++) {
      var hash = r.u16();
      var size = r.u8();
      if (size > 8) throw new Error("a PCR bitmap of " + size + " bytes");
      var bitmap = r.take(size);
      var indices = [];
      for (var bit = 0; bit < size * 8; bit++) if ((bitmap[bit >> 3] >> (bit & 7)) & 1) indices.push(bit);
      info.selection.push({ hash: hash, indices: indices });
    }
    info.pcrDigest = r.sized();
    if (!r.atEnd()) throw new Error("the quote has bytes after its PCR digest");
    return info;
  });
}

/* -- The firmware event log (EventLog.swift): all integers little-endian, every length bounded
 * by what is left. */

var EV = {
  noAction: 0x3, separator: 0x4, efiVariableDriverConfig: 0x80000001, efiBootServicesApplication: 0x80000003,
  efiAction: 0x80000007, efiVariableAuthority: 0x800000e0
};
var EVENT_NAMES = {
  0x1: "EV_POST_CODE", 0x3: "EV_NO_ACTION", 0x4: "EV_SEPARATOR", 0x5: "EV_ACTION", 0x8: "EV_S_CRTM_VERSION",
  0x80000001: "EV_EFI_VARIABLE_DRIVER_CONFIG", 0x80000002: "EV_EFI_VARIABLE_BOOT", 0x80000003: "EV_EFI_BOOT_SERVICES_APPLICATION",
  0x80000004: "EV_EFI_BOOT_SERVICES_DRIVER", 0x80000006: "EV_EFI_GPT_EVENT", 0x80000007: "EV_EFI_ACTION",
  0x80000008: "EV_EFI_PLATFORM_FIRMWARE_BLOB", 0x80000009: "EV_EFI_HANDOFF_TABLES", 0x8000000c: "EV_EFI_VARIABLE_BOOT2",
  0x800000e0: "EV_EFI_VARIABLE_AUTHORITY"
};
function eventName(type) { return EVENT_NAMES[type] || "event type 0x" + type.toString(16); }

/* The log's bounds, the same as EventLog.swift's (maximumLogSize, maximumEvents,
 * maximumEventSize; both verifiers refuse beyond them as "eventLog", the reason naming the
 * bound). The log is not signed: only its replay vouches for it, after it was parsed, so a device
 * could send a megabyte of tiny events and cost this node seconds of CPU (1.2-2 s for 15,600
 * events of 780 KB, against 40 ms for a real log). Real logs have tens to a few hundred events and
 * are up to ~100 KB (Fixtures/eventlogs: at most 106 events, 73 KB); their largest events are
 * firmware variables (dbx: 12 KB there) and a Windows log's own EV_EVENT_TAG records in PCR 13
 * (36 KB there). 4096 events, 64 KiB an event and 512 KiB a log leave room for them (40x,
 * 1.8-5x, 5x). 512 KiB is 683 Ki characters of base64url, within QUOTE_MAX_LENGTH, so a log just
 * past the bound is refused here, by name. */
var MAX_EVENTS = 4096;
var MAX_EVENT_SIZE = 65536;
var MAX_LOG_SIZE = 524288;
/* More algorithms than TPM banks exist is a corrupt table; SHA-512's 64 bytes is the largest
 * digest; PCRs 0-23. */
var MAX_ALGORITHMS = 16;
var MAX_DIGEST_SIZE = 64;
var PCR_COUNT = 24;
var DIGEST_SIZES = { 4: 20, 11: 32, 12: 48, 13: 64 };
var SPEC_ID_SIGNATURE = utf8("Spec ID Event03").concat([0]);
var STARTUP_LOCALITY = utf8("StartupLocality").concat([0]);
var DEBUG_MODE = utf8("UEFI Debug Mode");

function startsWith(bytes, prefix) { return bytes.length >= prefix.length && equal(bytes.slice(0, prefix.length), prefix); }

function LogReader(bytes, base) { this.bytes = bytes; this.index = 0; this.base = base || 0; }
LogReader.prototype.offset = function () { return this.base + this.index; };
LogReader.prototype.atEnd = function () { return this.index === this.bytes.length; };
LogReader.prototype.take = function (count, field) {
  if (count > this.bytes.length - this.index) throw new Error("the event log ends inside " + field + " at offset " + this.offset());
  var out = this.bytes.slice(this.index, this.index + count);
  this.index += count;
  return out;
};
/* Little-endian integers read in place (no slice): the reader's hottest calls. */
LogReader.prototype.skip = function (count, field) {
  if (count > this.bytes.length - this.index) throw new Error("the event log ends inside " + field + " at offset " + this.offset());
  this.index += count;
  return this.index - count;
};
LogReader.prototype.u8 = function (field) { return this.bytes[this.skip(1, field)]; };
LogReader.prototype.u16 = function (field) { var at = this.skip(2, field); return this.bytes[at] | (this.bytes[at + 1] << 8); };
LogReader.prototype.u32 = function (field) {
  var at = this.skip(4, field), b = this.bytes;
  return (b[at] | (b[at + 1] << 8) | (b[at + 2] << 16) | (b[at + 3] << 24)) >>> 0;
};

/* A PCR index past 23 only on an EV_NO_ACTION event, which extends nothing (Windows appends
 * its own events with index 0xFFFFFFFF). */
function eventPcr(index, type, offset) {
  if (index >= PCR_COUNT && type !== EV.noAction) throw new Error("the event at offset " + offset + " names PCR " + index + ", beyond PCR 23");
  return index;
}

function eventData(r) {
  var offset = r.offset();
  var size = r.u32("eventSize");
  if (size > MAX_EVENT_SIZE) throw new Error("the event log's eventSize at offset " + offset + " is " + size + ", beyond its bound " + MAX_EVENT_SIZE);
  return r.take(size, "event data");
}

/* TCG_PCR_EVENT: pcrIndex u32, eventType u32, digest[20] (SHA-1), eventSize u32, event. */
function legacyEvent(r, sequence) {
  var offset = r.offset();
  var index = r.u32("pcrIndex");
  var type = r.u32("eventType");
  var pcr = eventPcr(index, type, offset);
  var digests = {};
  digests[ALG_SHA1] = r.take(20, "SHA-1 digest");
  return { sequence: sequence, offset: offset, pcr: pcr, type: type, digests: digests, data: eventData(r) };
}

/* TCG_PCR_EVENT2: pcrIndex u32, eventType u32, TPML_DIGEST_VALUES (count u32, then algorithm id
 * u16 and its digest, sized by the Spec ID table), eventSize u32, event. */
function agileEvent(r, sequence, algorithms) {
  var offset = r.offset();
  var index = r.u32("pcrIndex");
  var type = r.u32("eventType");
  var pcr = eventPcr(index, type, offset);
  var countOffset = r.offset();
  var count = r.u32("digest count");
  if (count > algorithms.length) {
    throw new Error("the event log's digest count at offset " + countOffset + " is " + count + ", beyond its bound " + algorithms.length);
  }
  var digests = {};
  for (var i = 0; i < count; i++) {
    var idOffset = r.offset();
    var id = r.u16("digest algorithm");
    var algorithm = null;
    for (var j = 0; j < algorithms.length; j++) if (algorithms[j].id === id) algorithm = algorithms[j];
    if (!algorithm) throw new Error("the event at offset " + offset + " has a digest of algorithm 0x" + id.toString(16) + ", which the Spec ID event does not list");
    if (digests[id]) throw new Error("algorithm 0x" + id.toString(16) + " appears twice at offset " + idOffset);
    digests[id] = r.take(algorithm.size, "digest");
  }
  return { sequence: sequence, offset: offset, pcr: pcr, type: type, digests: digests, data: eventData(r) };
}

/* TCG_EfiSpecIDEvent: signature[16], platformClass u32, specVersionMinor, specVersionMajor,
 * specErrata, uintnSize (u8 each), numberOfAlgorithms u32, (algorithmId u16, digestSize u16)...,
 * vendorInfoSize u8, vendorInfo. */
function specIDAlgorithms(data, offset) {
  var r = new LogReader(data, offset + 32);
  r.take(SPEC_ID_SIGNATURE.length + 4 + 4, "Spec ID header");
  var countOffset = r.offset();
  var count = r.u32("numberOfAlgorithms");
  if (count < 1 || count > MAX_ALGORITHMS) {
    throw new Error("the event log's numberOfAlgorithms at offset " + countOffset + " is " + count + ", beyond its bound " + MAX_ALGORITHMS);
  }
  var algorithms = [];
  for (var i = 0; i < count; i++) {
    var entryOffset = r.offset();
    var id = r.u16("algorithmId");
    var size = r.u16("digestSize");
    if (size < 1 || size > MAX_DIGEST_SIZE) {
      throw new Error("the event log's digestSize at offset " + (entryOffset + 2) + " is " + size + ", beyond its bound " + MAX_DIGEST_SIZE);
    }
    if (DIGEST_SIZES[id] !== undefined && DIGEST_SIZES[id] !== size) {
      throw new Error("the Spec ID event is malformed at offset " + entryOffset + ": algorithm 0x" + id.toString(16) + " listed with " + size + "-byte digests");
    }
    for (var j = 0; j < algorithms.length; j++) {
      if (algorithms[j].id === id) throw new Error("algorithm 0x" + id.toString(16) + " appears twice at offset " + entryOffset);
    }
    algorithms.push({ id: id, size: size });
  }
  r.take(r.u8("vendorInfoSize"), "vendorInfo");
  if (!r.atEnd()) throw new Error("the Spec ID event is malformed at offset " + r.offset() + ": bytes after vendorInfo");
  return algorithms;
}

/* A whole log: crypto-agile when its first record (always the legacy layout) is the Spec ID
 * event, else SHA-1 legacy. Any byte left over that is not a whole event is an error. */
function parseEventLog(bytes) {
  if (bytes.length > MAX_LOG_SIZE) {
    throw new Error("the event log is " + bytes.length + " bytes, beyond its bound of " + MAX_LOG_SIZE + " bytes a log");
  }
  var r = new LogReader(bytes);
  var first = legacyEvent(r, 0);
  var log = {};
  if (first.type === EV.noAction && startsWith(first.data, SPEC_ID_SIGNATURE)) {
    log.cryptoAgile = true;
    log.algorithms = specIDAlgorithms(first.data, first.offset);
    log.events = [];
    while (!r.atEnd()) log.events.push(agileEvent(boundedCount(r, log.events), log.events.length, log.algorithms));
  } else {
    log.cryptoAgile = false;
    log.algorithms = [{ id: ALG_SHA1, size: 20 }];
    log.events = [first];
    while (!r.atEnd()) log.events.push(legacyEvent(boundedCount(r, log.events), log.events.length));
  }
  return log;
}

/* The reader, when another event may follow `events` (the Spec ID event is not counted). */
function boundedCount(r, events) {
  if (events.length >= MAX_EVENTS) {
    throw new Error("the event log has more than " + MAX_EVENTS + " events: event " + events.length + " at offset " + r.offset() +
      " is beyond its bound of " + MAX_EVENTS + " events a log");
  }
  return r;
}

/* -- Replay (Replay.swift). PCR 0 starts from the StartupLocality event's locality byte (in its
 * last byte), PCRs 17-22 from all ones, the others from zeros; EV_NO_ACTION is not extended. */

function startupLocality(log) {
  for (var i = 0; i < log.events.length; i++) {
    var e = log.events[i];
    if (e.pcr === 0 && e.type === EV.noAction && e.data.length === 17 && startsWith(e.data, STARTUP_LOCALITY)) return e.data[16];
  }
  return null;
}

function initialValue(pcr, locality) {
  var value = [];
  for (var i = 0; i < 32; i++) value.push(pcr >= 17 && pcr <= 22 ? 0xff : 0);
  if (pcr === 0 && locality !== null) value[31] = locality;
  return value;
}

/* Requires each quoted PCR to equal its replay (a PCR the log never extends must still hold its
 * initial value: an extend outside the log is a mismatch). Returns the events of those PCRs. */
function replayLog(log, pcrs) {
  var hasSha256 = log.algorithms.some(function (a) { return a.id === ALG_SHA256; });
  if (!hasSha256) throw refusal("eventLog", "the event log has no sha256 digests (a SHA-1-only log?)");
  var locality = startupLocality(log);
  /* Each PCR's value stays a Java byte[] while it is extended (one MessageDigest, no conversion
   * back per event) and is read back once to compare. */
  var digester = java.security.MessageDigest.getInstance("SHA-256");
  var values = {};
  log.events.forEach(function (e) {
    if (e.type === EV.noAction) return;
    var digest = e.digests[ALG_SHA256];
    if (!digest) throw refusal("eventLog", "event " + e.sequence + " in PCR " + e.pcr + " has no sha256 digest");
    digester.update(values[e.pcr] || toJava(initialValue(e.pcr, locality)));
    digester.update(toJava(digest));
    values[e.pcr] = digester.digest();
  });
  QUOTED_PCRS.forEach(function (pcr) {
    if (!equal(pcrs[pcr], values[pcr] ? fromJava(values[pcr]) : initialValue(pcr, locality))) {
      throw refusal("replay", "PCR " + pcr + " (sha256) is not what the event log replays to");
    }
  });
  return log.events.filter(function (e) { return QUOTED_PCRS.indexOf(e.pcr) >= 0; });
}

/* -- Secure Boot (SecureBootState.swift), read only from replayed events; each event read must
 * hash to its own digest where the profile says the digest is the hash of the data. */

var EFI_GLOBAL_VARIABLE = guid("8be4df61-93ca-11d2-aa0d-00e098032b8c");
var EFI_IMAGE_SECURITY_DATABASE = guid("d719b2cb-3d3a-4596-a3bc-dad00e67656f");

/* EFI_GUID bytes from the registry form: its first three fields little-endian. */
function guid(text) {
  var raw = [];
  var digits = text.replace(/-/g, "");
  for (var i = 0; i < 32; i += 2) raw.push(parseInt(digits.substring(i, i + 2), 16));
  return raw.slice(0, 4).reverse().concat(raw.slice(4, 6).reverse(), raw.slice(6, 8).reverse(), raw.slice(8));
}

/* UEFI_VARIABLE_DATA: VariableName (GUID, 16 bytes), UnicodeNameLength u64 (UTF-16 code units),
 * VariableDataLength u64, UnicodeName (UTF-16LE, no terminator), VariableData. */
function uefiVariable(event) {
  var bytes = event.data;
  function malformed(reason) { return refusal("bootState", "event " + event.sequence + ": malformed UEFI variable: " + reason); }
  if (bytes.length < 32) throw malformed("shorter than its 32-byte header");
  function u64(at) { var v = 0; for (var i = 7; i >= 0; i--) v = v * 256 + bytes[at + i]; return v; }
  var nameLength = u64(16);
  var dataLength = u64(24);
  if (!(nameLength <= bytes.length && dataLength <= bytes.length && 32 + 2 * nameLength + dataLength === bytes.length)) {
    throw malformed("its name and data lengths (" + nameLength + ", " + dataLength + ") do not add up to the event's " + bytes.length + " bytes");
  }
  var name = "";
  for (var at = 32; at < 32 + 2 * nameLength; at += 2) name += String.fromCharCode(bytes[at] | (bytes[at + 1] << 8));
  return { guid: bytes.slice(0, 16), name: name, data: bytes.slice(32 + 2 * nameLength) };
}

/* The one malformed shape read, and only for EV_EFI_VARIABLE_AUTHORITY after PCR 7's separator
 * (as SecureBootState.swift's UEFIVariable(shimLengthBug:)): old shims sized the variable from
 * their C struct, whose padding adds five zero bytes after the data, and the log event one byte
 * longer than what was measured (shim commit 8a27a48). The event is 6 bytes longer than its
 * length fields say: header, name, VariableDataLength bytes that are one DER certificate (a
 * SEQUENCE with a two-byte length, no owner GUID), five zero bytes, one more byte that the digest
 * does not cover (the caller checks it is the hash of the data without its last byte). Returns
 * null for any other shape. */
function shimLengthBugVariable(event) {
  var bytes = event.data;
  if (bytes.length < 32 + 6 + 4) return null;
  function u64(at) { var v = 0; for (var i = 7; i >= 0; i--) v = v * 256 + bytes[at + i]; return v; }
  var nameLength = u64(16);
  var dataLength = u64(24);
  if (!(nameLength <= bytes.length && dataLength <= bytes.length && 32 + 2 * nameLength + dataLength + 6 === bytes.length)) return null;
  var start = 32 + 2 * nameLength;
  var certificate = bytes.slice(start, start + dataLength);
  if (!(certificate.length >= 4 && certificate[0] === 0x30 && certificate[1] === 0x82 &&
    4 + (certificate[2] * 256 + certificate[3]) === certificate.length)) return null;
  for (var at = bytes.length - 6; at < bytes.length - 1; at++) if (bytes[at] !== 0) return null;
  var name = "";
  for (var n = 32; n < start; n += 2) name += String.fromCharCode(bytes[n] | (bytes[n + 1] << 8));
  return { guid: bytes.slice(0, 16), name: name, data: certificate };
}

/* The Secure Boot policy variable this is, when its GUID is the one UEFI defines for its name.
 * Names compare by exact UTF-16 code units (=== on strings built one code unit at a time, no
 * normalization), as SecureBootState.swift does: "P\u212A" (KELVIN SIGN) is not "PK". */
function securityVariable(variable) {
  if (variable.name === "SecureBoot" || variable.name === "PK" || variable.name === "KEK") {
    return equal(variable.guid, EFI_GLOBAL_VARIABLE) ? variable.name : null;
  }
  if (variable.name === "db" || variable.name === "dbx") return equal(variable.guid, EFI_IMAGE_SECURITY_DATABASE) ? variable.name : null;
  return null;
}

function utf8Text(bytes) { return String(new java.lang.String(toJava(bytes), "UTF-8")); }

var SHIM_LOCK = guid("605dab50-e046-4300-abb6-3dd810dd8b23");
var DMA_PROTECTION_DISABLED = utf8("DMA Protection Disabled");

function secureBootState(events) {
  var separators = {};
  var seen = {};
  var secureBoot = null;
  var shimValidation = true;
  var dmaProtectionDisabled = false;
  var bootApplications = [];
  events.forEach(function (event) {
    if (event.pcr > 7 || event.type === EV.noAction) return;
    var digest = event.digests[ALG_SHA256];
    var where = "event " + event.sequence;
    function requireDigestOfData(what) {
      if (!equal(digest, sha256(event.data))) {
        throw refusal("bootState", where + " in PCR " + event.pcr + " (" + what + "): its digest is not the hash of its data");
      }
    }
    if (event.type === EV.separator) {
      if (separators[event.pcr] !== undefined) throw refusal("separators", where + " is a second separator in PCR " + event.pcr);
      separators[event.pcr] = event.sequence;
      /* 0x00000000 ends the pre-OS phase; 0xFFFFFFFF says the firmware hit an error. */
      if (!equal(event.data, [0, 0, 0, 0])) {
        throw refusal("separators", "the separator of PCR " + event.pcr + " (" + where + ") signals a firmware error");
      }
      return requireDigestOfData("separator");
    }
    if (event.pcr === 7 && event.type === EV.efiVariableDriverConfig) {
      var variable = uefiVariable(event);
      requireDigestOfData("variable " + variable.name);
      var known = securityVariable(variable);
      if (separators[7] !== undefined) {
        /* Measured again after the separator, it would replace what the firmware enforced. */
        if (known !== null) throw refusal("bootState", where + " measures " + variable.name + " after PCR 7's separator");
        return;
      }
      if (known === null) throw refusal("bootState", where + " measures an unexpected variable " + variable.name + " into PCR 7");
      if (seen[known]) throw refusal("bootState", where + " measures " + known + " a second time");
      seen[known] = true;
      if (known === "SecureBoot") {
        /* Firmware without the variable measures it with no data: Secure Boot is not enforced. */
        if (variable.data.length > 1) throw refusal("bootState", where + ": malformed UEFI variable: SecureBoot is longer than one byte");
        secureBoot = variable.data.length === 1 && variable.data[0] === 1;
      }
    } else if (event.pcr === 7 && event.type === EV.efiVariableAuthority) {
      var authority;
      try {
        authority = uefiVariable(event);
      } catch (malformed) {
        /* Only the shape old shims wrote after the separator, digest and all. */
        if (separators[7] === undefined || shimLengthBugVariable(event) === null ||
          !equal(digest, sha256(event.data.slice(0, event.data.length - 1)))) throw malformed;
        return;
      }
      requireDigestOfData("authority " + authority.name);
      if (authority.name === "MokSBState" && equal(authority.guid, SHIM_LOCK)) {
        if (!equal(authority.data, [0]) && !equal(authority.data, [1])) {
          throw refusal("bootState", where + ": malformed UEFI variable: MokSBState is not one byte 0 or 1");
        }
        if (authority.data[0] === 1) shimValidation = false;
      }
    } else if ((event.pcr === 7 || event.pcr === 4) && event.type === EV.efiAction) {
      if (event.pcr === 7 && equal(event.data, DEBUG_MODE)) throw refusal("debugMode", where + ": the firmware booted in UEFI debug mode");
      requireDigestOfData("action \"" + utf8Text(event.data) + "\"");
      if (event.pcr === 7 && equal(event.data, DMA_PROTECTION_DISABLED)) dmaProtectionDisabled = true;
    } else if (event.pcr === 7) {
      throw refusal("bootState", where + " in PCR 7 has an unexpected type " + eventName(event.type));
    } else if (event.pcr === 4 && event.type === EV.efiBootServicesApplication) {
      bootApplications.push(hex(digest));
    }
  });
  for (var pcr = 0; pcr <= 7; pcr++) {
    if (separators[pcr] === undefined) throw refusal("separators", "PCR " + pcr + " has no separator event");
  }
  if (secureBoot === null) throw refusal("bootState", "PCR 7 has no SecureBoot variable event: Secure Boot state unknown");
  return { enabled: secureBoot, shimValidation: shimValidation, dmaProtectionDisabled: dmaProtectionDisabled, bootApplications: bootApplications };
}

/* The PCR values enrolled for this TPM's EK (CONFIG.boot.enrolledPcrs), or null. */
function enrolledPcrs(ekName) {
  var all = CONFIG.boot.enrolledPcrs;
  if (!all || typeof all !== "object") return null;
  for (var key in all) {
    if (Object.prototype.hasOwnProperty.call(all, key) && String(key).toLowerCase() === ekName) return all[key];
  }
  return null;
}

var QUOTED = "the TPM quoted PCRs 0-7 and 14 (sha256) over this nonce with the activated attestation key";

function quoteRound(text, pending) {
  var quote = quoteDocument(text);
  var nonce = b64uDecode(pending.quoteNonce);
  var ak = parsePublic(b64uDecode(pending.akPublic));
  checking("signature", function () {
    if (!equal(quote.key.name, ak.name)) {
      throw new Error("the quote is signed by another key than the attestation key activated with this TPM's endorsement key");
    }
    if (!verifiesES256(ak, quote.attest, quote.signature)) throw new Error("the quote's signature does not verify with the activated attestation key");
  });
  var info = quoteInfo(quote.attest);
  if (!equal(info.extraData, nonce)) throw refusal("nonce", "the quote is over another nonce than the one sent (replayed?)");
  var selection = info.selection.length === 1 ? info.selection[0] : null;
  if (!selection || selection.hash !== ALG_SHA256 || selection.indices.join(",") !== QUOTED_PCRS.join(",")) {
    throw refusal("selection", "the quote does not select exactly PCRs 0-7 and 14 of the sha256 bank");
  }
  var composite = [];
  QUOTED_PCRS.forEach(function (pcr) { composite = composite.concat(quote.pcrs[pcr]); });
  if (!equal(sha256(composite), info.pcrDigest)) throw refusal("pcrDigest", "the PCR values sent are not the ones the TPM quoted");

  /* Enrolled values are compared whenever this EK has some, with an event log or without: a log
   * that replays shows what this boot measured, not that it is the boot enrolled. */
  var enrolled = enrolledPcrs(pending.ekName);
  if (enrolled !== null) {
    QUOTED_PCRS.forEach(function (pcr) {
      var value = isObject(enrolled) ? enrolled[String(pcr)] : undefined;
      var decoded = null;
      try { decoded = typeof value === "string" ? b64uDecode(value) : null; } catch (e) { decoded = null; }
      if (decoded === null || !equal(decoded, quote.pcrs[pcr])) {
        throw refusal("enrolledPcrs", "PCR " + pcr + " is not the value enrolled for this TPM: another boot than at enrolment");
      }
    });
  }
  var requireSecureBoot = CONFIG.boot.requireSecureBoot !== false;
  var boot = { method: null, secureBoot: null, shimValidation: null, dmaProtectionDisabled: null, bootApplications: [], pcrs: {}, note: null };
  QUOTED_PCRS.forEach(function (pcr) { boot.pcrs[String(pcr)] = hex(quote.pcrs[pcr]); });
  if (quote.eventLog !== undefined) {
    var log = checking("eventLog", function () { return parseEventLog(quote.eventLog); });
    var state = secureBootState(replayLog(log, quote.pcrs));
    if (!state.enabled && requireSecureBoot) throw refusal("secureBootOff", "the firmware event log says Secure Boot is off");
    if (!state.shimValidation && requireSecureBoot) {
      throw refusal("shimValidationOff", "shim measured MokSBState = 1 into PCR 7: its verification was switched off (mokutil --disable-validation), so GRUB and the kernel were not verified");
    }
    /* "eventLog" with enrolled values too: Secure Boot and the applications were read from the log. */
    boot.method = "eventLog";
    boot.secureBoot = state.enabled;
    boot.shimValidation = state.shimValidation;
    boot.dmaProtectionDisabled = state.dmaProtectionDisabled;
    boot.bootApplications = state.bootApplications;
    boot.note = "Proven: " + QUOTED + ", and the firmware event log replays to them and says Secure Boot is " +
      (state.enabled ? "on" : "off") + (enrolled !== null ? ", and they equal the values enrolled for this TPM" : "") +
      "; not judged: which boot applications those digests are.";
  } else {
    if (requireSecureBoot) throw refusal("noEventLog", "Secure Boot cannot be read without the firmware event log (the device says: " + deviceText(quote.eventLogMissing) + ")");
    boot.method = enrolled !== null ? "enrolledPCRs" : "quoteOnly";
    boot.note = enrolled !== null
      ? "Proven: " + QUOTED + ", and they equal the values enrolled for this TPM (the boot it had at enrolment); not proven: Secure Boot's state (no event log)."
      : "Proven: " + QUOTED + "; not proven: what they measured, Secure Boot included (no event log, no enrolled values).";
  }
  sharedState.put(STATE_KEY + ".boot", JSON.stringify(boot));
  pending.activated = true;
  delete pending.quoteNonce;
  sharedState.put(STATE_KEY, JSON.stringify(pending));
  outcome = "activated";
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
  if (id === QUOTE_ID) {
    if (!state || typeof state.quoteNonce !== "string") return refuse("a boot quote without a pending nonce", "malformed");
    return quoteRound(callback.getValue(), state);
  }
  return refuse("an unexpected callback " + deviceText(id));
}

try {
  main();
} catch (e) {
  refuse(String(e.message || e), e.check);
}
