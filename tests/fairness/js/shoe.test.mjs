// node --test tests/fairness/js/ : the JavaScript verifier against the published vectors.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import {
  RandomStream, canonicalJson, checkInputs, eventHash, hashSeed, keyId, shoeCards, toHex,
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

test("a beacon element is accepted only last, after a client seed, and well formed", () => {
  const seed = "ab".repeat(32);
  const element = `local-beacon:34463809:${"0f".repeat(32)}`;
  assert.equal(checkInputs(seed, `alice|bob|${element}`, 7), "7");
  for (const bad of [
    element, // no client seed before it
    `alice|${element}|bob`, // not last
    `alice|local-beacon:0:${"0f".repeat(32)}`, // round 0
    `alice|local-beacon:18446744073709551616:${"0f".repeat(32)}`, // above 2**64 - 1
    `alice|Local:5:${"0f".repeat(32)}`, // a name of a-z 0-9 - only
    `alice|local-beacon:5:${"0F".repeat(32)}`, // lowercase hex
    "alice:1|bob", // ':' inside a client seed
  ]) {
    assert.throws(() => checkInputs(seed, bad, 7), Error, bad);
  }
});
