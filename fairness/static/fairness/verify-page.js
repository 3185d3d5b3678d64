// The verify page: fetch a proof (or take a pasted one, or bare seeds) and check it here.
import { canonicalJson, hashSeed, shoeCards } from "./shoe.js";
import {
  ProofError, b64decode, decodeProof, equalBytes, leafHash, noteSignatures, openNote, parseVkey, toHex as hexOf,
  verifyCheckpoint, verifyInclusion,
} from "./tlog.js";
import { verifyBundle, verifyReceiptOnly } from "./verifier.js";

const $ = (id) => document.getElementById(id);

const STATE_MARKS = { checked: "✓", failed: "✗", "not checked": "–", "none in this round": "·" };

// The viewer (the signed-in player's id, or "" for anyone): their seat reads "(you)".
const viewer = document.body.dataset.playerId ?? "";

const RANKS = { A: "ace", K: "king", Q: "queen", J: "jack", T: "10" };
const SUITS = { S: ["♠", "spades"], H: ["♥", "hearts"], D: ["♦", "diamonds"], C: ["♣", "clubs"] };
const BOX_NAMES = ["centre", "right", "left"]; // atlantic_city's boxes, as its table names them

/** A card code ("TS") in a player's words: ["10♠", "10 of spades"]. */
function cardWords(code) {
  const rank = code[0] === "T" ? "10" : code[0];
  const [symbol, suit] = SUITS[code[1]] ?? [code[1], code[1]];
  return [`${rank}${symbol}`, `${RANKS[code[0]] ?? rank} of ${suit}`];
}

/** One card as the page shows it: "10♠", read out as "10 of spades", its code kept in data-card. */
function cardEl(code) {
  const span = document.createElement("span");
  span.className = "card";
  if (typeof code !== "string" || code.length !== 2) {
    span.textContent = code ? String(code) : "";
    return span;
  }
  const [text, spoken] = cardWords(code);
  span.dataset.card = code;
  span.setAttribute("role", "img");
  span.setAttribute("aria-label", spoken);
  span.title = spoken;
  span.textContent = text;
  return span;
}

function points(code) {
  return code[0] === "A" ? 1 : "TJQK".includes(code[0]) ? 10 : Number(code[0]);
}

/** A hand's total in words: "17", "soft 17", "blackjack", "bust (24)". */
function totalWords(cards, { natural = true } = {}) {
  const hard = cards.reduce((sum, c) => sum + points(c), 0);
  const soft = cards.some((c) => points(c) === 1) && hard + 10 <= 21;
  const total = soft ? hard + 10 : hard;
  if (natural && cards.length === 2 && total === 21) return "blackjack";
  if (total > 21) return `bust (${total})`;
  return soft ? `soft ${total}` : String(total);
}

const OUTCOME_WORDS = {
  win: "won", lose: "lost", push: "push", bust: "lost", blackjack: "blackjack", even_money: "even money",
  split: "pot shared",
};

/** A settled hand's result: "won +1.00 USDC" (the net: what came back less the stake). */
function resultWords(result) {
  const net = result.gross_return - result.stake;
  return `${OUTCOME_WORDS[result.outcome] ?? result.outcome} ${net > 0 ? "+" : ""}${usdcWords(net)}`;
}

/** A box's or a seat's name: "Box 1", "Box 1 (centre)" (atlantic_city), "Seat 2 (you)", "Seat 1 (player 7)". */
function ownerWords(opened) {
  const seats = (opened.participants ?? []).map((p) => p.player_id);
  const seated = opened.ruleset === "duel" || opened.ruleset === "duel_classic";
  return (playerId, box) => {
    if (!seated) return `Box ${box + 1}${opened.ruleset === "atlantic_city" ? ` (${BOX_NAMES[box] ?? box})` : ""}`;
    const seat = `Seat ${seats.indexOf(playerId) + 1}`;
    return viewer && playerId === viewer ? `${seat} (you)` : `${seat} (player ${playerId})`;
  };
}

/**
 * Whose cards are whose, from the round's events: the dealer's (none in a duel) and every box's
 * hands (a split hand keeps its index, the new one is the next) or every duel seat's, each with
 * its total and, once settled, its result. [{who, label, cards, total, result}].
 */
