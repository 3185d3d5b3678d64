// Reads {"items": [[round, signatureHex, publicKeyHex], ...]} on stdin and prints
// {"results": [randomnessHex or null, ...]}: fairness/static/fairness/beacon.js's verdicts, for
// tests/fairness/test_beacon_js.py to compare with fairness/beacon.py's.
import { readFileSync } from "node:fs";

import { BeaconError, verify } from "../../../fairness/static/fairness/beacon.js";

const { items } = JSON.parse(readFileSync(0, "utf8"));
const results = items.map(([round, signature, key]) => {
  try {
    return verify(round, signature, key);
  } catch (error) {
    if (error instanceof BeaconError) return null;
    throw error;
  }
});
process.stdout.write(JSON.stringify({ results }));
