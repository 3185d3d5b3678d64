// The transparency log, checked in the browser or Node 20: RFC 6962 hashing, inclusion and
// consistency proofs (RFC 9162 sections 2.1.3.2 and 2.1.4.2), C2SP checkpoints, signed notes,
// vkeys and cosignature/v1 lines. WebCrypto only (SHA-256, Ed25519). Mirrors fairness/tlog.py and
// fairness/note.py; every failure throws ProofError or NoteError whose message says what failed.
//
// Hashes are Uint8Arrays; tree sizes and indexes are numbers or BigInts (handled as BigInts).

const subtle = globalThis.crypto.subtle;
const encoder = new TextEncoder();

export const HASH_SIZE = 32;
export const ED25519 = 0x01;
export const COSIGNATURE_V1 = 0x04;
const MAX_SIZE = (1n << 63n) - 1n;
const DASH = "\u2014 ";
const CONTROL = /[\x00-\x09\x0b-\x1f]/;

export class ProofError extends Error {
  constructor(message) {
    super(message);
    this.name = "ProofError";
  }
}

export class NoteError extends Error {
  constructor(message) {
    super(message);
    this.name = "NoteError";
  }
}

// --- bytes -------------------------------------------------------------------------------------

export function b64encode(bytes) {
  let text = "";
  for (const b of bytes) text += String.fromCharCode(b);
  return btoa(text);
}

/** Strict standard base64 (padded, canonical) to bytes; throws NoteError naming `what`. */
export function b64decode(text, what = "base64") {
  if (typeof text !== "string" || text.length % 4 || !/^[A-Za-z0-9+/]*={0,2}$/.test(text)) {
    throw new NoteError(`${what} is not base64`);
  }
  let raw;
  try {
    raw = atob(text);
  } catch {
    throw new NoteError(`${what} is not base64`);
  }
  const bytes = Uint8Array.from(raw, (c) => c.charCodeAt(0));
  if (b64encode(bytes) !== text) throw new NoteError(`${what} is not canonical base64`);
  return bytes;
}

function concat(...parts) {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

export function equalBytes(a, b) {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i] ^ b[i];
  return diff === 0;
}