function handsOf(events) {
  const opened = events.find((e) => e.type === "RoundOpened")?.data;
  if (!opened) return [];
  const ruleset = opened.ruleset;
  const seats = (opened.participants ?? []).map((p) => p.player_id);
  const owner = ownerWords(opened);
  const dealer = [];
  const boxes = new Map(); // "player/box" -> {playerId, box, hands: [{cards, split, doubled}]}
  const boxOf = (d) => {
    const key = `${d.player_id}/${d.box}`;
    if (!boxes.has(key)) boxes.set(key, { playerId: d.player_id, box: d.box, hands: [], insurance: null });
    return boxes.get(key);
  };
  let settled = null;
  for (const { type, data } of events) {
    if (type === "DealerCardDealt") dealer.push({ card: data.card, hole: data.hole });
    else if (type === "PlayerCardDealt") {
      const box = boxOf(data);
      while (box.hands.length <= data.hand) box.hands.push({ cards: [], split: false, doubled: false });
      box.hands[data.hand].cards.push(data.card);
    } else if (type === "HandSplit") {
      const box = boxOf(data);
      const hand = box.hands[data.hand];
      const halves = hand.cards.map((card) => ({ cards: [card], split: true, doubled: false }));
      box.hands.splice(data.hand, 1, ...halves);
    } else if (type === "HandDoubled") {
      const hand = boxOf(data).hands[data.hand];
      if (hand) hand.doubled = true;
    } else if (type === "RoundSettled") settled = data;
  }
  const rows = [];
  if (ruleset !== "duel" && dealer.length) {
    const cards = dealer.map((d) => d.card);
    rows.push({ who: "dealer", label: "Dealer", cards, total: totalWords(cards), result: "" });
  }
  const ordered = [...boxes.values()].sort(
    (a, b) => seats.indexOf(a.playerId) - seats.indexOf(b.playerId) || a.box - b.box,
  );
  for (const box of ordered) {
    box.hands.forEach((hand, i) => {
      const notes = [hand.split && "split", hand.doubled && "doubled"].filter(Boolean);
      const which = ruleset === "duel" ? "" : `, hand ${i + 1}`;
      const label = `${owner(box.playerId, box.box)}${which}${notes.length ? ` (${notes.join(", ")})` : ""}`;
      const found = settled?.hands.find((h) => h.player_id === box.playerId && h.box === box.box && h.hand === i);
      rows.push({
        who: `${box.playerId}/${box.box}/${i}`, label, cards: hand.cards,
        total: totalWords(hand.cards, { natural: !hand.split }), result: found ? resultWords(found) : "",
      });
    });
    const insured = settled?.insurance.find((x) => x.player_id === box.playerId && x.box === box.box);
    if (insured) {
      const net = insured.gross_return - insured.stake;
      rows.push({
        who: `${box.playerId}/${box.box}/insurance`, label: `${owner(box.playerId, box.box)}, insurance`, cards: [],
        total: `${usdcWords(insured.stake)} insured`,
        result: `${net > 0 ? "won +" : "lost "}${usdcWords(net)}`,
      });
    }
  }
  return rows;
}

/** Who each dealt card went to, by shoe position: "Dealer (face down)", "Box 1", "Seat 2 (you)". */
function ownersOf(events) {
  const opened = events.find((e) => e.type === "RoundOpened")?.data;
  const names = new Map();
  if (!opened) return names;
  const owner = ownerWords(opened);
  for (const { type, data } of events) {
    if (type === "DealerCardDealt") names.set(data.position, data.hole ? "Dealer (face down)" : "Dealer");
    else if (type === "PlayerCardDealt") names.set(data.position, owner(data.player_id, data.box));
  }
  return names;
}

