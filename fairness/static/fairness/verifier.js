// Verify one round in the browser or Node: the checks of fairness-v1 section 5, points 1 to 5.
// Point 4 twice: the receipt's outcome against the events, and the proof of play (play.js: the
// round decided again here from the players' choices, every rule-forced event derived and the
// recorded stream required to equal it). Mirrors fairness/verify.py; messages say what and where.

import { checkPlay } from "./play.js";
import {
  GENESIS, SHOE_SIZE, canonicalJson, eventHash, hashSeed, isSeed, keyId, shoeCards,
  verifyReceiptSignature,
} from "./shoe.js";

const SETTLED_FIELDS = ["hands", "insurance", "fee", "dealer_total"];
const VOIDED_FIELDS = ["reason", "refunds", "reversed_payouts", "reversed_fee"];

function firstOfType(events, type) {
  const found = events.find((e) => e.type === type);
  return found ? found.data : null;
}

/** Resolve the public key for a line: a published key ring wins over the line's own key. */
async function resolveKey(line, keys) {
  const id = line.key_id;
  let key = line.public_key ?? null;
  if (keys) {
    const published = keys[id];
    if (!published) return [null, `key: unknown key id ${id} (not in the published keys)`];
    if (key !== null && key !== published) {
      return [null, `key: the bundle's public key for ${id} is not the published one`];
    }
    key = published;
  }
  if (key === null) return [null, `key: unknown key id ${id} (no public key given)`];
  try {
    if ((await keyId(key)) !== id) return [null, `key: public key ${key.slice(0, 16)}... does not have key id ${id}`];
  } catch {
    return [null, `key: malformed public key for key id ${id}`];
  }
  return [key, ""];
}

const PLAY_NOT_RUN = "not run: the checks above must pass first (the play is decided on the shoe they prove)";

/**
 * Verify one bundle line ({receipt, signature, key_id, public_key?, events}).
 * `keys` (optional): {key_id: public key hex} from GET /api/fairness/keys.
 * Returns {ok, failures, roundId, cards: [{index, position, dealt, expected, ok}], checks,
 * play: {ran, ok, why?, failures, checks: [{id, label, state, detail, text}]}}.
 */
