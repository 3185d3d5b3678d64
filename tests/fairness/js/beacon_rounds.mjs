// Batch helper for tests/fairness/test_js_beacon.py: shared-table rounds that wait for a beacon
// (fairness-v2). stdin {"plays": [{events, server_seed, client_material, nonce}],
// "bundles": [line, ...], "receipts": [line, ...], "keys": {...}|null} -> stdout
// {"plays": [{ok, failures, states}], "bundles": [{ok, failures, beacon, checks, play}],
// "receipts": [{ok, failures, beacon}]}. A play is play.js alone, on the shoe of the material
// given (as the engine's proof of play takes it); a bundle is the whole verifier.js.
import { readFileSync } from "node:fs";

import { checkPlay } from "../../../fairness/static/fairness/play.js";
import { shoeCards } from "../../../fairness/static/fairness/shoe.js";
import { verifyBundle, verifyReceiptOnly } from "../../../fairness/static/fairness/verifier.js";

const input = JSON.parse(readFileSync(0, "utf8"));
const states = (checks) => Object.fromEntries(checks.map((c) => [c.id, c.state]));

const plays = [];
for (const { events, server_seed: seed, client_material: material, nonce } of input.plays ?? []) {
  let cards = [];
  try {
    cards = await shoeCards(seed, material, nonce);
  } catch {
    cards = []; // no shoe: every card the rules deal is past it
  }
  const play = await checkPlay(events, (position) => cards[position]);
  plays.push({ ok: play.ok, failures: play.failures, states: states(play.checks) });
}
const bundles = [];
for (const line of input.bundles ?? []) {
  const result = await verifyBundle(line, input.keys ?? null);
  bundles.push({
    ok: result.ok,
    failures: result.failures,
    beacon: result.beacon,
    checks: result.checks,
    play: { ran: result.play.ran, ok: result.play.ok, states: states(result.play.checks) },
  });
}
const receipts = [];
for (const item of input.receipts ?? []) {
  const result = await verifyReceiptOnly(item, input.keys ?? null);
  receipts.push({ ok: result.ok, failures: result.failures, beacon: result.beacon });
}
process.stdout.write(JSON.stringify({ plays, bundles, receipts }));