function showHands(events) {
  const list = $("hands");
  const opened = Array.isArray(events) ? events.find((e) => e.type === "RoundOpened")?.data : null;
  const rules = $("hands-rules");
  if (!opened) {
    $("hands-section").hidden = true;
    list.replaceChildren();
    rules.replaceChildren();
    return;
  }
  $("hands-section").hidden = false;
  const link = document.createElement("a");
  link.href = `/play/rules/${encodeURIComponent(opened.ruleset)}/`;
  link.textContent = `the ${RULESET_NAMES[opened.ruleset] ?? opened.ruleset} rules`;
  rules.replaceChildren("Played under ", link, ".");
  const rows = handsOf(events);
  if (!rows.length) {
    const li = document.createElement("li");
    li.textContent = "No cards were dealt in this round.";
    list.replaceChildren(li);
    return;
  }
  list.replaceChildren(...rows.map((row) => {
    const li = document.createElement("li");
    li.dataset.who = row.who;
    const label = document.createElement("span");
    label.className = "who";
    label.textContent = row.label;
    const cards = document.createElement("span");
    cards.className = "cards";
    row.cards.forEach((c, k) => cards.append(...(k ? [" "] : []), cardEl(c)));
    const total = document.createElement("span");
    total.className = "total";
    total.textContent = row.total;
    li.append(label, ": ", ...(row.cards.length ? [cards, " — "] : []), total);
    if (row.result) {
      const result = document.createElement("span");
      result.className = "result";
      result.textContent = row.result;
      li.append(" — ", result);
    }
    return li;
  }));
}

const RULESET_NAMES = { classic: "Classic", atlantic_city: "Atlantic City", duel: "Duel", duel_classic: "Duel classic" };

// The checks of fairness-v1 section 5, each a sentence: [when it holds, when it does not].
const CHECK_WORDS = {
  commitment: [
    "The server seed you entered hashes (SHA-256) to the commitment you entered.",
    "The server seed you entered does not hash (SHA-256) to the commitment you entered.",
  ],
  seed: [
    "The server seed matches the commitment published before the round, and the round revealed it.",
    "The server seed does not match the commitment published before the round.",
  ],
  clientMaterial: [
    "The players' client seeds, in seat order, are the ones locked in when betting closed.",
    "The players' client seeds are not the ones locked in when betting closed.",
  ],
  cards: [
    "Every card dealt is the card the shuffled shoe holds at its place, in order, none skipped.",
    "A card dealt is not the card the shuffled shoe holds at its place.",
  ],
  eventChain: [
    "Every recorded event is linked to the one before it by its hash, up to the receipt's last event.",
    "The recorded events are not an unbroken hash chain up to the receipt's last event.",
  ],
  signature: [
    "The receipt is signed by the casino's published key.",
    "The receipt's signature is not the casino's published key's.",
  ],
  outcome: [
    "The receipt's outcome and payouts are the ones the round's events record.",
    "The receipt's outcome and payouts are not the ones the round's events record.",
  ],
  beacon: [
    "The beacon round is the first after betting closed, its signature and randomness verify, and the shoe and the receipt used it.",
    "The beacon round does not verify, is not the first after betting closed, or is not the one the shoe and the receipt used.",
  ],
};

// The proof of play's checks (play.js ids), each a sentence a player reads.
const PLAY_WORDS = {
  rules: "The round was played under its table's published rules (payouts, timeouts, fee schedule)",
  opening: "The round opened, took its bets within the table limits and closed betting on time",
  beacon: "The deal waited for the first beacon round after betting closed, and its randomness went into the shoe (or the round was voided when it did not come in time)",
  deal: "The cards were dealt in the rules' order, from the top of the shoe",
  peek: "The dealer checked for blackjack when the rules say so",
  insurance: "Insurance and even money were offered, answered and paid as the rules say",
  turns: "Every hand played in its turn, with the rules' time to decide",
  choices: "Every hit, stand and double was allowed where the player made it",
  splits: "Every split made the hands the rules make, split aces taking one card each",
  autostand: "A hand reaching 21 stood, and a bust hand took no more cards",
  dealer: "The dealer turned the hole card first, drew below 17 and stood on 17, soft 17 too",
  totals: "Every hand's total is the total of its cards",
  payouts: "Every hand's outcome and payout is the one the rules give",
  ties: "Equal totals of 17 to 19 lost and of 20 or 21 pushed, as the rules say",
  reveal: "The duel's hidden cards were revealed together, in shoe order",
  pot: "The duel's winners, the pot's split and the fee are the rules' own",
  timeouts: "Every timeout happened at or after its deadline",
  void: "The void refunded every stake and reversed every payout",
  seed: "The server seed was revealed only after the round ended",
  stream: "Every recorded event is the one the rules derive, field by field",
};