export async function verifyBundle(line, keys = null) {
  const failures = [];
  const fail = (m) => failures.push(m);
  const receipt = line && line.receipt;
  const events = line && line.events;
  const result = {
    ok: false, failures, roundId: receipt?.round_id ?? "?", cards: [], checks: {},
    play: { ran: false, ok: false, why: PLAY_NOT_RUN, failures: [], checks: [] },
  };
  if (!receipt || typeof receipt !== "object" || !Array.isArray(events) || !events.length) {
    fail("bundle: a line needs a receipt object and a non-empty events list");
    return result;
  }
  // A round line names its format (the Python verifier also refuses unknown fields).
  if (!("format" in line)) fail('bundle: no format (a round line says "format": "fairness-v1-bundle")');
  else if (line.format !== "fairness-v1-bundle") {
    fail(`bundle: unknown format ${JSON.stringify(line.format)} (this verifier reads fairness-v1-bundle and fairness-v1-chain lines)`);
  }
  try {
    // 5. signature
    const [key, why] = await resolveKey(line, keys);
    if (!key) fail(why);
    else if (!(await verifyReceiptSignature(receipt, line.signature, key))) {
      fail(`signature: not a valid Ed25519 signature of this receipt by key ${line.key_id}`);
    }
    result.checks.signature = key !== null && !failures.some((f) => f.startsWith("signature"));
    // 5. event hash chain
    let prev = GENESIS;
    let chainOk = true;
    for (let i = 0; i < events.length; i++) {
      const e = events[i];
      const where = `version ${e.version} (${e.type})`;
      if (e.stream !== receipt.stream) { fail(`event hash: ${where} belongs to stream ${e.stream}, not ${receipt.stream}`); chainOk = false; }
      if (e.version !== i + 1) { fail(`event hash: ${where} found where version ${i + 1} belongs`); chainOk = false; }
      const computed = await eventHash(prev, e);
      if (computed !== e.hash) {
        fail(`event hash: ${where} records ${e.hash}, recomputed ${computed}`);
        chainOk = false;
      }
      prev = typeof e.hash === "string" ? e.hash : computed;
    }
    const last = events[events.length - 1];
    if (prev !== receipt.final_event_hash || last.version !== receipt.final_event_version) {
      fail(`event hash: the receipt names final event v${receipt.final_event_version} ${receipt.final_event_hash}, the events end at v${last.version} ${prev}`);
      chainOk = false;
    }
    result.checks.eventChain = chainOk;
    // 1. seed against commitment
    const seed = receipt.server_seed;
    const commitment = receipt.commitment;
    let seedOk = isSeed(seed) && isSeed(commitment);
    if (!seedOk) fail("seed: the server seed and commitment must be 64 lowercase hex characters");
    else {
      const hashed = await hashSeed(seed);
      if (hashed !== commitment) {
        fail(`seed: sha256 of server seed ${seed} is ${hashed}, not the commitment ${commitment}`);
        seedOk = false;
      }
    }
    const opened = firstOfType(events, "RoundOpened");
    if (!opened) { fail("seed: no RoundOpened event records the commitment"); seedOk = false; }
    else {
      for (const name of ["commitment", "nonce", "chain_id", "round_id", "table_id", "ruleset", "ruleset_hash"]) {
        if (opened[name] !== receipt[name]) {
          fail(`seed: the receipt's ${name} ${JSON.stringify(receipt[name])} differs from RoundOpened's ${JSON.stringify(opened[name])}`);
          seedOk = false;
        }
      }
    }
    const revealed = firstOfType(events, "ServerSeedRevealed");
    if (!revealed || revealed.server_seed !== seed) {
      fail("seed: no ServerSeedRevealed event reveals the receipt's server seed");
      seedOk = false;
    }
    result.checks.seed = seedOk;
    // 2. client material
    const material = receipt.client_material;
    const joined = receipt.participants.map((p) => p.client_seed).join("|");
    let materialOk = joined === material;
    if (!materialOk) fail(`client material: '${material}', but the participants' seeds in seat order give '${joined}'`);
    if (opened) {
      const recorded = JSON.stringify(opened.participants.map((p) => [p.player_id, p.client_seed]));
      const listed = JSON.stringify(receipt.participants.map((p) => [p.player_id, p.client_seed]));
      if (recorded !== listed) { fail(`client material: receipt participants ${listed} differ from RoundOpened's ${recorded}`); materialOk = false; }
    }
    const closed = firstOfType(events, "BettingClosed");
    if (!closed && receipt.outcome === "voided" && !(receipt.cards ?? []).length) {
      // voided before betting closed: nothing was locked, nothing was dealt
    } else if (!closed || closed.client_material !== material) {
      const locked = closed ? `'${closed.client_material}'` : "None"; // as Python's repr
      fail(`client material: BettingClosed locked ${locked}, the receipt says '${material}'`);
      materialOk = false;
    }
    result.checks.clientMaterial = materialOk;
    // 3. every dealt card equals the shoe at positions 0, 1, 2, ...
    const dealt = events.filter((e) => e.type.endsWith("CardDealt"));
    let shoe = [];
    let cardsOk = true;
    try {
      shoe = await shoeCards(seed, material, receipt.nonce, Math.min(416, Math.max(dealt.length, ...dealt.map((e) => e.data.position + 1), 0)));
    } catch (err) {
      fail(`cards: cannot rebuild the shoe (${err.message})`);
      cardsOk = false;
    }
    dealt.forEach((e, index) => {
      const { position, card } = e.data;
      const expected = shoe[position] ?? null;
      const row = { index, position, dealt: card, expected, type: e.type, ok: true };
      if (position !== index) {
        fail(`cards: dealt card #${index} (${e.type} ${card}) is at position ${position}, expected ${index} (no skips)`);
        row.ok = false;
      } else if (expected !== null && card !== expected) {
        fail(`cards: position ${position} dealt ${card}, the shoe has ${expected}`);
        row.ok = false;
      }
      cardsOk = cardsOk && row.ok;
      result.cards.push(row);
    });
    for (const e of events) {
      const shown = e.type === "HoleCardRevealed" ? [e.data] : e.type === "CardsRevealed" ? (e.data.cards ?? []) : [];
      for (const item of shown) {
        const was = dealt[item.position]?.data.card;
        if (was !== undefined && item.card !== was) {
          fail(`cards: ${e.type} shows ${item.card} at position ${item.position}, dealt was ${was}`);
          cardsOk = false;
        }
      }
    }
    const stated = JSON.stringify(receipt.cards.map((c) => [c.position, c.card]));
    const recordedCards = JSON.stringify(dealt.map((e) => [e.data.position, e.data.card]));
    if (stated !== recordedCards) { fail("cards: the receipt's cards differ from the dealt cards in the events"); cardsOk = false; }
    result.checks.cards = cardsOk;
    // 4 (as far as the receipt states it): outcome and payouts are the events' own
    const outcome = receipt.outcome;
    const voided = firstOfType(events, "RoundVoided");
    const source = outcome === "voided" ? voided : outcome === "settled" && !voided ? firstOfType(events, "RoundSettled") : null;
    let outcomeOk = source !== null;
    if (!source) fail(`outcome: the receipt says ${outcome} but the events do not`);
    else {
      const fields = outcome === "voided" ? VOIDED_FIELDS : SETTLED_FIELDS;
      const expected = Object.fromEntries(fields.map((f) => [f, source[f]]));
      if (canonicalJson(expected) !== canonicalJson(receipt.payouts)) {
        fail(`outcome: the receipt's payouts differ from the ${outcome} event's`);
        outcomeOk = false;
      }
    }
    result.checks.outcome = outcomeOk;
    // 4. proof of play, on the round's own shoe (so only once the checks above hold)
    if (!failures.length) {
      const full = await shoeCards(seed, material, receipt.nonce, SHOE_SIZE);
      const play = await checkPlay(events, (position) => full[position]);
      result.play = { ran: true, ...play };
      failures.push(...play.failures);
    }
  } catch (err) {
    fail(`bundle: malformed round data (${err.message})`);
  }
  result.ok = failures.length === 0;
  return result;
}