export function toHex(bytes) {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

async function sha256(bytes) {
  return new Uint8Array(await subtle.digest("SHA-256", bytes));
}

// --- Merkle tree ---------------------------------------------------------------------------------

/** RFC 6962 leaf hash: SHA-256(0x00 || data). `data`: bytes, or a string taken as UTF-8. */
export async function leafHash(data) {
  const bytes = typeof data === "string" ? encoder.encode(data) : data;
  return sha256(concat(Uint8Array.of(0), bytes));
}

/** RFC 6962 interior node hash: SHA-256(0x01 || left || right). */
export async function nodeHash(left, right) {
  return sha256(concat(Uint8Array.of(1), left, right));
}

function size(value, what) {
  let n;
  try {
    n = BigInt(value);
  } catch {
    throw new ProofError(`${what} ${value} is not a tree size`);
  }
  if (typeof value === "number" && !Number.isSafeInteger(value)) {
    throw new ProofError(`${what} ${value} is not a tree size`);
  }
  if (n < 0n || n > MAX_SIZE) throw new ProofError(`${what} ${value} is not a tree size`);
  return n;
}

function checkHash(value, what) {
  if (!(value instanceof Uint8Array) || value.length !== HASH_SIZE) {
    throw new ProofError(`${what} is not a ${HASH_SIZE}-byte hash`);
  }
}

function checkProof(proof) {
  if (!Array.isArray(proof)) throw new ProofError("a proof is a list of hashes");
  proof.forEach((p, n) => checkHash(p, `proof element ${n}`));
}

/** The root an inclusion proof of `leaf` (a leaf hash) at `index` implies for a tree of `treeSize`. */
export async function rootFromInclusion(index, treeSize, leaf, proof) {
  const i = size(index, "leaf index");
  const n = size(treeSize, "tree size");
  if (i >= n) throw new ProofError(`leaf index ${i} is not below tree size ${n}`);
  checkHash(leaf, "leaf hash");
  checkProof(proof);
  let fn = i;
  let sn = n - 1n;
  let r = leaf;
  for (const p of proof) {
    if (sn === 0n) throw new ProofError(`inclusion proof has ${proof.length} hashes: too many for this tree`);
    if (fn & 1n || fn === sn) {
      r = await nodeHash(p, r);
      while (!(fn & 1n) && fn) {
        fn >>= 1n;
        sn >>= 1n;
      }
    } else {
      r = await nodeHash(r, p);
    }
    fn >>= 1n;
    sn >>= 1n;
  }
  if (sn !== 0n) throw new ProofError(`inclusion proof has ${proof.length} hashes: too few for this tree`);
  return r;
}

/** Check that `leaf` is at `index` in the tree of `treeSize` with `root`; true, or ProofError. */
export async function verifyInclusion(index, treeSize, leaf, proof, root) {
  checkHash(root, "root");
  const got = await rootFromInclusion(index, treeSize, leaf, proof);
  if (!equalBytes(got, root)) {
    throw new ProofError(
      `inclusion proof of leaf ${index} in tree size ${treeSize} does not lead to the given root`,
    );
  }
  return true;
}

/**
 * Check that the tree of `size2` and `root2` extends the one of `size1` and `root1`; true, or
 * ProofError. As the published vectors want it: equal sizes need an empty proof and equal roots,
 * a proof from size 0 is refused as meaningless (every tree extends the empty one).
 */
export async function verifyConsistency(size1, size2, proof, root1, root2) {
  const m = size(size1, "size1");
  const n = size(size2, "size2");
  if (n < m) throw new ProofError(`size2 ${n} is smaller than size1 ${m}`);
  if (m === 0n) throw new ProofError("a consistency proof from the empty tree is meaningless");
  if (m === n) {
    if (!Array.isArray(proof) || proof.length) {
      throw new ProofError(`consistency proof between equal sizes ${m} must be empty`);
    }
    if (!equalBytes(root1, root2)) throw new ProofError(`different roots for the same tree size ${m}`);
    return true;
  }
  checkHash(root1, "root1");
  checkHash(root2, "root2");
  checkProof(proof);
  if (!proof.length) throw new ProofError(`consistency proof from ${m} to ${n} is empty`);
  const path = (m & (m - 1n)) === 0n ? [root1, ...proof] : [...proof];
  let fn = m - 1n;
  let sn = n - 1n;
  while (fn & 1n) {
    fn >>= 1n;
    sn >>= 1n;
  }
  let fr = path[0];
  let sr = path[0];
  for (const c of path.slice(1)) {
    if (sn === 0n) throw new ProofError(`consistency proof has ${proof.length} hashes: too many`);
    if (fn & 1n || fn === sn) {
      fr = await nodeHash(c, fr);
      sr = await nodeHash(c, sr);
      while (!(fn & 1n) && fn) {
        fn >>= 1n;
        sn >>= 1n;
      }
    } else {
      sr = await nodeHash(sr, c);
    }
    fn >>= 1n;
    sn >>= 1n;
  }
  if (sn !== 0n) throw new ProofError(`consistency proof has ${proof.length} hashes: too few`);
  if (!equalBytes(fr, root1)) throw new ProofError(`consistency proof from ${m} to ${n} does not lead to root1`);
  if (!equalBytes(sr, root2)) throw new ProofError(`consistency proof from ${m} to ${n} does not lead to root2`);
  return true;
}

/** A proof as the log's API sends it (a list of base64 hashes) to bytes. */
export function decodeProof(list) {
  if (!Array.isArray(list)) throw new ProofError("a proof is a list of base64 hashes");
  return list.map((p, n) => {
    try {
      return b64decode(p, `proof element ${n}`);
    } catch (error) {
      throw new ProofError(error.message);
    }
  });
}

// --- notes, vkeys, checkpoints -------------------------------------------------------------------

export function validName(name) {
  return typeof name === "string" && name !== "" && !name.includes("+") && !/\s/u.test(name) && !CONTROL.test(name);
}

async function keyIdOf(name, type, publicKey) {
  return (await sha256(concat(encoder.encode(name), Uint8Array.of(0x0a, type), publicKey))).slice(0, 4);
}

/** A verifier from its vkey `<name>+<hex key id>+<base64(type || key)>`, type 0x01 or 0x04. */
export async function parseVkey(vkey) {
  if (typeof vkey !== "string") throw new NoteError("a vkey is text");
  const text = vkey.trim();
  // the base64 key may hold plus signs itself: split at the first two only
  const first = text.indexOf("+");
  const second = first < 0 ? -1 : text.indexOf("+", first + 1);
  if (second < 0) throw new NoteError("a vkey is <name>+<hex key id>+<base64 key>");
  const name = text.slice(0, first);
  const idHex = text.slice(first + 1, second);
  const keyB64 = text.slice(second + 1);
  if (!validName(name)) {
    throw new NoteError(`key name ${JSON.stringify(name)} is empty or holds a space, a plus or a control code`);
  }
  if (!/^[0-9a-f]{8}$/.test(idHex)) {
    throw new NoteError(`vkey key id ${JSON.stringify(idHex)} is not 8 lowercase hex digits`);
  }
  const raw = b64decode(keyB64, "vkey key");
  if (raw.length !== 33 || (raw[0] !== ED25519 && raw[0] !== COSIGNATURE_V1)) {
    throw new NoteError("vkey key is not an Ed25519 (0x01) or cosignature/v1 (0x04) key");
  }
  const publicKey = raw.slice(1);
  const keyId = await keyIdOf(name, raw[0], publicKey);
  if (toHex(keyId) !== idHex) throw new NoteError(`vkey key id ${idHex} is not the one of its name and key`);
  return { name, keyId, publicKey, type: raw[0], vkey: text };
}

function checkText(text) {
  if (typeof text !== "string" || !text.endsWith("\n")) throw new NoteError("a note's text ends with a newline");
  if (CONTROL.test(text)) throw new NoteError("a note holds no control character but the newline");
  if (typeof text.isWellFormed === "function" && !text.isWellFormed()) throw new NoteError("a note is valid UTF-8");
}

/** A note's body and its signature lines (without newlines); NoteError if malformed. */
export function splitNote(text) {
  checkText(text);
  const split = text.lastIndexOf("\n\n");
  if (split < 0) throw new NoteError("a note has a blank line before its signatures");
  const body = text.slice(0, split + 1);
  const signatures = text.slice(split + 2);
  if (!signatures) throw new NoteError("the note has no signature");
  const lines = signatures.slice(0, -1).split("\n");
  if (lines.length > 100) throw new NoteError("the note has more than 100 signatures");
  return { body, lines };
}

function parseSignatureLine(line) {
  const text = line.endsWith("\n") ? line.slice(0, -1) : line;
  if (!text.startsWith(DASH)) throw new NoteError("a signature line starts with an em dash and a space");
  const rest = text.slice(DASH.length);
  const space = rest.indexOf(" ");
  const name = space < 0 ? rest : rest.slice(0, space);
  const encoded = space < 0 ? "" : rest.slice(space + 1);
  if (space < 0 || !validName(name) || !encoded) {
    throw new NoteError(`malformed signature line ${JSON.stringify(text.slice(0, 80))}`);
  }
  const raw = b64decode(encoded, `signature of ${name}`);
  if (raw.length < 5) throw new NoteError(`signature of ${name} is too short`);
  return { name, keyId: raw.slice(0, 4), signature: raw.slice(4) };
}

/** Every signature of a note, unverified: [{name, keyId, signature}]. */
export function noteSignatures(text) {
  return splitNote(text).lines.map(parseSignatureLine);
}

async function ed25519Valid(publicKey, signature, message) {
  if (signature.length !== 64) return false;
  try {
    const key = await subtle.importKey("raw", publicKey, { name: "Ed25519" }, false, ["verify"]);
    return await subtle.verify({ name: "Ed25519" }, key, signature, message);
  } catch {
    return false;
  }
}

/** What a cosignature/v1 signs: `cosignature/v1\ntime <t>\n` and the checkpoint body. */
export function cosignedMessage(body, timestamp) {
  return encoder.encode(`cosignature/v1\ntime ${timestamp}\n${body}`);
}

// null if bad; a cosignature's timestamp (BigInt), else 0n
async function verifyOne(body, verifier, signature) {
  if (verifier.type === COSIGNATURE_V1) {
    if (signature.length !== 72) return null;
    const timestamp = new DataView(signature.buffer, signature.byteOffset, 8).getBigUint64(0);
    if (timestamp > MAX_SIZE) return null;
    const ok = await ed25519Valid(verifier.publicKey, signature.slice(8), cosignedMessage(body, timestamp));
    return ok ? timestamp : null;
  }
  return (await ed25519Valid(verifier.publicKey, signature, encoder.encode(body))) ? 0n : null;
}

/**
 * Verify a signed note against verifiers (from parseVkey): {body, names} of those whose
 * signature verified. Unknown keys (name and key id) are ignored; a failing signature by a
 * known key, or no verified signature at all, throws NoteError.
 */
export async function openNote(text, verifiers) {
  const { body, lines } = splitNote(text);
  const names = [];
  for (const line of lines) {
    const { name, keyId, signature } = parseSignatureLine(line);
    const verifier = verifiers.find((v) => v.name === name && equalBytes(v.keyId, keyId));
    if (!verifier) continue;
    if ((await verifyOne(body, verifier, signature)) === null) {
      throw new NoteError(`the signature of ${name} (key id ${toHex(keyId)}) does not verify`);
    }
    if (!names.includes(name)) names.push(name);
  }
  if (!names.length) {
    const wanted = verifiers.map((v) => `${v.name}+${toHex(v.keyId)}`).join(", ") || "no key";
    throw new NoteError(`the note has no signature by a known key (${wanted})`);
  }
  return { body, names };
}

/**
 * A checkpoint body's {origin, size, root}, strictly: three lines, a decimal size without
 * leading zeroes (a Number, or a BigInt beyond 2**53 - 1), a canonical base64 32-byte root.
 */
export function parseCheckpoint(body, { extensions = false } = {}) {
  if (typeof body !== "string" || !body.endsWith("\n")) throw new NoteError("a checkpoint ends with a newline");
  const lines = body.slice(0, -1).split("\n");
  if (lines.length < 3) throw new NoteError("a checkpoint has an origin, a size and a root line");
  if (lines.length > 3 && !extensions) throw new NoteError("the checkpoint has extension lines");
  if (lines.some((l) => l === "")) throw new NoteError("a checkpoint has no empty line");
  if (CONTROL.test(body)) throw new NoteError("a checkpoint holds no control character");
  const [origin, sizeText, rootText] = lines;
  if (!/^(0|[1-9][0-9]{0,18})$/.test(sizeText) || BigInt(sizeText) > MAX_SIZE) {
    throw new NoteError(`checkpoint size ${JSON.stringify(sizeText)} is not a decimal tree size`);
  }
  const big = BigInt(sizeText);
  const root = b64decode(rootText, "checkpoint root");
  if (root.length !== HASH_SIZE) throw new NoteError("the checkpoint root is not a 32-byte hash");
  return { origin, size: big <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(big) : big, root };
}

/**
 * Verify a checkpoint note under the log's vkey (text or parsed) and its origin (default: the
 * vkey's name): {origin, size, root, body, names}.
 */
export async function verifyCheckpoint(text, vkey, origin = null) {
  const verifier = typeof vkey === "string" ? await parseVkey(vkey) : vkey;
  const { body, names } = await openNote(text, [verifier]);
  const checkpoint = parseCheckpoint(body);
  const want = origin ?? verifier.name;
  if (checkpoint.origin !== want) {
    throw new NoteError(`the checkpoint's origin is ${JSON.stringify(checkpoint.origin)}, not ${JSON.stringify(want)}`);
  }
  return { ...checkpoint, body, names };
}

/** Check one cosignature/v1 line of a checkpoint body by a cosigner vkey (type 0x04): its time. */
export async function verifyCosignature(body, line, vkey) {
  const verifier = typeof vkey === "string" ? await parseVkey(vkey) : vkey;
  if (verifier.type !== COSIGNATURE_V1) {
    throw new NoteError(`${verifier.name}'s key is not a cosigner key (signature type 0x04)`);
  }
  checkText(body);
  const { name, keyId, signature } = parseSignatureLine(line);
  if (name !== verifier.name || !equalBytes(keyId, verifier.keyId)) {
    throw new NoteError(
      `the cosignature is by ${name} (key id ${toHex(keyId)}), `
      + `not by ${verifier.name} (key id ${toHex(verifier.keyId)})`,
    );
  }
  if (signature.length !== 72) throw new NoteError("a cosignature/v1 signature is an 8-byte time and 64 bytes");
  const timestamp = await verifyOne(body, verifier, signature);
  if (timestamp === null) throw new NoteError(`the cosignature of ${name} does not verify`);
  return Number(timestamp);
}