const PLAY_STATES = {
  checked: "checked", failed: "failed", "not checked": "not checked", "none in this round": "nothing to check in this round",
};

/** The proof of play: which play checks ran, in words, and what each found. */
function showPlay(play) {
  const summary = $("play-summary");
  const list = $("play");
  if (!play) {
    summary.textContent = "";
    list.replaceChildren();
    return;
  }
  summary.dataset.state = play.ran ? (play.ok ? "ok" : "failed") : "not-run";
  summary.textContent = !play.ran
    ? `Play: ${play.why}.`
    : play.ok
      ? `Play: the round was decided again here from the players' ${play.decisions} choices; all ${play.events} recorded events are the rules' own.`
      : "Play: the recorded round is not what the rules make of the players' choices (see the first difference above).";
  list.replaceChildren(...play.checks.map((c) => {
    const li = document.createElement("li");
    li.dataset.check = c.id;
    li.dataset.state = c.state;
    li.textContent = `${STATE_MARKS[c.state] ?? ""} ${PLAY_WORDS[c.id] ?? c.label} — ${PLAY_STATES[c.state] ?? c.state}`
      + `${c.detail ? `: ${c.detail}` : ""}.`;
    return li;
  }));
}

/** Micro-USDC (an integer, as receipts keep it) in words: "1.50 USDC". */
function usdcWords(micro) {
  const whole = Math.floor(Math.abs(micro) / 1e6);
  const frac = String(Math.abs(micro) % 1e6).padStart(6, "0").replace(/0{1,4}$/, "").padEnd(2, "0");
  return `${micro < 0 ? "-" : ""}${whole}.${frac} USDC`;
}

/** What a voided round would have paid (reversed payouts), in words. */
function voidWords(payouts) {
  const paid = (payouts.reversed_payouts ?? []).filter((p) => p.amount > 0);
  const refunds = (payouts.refunds ?? []).reduce((sum, r) => sum + r.amount, 0);
  const would = paid.length
    ? `It would have paid ${paid.map((p) => `${usdcWords(p.amount)} to player ${p.player_id}`).join(", ")}.`
    : "It had paid nothing when it was voided.";
  return `Every stake was refunded (${usdcWords(refunds)}). ${would}`;
}

function show(result, title, receipt = null, events = null) {
  const verdict = $("verdict");
  verdict.dataset.state = result.ok ? "ok" : "failed";
  const played = result.play?.ran && result.play.ok ? " The play, decided again here, is the rules' own." : "";
  verdict.textContent = result.ok
    ? `Verified: ${title} is fair (${result.cards.length} cards match).${played}`
    : `FAILED: ${title} does not verify (${result.failures.length} problem${result.failures.length === 1 ? "" : "s"}).`;
  if (result.ok && receipt?.outcome === "voided") {
    // A void is not a fair result to be paid: say so first, with its reason.
    verdict.dataset.state = "voided";
    verdict.textContent = `Voided: ${title} was voided (${receipt.payouts?.reason ?? "no reason given"}). ` +
      `${voidWords(receipt.payouts ?? {})} Its cards and seed verify (${result.cards.length} cards match).`;
  }
  showPlay(result.play);
  showBeacon(result);
  const failures = $("failures");
  failures.replaceChildren(...result.failures.map((f) => {
    const li = document.createElement("li");
    li.textContent = f;
    return li;
  }));
  $("checks").replaceChildren(...Object.entries(result.checks ?? {}).map(([name, ok]) => {
    const li = document.createElement("li");
    li.dataset.check = name;
    li.dataset.ok = String(ok);
    const [holds, fails] = CHECK_WORDS[name] ?? [name, name];
    li.textContent = `${ok ? "✓" : "✗"} ${ok ? holds : fails}`;
    return li;
  }));
  showHands(events);
  const owners = Array.isArray(events) ? ownersOf(events) : new Map();
  const body = $("cards").querySelector("tbody");
  body.replaceChildren(...result.cards.map((c) => {
    const tr = document.createElement("tr");
    tr.className = c.ok ? "match" : "mismatch";
    const cells = [c.index, c.position, owners.get(c.position) ?? "", cardEl(c.dealt), cardEl(c.expected), c.ok ? "✓" : "✗"];
    for (const value of cells) {
      const td = document.createElement("td");
      if (value instanceof Node) td.append(value);
      else td.textContent = String(value);
      tr.append(td);
    }
    return tr;
  }));
}

