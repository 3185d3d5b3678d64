// Batch helper for the Python tests: stdin {"shoes": [[seed, material, nonce, count]],
// "bundles": [line, ...], "receipts": [...], "texts": [raw line, ...], "keys": {...}|null}
// -> stdout {"shoes": [[cards]], "bundles": [{ok, failures}], "receipts": [...], "texts": [ok]}.
import { readFileSync } from "node:fs";

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
  bundles.push({ ok: result.ok, failures: result.failures, cards: result.cards.length });
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
  receipts.push({ ok: result.ok, failures: result.failures, cards: result.cards.length });
}
process.stdout.write(JSON.stringify({ shoes, bundles, receipts, texts }));
