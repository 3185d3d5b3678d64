// The drand "quicknet" beacon (and the local beacon in the same format), verified in the
// browser: the JavaScript twin of fairness/beacon.py, on the vendored @noble/curves.
//
// Scheme bls-unchained-g1-rfc9380: round R's signature is a BLS signature on G1 (48 bytes)
// of SHA-256(R as 8-byte big-endian), hashed to G1 under the DST below, by a key on G2
// (96 bytes). The round's randomness is SHA-256(signature). Round R is published at
// genesis + (R - 1) * period.
import { bls12_381 } from "./vendor/noble-curves/bls12-381.js";
import { sha256 } from "./vendor/noble-hashes/sha2.js";

export const SCHEME = "bls-unchained-g1-rfc9380";
export const DST = "BLS_SIG_BLS12381G1_XMD:SHA-256_SSWU_RO_NUL_";
export const MAX_ROUND = 2n ** 64n - 1n;

// From drand's published chain info (fairness/beacon.py keeps it byte for byte).
export const QUICKNET = Object.freeze({
  name: "drand-quicknet",
  publicKey:
    "83cf0f2896adee7eb8b5f01fcad3912212c437e0073e911fb90022d3e760183c8c4b450b6a0a6c3ac6a5776a2d10" +
    "64510d1fec758c921cc22b0e17e63aaf4bcb5ed66304de9cf809bd274ca73bab4af5a6e9c76a4bc09e76eae8991ef5ece45a",
  chainHash: "52db9ba70e0cc0f6eaf7803dd07447a1f5477735fd3f661792ba94600c84e971",
  genesisTime: 1692803367,
  period: 3,
  independent: true,
  scheme: SCHEME,
});

export class BeaconError extends Error {
  constructor(message) {
    super(message);
    this.name = "BeaconError";
  }
}

const short = bls12_381.shortSignatures; // signatures on G1, public keys on G2
const G1 = bls12_381.G1.Point;
const G2 = bls12_381.G2.Point;

function toHex(bytes) {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

function fromHex(hex) {
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}

function checkRound(round) {
  const ok =
    (typeof round === "number" && Number.isSafeInteger(round) && round >= 1) ||
    (typeof round === "bigint" && round >= 1n && round <= MAX_ROUND);
  if (!ok) throw new BeaconError(`a round is an integer from 1 to 2**64 - 1, not ${round}`);
  return BigInt(round);
}

function seconds(unixSeconds) {
  if (typeof unixSeconds !== "number" || !Number.isFinite(unixSeconds)) {
    throw new BeaconError(`a time is a finite number of Unix seconds, not ${unixSeconds}`);
  }
  return Math.floor(unixSeconds);
}

/** The Unix time (seconds) at which `round` is published. */
export function roundTime(round, beacon = QUICKNET) {
  return beacon.genesisTime + Number(checkRound(round) - 1n) * beacon.period;
}

/** The latest round published at this time: 0 before genesis. */
export function roundAt(unixSeconds, beacon = QUICKNET) {
  const t = seconds(unixSeconds);
  if (t < beacon.genesisTime) return 0;
  return Math.floor((t - beacon.genesisTime) / beacon.period) + 1;
}

/** The first round whose time is strictly after unixSeconds + margin. */
export function firstRoundAfter(unixSeconds, margin = 0, beacon = QUICKNET) {
  if (!Number.isSafeInteger(margin) || margin < 0) {
    throw new BeaconError(`a margin is a whole number of seconds >= 0, not ${margin}`);
  }
  const t = seconds(unixSeconds) + margin;
  if (t < beacon.genesisTime) return 1;
  return Math.floor((t - beacon.genesisTime) / beacon.period) + 2;
}

/** What round `round` signs: SHA-256 of the round as 8 bytes big-endian. */
export function message(round) {
  const bytes = new Uint8Array(8);
  new DataView(bytes.buffer).setBigUint64(0, checkRound(round), false);
  return sha256(bytes);
}

/** The round's element of a shoe's client material: "drand-quicknet:<R>:<randomness hex>". */
export function materialElement(round, randomnessHex, name = QUICKNET.name) {
  if (typeof randomnessHex !== "string" || !/^[0-9a-f]{64}$/.test(randomnessHex)) {
    throw new BeaconError("a beacon's randomness is 64 lowercase hex digits");
  }
  return `${name}:${checkRound(round)}:${randomnessHex}`;
}

function decode(Point, hex, what, group) {
  let point;
  try {
    point = Point.fromHex(hex);
  } catch (error) {
    throw new BeaconError(`the ${what} is not a compressed ${group} point: ${error.message}`);
  }
  if (point.is0()) throw new BeaconError(`the ${what} is the identity`);
  if (toHex(point.toBytes(true)) !== hex) {
    throw new BeaconError(`the ${what} is not canonically encoded`);
  }
  return point;
}

/**
 * The randomness (hex) of round `round` if `signatureHex` is the beacon's valid signature of
 * that round under `publicKeyHex` (default: quicknet's key); throws BeaconError otherwise.
 */
export function verify(round, signatureHex, publicKeyHex = QUICKNET.publicKey) {
  checkRound(round);
  if (typeof signatureHex !== "string" || !/^[0-9a-f]{96}$/.test(signatureHex)) {
    throw new BeaconError("a signature is 96 lowercase hex digits (48 bytes, G1)");
  }
  if (typeof publicKeyHex !== "string" || !/^[0-9a-f]{192}$/.test(publicKeyHex)) {
    throw new BeaconError("a public key is 192 lowercase hex digits (96 bytes, G2)");
  }
  const key = decode(G2, publicKeyHex, "public key", "G2");
  const signature = decode(G1, signatureHex, "signature", "G1");
  const hashed = short.hash(message(round), DST);
  if (!short.verify(signature, hashed, key)) {
    throw new BeaconError(`the signature is not the beacon's signature of round ${round}`);
  }
  return toHex(sha256(fromHex(signatureHex)));
}