// --- the beacon ----------------------------------------------------------------------------------
// A shared table's round of two or more seats waits for a public beacon round after betting
// closes (fairness-v2); verifier.js checks it with beacon.js. Which beacon, and whether it is
// independent of the casino, is said for every round.

const BEACON_STATES = ["independent", "not-independent", "not-needed", "warning", "none", "failed", "not-run"];

function beaconVerdict(state, text) {
  const el = $("beacon-verdict");
  el.dataset.state = BEACON_STATES.includes(state) ? state : "not-run";
  el.textContent = text;
}

function showBeacon(result) {
  const beacon = result.beacon;
  if (!beacon) {
    beaconVerdict("not-run", "Beacon: not checked: the round's data did not get that far.");
  } else if (beacon.state === "failed") {
    const why = result.failures.filter((f) => f.startsWith("beacon: ")).map((f) => f.slice(8));
    beaconVerdict("failed", `Beacon check FAILED: ${why.join("; ") || "see the problems above"}.`);
  } else {
    beaconVerdict(beacon.state, beacon.text);
  }
}

function working(text) {
  const verdict = $("verdict");
  verdict.dataset.state = "working";
  verdict.textContent = text;
  $("failures").replaceChildren();
  $("checks").replaceChildren();
  $("cards").querySelector("tbody").replaceChildren();
  showHands(null);
  showPlay(null);
  beaconVerdict("not-run", "Beacon: not checked yet.");
  logVerdict("not-run", "Public log: not checked yet.");
}

/** A round still in play has no proof yet: that is not a failure. */
function pending(id) {
  working("");
  const verdict = $("verdict");
  verdict.dataset.state = "pending";
  verdict.textContent = `Round ${id} is still in play: its proof comes when it ends. Come back after the round.`;
  beaconVerdict("not-run", `Beacon: not checked: round ${id} is still in play.`);
  logVerdict("not-run",
    `Public log: not checked: round ${id} is still in play; its receipt enters the log when it ends.`);
}

function problem(message) {
  show({ ok: false, failures: [message], cards: [], checks: {} }, "the input");
}

async function publishedKeys() {
  const response = await fetch("/api/fairness/keys");
  if (!response.ok) throw new Error(`could not load the published keys (HTTP ${response.status})`);
  const body = await response.json();
  return Object.fromEntries(body.keys.map((k) => [k.key_id, k.public_key]));
}

async function verifyInput(input, title) {
  let keys = null;
  try {
    keys = await publishedKeys();
  } catch {
    keys = null; // offline: the line's own public key is used, checked against its key id
  }
  const line = input.bundle ?? input;
  const result = Array.isArray(line.events)
    ? await verifyBundle(line, keys)
    : await verifyReceiptOnly(line, keys);
  show(result, title, line.receipt ?? null, line.events ?? null);
}

// --- the public log ------------------------------------------------------------------------------
// A finished round's opening (its commitment, before any card) and its signed receipt are leaves
// of the casino's transparency log (RFC 6962). Checked here with tlog.js: the checkpoint's
// signature under the published key, each leaf's inclusion proof against the signed root, and
// that the leaves are this round's.

const LOG_STATES = ["ok", "pending", "failed", "not-run"];

function logVerdict(state, text) {
  const el = $("log-verdict");
  el.dataset.state = LOG_STATES.includes(state) ? state : "not-run";
  el.textContent = text;
}

/** Leaf indices in words: "leaf 3", "leaves 3 and 9", "leaves 3, 9 and 12". */
function leafWords(indices) {
  if (indices.length === 1) return `leaf ${indices[0]}`;
  return `leaves ${indices.slice(0, -1).join(", ")} and ${indices[indices.length - 1]}`;
}

