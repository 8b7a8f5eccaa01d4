/*
 * Runs a Scripted Decision node script as AM's legacy JavaScript engine does (Rhino, Java
 * classes), with the node's bindings stubbed: sharedState and transientState (java.util.HashMap),
 * callbacks (java.util.ArrayList of the callbacks the client answered), logger, outcome, action.
 *
 *   java -cp rhino.jar:STUBS org.mozilla.javascript.tools.shell.Main harness.js SCRIPT CONTEXT
 *
 * (The tests run it through server/AMScriptServer.java, one JVM for all their runs, each in a
 * new shell global: the same as the command above, without a JVM start per run.)
 *
 * CONTEXT is JSON: {"sharedState":{…},"transientState":{…},"callbacks":[{"id":…,"value":…}],
 * "config":{…},"posturePolicy":{…}} (config becomes FR_TPM_ATTESTATION_CONFIG, posturePolicy
 * FR_POSTURE_POLICY). Prints the node's result as JSON:
 * {"outcome":…|null,"callbacks":[{"type":"HiddenValueCallback","id":…,"value":…}],
 *  "sharedState":{…},"log":[…]}.
 */
var harnessScript = arguments[0];
var harnessContext = JSON.parse(String(readFile(arguments[1], "UTF-8")));
var harnessLog = [];

var sharedState = new java.util.HashMap();
var transientState = new java.util.HashMap();
var callbacks = new java.util.ArrayList();
(function () {
  var key;
  for (key in harnessContext.sharedState || {}) sharedState.put(key, harnessContext.sharedState[key]);
  for (key in harnessContext.transientState || {}) transientState.put(key, harnessContext.transientState[key]);
  (harnessContext.callbacks || []).forEach(function (c) {
    var callback = new com.sun.identity.authentication.callbacks.HiddenValueCallback(c.id, c.defaultValue || "");
    callback.setValue(c.value);
    callbacks.add(callback);
  });
})();
var logger = {
  error: function (m) { harnessLog.push("error: " + m); },
  warning: function (m) { harnessLog.push("warning: " + m); },
  message: function (m) { harnessLog.push("message: " + m); },
  messageEnabled: function () { return true; }
};
var outcome;
var action;
if (harnessContext.config) var FR_TPM_ATTESTATION_CONFIG = harnessContext.config;
if (harnessContext.posturePolicy) var FR_POSTURE_POLICY = harnessContext.posturePolicy;

load(harnessScript);

(function () {
  var result = { outcome: outcome === undefined ? null : String(outcome), callbacks: [], sharedState: {}, log: harnessLog };
  if (action) {
    if (action.outcome) result.outcome = String(action.outcome);
    for (var i = 0; i < action.callbacks.size(); i++) {
      var c = action.callbacks.get(i);
      result.callbacks.push({ type: "HiddenValueCallback", id: String(c.getId()), value: String(c.getValue()) });
    }
  }
  var keys = sharedState.keySet().toArray();
  for (var j = 0; j < keys.length; j++) result.sharedState[String(keys[j])] = String(sharedState.get(keys[j]));
  print(JSON.stringify(result));
})();
