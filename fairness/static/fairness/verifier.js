// Verify one round in the browser or Node: the checks of fairness-v1 section 5, points 1 to 5.
// Point 4 twice: the receipt's outcome against the events, and the proof of play (play.js: the
// round decided again here from the players' choices, every rule-forced event derived and the
// recorded stream required to equal it). Mirrors fairness/verify.py; messages say what and where.
// fairness-v2 (a shared table's round, which waits for a public beacon round): the beacon is
// checked here too, in the page's own code (beacon.js on the vendored @noble/curves, WebCrypto):
// its BLS signature, its randomness, that it is the first round after the lock, that the shoe
// used it, and that the receipt names it; `beacon` in the result says which beacon it was.

import {
  BeaconError, QUICKNET, firstRoundAfter, roundTime, verify as verifyBeaconSignature,
} from "./beacon.js";
import { checkPlay } from "./play.js";
import {
  GENESIS, SHOE_SIZE, canonicalJson, eventHash, fromHex,
  hashSeed, isSeed, keyId, sha256Hex, shoeCards, verifyReceiptSignature,
} from "./shoe.js";

export const BUNDLE_FORMAT = "fairness-v1-bundle";
export const BUNDLE_FORMAT_V2 = "fairness-v2-bundle";
const SPEC_V2 = "fairness-v2";

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

// --- the beacon (fairness-v2) -----------------------------------------------------------------

const SHARED_RULESETS = ["duel", "duel_classic"]; // tables of several seats, each its own seed
const HEX_192 = /^[0-9a-f]{192}$/;
const HEX_64 = /^[0-9a-f]{64}$/;
const SIGNATURE_HEX = /^[0-9a-f]{96}$/;
const BEACON_NAME = /^[a-z0-9-]+$/;
const BEACON_RECEIPT_FIELDS = ["name", "chain_hash", "public_key", "round", "round_time", "signature", "randomness"];

/** Whether the spec is drand quicknet's (League of Entropy), as beacon.js pins it: its key,
 * chain hash, genesis and period (another genesis or period would name other rounds' times). */
export function isQuicknet(spec) {
  return spec.public_key === QUICKNET.publicKey && spec.chain_hash === QUICKNET.chainHash
    && spec.genesis_time === QUICKNET.genesisTime && spec.period === QUICKNET.period;
}

/** What is wrong with a RoundOpened.beacon as a beacon the page can check (null: nothing). */
function specProblem(spec, { quicknetParts = true } = {}) {
  const whole = (v, least) => Number.isSafeInteger(v) && v >= least;
  if (typeof spec.name !== "string" || !BEACON_NAME.test(spec.name)) return "its name is not of a-z 0-9 -";
  if (typeof spec.public_key !== "string" || !HEX_192.test(spec.public_key)) return "its public key is not 192 lowercase hex digits";
  if (typeof spec.chain_hash !== "string" || !HEX_64.test(spec.chain_hash)) return "its chain hash is not 64 lowercase hex digits";
  if (!whole(spec.genesis_time, 0) || !whole(spec.period, 1)) return "its genesis time and period are not whole seconds (the period at least 1)";
  if (!whole(spec.margin_s, 0) || !whole(spec.wait_s, 0)) return "its margin and wait are not whole seconds";
  const partly = spec.public_key === QUICKNET.publicKey || spec.chain_hash === QUICKNET.chainHash;
  if (quicknetParts && partly && !isQuicknet(spec)) {
    return "it has quicknet's public key or chain hash but not all of quicknet's key, chain "
      + `hash, genesis time ${QUICKNET.genesisTime} and period ${QUICKNET.period}`;
  }
  return null;
}

/** A JSON value as Python's repr writes it in the Python verifier's messages ('text', None). */
function pyRepr(value) {
  if (typeof value === "string" && !value.includes("'")) return `'${value}'`;
  if (value === null || value === undefined) return "None";
  if (value === true || value === false) return value ? "True" : "False";
  return JSON.stringify(value);
}

function keyWords(spec) {
  return `key ${spec.public_key.slice(0, 16)}…, chain ${spec.chain_hash.slice(0, 16)}…`;
}

