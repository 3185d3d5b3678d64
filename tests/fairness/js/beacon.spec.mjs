// node --test tests/fairness/js/beacon.spec.mjs : fairness/static/fairness/beacon.js against
// real quicknet rounds (where each comes from: tests/fairness/test_beacon.py). Named .spec.mjs
// so that tests/fairness/test_js.py's `node --test tests/fairness/js/` (16 tests) skips it;
// tests/fairness/test_beacon_js.py runs it.
import assert from "node:assert/strict";
import { test } from "node:test";

import {
  BeaconError, QUICKNET, firstRoundAfter, materialElement, message, roundAt, roundTime, verify,
} from "../../../fairness/static/fairness/beacon.js";

const KAT = {
  round: 657413,
  signature:
    "b713718a38ae728dfd477991af2822e08d2f305e47718cef9f7848ce4050e7be41076862b98fad56e91a6b85b89cd97b",
  randomness: "fc1873a13f3545aeade8401532ef5519920652eee6b0d2b19ca12643b87b3587",
};
const ROUNDS = [
  [123, "b75c69d0b72a5d906e854e808ba7e2accb1542ac355ae486d591aa9d43765482e26cd02df835d3546d23c4b13e0dfc92",
    "fb8f7bc29bf24db51871ec8c79f3a1e4bd0557bc0dfcee9ed1d924e69d1c60dc"],
  [1000, "b44679b9a59af2ec876b1a6b1ad52ea9b1615fc3982b19576350f93447cb1125e342b73a8dd2bacbe47e4b6b63ed5e39",
    "fe290beca10872ef2fb164d2aa4442de4566183ec51c56ff3cd603d930e54fdd"],
  [1001, "b33bf3667cbd5a82de3a24b4e0e9fe5513cc1a0e840368c6e31f5fcfa79bea03f73896b25883abf2853d10337fb8fa41",
    "b0a591ad1b9002cfc372ac6e30abd3da8d3088d4caae026961743474fb94235f"],
];

function flip(hex, index) {
  const byte = parseInt(hex.slice(2 * index, 2 * index + 2), 16) ^ 1;
  return hex.slice(0, 2 * index) + byte.toString(16).padStart(2, "0") + hex.slice(2 * index + 2);
}

test("the known-answer vector verifies", () => {
  assert.equal(verify(KAT.round, KAT.signature), KAT.randomness);
  assert.equal(verify(BigInt(KAT.round), KAT.signature, QUICKNET.publicKey), KAT.randomness);
});

test("real quicknet rounds verify", () => {
  for (const [round, signature, randomness] of ROUNDS) assert.equal(verify(round, signature), randomness);
});

test("a wrong round, a changed byte, a malformed signature fail", () => {
  assert.throws(() => verify(KAT.round + 1, KAT.signature), /signature of round 657414/);
  for (const i of [0, 1, 17, 46, 47]) assert.throws(() => verify(KAT.round, flip(KAT.signature, i)), BeaconError);
  assert.throws(() => verify(KAT.round, "c0" + "00".repeat(47)), /identity/);
  assert.throws(() => verify(KAT.round, KAT.signature.toUpperCase()), /lowercase hex/);
  assert.throws(() => verify(0, KAT.signature), /a round is/);
  assert.throws(() => verify(KAT.round, KAT.signature, QUICKNET.publicKey.slice(2)), /public key/);
});

test("round times, the message and the material element", () => {
  assert.equal(roundTime(1), 1692803367);
  assert.equal(roundTime(1000), 1692803367 + 999 * 3);
  assert.equal(roundAt(1692803366), 0);
  assert.equal(roundAt(1692803369.9), 1);
  assert.equal(roundAt(roundTime(KAT.round)), KAT.round);
  assert.equal(firstRoundAfter(1692803367), 2);
  assert.equal(firstRoundAfter(1692803367, 3), 3);
  assert.equal(Buffer.from(message(1)).toString("hex"),
    "cd2662154e6d76b2b2b92e70c0cac3ccf534f9b74eb5b89819ec509083d00a50");
  assert.equal(materialElement(KAT.round, KAT.randomness), `drand-quicknet:657413:${KAT.randomness}`);
  assert.throws(() => materialElement(KAT.round, "00"), BeaconError);
});
