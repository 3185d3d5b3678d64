// fairness-v1 in the browser and in Node 20: the shoe, seed chains, event hashes, receipts.
// WebCrypto only (HMAC-SHA256, SHA-256, Ed25519); a second implementation of fairness/*.py,
// checked against the same vectors (tests/fairness/vectors.json).

const subtle = globalThis.crypto.subtle;
const encoder = new TextEncoder();

export const SHOE_SIZE = 416;
export const SUITS = "SHDC";
export const RANKS = "A23456789TJQK";
export const GENESIS = "0".repeat(64);
const SEED_RE = /^[0-9a-f]{64}$/;
const CLIENT_SEED_RE = /^[A-Za-z0-9_.-]{1,64}$/;
const NONCE_RE = /^[1-9][0-9]*$/;
const TWO_32 = 4294967296;

/** Card q in 0..51 as rank then suit: 0 -> "AS", 51 -> "KC". */
export function cardCode(q) {
  return RANKS[q % 13] + SUITS[Math.floor(q / 13)];
}

/** The unshuffled shoe: position p holds card p mod 52. */
export const UNSHUFFLED = Array.from({ length: SHOE_SIZE }, (_, p) => cardCode(p % 52));

export function isSeed(value) {
  return typeof value === "string" && SEED_RE.test(value);
}

export function isClientSeed(value) {
  return typeof value === "string" && CLIENT_SEED_RE.test(value);
}

// fairness-v2: a shared table's material ends with its beacon round's element.
const BEACON_ELEMENT_RE = /^[a-z0-9-]+:[1-9][0-9]{0,19}:[0-9a-f]{64}$/;
const MAX_BEACON_ROUND = 2n ** 64n - 1n;

/** Whether `value` is a beacon element "<name>:<round>:<randomness hex>" (fairness-v2). */
export function isBeaconElement(value) {
  return typeof value === "string" && BEACON_ELEMENT_RE.test(value)
    && BigInt(value.split(":")[1]) <= MAX_BEACON_ROUND;
}

/** Throws unless the inputs are what fairness-v1 allows (with fairness-v2's beacon element
 * last, after at least one client seed); returns the nonce as decimal text. */
export function checkInputs(serverSeed, clientMaterial, nonce) {
  if (!isSeed(serverSeed)) throw new Error("server seed must be 64 lowercase hex characters");
  const parts = typeof clientMaterial === "string" ? clientMaterial.split("|") : null;
  if (parts && parts.length > 1 && parts[parts.length - 1].includes(":")) {
    if (!isBeaconElement(parts.pop())) {
      throw new Error("a beacon element must be <name>:<round>:<randomness>: a name of a-z 0-9 -, "
        + "a round from 1 to 2**64 - 1 in decimal, 64 lowercase hex characters");
    }
  }
  if (!parts || !parts.every(isClientSeed)) {
    throw new Error("client seed must be 1 to 64 characters of A-Z a-z 0-9 _ . -");
  }
  const text = String(nonce);
  if (!NONCE_RE.test(text)) throw new Error("nonce must be a positive integer");
  return text;
}

export function toHex(buffer) {
  return Array.from(new Uint8Array(buffer), (b) => b.toString(16).padStart(2, "0")).join("");
}

export function fromHex(hex) {
  if (typeof hex !== "string" || hex.length % 2 || /[^0-9a-fA-F]/.test(hex)) {
    throw new Error("not hex");
  }
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}

export async function sha256Hex(bytesOrText) {
  const data = typeof bytesOrText === "string" ? encoder.encode(bytesOrText) : bytesOrText;
  return toHex(await subtle.digest("SHA-256", data));
}

/** One step down a seed chain: hex(SHA256(ascii(seed))). */
export function hashSeed(seed) {
  return sha256Hex(seed);
}

/** Apply hashSeed `steps` times. */
export async function walk(seed, steps) {
  let value = seed;
  for (let i = 0; i < steps; i++) value = await hashSeed(value);
  return value;
}

/** Whether the revealed seed hashes to the commitment shown before its round. */
export async function verifySeed(seed, commitment) {
  return isSeed(seed) && isSeed(commitment) && (await hashSeed(seed)) === commitment;
}