const RECEIPT_VERSIONS = { "fairness-v1": 1, "fairness-v2": 2 };

/** The receipt names its version: fairness-v2 (receipt_version 2) exactly when the round's
 * table reads a beacon (RoundOpened.beacon), else fairness-v1 (1). */
function receiptVersionFailures(receipt, spec) {
  const failures = [];
  const name = receipt.spec;
  if (typeof name !== "string" || !Object.hasOwn(RECEIPT_VERSIONS, name)) {
    return [`receipt: unknown spec ${pyRepr(name)} (this verifier reads fairness-v1 and fairness-v2)`];
  }
  if (receipt.receipt_version !== RECEIPT_VERSIONS[name]) {
    failures.push(`receipt: a ${name} receipt has receipt_version ${RECEIPT_VERSIONS[name]}, not ${pyRepr(receipt.receipt_version)}`);
  }
  if (spec === null && name === SPEC_V2) {
    failures.push("beacon: the receipt is fairness-v2, but the round's table reads no beacon (RoundOpened has none)");
  } else if (spec !== null && name !== SPEC_V2) {
    failures.push(`beacon: the round's table reads the beacon ${pyRepr(spec.name)}, but its receipt is ${name}, not fairness-v2`);
  }
  return failures;
}

/** The receipt's beacon as the events give it (null where none was awaited or recorded). */
function receiptBeaconOf(spec, awaited, recorded) {
  return {
    name: spec.name, chain_hash: spec.chain_hash, public_key: spec.public_key,
    round: awaited ? awaited.round : null, round_time: awaited ? awaited.round_time : null,
    signature: recorded ? recorded.signature : null, randomness: recorded ? recorded.randomness : null,
  };
}

/**
 * The beacon of a round: the checks of fairness-v2 (each failure "beacon: ...", "receipt: ...")
 * and what the page says of it. `beacon`: {state, text, round, independent} with state
 * "independent" | "not-independent" (a beacon round awaited, checked; whose key), "not-needed"
 * (a beacon table's round that awaited no beacon round), "warning" (a shared table's round of
 * two or more seats without a beacon), "none" (no beacon, none needed) or "failed".
 * The checks are this file's own, in its own terms (not play.js's): at a beacon table, when
 * betting closes with two or more seats, BeaconAwaited names the first round whose time is
 * strictly after the lock (closed_at_ms floored to seconds) + margin_s, with its time and the
 * deadline; BeaconRecorded's signature is the beacon's BLS signature of that round under the
 * spec's key, its randomness the SHA-256 of the signature (WebCrypto), its material the locked
 * seeds with "<name>:<round>:<randomness>", recorded before the deadline and before any card;
 * without it no card is dealt and the round is voided; the receipt's beacon is the events'.
 */