/**
 * Verify a receipt without its events ({receipt, signature?, key_id?, public_key?} or a bare
 * receipt): the seed against the commitment, the client material, the receipt's cards against
 * the shoe, and the signature when one is given. The event chain needs the bundle line.
 */
export async function verifyReceiptOnly(input, keys = null) {
  const receipt = input.receipt ?? input;
  const failures = [];
  const fail = (m) => failures.push(m);
  const result = {
    ok: false, failures, roundId: receipt.round_id ?? "?", cards: [], checks: {},
    play: {
      ran: false, ok: false, failures: [], checks: [],
      why: "not run: a receipt alone has no events; paste the whole bundle line to check the play",
    },
  };
  try {
    if (input.signature && input.key_id) {
      const [key, why] = await resolveKey(input, keys);
      if (!key) fail(why);
      else if (!(await verifyReceiptSignature(receipt, input.signature, key))) {
        fail(`signature: not a valid Ed25519 signature of this receipt by key ${input.key_id}`);
      }
      result.checks.signature = !failures.length;
    } else {
      fail("signature: no signature given: paste the whole proof to check it");
      result.checks.signature = false;
    }
    const seed = receipt.server_seed;
    if (!isSeed(seed) || !isSeed(receipt.commitment)) {
      fail("seed: the server seed and commitment must be 64 lowercase hex characters");
    } else {
      const hashed = await hashSeed(seed);
      if (hashed !== receipt.commitment) {
        fail(`seed: sha256 of server seed ${seed} is ${hashed}, not the commitment ${receipt.commitment}`);
      }
    }
    const joined = (receipt.participants ?? []).map((p) => p.client_seed).join("|");
    if (joined !== receipt.client_material) {
      fail(`client material: '${receipt.client_material}', but the participants' seeds in seat order give '${joined}'`);
    }
    const cards = receipt.cards ?? [];
    const shoe = await shoeCards(seed, receipt.client_material, receipt.nonce, Math.min(416, cards.length));
    cards.forEach((c, index) => {
      const expected = shoe[index] ?? null;
      const row = { index, position: c.position, dealt: c.card, expected, ok: true };
      if (c.position !== index) {
        fail(`cards: dealt card #${index} (${c.card}) is at position ${c.position}, expected ${index} (no skips)`);
        row.ok = false;
      } else if (c.card !== expected) {
        fail(`cards: position ${c.position} dealt ${c.card}, the shoe has ${expected}`);
        row.ok = false;
      }
      result.cards.push(row);
    });
  } catch (err) {
    fail(`receipt: malformed (${err.message})`);
  }
  result.ok = failures.length === 0;
  return result;
}
