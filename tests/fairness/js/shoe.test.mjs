// node --test tests/fairness/js/ : the JavaScript verifier against the published vectors.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import {
  RandomStream, canonicalJson, eventHash, hashSeed, keyId, shoeCards, toHex,
  verifyReceiptSignature, verifySeed, walk,
} from "../../../fairness/static/fairness/shoe.js";

const vectors = JSON.parse(readFileSync(new URL("../vectors.json", import.meta.url), "utf8"));

for (const v of vectors.shoes) {
  test(`shoe vector: ${v.name}`, async () => {
    const [block] = await new RandomStream(v.server_seed, v.client_material, v.nonce).blocks(1);
    assert.equal(toHex(block), v.block0_hex);
    const stream = new RandomStream(v.server_seed, v.client_material, v.nonce);
    const words = [];
    for (let i = 0; i < 8; i++) words.push(await stream.nextWord());
    assert.deepEqual(words, v.first_words);
    assert.deepEqual(await shoeCards(v.server_seed, v.client_material, v.nonce, 20), v.first_20);
    assert.deepEqual(await shoeCards(v.server_seed, v.client_material, v.nonce), v.shoe);
  });
}

test("chain vector", async () => {
  const { seeds, length, terminal, head } = vectors.chain;
  assert.equal(await walk(head, length), terminal);
  for (let i = 0; i < length; i++) {
    assert.equal(await hashSeed(seeds[i]), seeds[i + 1]);
    assert.ok(await verifySeed(seeds[i], seeds[i + 1]));
  }
  assert.ok(!(await verifySeed(seeds[0], seeds[2])));
});

test("event hash vector", async () => {
  const v = vectors.event_hash;
  assert.equal(canonicalJson(v.body), v.canonical);
  assert.equal(await eventHash(v.prev_hash, v.body), v.hash);
});

test("receipt vector", async () => {
  const v = vectors.receipt;
  assert.equal(canonicalJson(v.receipt), v.canonical);
  assert.equal(await keyId(v.public_key), v.key_id);
  assert.ok(await verifyReceiptSignature(v.receipt, v.signature, v.public_key));
  assert.ok(!(await verifyReceiptSignature({ ...v.receipt, nonce: 2 }, v.signature, v.public_key)));
});

test("bad inputs are refused", async () => {
  const seed = vectors.shoes[0].server_seed;
  await assert.rejects(shoeCards(seed.toUpperCase(), "a", 1), /server seed/);
  await assert.rejects(shoeCards(seed, "a||b", 1), /client seed/);
  await assert.rejects(shoeCards(seed, "a", 0), /nonce/);
});