/** A failure of the log check: its message is the sentence the page shows. */
class LogFailure extends Error {}

async function logFetch(url, kind) {
  let response;
  try {
    response = await fetch(url);
  } catch (err) {
    throw new LogFailure(`the log did not answer GET ${url} (${err.message})`);
  }
  if (!response.ok) throw new LogFailure(`the log answered GET ${url} with HTTP ${response.status}`);
  try {
    return kind === "text" ? await response.text() : await response.json();
  } catch {
    throw new LogFailure(`the log's answer to GET ${url} is not ${kind === "text" ? "text" : "JSON"}`);
  }
}

/** The checkpoint verified under the published vkey: {verifier, checkpoint, witnesses}. */
async function signedCheckpoint() {
  const vkey = await logFetch("/api/log/vkey", "text");
  let verifier;
  try {
    verifier = await parseVkey(vkey.trim().split("\n")[0]);
  } catch (err) {
    throw new LogFailure(`the log's published key is malformed (${err.message})`);
  }
  const text = await logFetch("/api/log/checkpoint", "text");
  let signatures;
  try {
    signatures = noteSignatures(text);
  } catch (err) {
    throw new LogFailure(`the checkpoint is not a signed note (${err.message})`);
  }
  let checkpoint;
  try {
    checkpoint = await verifyCheckpoint(text, verifier); // the signature, then the body and its origin
  } catch (err) {
    let signed = true;
    try {
      await openNote(text, [verifier]);
    } catch {
      signed = false;
    }
    if (signed) throw new LogFailure(`the signed checkpoint is not one of this log's (${err.message})`);
    // Say whose signature it is: none by the log's name, one by another key, or a bad one by the key.
    const byName = signatures.filter((s) => s.name === verifier.name);
    const other = byName.find((s) => !equalBytes(s.keyId, verifier.keyId));
    const why = !byName.length
      ? ` (it has no signature by ${verifier.name})`
      : other && byName.every((s) => !equalBytes(s.keyId, verifier.keyId))
        ? ` (it is signed by key ${hexOf(other.keyId)}, not the published key ${hexOf(verifier.keyId)})`
        : "";
    throw new LogFailure(`the checkpoint's signature does not verify under the published key${why}`);
  }
  // Other lines are the witnesses' cosignatures: counted, not verified (their keys are not published here).
  const witnesses = signatures.filter((s) => !(s.name === verifier.name && equalBytes(s.keyId, verifier.keyId)));
  return { verifier, checkpoint, witnesses: witnesses.length };
}

/** Leaf `index`'s bytes and inclusion at the checkpoint, proved against its root: the parsed leaf. */
async function provedLeaf(index, checkpoint) {
  const { size, root } = checkpoint;
  if (BigInt(index) >= BigInt(size)) {
    throw new LogFailure(`leaf ${index} is beyond the signed checkpoint (size ${size})`);
  }
  const [leaves, answer] = await Promise.all([
    logFetch(`/api/log/leaves?start=${index}&end=${index + 1}`, "json"),
    logFetch(`/api/log/proof/inclusion?index=${index}&size=${size}`, "json"),
  ]);
  const leaf = Array.isArray(leaves?.leaves) ? leaves.leaves.find((l) => l.index === index) : null;
  if (!leaf) throw new LogFailure(`the log's leaves API did not give leaf ${index}`);
  let data;
  try {
    data = b64decode(leaf.data, `leaf ${index}`);
  } catch {
    throw new LogFailure(`the log's leaf ${index} is not base64`);
  }
  if (answer?.index !== index || String(answer?.size) !== String(size)) {
    throw new LogFailure(`the log gave the inclusion proof of another leaf or size for leaf ${index}`);
  }
  let proof;
  try {
    proof = decodeProof(answer.proof);
  } catch (err) {
    throw new LogFailure(`the inclusion proof of leaf ${index} is malformed (${err.message})`);
  }
  try {
    await verifyInclusion(index, size, await leafHash(data), proof, root);
  } catch (err) {
    if (!(err instanceof ProofError)) throw err;
    throw new LogFailure(`the inclusion proof of leaf ${index} does not lead to the signed root`);
  }
  try {
    return JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(data));
  } catch {
    throw new LogFailure(`the log's leaf ${index} is not JSON`);
  }
}

