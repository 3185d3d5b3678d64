// Batch helper for the Python tests: stdin {"shoes": [[seed, material, nonce, count]],
// "bundles": [line, ...], "receipts": [...], "texts": [raw line, ...], "keys": {...}|null,
// "rulesets": true?} -> stdout {"shoes": [[cards]], "bundles": [{ok, failures, cards, play}],
// "receipts": [{ok, failures, cards, play}], "texts": [ok], "rulesets": {name: {rules, hash}}}.
// A bundle's play: {ran, ok, why, checks: [text], states: {id: state}}; a receipt's: why.
import { readFileSync } from "node:fs";

import { RULESETS, rulesetHash } from "../../../fairness/static/fairness/play.js";
import { shoeCards } from "../../../fairness/static/fairness/shoe.js";
import { verifyBundle, verifyReceiptOnly } from "../../../fairness/static/fairness/verifier.js";

const input = JSON.parse(readFileSync(0, "utf8"));
const shoes = [];
for (const [seed, material, nonce, count] of input.shoes ?? []) {
  shoes.push(await shoeCards(seed, material, nonce, count ?? 416));
}
const bundles = [];
for (const line of input.bundles ?? []) {
  const result = await verifyBundle(line, input.keys ?? null);
  const { play } = result;
  bundles.push({
    ok: result.ok,
    failures: result.failures,
    cards: result.cards.length,
    play: {
      ran: play.ran,
      ok: play.ok,
      why: play.why ?? null,
      checks: play.checks.map((c) => c.text),
      states: Object.fromEntries(play.checks.map((c) => [c.id, c.state])),
    },
  });
}
const texts = [];
for (const text of input.texts ?? []) {
  let ok = false;
  try {
    ok = (await verifyBundle(JSON.parse(text), input.keys ?? null)).ok;
  } catch {
    ok = false;
  }
  texts.push(ok);
}
const receipts = [];
for (const item of input.receipts ?? []) {
  const result = await verifyReceiptOnly(item, input.keys ?? null);
  receipts.push({
    ok: result.ok, failures: result.failures, cards: result.cards.length, play: result.play.why,
  });
}
const rulesets = {};
if (input.rulesets) {
  for (const [name, rules] of Object.entries(RULESETS)) {
    rulesets[name] = { rules, hash: await rulesetHash(rules) };
  }
}
process.stdout.write(JSON.stringify({ shoes, bundles, receipts, texts, rulesets }));