async function checkBeacon(receipt, events, opened, closed) {
  const failures = [];
  const fail = (m) => failures.push(`beacon: ${m}`);
  const spec = opened && Object.hasOwn(opened, "beacon") ? opened.beacon : null;
  const seats = Array.isArray(opened?.participants) ? opened.participants.length : 0;
  failures.push(...receiptVersionFailures(receipt, spec === null || typeof spec !== "object" ? null : spec));
  const failed = { state: "failed", round: null, independent: false, text: "" };
  if (spec === null) {
    const shared = SHARED_RULESETS.includes(opened?.ruleset) && seats >= 2 && closed;
    const beacon = shared
      ? { state: "warning", round: null, independent: false,
        text: "no beacon: a seat could choose its cards. This shared-table round of "
          + `${seats} seats mixed no public randomness into its shoe: the last seat to set its client `
          + "seed could have tried seeds until the shoe suited it, if it knew the others' seeds." }
      : { state: "none", round: null, independent: false,
        text: seats >= 2
          ? "No beacon: betting never closed, so no seat's seed went into a shoe."
          : "No beacon: one seat's round, its own client seed and the committed server seed make the shoe." };
    return { failures, beacon: failures.length ? failed : beacon };
  }
  if (typeof spec !== "object" || Array.isArray(spec)) {
    fail("RoundOpened.beacon is not an object");
    return { failures, beacon: failed };
  }
  const problem = specProblem(spec);
  if (problem) {
    fail(`the table's beacon (RoundOpened.beacon) cannot be checked: ${problem}`);
    return { failures, beacon: failed };
  }
  const independent = isQuicknet(spec);
  const at = { BeaconAwaited: [], BeaconRecorded: [], BettingClosed: [] };
  let firstCard = null;
  events.forEach((e, i) => {
    if (Object.hasOwn(at, e.type)) at[e.type].push(i);
    else if (firstCard === null && typeof e.type === "string" && e.type.endsWith("CardDealt")) firstCard = i;
  });
  for (const type of ["BeaconAwaited", "BeaconRecorded"]) {
    if (at[type].length > 1) fail(`${at[type].length} ${type} events; a round has one at most`);
  }
  const awaited = firstOfType(events, "BeaconAwaited");
  const recorded = firstOfType(events, "BeaconRecorded");
  const voided = firstOfType(events, "RoundVoided");
  const timing = { genesisTime: spec.genesis_time, period: spec.period };
  let round = null;
  let lockWords = "";
  if (awaited) {
    round = awaited.round;
    if (!closed) fail(`BeaconAwaited names round ${round}, but betting never closed`);
    else if (seats < 2) fail(`BeaconAwaited names round ${round}, but one seat needs no beacon`);
    if (!Number.isSafeInteger(round) || round < 1) {
      fail(`BeaconAwaited names round ${pyRepr(round)}, not a round (1 to 2**64 - 1)`);
      round = null;
    } else if (closed) {
      if (at.BeaconAwaited[0] !== at.BettingClosed[0] + 1) fail("BeaconAwaited does not follow BettingClosed");
      const lock = Math.floor(closed.closed_at_ms / 1000);
      const after = lock + spec.margin_s;
      const first = firstRoundAfter(lock, spec.margin_s, timing);
      const time = roundTime(round, timing);
      lockWords = `the first round after the lock at ${lock} s + ${spec.margin_s} s`;
      if (time <= after) {
        fail(`round ${round} (at ${time} s) is not after the lock: its time must be after the lock's ${lock} s + ${spec.margin_s} s = ${after} s`);
      } else if (round !== first) {
        fail(`round ${round} is not the first round after the lock (${lock} s + ${spec.margin_s} s): round ${first}, at ${roundTime(first, timing)} s, is`);
      }
      if (awaited.round_time !== time) fail(`BeaconAwaited says round ${round} is at ${pyRepr(awaited.round_time)} s; the beacon publishes it at ${time} s`);
      if (awaited.deadline_ms !== (time + spec.wait_s) * 1000) {
        fail(`BeaconAwaited's deadline ${pyRepr(awaited.deadline_ms)} ms is not round ${round}'s time + ${spec.wait_s} s, ${(time + spec.wait_s) * 1000} ms`);
      }
    }
  } else if (closed && seats >= 2) {
    fail(`betting closed with ${seats} seats at a table reading ${spec.name}, but no BeaconAwaited names the beacon round the deal waits for`);
  }
  if (recorded) {
    const got = recorded.round;
    if (!awaited) fail(`BeaconRecorded records round ${pyRepr(got)}, which no BeaconAwaited named`);
    else if (got !== awaited.round) fail(`BeaconRecorded records round ${pyRepr(got)}, not the awaited round ${round}`);
    else if (at.BeaconRecorded[0] < at.BeaconAwaited[0]) fail("BeaconRecorded comes before BeaconAwaited");
    const signature = recorded.signature;
    try {
      verifyBeaconSignature(got, signature, spec.public_key);
    } catch (err) {
      if (!(err instanceof BeaconError)) throw err;
      fail(`round ${pyRepr(got)}'s signature does not verify under the beacon's public key ${spec.public_key.slice(0, 16)}… (${err.message})`);
    }
    if (typeof signature === "string" && SIGNATURE_HEX.test(signature)) {
      const randomness = await sha256Hex(fromHex(signature)); // WebCrypto
      if (recorded.randomness !== randomness) {
        fail(`BeaconRecorded's randomness ${pyRepr(recorded.randomness)} is not the SHA-256 of the signature, ${randomness}`);
      }
      const wanted = `${closed ? closed.client_material : "?"}|${spec.name}:${got}:${randomness}`;
      if (recorded.client_material !== wanted) {
        fail(`BeaconRecorded's client material ${pyRepr(recorded.client_material)} is not the locked seeds with the beacon's element, ${pyRepr(wanted)}`);
      }
    }
    if (firstCard !== null && firstCard < at.BeaconRecorded[0]) fail(`a card was dealt (version ${firstCard + 1}) before the beacon round`);
    if (awaited && !(Number.isSafeInteger(recorded.recorded_at_ms) && recorded.recorded_at_ms < awaited.deadline_ms)) {
      fail(`round ${pyRepr(got)} was recorded at ${pyRepr(recorded.recorded_at_ms)} ms, not before its deadline ${pyRepr(awaited.deadline_ms)} ms`);
    }
  } else if (awaited) {
    if (firstCard !== null) fail(`cards were dealt, but beacon round ${round} was never recorded`);
    if (receipt.outcome !== "voided") fail(`beacon round ${round} was never recorded, and the round is not voided`);
  }
  // The receipt names the beacon as the events record it (round and signature null where none).
  if (receipt.spec === SPEC_V2) {
    const want = receiptBeaconOf(spec, awaited, recorded);
    const got = receipt.beacon;
    if (got === null || typeof got !== "object" || Array.isArray(got)) fail("the fairness-v2 receipt names no beacon");
    else {
      for (const field of BEACON_RECEIPT_FIELDS) {
        if (Object.hasOwn(got, field) && canonicalJson(got[field]) !== canonicalJson(want[field])) {
          fail(`the receipt's beacon ${field} ${pyRepr(got[field])} is not the events' ${pyRepr(want[field])}`);
        }
      }
      const extra = Object.keys(got).filter((k) => !BEACON_RECEIPT_FIELDS.includes(k));
      const missing = BEACON_RECEIPT_FIELDS.filter((k) => !Object.hasOwn(got, k));
      if (extra.length || missing.length) {
        fail(`the receipt's beacon has the fields ${BEACON_RECEIPT_FIELDS.join(", ")}`
          + `${extra.length ? `, not ${extra.join(", ")}` : ""}${missing.length ? ` (missing: ${missing.join(", ")})` : ""}`);
      }
    }
  }
  const whose = (r) => (independent ? `drand quicknet round ${r}: independent`
    : `operator-run beacon: not independent (${spec.name} round ${r}, ${keyWords(spec)})`);
  let text;
  if (recorded) {
    text = `${whose(recorded.round)}. Its BLS signature verifies under ${independent ? "quicknet's" : "the table's"} `
      + `public key, its randomness is the SHA-256 of the signature, the round is ${lockWords || "the round awaited"}, `
      + "and the shoe was shuffled with it.";
    if (!independent) {
      text += " The casino runs this beacon and can know its rounds before their time, so it does not "
        + "make the shoe independent of the casino.";
    }
  } else if (awaited) {
    text = `${whose(round)}. The round was awaited (${lockWords || "after the lock"})`;
    if (voided && Number.isSafeInteger(voided.voided_at_ms) && voided.voided_at_ms >= awaited.deadline_ms) {
      text += ` and not recorded within ${spec.wait_s} s: the round was voided, every stake refunded; no card was dealt.`;
    } else if (voided) {
      const published = Number.isSafeInteger(awaited.round_time) && voided.voided_at_ms >= awaited.round_time * 1000;
      text += `, and the round was voided while it waited (${pyRepr(voided.reason)}), before its deadline, `
        + (published ? "after the beacon had published the round: the house could have seen the shoe it would deal."
          : "before the beacon published the round.") + " Every stake was refunded; no card was dealt.";
    } else {
      text += ".";
    }
  } else {
    const which = independent ? "drand quicknet: independent" : `operator-run beacon: not independent (${spec.name}, ${keyWords(spec)})`;
    const why = !closed ? "betting never closed" : "one seat, nobody else's seed to choose against";
    text = `${which}. No beacon round was used: ${why}.`;
  }
  const state = failures.length ? "failed" : !awaited ? "not-needed" : independent ? "independent" : "not-independent";
  return { failures, beacon: { state, text, round, independent } };
}

