// The node side of bench/match-bench.sh: replays STORED (JSON Lines) against INCOMING with the
// device-match script's own matchers, like `fr-profile match --each --summary`. The script is
// not in this repository: DEVICE_MATCH_SCRIPT names its dist/script.js (a checkout of
// github.com/ForgeRock/forgerock-device-match-script elsewhere). Only its function definitions
// are evaluated (up to the AM entry code, which needs AM's sharedState).
// Usage: DEVICE_MATCH_SCRIPT=.../dist/script.js node bench/match-node.js STORED INCOMING CONFIG
const fs = require('fs');
const [,, storedPath, incomingPath, configPath] = process.argv;
let text = fs.readFileSync(process.env.DEVICE_MATCH_SCRIPT, "utf8");
text = text.slice(text.indexOf("'use strict';") + 13, text.indexOf("outcome = 'unknownDevice';"));
const { metadataMatcher, locationMatcher } = new Function(text + '\nreturn { metadataMatcher, locationMatcher };')();
const config = JSON.parse(fs.readFileSync(configPath, 'utf8'));
const incoming = JSON.parse(fs.readFileSync(incomingPath, 'utf8'));
const started = process.hrtime.bigint();
const lines = fs.readFileSync(storedPath, 'utf8').split('\n');
const counts = { true: 0, false: 0, unknownDevice: 0, error: 0 };
let n = 0;
for (const line of lines) {
  if (!line.trim()) continue;
  n++;
  let stored;
  try { stored = JSON.parse(line); } catch (e) { continue; }
  if (incoming.identifier !== stored.identifier) { counts.unknownDevice++; continue; }
  try {
    const m = metadataMatcher(config.attrWeights, config.maxUnmatchedAttrs)(incoming.metadata, stored.metadata);
    const l = locationMatcher(config.allowedRadius)(incoming.location, stored.location);
    counts[String(m && l)]++;
  } catch (e) { counts.error++; }
}
const seconds = Number(process.hrtime.bigint() - started) / 1e9;
console.log(JSON.stringify(counts));
console.log(`node: ${n} profiles in ${seconds.toFixed(3)} s: ${Math.round(n / seconds)} profiles/s`);
