// fairness/static/fairness/tlog.js under `node --test` (run by tests/fairness/test_tlog_js.py).
// Not named *.test.mjs: `node --test tests/fairness/js/` (tests/fairness/test_js.py) counts the
// tests of that folder's test files, and these are counted on their own.
//
// The published RFC 6962 vectors (tests/fairness/vectors/merkle), the C2SP signed-note example,
// and, from the JSON file named by TLOG_FIXTURE (written by the Python test), proofs and a signed,
// cosigned checkpoint made by fairness/tlog.py and fairness/note.py.
import assert from "node:assert/strict";
import { readFileSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import test from "node:test";
import { fileURLToPath } from "node:url";

import {
  NoteError, ProofError, b64decode, decodeProof, leafHash, nodeHash, noteSignatures, openNote,
  parseCheckpoint, parseVkey, verifyCheckpoint, verifyConsistency, verifyCosignature,
  verifyInclusion,
} from "../../../fairness/static/fairness/tlog.js";

const VECTORS = fileURLToPath(new URL("../vectors/merkle/", import.meta.url));

function files(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : path.endsWith(".json") ? [path] : [];
  }).sort();
}

// The vectors' "don't care" values are not always base64 of 32 bytes: decode leniently.
const raw = (text) => (text ? Uint8Array.from(atob(text), (c) => c.charCodeAt(0)) : new Uint8Array());

async function verdict(check) {
  try {
    await check();
    return "ok";
  } catch (error) {
    if (!(error instanceof ProofError)) throw error;
    return "refused";
  }
}

test("every inclusion vector gets its verdict", async () => {
  const cases = files(join(VECTORS, "inclusion"));
  assert.ok(cases.length > 50);
  for (const path of cases) {
    const c = JSON.parse(readFileSync(path, "utf8"));
    const got = await verdict(() => verifyInclusion(
      c.leafIdx, c.treeSize, raw(c.leafHash), (c.proof ?? []).map(raw), raw(c.root),
    ));
    assert.equal(got, c.wantErr ? "refused" : "ok", path);
  }
});

test("every consistency vector gets its verdict", async () => {
  const cases = files(join(VECTORS, "consistency"));
  assert.ok(cases.length > 50);
  for (const path of cases) {
    const c = JSON.parse(readFileSync(path, "utf8"));
    const got = await verdict(() => verifyConsistency(
      c.size1, c.size2, (c.proof ?? []).map(raw), raw(c.root1), raw(c.root2),
    ));
    assert.equal(got, c.wantErr ? "refused" : "ok", path);
  }
});

test("hashing is RFC 6962", async () => {
  const hex = (b) => Buffer.from(b).toString("hex");
  const empty = "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d"; // SHA-256(0x00)
  assert.equal(hex(await leafHash(new Uint8Array())), empty);
  const l = new Uint8Array(32).fill(1);
  const r = new Uint8Array(32).fill(2);
  const want = await crypto.subtle.digest("SHA-256", Buffer.concat([Buffer.of(1), l, r]));
  assert.equal(hex(await nodeHash(l, r)), hex(new Uint8Array(want)));
  assert.deepEqual(await leafHash("a"), await leafHash(new TextEncoder().encode("a")));
});

test("the signed-note spec example verifies", async () => {
  const vkey = await parseVkey("example.com/foo+530d903a+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k");
  const note = "This is an example message.\n\n\u2014 example.com/foo Uw2QOkn8srV1yJGh2VYRlL1Tnagv1YEq6TfXppzi2"
    + "ONncAlTgK7Ztg1ERYNZXsYjOBH3mFXmRKuwHjG1Yu72IneyaQM=\n";
  assert.deepEqual(
    await openNote(note, [vkey]), { body: "This is an example message.\n", names: ["example.com/foo"] },
  );
  await assert.rejects(openNote(note.replace("example", "exemple"), [vkey]), NoteError);
  await assert.rejects(
    parseVkey("example.com/foo+530d903b+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k"), /not the one/,
  );
  assert.throws(() => parseCheckpoint("o\n01\nAAAA\n"), /not a decimal/);
  assert.throws(() => noteSignatures("body\n\n\u2014 a AAAA\n"), /too short/);
});

const fixturePath = process.env.TLOG_FIXTURE;

test("proofs made by fairness/tlog.py verify; tampered ones do not", { skip: !fixturePath }, async () => {
  const fixture = JSON.parse(readFileSync(fixturePath, "utf8"));
  const roots = fixture.roots.map((r) => b64decode(r));
  for (const p of fixture.inclusion) {
    const proof = decodeProof(p.proof);
    const leaf = b64decode(p.leaf);
    assert.equal(await verifyInclusion(p.index, p.size, leaf, proof, roots[p.size]), true);
    if (proof.length) {
      const bad = proof.map((h) => h.slice());
      bad[bad.length - 1][0] ^= 1;
      await assert.rejects(verifyInclusion(p.index, p.size, leaf, bad, roots[p.size]), ProofError);
    }
    const badLeaf = leaf.slice();
    badLeaf[31] ^= 0x80;
    await assert.rejects(verifyInclusion(p.index, p.size, badLeaf, proof, roots[p.size]), /does not lead/);
  }
  for (const p of fixture.consistency) {
    const proof = decodeProof(p.proof);
    assert.equal(await verifyConsistency(p.from, p.to, proof, roots[p.from], roots[p.to]), true);
    if (p.from < p.to) {
      const bad = proof.map((h) => h.slice());
      bad[0][5] ^= 4;
      await assert.rejects(verifyConsistency(p.from, p.to, bad, roots[p.from], roots[p.to]), ProofError);
      await assert.rejects(verifyConsistency(p.from, p.to, proof, roots[p.from + 1], roots[p.to]), ProofError);
    }
  }
});

test("a checkpoint signed and cosigned in Python verifies", { skip: !fixturePath }, async () => {
  const fixture = JSON.parse(readFileSync(fixturePath, "utf8"));
  const { checkpoint, vkey, cosignerVkey, cosignature, size, root } = fixture.note;
  const got = await verifyCheckpoint(checkpoint, vkey);
  assert.deepEqual([got.origin, got.size, Buffer.from(got.root).toString("base64")], [fixture.origin, size, root]);
  assert.deepEqual(got.names, [fixture.origin]);
  const cosigner = await parseVkey(cosignerVkey);
  assert.equal(await verifyCosignature(got.body, cosignature.line, cosigner), cosignature.timestamp);
  assert.deepEqual((await openNote(checkpoint, [cosigner])).names, [cosigner.name]);
  const bumped = (text) => text.replace(`\n${size}\n`, `\n${size + 1}\n`);
  await assert.rejects(verifyCosignature(bumped(got.body), cosignature.line, cosigner), /does not verify/);
  await assert.rejects(verifyCheckpoint(bumped(checkpoint), vkey), /does not verify/);
  await assert.rejects(verifyCheckpoint(fixture.note.impostor, vkey), /no signature by a known key/);
  await assert.rejects(verifyCheckpoint(checkpoint, vkey, "other.example/log"), /origin/);
});
