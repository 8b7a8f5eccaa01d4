/*
 * fr-profile device posture: a Scripted Decision node script for PingAM's legacy JavaScript
 * engine (Rhino). Outcomes:
 *   "true"   the posture the device signed meets POLICY below
 *   "false"  anything else; the reason is logged and left in sharedState "frPosture.refused"
 *
 * Place it after the Device Signing Verifier node's Success outcome (docs/posture.md):
 *
 *   ... -> Device Signing Verifier -success-> [this script] -true-> success
 *
 * and have the device sign with its posture: `fr-profile journey … --posture` (or `callback
 * --posture`) adds the claim "posture" (schemas/posture.schema.json) to the JWS. The node has
 * verified that JWS — its signature with the key bound to the user, its challenge, its expiry —
 * before it took Success, and leaves it in transient state ("DeviceSigningVerifierNode.JWT");
 * this script reads the claim from it and does not verify the signature again, so never wire it
 * where that node's Success is not the only way in. The posture is kept in sharedState
 * "frPosture" (JSON text) for later nodes.
 *
 * A fact is met only when its value is what the policy asks (true for "require", false for
 * "forbid"); unknown (null) is not met unless the fact is in "allowUnknown". A posture is what
 * the device reports about itself: signed by its bound key, so not changed in transit, but a
 * device whose owner is root can report anything (docs/posture.md, "What a posture proves").
 *
 * Java classes used (add them to the legacy engine's class allowlist): java.lang.String,
 * java.util.Base64 and its Decoder.
 */

/* ---- The policy. A harness may define FR_POSTURE_POLICY before this script to replace it. */
var POLICY = (typeof FR_POSTURE_POLICY !== "undefined") ? FR_POSTURE_POLICY : {
  require: ["rootEncrypted", "homeEncrypted", "swapEncrypted", "secureBootEnabled", "firewallServiceEnabled", "screenLockOnIdle"],
  forbid: ["secureBootSetupMode"],
  maxDaysSincePackageChange: 30,
  allowUnknown: []
};

var JWT_KEY = "DeviceSigningVerifierNode.JWT";
var STATE_KEY = "frPosture";

/* Bounds, checked before JSON.parse (as in fr-tpm-attestation.js; each script stands alone in
 * AM): Rhino's parser recurses per nesting level and its stack overflow cannot be caught. A
 * posture JWS is 3-6 KB and nests 3 levels deep. */
var MAX_LENGTH = 65536;
var MAX_DEPTH = 8;

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

/* Text for a log line or a reason: no control characters, at most `limit` characters (never
 * half a surrogate pair). The same as fr-tpm-attestation.js's: AM runs each node's script
 * alone, so each carries its own copy. */
function loggable(text, limit) {
  text = String(text);
  if (text.length > limit) {
    var end = /[\ud800-\udbff]/.test(text.charAt(limit - 1)) ? limit - 1 : limit;
    text = text.substring(0, end) + "...";
  }
  return text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, "?");
}

function b64uText(part) {
  if (!/^[A-Za-z0-9_-]*$/.test(part)) throw new Error("the JWS is not base64url");
  var bytes = java.util.Base64.getUrlDecoder().decode(new java.lang.String(part));
  return String(new java.lang.String(bytes, "UTF-8"));
}

function refuse(reason) {
  reason = loggable(reason, 1000);
  logger.error("fr-profile posture refused: " + reason);
  sharedState.put(STATE_KEY + ".refused", reason);
  outcome = "false";
}

function inList(list, name) {
  return list && list.indexOf(name) >= 0;
}

/* The first fact the posture does not meet, in words; null when it meets them all. */
function unmet(posture) {
  var stable = posture.stable;
  var i;
  for (i = 0; i < (POLICY.require || []).length; i++) {
    var name = POLICY.require[i];
    var fact = stable[name];
    if (!fact || typeof fact !== "object") return name + " is missing";
    if (fact.value === null && inList(POLICY.allowUnknown, name)) continue;
    if (fact.value !== true) return name + " is " + fact.value + ": " + loggable(fact.reason, 300);
  }
  for (i = 0; i < (POLICY.forbid || []).length; i++) {
    var forbidden = POLICY.forbid[i];
    var found = stable[forbidden];
    if (!found || typeof found !== "object") return forbidden + " is missing";
    if (found.value === null && inList(POLICY.allowUnknown, forbidden)) continue;
    if (found.value !== false) return forbidden + " is " + found.value + ": " + loggable(found.reason, 300);
  }
  if (typeof POLICY.maxDaysSincePackageChange === "number") {
    var age = posture.volatile && posture.volatile.daysSincePackageChange;
    if (!age || typeof age !== "object") return "daysSincePackageChange is missing";
    if (!(age.value === null && inList(POLICY.allowUnknown, "daysSincePackageChange"))) {
      if (typeof age.value !== "number") return "daysSincePackageChange is unknown: " + loggable(age.reason, 300);
      if (age.value > POLICY.maxDaysSincePackageChange) {
        return "no package changed for " + age.value + " days (at most " + POLICY.maxDaysSincePackageChange + ")";
      }
    }
  }
  return null;
}

function main() {
  var jws = transientState.get(JWT_KEY);
  if (!jws) return refuse("no JWS from the Device Signing Verifier node in transient state");
  jws = String(jws);
  if (jws.length > MAX_LENGTH) return refuse("the JWS is longer than " + MAX_LENGTH + " characters");
  var parts = jws.split(".");
  if (parts.length !== 3) return refuse("not a compact JWS");
  var claims = boundedJSON(b64uText(parts[1]), "the JWS claims");
  var posture = claims && claims.posture;
  if (!posture || typeof posture !== "object") {
    return refuse("the JWS carries no posture claim (sign with fr-profile's --posture)");
  }
  if (posture.v !== 1 || typeof posture.stable !== "object" || posture.stable === null) {
    return refuse("the posture claim is not version 1");
  }
  sharedState.put(STATE_KEY, JSON.stringify(posture));
  var problem = unmet(posture);
  if (problem) return refuse(problem);
  outcome = "true";
}

try {
  main();
} catch (e) {
  refuse(String(e.message || e));
}