const OPENED_FIELDS = [
  ["round_id", "round"], ["table_id", "table"], ["chain_id", "chain"], ["nonce", "nonce"],
  ["commitment", "commitment"], ["opened_at", "opening time"],
];

function same(a, b) {
  try {
    return canonicalJson(a) === canonicalJson(b);
  } catch {
    return false;
  }
}

/** What the round's own proof says its round_opened leaf holds. */
function openedFacts(body) {
  const events = Array.isArray(body.bundle?.events) ? body.bundle.events : [];
  const event = events.find((e) => e.type === "RoundOpened");
  const receipt = body.receipt ?? {};
  const data = event?.data ?? {};
  return {
    round_id: body.round_id ?? receipt.round_id, table_id: data.table_id ?? receipt.table_id,
    chain_id: data.chain_id ?? receipt.chain_id, nonce: data.nonce ?? receipt.nonce,
    commitment: data.commitment ?? receipt.commitment, opened_at: event?.recorded_at,
  };
}

function checkOpened(leaf, index, want) {
  if (leaf?.kind !== "round_opened") {
    return [`the log's leaf ${index} is a ${leaf?.kind ?? "kindless"} leaf, not the round's round_opened`];
  }
  return OPENED_FIELDS.filter(([key]) => want[key] !== undefined && !same(leaf[key], want[key])).map(
    ([key, words]) => `the log's round_opened leaf names another ${words} (${JSON.stringify(leaf[key])},`
      + ` the round's is ${JSON.stringify(want[key])})`,
  );
}

function checkReceipts(receipts, body) {
  const failures = [];
  for (const [index, leaf] of receipts) {
    if (leaf?.kind !== "round_receipt") {
      failures.push(`the log's leaf ${index} is a ${leaf?.kind ?? "kindless"} leaf, not the round's round_receipt`);
    } else if (leaf.round_id !== body.round_id) {
      failures.push(`the log's round_receipt leaf ${index} names another round (${JSON.stringify(leaf.round_id)})`);
    }
  }
  if (failures.length) return failures;
  const signed = receipts.find(([, leaf]) => leaf.signature === body.signature);
  if (!signed) {
    return [receipts.length === 1
      ? "the log's round_receipt leaf carries another signature than the round's receipt"
      : "none of the log's round_receipt leaves carries the signature of the round's receipt"];
  }
  if (!same(signed[1].receipt, body.receipt)) {
    return [`the log's round_receipt leaf ${signed[0]} holds another receipt than the round's`];
  }
  return [];
}

/** The "Public log" verdict of a round fetched by its id (its proof's `log` and bundle). */
async function showLog(body) {
  const log = body?.log;
  if (!log || typeof log !== "object") {
    logVerdict("not-run", "Public log: not checked: the server gave no log position for this round.");
    return;
  }
  const receiptsAt = Array.isArray(log.round_receipt) ? log.round_receipt : [];
  if (log.pending > 0 || log.round_opened === null || log.round_opened === undefined || !receiptsAt.length) {
    const within = Number.isFinite(log.max_merge_delay_s) ? `${log.max_merge_delay_s} s` : "seconds";
    logVerdict("pending", `Not in the public log yet: the log adds rounds within ${within}; check again shortly.`);
    return;
  }
  logVerdict("not-run", "Public log: checking the round's leaves against the signed checkpoint…");
  const indices = [log.round_opened, ...receiptsAt];
  try {
    if (!indices.every((i) => Number.isSafeInteger(i) && i >= 0)) {
      throw new LogFailure(`the server gave leaf indices that are not indices (${JSON.stringify(indices)})`);
    }
    const { verifier, checkpoint, witnesses } = await signedCheckpoint();
    const proved = await Promise.allSettled(indices.map((i) => provedLeaf(i, checkpoint)));
    const failures = [];
    for (const p of proved) {
      if (p.status === "rejected") {
        if (!(p.reason instanceof LogFailure)) throw p.reason;
        failures.push(p.reason.message);
      }
    }
    if (!failures.length) {
      const leaves = proved.map((p) => p.value);
      failures.push(...checkOpened(leaves[0], indices[0], openedFacts(body)));
      failures.push(...checkReceipts(indices.slice(1).map((i, k) => [i, leaves[k + 1]]), body));
    }
    if (failures.length) {
      logVerdict("failed", `Public log check FAILED: ${failures.join("; ")}.`);
      return;
    }
    const cosigned = witnesses
      ? `Cosigned by ${witnesses} witness${witnesses === 1 ? "" : "es"} (unverified here).`
      : "No witness has cosigned it.";
    logVerdict("ok", `Included in the public log at size ${checkpoint.size} (${leafWords(indices)}), checkpoint `
      + `signed by ${verifier.name} (key ${hexOf(verifier.keyId)}). ${cosigned}`);
  } catch (err) {
    const why = err instanceof LogFailure ? err.message : `the check stopped (${err.message})`;
    logVerdict("failed", `Public log check FAILED: ${why}.`);
  }
}

