// The node side of bench/match-bench.sh: replays STORED (JSON Lines) against INCOMING with the
// device-match script's own matchers, like `fr-profile match --each --summary`. The script is
// not in this repository: DEVICE_MATCH_SCRIPT names its dist/script.js (a checkout of
// github.com/ForgeRock/forgerock-device-match-script elsewhere). Only its function definitions
// are evaluated (up to the AM entry code, which needs AM's sharedState).
// Usage: DEVICE_MATCH_SCRIPT=.../dist/script.js node bench/match-node.js STORED INCOMING CONFIG
// MATCH_NODE_STREAM=1 reads STORED line by line (readline over a stream: bounded memory, as
// fr-profile reads it) instead of reading the whole file into one string first (faster, but its
// memory grows with the file: ~310 MiB for the 140 MB bench file).
const fs = require('fs');
const [,, storedPath, incomingPath, configPath] = process.argv;
let text = fs.readFileSync(process.env.DEVICE_MATCH_SCRIPT, "utf8");
text = text.slice(text.indexOf("'use strict';") + 13, text.indexOf("outcome = 'unknownDevice';"));
const { metadataMatcher, locationMatcher } = new Function(text + '\nreturn { metadataMatcher, locationMatcher };')();
const config = JSON.parse(fs.readFileSync(configPath, 'utf8'));
const incoming = JSON.parse(fs.readFileSync(incomingPath, 'utf8'));
const started = process.hrtime.bigint();
const counts = { true: 0, false: 0, unknownDevice: 0, error: 0 };
let n = 0;
function replay(line) {
  if (!line.trim()) return;
  n++;
  let stored;
  try { stored = JSON.parse(line); } catch (e) { return; }
  if (incoming.identifier !== stored.identifier) { counts.unknownDevice++; return; }
  try {
    const m = metadataMatcher(config.attrWeights, config.maxUnmatchedAttrs)(incoming.metadata, stored.metadata);
    const l = locationMatcher(config.allowedRadius)(incoming.location, stored.location);
    counts[String(m && l)]++;
  } catch (e) { counts.error++; }
}
function report() {
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  console.log(JSON.stringify(counts));
  console.log(`node: ${n} profiles in ${seconds.toFixed(3)} s: ${Math.round(n / seconds)} profiles/s`);
}
if (process.env.MATCH_NODE_STREAM === '1') {
  const readline = require('readline');
  const lines = readline.createInterface({ input: fs.createReadStream(storedPath), crlfDelay: Infinity });
  lines.on('line', replay);
  lines.on('close', report);
} else {
  for (const line of fs.readFileSync(storedPath, 'utf8').split('\n')) replay(line);
  report();
}