const PLAY_NOT_RUN = "not run: the checks above must pass first (the play is decided on the shoe they prove)";

/**
 * Verify one bundle line ({receipt, signature, key_id, public_key?, events}).
 * `keys` (optional): {key_id: public key hex} from GET /api/fairness/keys.
 * Returns {ok, failures, roundId, cards: [{index, position, dealt, expected, ok}], checks,
 * play: {ran, ok, why?, failures, checks: [{id, label, state, detail, text}]},
 * beacon: {state, text, round, independent} (see checkBeacon) or null}.
 */
export async function verifyBundle(line, keys = null) {
  const failures = [];
  const fail = (m) => failures.push(m);
  const receipt = line && line.receipt;
  const events = line && line.events;
  const result = {
    ok: false, failures, roundId: receipt?.round_id ?? "?", cards: [], checks: {},
    play: { ran: false, ok: false, why: PLAY_NOT_RUN, failures: [], checks: [] }, beacon: null,
  };
  if (!receipt || typeof receipt !== "object" || !Array.isArray(events) || !events.length) {
    fail("bundle: a line needs a receipt object and a non-empty events list");
    return result;
  }
  // A round line names its format (the Python verifier also refuses unknown fields): a
  // fairness-v2 receipt (a beacon table's round) travels in a fairness-v2-bundle line.
  const wanted = receipt.spec === SPEC_V2 ? BUNDLE_FORMAT_V2 : BUNDLE_FORMAT;
  if (!("format" in line)) fail(`bundle: no format (a round line says "format": "${wanted}")`);
  else if (line.format !== BUNDLE_FORMAT && line.format !== BUNDLE_FORMAT_V2) {
    fail(`bundle: unknown format ${JSON.stringify(line.format)} (this verifier reads fairness-v1-bundle, fairness-v2-bundle and fairness-v1-chain lines)`);
  } else if (line.format !== wanted) {
    fail(`bundle: a ${pyRepr(receipt.spec)} receipt is in a ${line.format} line, not ${wanted}`);
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
    // 2. client material: the seats' seeds in seat order, as betting locked them; with the
    // beacon's element once a beacon round is recorded (fairness-v2): what the shoe used.
    const material = receipt.client_material;
    const joined = receipt.participants.map((p) => p.client_seed).join("|");
    const spec = opened && Object.hasOwn(opened, "beacon") ? opened.beacon : null;
    const specObject = spec !== null && typeof spec === "object" && !Array.isArray(spec);
    const beaconed = specObject ? firstOfType(events, "BeaconRecorded") : null;
    let materialOk = true;
    if (!beaconed) {
      materialOk = joined === material;
      if (!materialOk) fail(`client material: '${material}', but the participants' seeds in seat order give '${joined}'`);
    } else {
      // fairness-v2: the seeds, then the beacon's element, its randomness computed here
      const signature = beaconed.signature;
      const randomness = typeof signature === "string" && SIGNATURE_HEX.test(signature)
        ? await sha256Hex(fromHex(signature)) : beaconed.randomness; // else the beacon's check names it
      const expected = `${joined}|${spec.name}:${beaconed.round}:${randomness}`;
      if (expected !== material) {
        fail(`client material: '${material}', but the participants' seeds in seat order and the beacon's element give '${expected}'`);
        materialOk = false;
      }
      if (beaconed.client_material !== material) {
        fail(`client material: BeaconRecorded's '${beaconed.client_material}' is not the receipt's '${material}'`);
        materialOk = false;
      }
    }
    if (opened) {
      const recorded = JSON.stringify(opened.participants.map((p) => [p.player_id, p.client_seed]));
      const listed = JSON.stringify(receipt.participants.map((p) => [p.player_id, p.client_seed]));
      if (recorded !== listed) { fail(`client material: receipt participants ${listed} differ from RoundOpened's ${recorded}`); materialOk = false; }
    }
    const closed = firstOfType(events, "BettingClosed");
    if (!closed && receipt.outcome === "voided" && !(receipt.cards ?? []).length) {
      // voided before betting closed: nothing was locked, nothing was dealt
    } else {
      const locked = beaconed ? joined : material; // with a beacon: the seats' seeds alone
      if (!closed || closed.client_material !== locked) {
        const got = closed ? `'${closed.client_material}'` : "None"; // as Python's repr
        fail(`client material: BettingClosed locked ${got}, ${beaconed ? "the seats' seeds are" : "the receipt says"} '${locked}'`);
        materialOk = false;
      }
    }
    result.checks.clientMaterial = materialOk;
    // fairness-v2: the beacon round, checked here (its BLS signature, randomness, timing, the
    // material the shoe used, the receipt's account of it)
    const checked = await checkBeacon(receipt, events, opened, closed);
    failures.push(...checked.failures);
    result.beacon = checked.beacon;
    if (opened && Object.hasOwn(opened, "beacon")) result.checks.beacon = !checked.failures.length;
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
      const play = await checkPlay(events, (position) => full[position], { material });
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
 * A fairness-v2 receipt's beacon, without the round's events: its signature under the key it
 * names and its randomness; the material's element it gives ("" when none was recorded). That
 * the round was the first after the lock needs the events (the lock's time).
 */
async function receiptBeacon(receipt, fail) {
  if (receipt.spec !== SPEC_V2) {
    const opened = { ruleset: receipt.ruleset, participants: receipt.participants ?? [] };
    const dealt = receipt.outcome !== "voided" || (receipt.cards ?? []).length > 0; // betting closed
    return { element: "", verdict: (await checkBeacon(receipt, [], opened, dealt ? {} : null)).beacon };
  }
  const b = receipt.beacon;
  const timeless = { genesis_time: 0, period: 1, margin_s: 0, wait_s: 0 }; // not in a receipt
  if (b === null || typeof b !== "object" || specProblem({ ...b, ...timeless }, { quicknetParts: false })) {
    fail("beacon: the fairness-v2 receipt names no beacon this page can check");
    return { element: "", verdict: { state: "failed", text: "", round: null, independent: false } };
  }
  const independent = b.public_key === QUICKNET.publicKey && b.chain_hash === QUICKNET.chainHash;
  const name = independent ? `drand quicknet round ${b.round}: independent`
    : `operator-run beacon: not independent (${b.name} round ${b.round}, ${keyWords(b)})`;
  if (b.signature === null) {
    return {
      element: "",
      verdict: { state: "not-needed", round: b.round, independent, text: `${independent ? "drand quicknet" : "operator-run beacon"}: no beacon round was recorded in this round.` },
    };
  }
  let ok = true;
  try {
    verifyBeaconSignature(b.round, b.signature, b.public_key);
  } catch (err) {
    if (!(err instanceof BeaconError)) throw err;
    fail(`beacon: round ${b.round}'s signature does not verify under the beacon's public key (${err.message})`);
    ok = false;
  }
  let randomness = "";
  if (typeof b.signature === "string" && SIGNATURE_HEX.test(b.signature)) {
    randomness = await sha256Hex(fromHex(b.signature));
    if (b.randomness !== randomness) {
      fail(`beacon: the receipt's randomness ${b.randomness} is not the SHA-256 of the signature, ${randomness}`);
      ok = false;
    }
  }
  const text = `${name}. Its BLS signature verifies under the receipt's beacon key and its randomness is the `
    + "SHA-256 of the signature; that it is the first round after the lock needs the round's events "
    + "(paste the whole bundle line).";
  return {
    element: randomness ? `${b.name}:${b.round}:${randomness}` : "",
    verdict: { state: ok ? (independent ? "independent" : "not-independent") : "failed", round: b.round, independent, text },
  };
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
    beacon: null,
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
    const beacon = await receiptBeacon(receipt, fail);
    result.beacon = beacon.verdict;
    const wanted = beacon.element ? `${joined}|${beacon.element}` : joined;
    if (wanted !== receipt.client_material) {
      const whose = beacon.element ? "the participants' seeds in seat order, then the beacon's element," : "the participants' seeds in seat order";
      fail(`client material: '${receipt.client_material}', but ${whose} give '${wanted}'`);
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