/** The random stream of one round: blocks of eight big-endian 32-bit words. */
export class RandomStream {
  constructor(serverSeed, clientMaterial, nonce) {
    this.prefix = `${clientMaterial}:${String(nonce)}:`;
    this.keyPromise = subtle.importKey(
      "raw", encoder.encode(serverSeed), { name: "HMAC", hash: "SHA-256" }, false, ["sign"],
    );
    this.block = 0;
    this.words = [];
    this.next = 0;
  }

  /** The next `count` blocks as raw bytes (computed in parallel). */
  async blocks(count) {
    const key = await this.keyPromise;
    const jobs = [];
    for (let c = this.block; c < this.block + count; c++) {
      jobs.push(subtle.sign("HMAC", key, encoder.encode(`${this.prefix}${c}`)));
    }
    this.block += count;
    return (await Promise.all(jobs)).map((b) => new Uint8Array(b));
  }

  /** Fetch enough whole blocks for at least `count` more words. */
  async fetch(count) {
    const have = this.words.length - this.next;
    if (have >= count) return;
    const blocks = await this.blocks(Math.ceil((count - have) / 8));
    const words = this.words.slice(this.next);
    for (const block of blocks) {
      const view = new DataView(block.buffer);
      for (let i = 0; i < 8; i++) words.push(view.getUint32(4 * i, false));
    }
    this.words = words;
    this.next = 0;
  }

  async nextWord() {
    await this.fetch(1);
    return this.words[this.next++];
  }

  /** uniform(m) for 1 <= m <= 2^32: rejection sampling, no modulo bias. */
  async uniform(m) {
    const limit = Math.floor(TWO_32 / m) * m;
    for (;;) {
      const x = await this.nextWord();
      if (x < limit) return x % m;
    }
  }
}

/** The first `count` cards of the round's shoe (forward Fisher-Yates, stopping early). */
export async function shoeCards(serverSeed, clientMaterial, nonce, count = SHOE_SIZE) {
  const nonceText = checkInputs(serverSeed, clientMaterial, nonce);
  if (!(count >= 0 && count <= SHOE_SIZE)) throw new Error("card count out of range");
  const stream = new RandomStream(serverSeed, clientMaterial, nonceText);
  const shoe = UNSHUFFLED.slice();
  const steps = Math.min(count, SHOE_SIZE - 1);
  await stream.fetch(steps);
  for (let i = 0; i < steps; i++) {
    const j = i + (await stream.uniform(SHOE_SIZE - i));
    const card = shoe[j];
    shoe[j] = shoe[i];
    shoe[i] = card;
  }
  return shoe.slice(0, count);
}

/** Canonical JSON: sorted keys, no spaces, non-ASCII kept (as Python's canonical_json). */
export function canonicalJson(value) {
  if (value === null || typeof value !== "object") {
    if (typeof value === "number" && !Number.isSafeInteger(value)) {
      throw new Error(`number ${value} is not a safe integer`);
    }
    return JSON.stringify(value);
  }
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  const keys = Object.keys(value).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(value[k])}`).join(",")}}`;
}

export const BODY_KEYS = ["stream", "version", "type", "schema_version", "data", "recorded_at"];

/** sha256(prev_hash + canonical JSON of the event body), hex. */
export function eventHash(prevHash, event) {
  const body = {};
  for (const k of BODY_KEYS) body[k] = event[k];
  return sha256Hex(prevHash + canonicalJson(body));
}

/** First 16 hex characters of sha256(raw public key). */
export async function keyId(publicKeyHex) {
  return (await sha256Hex(fromHex(publicKeyHex))).slice(0, 16);
}

/** Whether `signatureHex` is a valid Ed25519 signature of the receipt's canonical JSON. */
export async function verifyReceiptSignature(receipt, signatureHex, publicKeyHex) {
  try {
    const raw = fromHex(publicKeyHex);
    const signature = fromHex(signatureHex);
    if (raw.length !== 32 || signature.length !== 64) return false;
    const key = await subtle.importKey("raw", raw, { name: "Ed25519" }, false, ["verify"]);
    return await subtle.verify({ name: "Ed25519" }, key, signature, encoder.encode(canonicalJson(receipt)));
  } catch {
    return false;
  }
}