$("by-round").addEventListener("submit", async (event) => {
  event.preventDefault();
  const id = $("round-id").value.trim();
  working(`Fetching round ${id}…`);
  try {
    const response = await fetch(`/api/fairness/rounds/${encodeURIComponent(id)}`);
    const body = await response.json();
    if (response.status === 409 && body.error?.code === "proof_not_ready") {
      pending(id);
      return;
    }
    if (!response.ok) {
      problem(`${body.error?.code ?? "error"}: ${body.error?.message ?? response.status}`);
      logVerdict("not-run", "Public log: not checked: the server gave no proof of this round.");
      return;
    }
    await verifyInput(body, `round ${id}`);
    await showLog(body);
  } catch (err) {
    problem(`could not fetch the round: ${err.message}`);
  }
});

$("by-paste").addEventListener("submit", async (event) => {
  event.preventDefault();
  working("Verifying…");
  let input;
  try {
    input = JSON.parse($("paste").value);
  } catch (err) {
    problem(`the pasted text is not JSON (${err.message})`);
    return;
  }
  const id = (input.bundle ?? input).receipt?.round_id ?? input.round_id ?? "the pasted round";
  await verifyInput(input, `round ${id}`);
  logVerdict("not-run", "Public log: not checked: a pasted round is checked against the public log only when "
    + "fetched from the server by its round id (section 1).");
});

$("by-seeds").addEventListener("submit", async (event) => {
  event.preventDefault();
  working("Rebuilding the shoe…");
  const seed = $("server-seed").value.trim();
  const material = $("client-seed").value.trim();
  const nonce = $("nonce").value.trim();
  const commitment = $("commitment").value.trim();
  const count = Number($("count").value || 20);
  try {
    const cards = await shoeCards(seed, material, nonce, count); // a beacon's element too
    const failures = [];
    const checks = {};
    if (commitment) {
      const hashed = await hashSeed(seed);
      checks.commitment = hashed === commitment;
      if (!checks.commitment) failures.push(`seed: sha256 of server seed ${seed} is ${hashed}, not the commitment ${commitment}`);
    }
    const rows = cards.map((card, i) => ({ index: i, position: i, dealt: "", expected: card, ok: true }));
    const play = { ran: false, why: "not run: seeds alone have no play to check", checks: [] };
    show({ ok: failures.length === 0, failures, cards: rows, checks, play }, `the shoe of nonce ${nonce}`);
    beaconVerdict("not-run", "Beacon: not checked: seeds alone name no beacon round (a beacon's element "
      + "\"<name>:<round>:<randomness>\" at the end of the client material is used as given).");
    logVerdict("not-run", "Public log: not checked: seeds alone name no round of the public log.");
  } catch (err) {
    problem(err.message);
  }
});

// /fairness/verify/?round=ID (the history's Verify links): verify that round at once.
const asked = new URLSearchParams(location.search).get("round");
if (asked) {
  $("round-id").value = asked;
  $("by-round").requestSubmit();
}
