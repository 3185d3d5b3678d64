// Proof of play in the browser (and in Node 20): the round decided again, here, from the
// players' choices. Written from the rule documents (docs/rules.md, the seeds 000, 002, 004),
// not from the engine's code; the Python verifier (casino/engine/audit.py) is the other,
// independent implementation, and the tests hold the two verdicts equal on thousands of
// generated rounds, untouched and tampered.
//
// How: the only inputs read from the record are the players' choices (a bet, an insurance or
// even-money answer, a hit, a stand, a double, a split), a timeout, a void and the seed
// reveal, each at the time the record gives it. Everything the rules force is derived here:
// the deal and its order, the peek, the offers, the turns, every card a double or a split
// deals, the automatic stand on 21, the end of a bust hand, the hole card, the dealer's draws,
// a duel's reveal, every total, outcome and payout, the fee, a void's refunds and reversals.
// The recorded stream must equal the derived one, event for event and field for field; the
// first difference is named with its version, the recorded and the derived event.
//
// The rule parameters are the engine's own (casino/engine/rules.py), held below in the
// engine's field names: their canonical JSON hashes to the ruleset_hash a round records, and
// a round whose hash is not one of these four is refused.

import { canonicalJson, fromHex, hashSeed, sha256Hex } from "./shoe.js";

const USDC = 1_000_000;
const CHIP_UNIT = 10_000;

// casino/engine/rules.py, field for field (the seed line behind each value is noted there).
export const RULESETS = Object.freeze({
  classic: {
    name: "classic", version: 1, kind: "banked", decks: 8, min_seats: 1, max_seats: 1,
    max_boxes: 1, hole_card_index: 0, dealer_hits_soft_17: false, peek_up_points: [1, 10],
    insurance: "half", insurance_pays: [2, 1], insurance_is_player_option: true,
    even_money: true, even_money_pays: [1, 1], max_hands: 4, resplit_aces: false,
    split_aces_one_card: true, double_after_split: true, win_pays: [1, 1],
    blackjack_pays: [3, 2], blackjack_vs_dealer_21_pays: [3, 2],
    blackjack_waits_for_dealer: false, tie_loses_totals: [], safety_net_available: true,
    min_table_bet: CHIP_UNIT, max_table_bet: 1_000_000 * USDC, default_min_bet: CHIP_UNIT * 10,
    default_max_bet: 1_000 * USDC, betting_timeout_ms: 120_000, insurance_timeout_ms: 30_000,
    turn_timeout_ms: 60_000, duel_timer_ms: 0, fee_bps: [],
  },
  atlantic_city: {
    name: "atlantic_city", version: 1, kind: "banked", decks: 8, min_seats: 1, max_seats: 1,
    max_boxes: 3, hole_card_index: 1, dealer_hits_soft_17: false, peek_up_points: [1, 10],
    insurance: "half", insurance_pays: [2, 1], insurance_is_player_option: false,
    even_money: false, even_money_pays: [1, 1], max_hands: 2, resplit_aces: false,
    split_aces_one_card: true, double_after_split: true, win_pays: [1, 1],
    blackjack_pays: [3, 2], blackjack_vs_dealer_21_pays: [3, 2],
    blackjack_waits_for_dealer: false, tie_loses_totals: [], safety_net_available: false,
    min_table_bet: CHIP_UNIT, max_table_bet: 1_000_000 * USDC, default_min_bet: CHIP_UNIT * 10,
    default_max_bet: 1_000 * USDC, betting_timeout_ms: 120_000, insurance_timeout_ms: 30_000,
    turn_timeout_ms: 60_000, duel_timer_ms: 0, fee_bps: [],
  },
  duel: {
    name: "duel", version: 1, kind: "duel", decks: 8, min_seats: 2, max_seats: 8,
    max_boxes: 1, hole_card_index: -1, dealer_hits_soft_17: false, peek_up_points: [],
    insurance: "none", insurance_pays: [0, 1], insurance_is_player_option: false,
    even_money: false, even_money_pays: [0, 1], max_hands: 1, resplit_aces: false,
    split_aces_one_card: false, double_after_split: false, win_pays: [0, 1],
    blackjack_pays: [0, 1], blackjack_vs_dealer_21_pays: [0, 1],
    blackjack_waits_for_dealer: false, tie_loses_totals: [], safety_net_available: false,
    min_table_bet: USDC / 2, max_table_bet: 500 * USDC, default_min_bet: USDC / 2,
    default_max_bet: USDC / 2, betting_timeout_ms: 0, insurance_timeout_ms: 0,
    turn_timeout_ms: 0, duel_timer_ms: 30_000,
    fee_bps: [[2, 300], [3, 200], [4, 150], [5, 120], [6, 100], [7, 100], [8, 100]],
  },
  duel_classic: {
    name: "duel_classic", version: 1, kind: "banked", decks: 8, min_seats: 1, max_seats: 7,
    max_boxes: 1, hole_card_index: 1, dealer_hits_soft_17: false, peek_up_points: [1, 10],
    insurance: "up_to_half", insurance_pays: [2, 1], insurance_is_player_option: false,
    even_money: false, even_money_pays: [1, 1], max_hands: 4, resplit_aces: false,
    split_aces_one_card: true, double_after_split: true, win_pays: [1, 1],
    blackjack_pays: [3, 2], blackjack_vs_dealer_21_pays: [1, 1],
    blackjack_waits_for_dealer: true, tie_loses_totals: [17, 18, 19],
    safety_net_available: false, min_table_bet: USDC / 2, max_table_bet: 500 * USDC,
    default_min_bet: USDC / 2, default_max_bet: 5_000 * USDC, betting_timeout_ms: 30_000,
    insurance_timeout_ms: 20_000, turn_timeout_ms: 30_000, duel_timer_ms: 0, fee_bps: [],
  },
});

/** sha256 hex of a rule set's canonical JSON: what RoundOpened.ruleset_hash records. */
export function rulesetHash(rules) {
  return sha256Hex(canonicalJson(rules));
}

// --- the events' shapes (the engine's fields; a field of another JSON type is refused) -----

const INT = "an integer";
const STR = "a string";
const BOOL = "true or false";
const PARTICIPANT = { player_id: STR, client_seed: STR, offer_insurance: BOOL, safety_net: BOOL };
const OPTIONS = { min_bet: INT, max_bet: INT, chip_unit: INT, stake: INT };
const HAND_RESULT = {
  player_id: STR, box: INT, hand: INT, outcome: STR, stake: INT, gross_return: INT, total: INT,
};
const INSURANCE_RESULT = { player_id: STR, box: INT, stake: INT, gross_return: INT };
const PLAYER_AMOUNT = { player_id: STR, amount: INT };
const REVEALED_CARD = { player_id: STR, position: INT, card: STR };
const SEAT_BOX = { player_id: STR, box: INT };
// A shared table's public randomness (fairness-v2): which beacon, and when to read it.
const BEACON_SPEC = {
  name: STR, chain_hash: STR, public_key: STR, genesis_time: INT, period: INT, margin_s: INT,
  wait_s: INT,
};

/** A field the engine leaves out of the JSON when it has none (never null). */
class Optional {
  constructor(shape) {
    this.shape = shape;
  }
}

export const EVENT_FIELDS = Object.freeze({
  RoundOpened: {
    round_id: STR, table_id: STR, ruleset: STR, ruleset_hash: STR, chain_id: STR, nonce: INT,
    commitment: STR, participants: [PARTICIPANT], options: OPTIONS, opened_at_ms: INT,
    betting_deadline_ms: INT, beacon: new Optional(BEACON_SPEC),
  },
  BetPlaced: { ...SEAT_BOX, amount: INT },
  BettingClosed: { client_material: STR, closed_at_ms: INT },
  BeaconAwaited: { round: INT, round_time: INT, deadline_ms: INT },
  BeaconRecorded: {
    round: INT, signature: STR, randomness: STR, client_material: STR, recorded_at_ms: INT,
  },
  PlayerCardDealt: { position: INT, card: STR, ...SEAT_BOX, hand: INT, hidden: BOOL },
  DealerCardDealt: { position: INT, card: STR, hole: BOOL },
  InsuranceOffered: { deadline_ms: INT },
  InsuranceTaken: { ...SEAT_BOX, amount: INT },
  InsuranceDeclined: { ...SEAT_BOX, auto: BOOL },
  EvenMoneyTaken: { ...SEAT_BOX },
  DealerPeeked: { blackjack: BOOL },
  HoleCardRevealed: { position: INT, card: STR },
  TurnStarted: { ...SEAT_BOX, hand: INT, deadline_ms: INT },
  PlayerStood: { ...SEAT_BOX, hand: INT, auto: BOOL },
  HandDoubled: { ...SEAT_BOX, hand: INT, amount: INT },
  HandSplit: { ...SEAT_BOX, hand: INT, amount: INT },
  DuelTimerStarted: { deadline_ms: INT },
  CardsRevealed: { cards: [REVEALED_CARD] },
  RoundSettled: {
    hands: [HAND_RESULT], insurance: [INSURANCE_RESULT], fee: INT, dealer_total: INT,
    settled_at_ms: INT,
  },
  RoundVoided: {
    reason: STR, evidence: STR, refunds: [PLAYER_AMOUNT], reversed_payouts: [PLAYER_AMOUNT],
    reversed_fee: INT, was_settled: BOOL, voided_at_ms: INT,
  },
  ServerSeedRevealed: { server_seed: STR },
});

function isObject(value) {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** What is wrong with `value` as an object of `shape` (null: nothing). */
function shapeProblem(value, shape, where) {
  if (!isObject(value)) return `${where} is not an object`;
  for (const key of Object.keys(value)) {
    if (!Object.hasOwn(shape, key)) return `${where} has a field the engine's event has not: ${key}`;
  }
  for (const [key, kind] of Object.entries(shape)) {
    const field = `${where}.${key}`;
    if (!Object.hasOwn(value, key)) {
      if (kind instanceof Optional) continue;
      return `${field} is missing`;
    }
    const v = value[key];
    if (kind instanceof Optional) {
      if (v === null) return `${field} is null (the engine leaves it out when there is none, never null)`;
      const inner = shapeProblem(v, kind.shape, field);
      if (inner) return inner;
    } else if (Array.isArray(kind)) {
      if (!Array.isArray(v)) return `${field} is not a list`;
      for (let n = 0; n < v.length; n++) {
        const inner = shapeProblem(v[n], kind[0], `${field}[${n}]`);
        if (inner) return inner;
      }
    } else if (isObject(kind)) {
      const inner = shapeProblem(v, kind, field);
      if (inner) return inner;
    } else if (
      (kind === INT && !Number.isInteger(v))
      || (kind === STR && typeof v !== "string")
      || (kind === BOOL && typeof v !== "boolean")
    ) {
      return `${field} is not ${kind}`;
    }
  }
  return null;
}

// --- cards and hands --------------------------------------------------------------------------

function points(card) {
  const rank = card[0];
  if (rank === "A") return 1;
  if (rank === "T" || rank === "J" || rank === "Q" || rank === "K") return 10;
  return Number(rank);
}

/** A hand's value: aces count 1, and one of them 11 when that does not pass 21. */
function value(cards) {
  let hard = 0;
  let ace = false;
  for (const card of cards) {
    const p = points(card);
    hard += p;
    ace = ace || p === 1;
  }
  const soft = ace && hard + 10 <= 21;
  return { hard, soft, total: soft ? hard + 10 : hard };
}

/** A blackjack: the first two cards of a hand that was not split, an ace and a ten. */
function natural(hand) {
  return hand.cards.length === 2 && !hand.split && value(hand.cards).total === 21;
}

function newHand(stake) {
  return { cards: [], positions: [], stake, split: false, splitAces: false, doubled: false, status: "open" };
}

const OPEN = "open";
const STOOD = "stood";
const BUST = "bust";
const BLACKJACK = "blackjack";
const EVEN_MONEY = "even_money";

// Box insurance states.
const OFFERED = "offered";
const EVEN_MONEY_OFFERED = "even_money_offered";

class Refusal extends Error {}

function refuse(why) {
  throw new Refusal(why);
}

// --- one decision, derived ------------------------------------------------------------------

// A decision runs on a copy of the round (`r.s`) and writes the events it derives to
// `r.events`; `r.notes` counts what it applied, for the report (see `note`).

function emit(r, type, data) {
  r.events.push({ type, data });
}

const AHEAD = true;

/** Count what a rule did, for the report, against the event it is about: the last one
 * derived, or (`ahead`) the next one. Only counts of events that match the record are kept. */
function note(r, key, amount = 1, ahead = false) {
  r.notes.push({ key, amount, at: r.events.length - (ahead ? 0 : 1) });
}

function seatOf(s, playerId) {
  return s.participants.findIndex((p) => p.player_id === playerId);
}

function draw(r) {
  const position = r.s.next;
  const card = r.cardAt(position);
  if (typeof card !== "string") refuse(`the rules deal shoe position ${position}, past the shoe`);
  r.s.next = position + 1;
  return [position, card];
}

/** A card to a hand; the hand stops at 21 (a blackjack on its first two cards, unsplit), at a
 * bust, after a double's card and after a split ace's card. */
function give(r, hand, position, card, counted) {
  hand.cards.push(card);
  hand.positions.push(position);
  const { total } = value(hand.cards);
  if (total > 21) {
    hand.status = BUST;
    if (counted) note(r, "busts");
  } else if (natural(hand)) {
    hand.status = BLACKJACK;
  } else if (total === 21) {
    hand.status = STOOD;
    if (counted) note(r, "stoodOn21");
  } else if (hand.doubled || (hand.splitAces && r.rules.split_aces_one_card && hand.cards.length === 2)) {
    hand.status = STOOD; // a double takes one card, and so does a split ace
  }
}

function dealToHand(r, boxIndex, handIndex, hidden, counted = true) {
  const s = r.s;
  const box = s.boxes[boxIndex];
  const hand = box.hands[handIndex];
  const [position, card] = draw(r);
  emit(r, "PlayerCardDealt", {
    position, card, player_id: box.player_id, box: box.box, hand: handIndex, hidden,
  });
  give(r, hand, position, card, counted);
  if (hand.status !== OPEN && s.turn && s.turn.box === boxIndex && s.turn.hand === handIndex) {
    s.turn = null; // the hand in turn is over
    s.deadline = null;
  }
}

function dealToDealer(r, hole) {
  const [position, card] = draw(r);
  emit(r, "DealerCardDealt", { position, card, hole });
  r.s.dealer.cards.push(card);
  r.s.dealer.positions.push(position);
}

function upCard(r) {
  return r.s.dealer.cards[1 - r.rules.hole_card_index];
}

function materialOf(s) {
  return s.participants.map((p) => p.client_seed).join("|");
}

/** What the table's own settings allow, as the engine checks them when a round opens. */
function tableProblem(rules, participants, options) {
  const ids = participants.map((p) => p.player_id);
  if (ids.length < rules.min_seats || ids.length > rules.max_seats) {
    return `${rules.name} seats ${rules.min_seats} to ${rules.max_seats} players, not ${ids.length}`;
  }
  if (new Set(ids).size !== ids.length) return "a player is seated twice";
  if (participants.some((p) => !/^[A-Za-z0-9_.-]{1,64}$/.test(p.client_seed))) {
    return "client seeds are 1 to 64 characters of A-Z a-z 0-9 _ . -";
  }
  const chip = options.chip_unit;
  if (chip <= 0 || chip % 2 !== 0) return "the chip unit must be a positive even number of micro-USDC";
  const limits = rules.kind === "duel" ? [options.stake] : [options.min_bet, options.max_bet];
  if (limits.some((v) => v % chip !== 0)) return "the table's limits are not multiples of its chip unit";
  if (rules.kind === "duel") {
    if (options.stake < rules.min_table_bet || options.stake > rules.max_table_bet) {
      return `the duel stake must be ${rules.min_table_bet} to ${rules.max_table_bet}`;
    }
  } else {
    if (options.min_bet < rules.min_table_bet || options.min_bet > rules.max_table_bet) {
      return `the table minimum must be ${rules.min_table_bet} to ${rules.max_table_bet}`;
    }
    if (options.max_bet < options.min_bet) return "the table maximum is below its minimum";
  }
  return null;
}

function openRound(r, recorded) {
  const rules = r.rules;
  const participants = recorded.participants.map((p) => ({
    player_id: p.player_id, client_seed: p.client_seed, offer_insurance: p.offer_insurance,
    safety_net: p.safety_net,
  }));
  const o = recorded.options;
  const options = { min_bet: o.min_bet, max_bet: o.max_bet, chip_unit: o.chip_unit, stake: o.stake };
  const problem = tableProblem(rules, participants, options);
  if (problem) refuse(`the table is not one the rules allow: ${problem}`);
  const deadline = r.now + rules.betting_timeout_ms;
  // A shared table's beacon, as the table opened the round with it (the engine takes it as
  // given); the event leaves it out when there is none.
  const b = Object.hasOwn(recorded, "beacon") ? recorded.beacon : null;
  const beacon = b === null ? null : {
    name: b.name, chain_hash: b.chain_hash, public_key: b.public_key, genesis_time: b.genesis_time,
    period: b.period, margin_s: b.margin_s, wait_s: b.wait_s,
  };
  emit(r, "RoundOpened", {
    round_id: recorded.round_id, table_id: recorded.table_id, ruleset: rules.name,
    ruleset_hash: r.rulesHash, chain_id: recorded.chain_id, nonce: recorded.nonce,
    commitment: recorded.commitment, participants, options, opened_at_ms: r.now,
    betting_deadline_ms: deadline, ...(beacon === null ? {} : { beacon }),
  });
  note(r, "opened");
  r.s = {
    participants, options, commitment: recorded.commitment, phase: "betting", boxes: [],
    dealer: { cards: [], positions: [] }, next: 0, turn: null, deadline, holeShown: false,
    settlement: null, seedShown: false, beacon, beaconRound: 0, material: null,
  };
  if (rules.kind === "duel") {
    // 004: "Each round starts with all players betting the set limit, and then receiving
    // their 2 cards": every seat's stake, the close and the deal come with the opening.
    for (const p of participants) {
      emit(r, "BetPlaced", { player_id: p.player_id, box: 0, amount: options.stake });
      r.s.boxes.push(newBox(p.player_id, 0, options.stake));
      note(r, "bets");
    }
    closeAndDeal(r);
  }
}

function newBox(playerId, number, amount) {
  return { player_id: playerId, box: number, bet: amount, hands: [newHand(amount)], insurance: 0, ins: "" };
}

function placeBet(r, playerId, amounts) {
  const s = r.s;
  const rules = r.rules;
  if (seatOf(s, playerId) < 0) refuse(`${playerId} is not seated in this round`);
  if (s.phase !== "betting" || rules.kind === "duel") refuse("betting is closed");
  if (s.boxes.some((b) => b.player_id === playerId)) refuse(`${playerId} has already bet this round`);
  if (amounts.length < 1 || amounts.length > rules.max_boxes) {
    refuse(`${rules.name} takes bets on 1 to ${rules.max_boxes} boxes, not ${amounts.length}`);
  }
  const o = s.options;
  for (const amount of amounts) {
    if (amount < 0 || amount % o.chip_unit !== 0) {
      refuse(`a bet of ${amount} is not a multiple of the chip unit ${o.chip_unit}`);
    }
    if (amount > 0 && amount < o.min_bet) refuse(`a bet of ${amount} is below the table minimum ${o.min_bet}`);
    if (amount > o.max_bet) refuse(`a bet of ${amount} is above the table maximum ${o.max_bet}`);
  }
  if (!amounts.some((a) => a > 0)) refuse("a bet needs at least the table minimum on one box");
  amounts.forEach((amount, number) => {
    if (amount > 0) {
      emit(r, "BetPlaced", { player_id: playerId, box: number, amount });
      s.boxes.push(newBox(playerId, number, amount));
      note(r, "bets");
    }
  });
  // Boxes are dealt and played in seat order, then box number.
  s.boxes.sort((a, b) => (seatOf(s, a.player_id) - seatOf(s, b.player_id)) || (a.box - b.box));
  const bettors = new Set(s.boxes.map((b) => b.player_id));
  if (s.participants.length === 1 || s.participants.every((p) => bettors.has(p.player_id))) {
    closeAndDeal(r);
  }
}

/** Whether closing betting waits for the beacon: a beacon table, two or more seats (one seat
 * alone has no other seat to choose cards against). */
function awaitsBeacon(s) {
  return s.beacon !== null && s.participants.length >= 2;
}

function closeAndDeal(r) {
  const s = r.s;
  s.material = materialOf(s);
  emit(r, "BettingClosed", { client_material: s.material, closed_at_ms: r.now });
  s.deadline = null;
  if (awaitsBeacon(s)) {
    awaitBeacon(r);
    return;
  }
  deal(r);
}

/** Integer floor division, exact for safe integers (as Python's //); a zero divisor throws. */
function floorDiv(a, b) {
  if (b === 0) throw new Error("a beacon's period of 0 seconds");
  const m = ((a % b) + b) % b;
  return (a - m) / b;
}

/** The lock names the beacon round the deal waits for: the first whose time (genesis +
 * (R - 1) * period) is strictly after the lock's second, floored, plus margin_s; the round
 * is void if R is not recorded by its time plus wait_s. No card is dealt meanwhile. */
function awaitBeacon(r) {
  const s = r.s;
  const spec = s.beacon;
  const t = floorDiv(r.now, 1000) + spec.margin_s;
  const round = t < spec.genesis_time ? 1 : floorDiv(t - spec.genesis_time, spec.period) + 2;
  const roundTime = spec.genesis_time + (round - 1) * spec.period;
  const deadline = (roundTime + spec.wait_s) * 1000;
  emit(r, "BeaconAwaited", { round, round_time: roundTime, deadline_ms: deadline });
  s.phase = "beacon";
  s.beaconRound = round;
  s.deadline = deadline;
  note(r, "beacon", { round, roundTime, lock: floorDiv(r.now, 1000), margin: spec.margin_s, wait: spec.wait_s });
}

const SIGNATURE_RE = /^[0-9a-f]{96}$/;

/** The awaited beacon round arrived with its signature: its randomness (SHA-256 of the
 * signature's bytes) joins the locked material as "<name>:<round>:<randomness>", and the
 * cards are dealt from the shoe of that material. (The signature's BLS check is the
 * verifier's, verifier.js: the rules take the round as the table recorded it.) */
function recordBeacon(r, round, signature) {
  const s = r.s;
  if (s.phase !== "beacon" || s.beacon === null) refuse("the round does not wait for a beacon");
  if (round !== s.beaconRound) refuse(`the deal waits for beacon round ${s.beaconRound}, not ${round}`);
  if (typeof signature !== "string" || !SIGNATURE_RE.test(signature)) refuse("a signature is 96 lowercase hex digits");
  // Nobody has a round's signature before the beacon publishes it: a record that has one
  // earlier is not the beacon's round.
  const published = (s.beacon.genesis_time + (s.beaconRound - 1) * s.beacon.period) * 1000;
  if (r.now < published) refuse(`beacon round ${s.beaconRound} is published at ${published} ms`);
  const randomness = r.beaconHashes.get(signature);
  s.material = `${s.material}|${s.beacon.name}:${s.beaconRound}:${randomness}`;
  emit(r, "BeaconRecorded", {
    round: s.beaconRound, signature, randomness, client_material: s.material, recorded_at_ms: r.now,
  });
  s.deadline = null;
  note(r, "beaconRecorded");
  deal(r);
}

class ShoeMismatch extends Error {}

/** The deal, from the shoe of the material the round locked (with the beacon's element). */
function deal(r) {
  const s = r.s;
  const rules = r.rules;
  if (typeof r.shoeMaterial === "string" && r.shoeMaterial !== s.material) {
    throw new ShoeMismatch(`the shoe given is shuffled with client material '${r.shoeMaterial}', `
      + `the rules deal from '${s.material}'`);
  }
  if (rules.kind === "duel") {
    s.phase = "dueling";
    // Two passes over the seats; each seat's first card face up, the second hidden (004: "only
    // 1 of the other players cards" is seen).
    for (const hidden of [false, true]) {
      s.boxes.forEach((_, i) => dealToHand(r, i, 0, hidden, false));
    }
    note(r, "dealt", 2 * s.boxes.length);
    s.deadline = r.now + rules.duel_timer_ms;
    emit(r, "DuelTimerStarted", { deadline_ms: s.deadline });
    finishDuel(r);
    return;
  }
  s.phase = "playing";
  // Two passes: every box in order, then the dealer; the rule set says which dealer card is
  // the face-down one (000: the first; 002 and 004: the second).
  for (const pass of [0, 1]) {
    s.boxes.forEach((_, i) => dealToHand(r, i, 0, false, false));
    dealToDealer(r, pass === rules.hole_card_index);
  }
  note(r, "dealt", 2 * s.boxes.length + 2);
  afterDeal(r);
}

function offerFor(r, box) {
  const rules = r.rules;
  if (rules.insurance === "none") return "";
  if (rules.insurance_is_player_option) {
    const seat = r.s.participants.find((p) => p.player_id === box.player_id);
    if (seat && !seat.offer_insurance) return ""; // 000 Options: "Offer Insurance" off
  }
  if (rules.even_money && box.hands[0].status === BLACKJACK) return EVEN_MONEY_OFFERED;
  return OFFERED;
}

function afterDeal(r) {
  const s = r.s;
  const up = upCard(r);
  note(r, "up", up, AHEAD);
  if (r.rules.insurance !== "none" && points(up) === 1) {
    const offers = s.boxes.map((b) => offerFor(r, b));
    if (offers.some((o) => o)) {
      s.deadline = r.now + r.rules.insurance_timeout_ms;
      emit(r, "InsuranceOffered", { deadline_ms: s.deadline });
      s.phase = "insurance";
      s.boxes.forEach((b, i) => { b.ins = offers[i]; });
      note(r, "offers");
      return;
    }
    note(r, "offersOff", 1, AHEAD);
  }
  note(r, "noOffer", 1, AHEAD); // confirmed by the next event the rules derive
  afterInsurance(r);
}

function afterInsurance(r) {
  const s = r.s;
  const up = upCard(r);
  if (r.rules.peek_up_points.includes(points(up))) {
    const blackjack = value(s.dealer.cards).total === 21; // two cards, never split
    emit(r, "DealerPeeked", { blackjack });
    note(r, "peekDecided");
    s.phase = "playing";
    s.deadline = null;
    note(r, "peeks", { up, blackjack });
    if (blackjack) {
      showHole(r);
      settleBanked(r);
      return;
    }
  } else {
    note(r, "peekDecided", 1, AHEAD);
  }
  nextTurn(r);
}

function showHole(r) {
  const s = r.s;
  if (s.holeShown) return;
  const i = r.rules.hole_card_index;
  emit(r, "HoleCardRevealed", { position: s.dealer.positions[i], card: s.dealer.cards[i] });
  s.holeShown = true;
  note(r, "holeShown");
}

/** The first hand still open plays next (box order, then hand order); none: the dealer. */
function nextTurn(r) {
  const s = r.s;
  for (let b = 0; b < s.boxes.length; b++) {
    const box = s.boxes[b];
    for (let h = 0; h < box.hands.length; h++) {
      if (box.hands[h].status === OPEN) {
        s.phase = "playing";
        s.turn = { box: b, hand: h };
        s.deadline = r.now + r.rules.turn_timeout_ms;
        emit(r, "TurnStarted", { player_id: box.player_id, box: box.box, hand: h, deadline_ms: s.deadline });
        note(r, "turns");
        return;
      }
    }
  }
  dealerPlays(r);
}

function dealerPlays(r) {
  const s = r.s;
  const rules = r.rules;
  showHole(r);
  // With no hand left for the dealer to beat, the dealer only turns the hole card. Where a
  // blackjack's payout depends on the dealer's final hand (004), a blackjack is such a hand.
  const live = s.boxes.some((b) => b.hands.some(
    (h) => h.status === STOOD || (rules.blackjack_waits_for_dealer && h.status === BLACKJACK),
  ));
  if (live) {
    // 000: "Dealer must draw additional cards with any hand total of 16 or less. Dealer must
    // stand on all totals of 17. This includes soft values."
    for (;;) {
      const v = value(s.dealer.cards);
      if (v.total > 17 || (v.total === 17 && !(rules.dealer_hits_soft_17 && v.soft))) break;
      dealToDealer(r, false);
      note(r, "dealerDraws");
    }
    note(r, "dealerStood", value(s.dealer.cards).total, AHEAD); // no further card: the settlement
  } else {
    note(r, "dealerIdle", 1, AHEAD);
  }
  settleBanked(r);
}

function pays(stake, [num, den]) {
  return stake + Math.floor((stake * num) / den);
}

/** One hand against the dealer's final hand: [outcome, everything handed back]. */
function judge(r, hand, dealerTotal, dealerBlackjack) {
  const rules = r.rules;
  const total = value(hand.cards).total;
  if (hand.status === EVEN_MONEY) return ["even_money", pays(hand.stake, rules.even_money_pays)];
  if (hand.status === BUST) return ["bust", 0];
  if (hand.status === BLACKJACK) {
    if (dealerBlackjack) return ["push", hand.stake];
    note(r, "blackjacks", 1, AHEAD); // paid by the settlement about to be derived
    if (rules.blackjack_waits_for_dealer && dealerTotal === 21) {
      return ["blackjack", pays(hand.stake, rules.blackjack_vs_dealer_21_pays)];
    }
    return ["blackjack", pays(hand.stake, rules.blackjack_pays)];
  }
  if (dealerBlackjack) return ["lose", 0];
  if (dealerTotal > 21 || total > dealerTotal) return ["win", pays(hand.stake, rules.win_pays)];
  if (total < dealerTotal) return ["lose", 0];
  note(r, "ties", total, AHEAD);
  if (rules.tie_loses_totals.includes(total)) return ["lose", 0]; // 004: 17, 18 or 19
  return ["push", hand.stake];
}

function settleBanked(r) {
  const s = r.s;
  const dealer = { cards: s.dealer.cards, split: false };
  const dealerTotal = value(s.dealer.cards).total;
  const dealerBlackjack = natural(dealer);
  const hands = [];
  const insurance = [];
  for (const box of s.boxes) {
    box.hands.forEach((hand, index) => {
      const [outcome, gross] = judge(r, hand, dealerTotal, dealerBlackjack);
      hands.push({
        player_id: box.player_id, box: box.box, hand: index, outcome, stake: hand.stake,
        gross_return: gross, total: value(hand.cards).total,
      });
    });
    if (box.insurance > 0) {
      insurance.push({
        player_id: box.player_id, box: box.box, stake: box.insurance,
        gross_return: dealerBlackjack ? pays(box.insurance, r.rules.insurance_pays) : 0,
      });
    }
  }
  const data = { hands, insurance, fee: 0, dealer_total: dealerTotal, settled_at_ms: r.now };
  emit(r, "RoundSettled", data);
  s.phase = "settled";
  s.settlement = data;
  s.turn = null;
  s.deadline = null;
  note(r, "hands", hands.length);
  note(r, "insuranceResults", insurance.length);
  note(r, "dealerTotal", dealerTotal);
}

function finishDuel(r) {
  const s = r.s;
  if (s.boxes.some((b) => b.hands[0].status === OPEN)) return;
  // 004: "all players cards are revealed at the same time": every card after each seat's
  // face-up first one, in shoe order.
  const hidden = [];
  for (const box of s.boxes) {
    const hand = box.hands[0];
    for (let k = 1; k < hand.cards.length; k++) {
      hidden.push({ player_id: box.player_id, position: hand.positions[k], card: hand.cards[k] });
    }
  }
  hidden.sort((a, b) => a.position - b.position);
  emit(r, "CardsRevealed", { cards: hidden });
  note(r, "revealed", hidden.length);
  // 004: closest to 21 wins, 22 or more loses, a blackjack beats a 21, ties share the pot, and
  // if everyone busts the pot is shared among all; the fee by the number of players.
  const n = s.boxes.length;
  const rank = s.boxes.map((b) => {
    const hand = b.hands[0];
    const { total } = value(hand.cards);
    if (total > 21) return -1;
    return natural(hand) ? 22 : total;
  });
  const stake = s.options.stake;
  const pot = stake * n;
  const tier = r.rules.fee_bps.find(([players]) => players === n);
  const bps = tier ? tier[1] : 0;
  const fee = Math.floor((pot * bps) / 10_000);
  const best = Math.max(...rank);
  const winners = rank.flatMap((v, i) => (v === best ? [i] : []));
  const share = Math.floor((pot - fee) / winners.length);
  const odd = (pot - fee) - share * winners.length; // one micro-USDC each to the first winners
  const gross = new Array(n).fill(0);
  winners.forEach((i, k) => { gross[i] = share + (k < odd ? 1 : 0); });
  const paid = gross.filter((g) => g > 0).length;
  const hands = s.boxes.map((b, i) => ({
    player_id: b.player_id, box: b.box, hand: 0,
    outcome: gross[i] > 0 ? (paid > 1 ? "split" : "win") : "lose",
    stake: b.hands[0].stake, gross_return: gross[i], total: value(b.hands[0].cards).total,
  }));
  const data = { hands, insurance: [], fee, dealer_total: 0, settled_at_ms: r.now };
  emit(r, "RoundSettled", data);
  s.phase = "settled";
  s.settlement = data;
  s.deadline = null;
  note(r, "hands", n);
  note(r, "duel", { pot, fee, bps, players: n, winners: paid });
}

function turnHand(r, playerId) {
  const s = r.s;
  if (s.phase !== "playing" || s.turn === null) refuse("no hand is waiting for a decision");
  const box = s.boxes[s.turn.box];
  if (box.player_id !== playerId) refuse(`it is ${box.player_id}'s turn, not ${playerId}'s`);
  return [s.turn.box, s.turn.hand, box, box.hands[s.turn.hand]];
}

function endOfAction(r) {
  if (r.s.turn === null) nextTurn(r);
}

function hit(r, playerId) {
  const [b, h, , hand] = turnHand(r, playerId);
  if (hand.splitAces && r.rules.split_aces_one_card) refuse("a split ace takes one card");
  dealToHand(r, b, h, false);
  note(r, "hits");
  endOfAction(r);
}

function stand(r, playerId) {
  const s = r.s;
  const [, h, box, hand] = turnHand(r, playerId);
  emit(r, "PlayerStood", { player_id: box.player_id, box: box.box, hand: h, auto: false });
  hand.status = STOOD;
  s.turn = null;
  s.deadline = null;
  note(r, "stands");
  nextTurn(r);
}

function double(r, playerId) {
  const [b, h, box, hand] = turnHand(r, playerId);
  if (hand.cards.length !== 2) refuse("a double is only allowed on a hand's first two cards");
  if (hand.split && !r.rules.double_after_split) refuse("no double after a split here");
  emit(r, "HandDoubled", { player_id: box.player_id, box: box.box, hand: h, amount: hand.stake });
  hand.stake *= 2;
  hand.doubled = true;
  dealToHand(r, b, h, false);
  note(r, "doubles");
  endOfAction(r);
}

function split(r, playerId) {
  const rules = r.rules;
  const [b, h, box, hand] = turnHand(r, playerId);
  if (hand.cards.length !== 2 || points(hand.cards[0]) !== points(hand.cards[1])) {
    refuse("a split needs two cards of the same value");
  }
  if (box.hands.length >= rules.max_hands) refuse(`a box may become at most ${rules.max_hands} hands`);
  if (hand.splitAces && !rules.resplit_aces) refuse("aces are split once");
  emit(r, "HandSplit", { player_id: box.player_id, box: box.box, hand: h, amount: hand.stake });
  const aces = points(hand.cards[0]) === 1;
  const halves = [0, 1].map((k) => ({
    cards: [hand.cards[k]], positions: [hand.positions[k]], stake: hand.stake, split: true,
    splitAces: aces, doubled: false, status: OPEN,
  }));
  // The split hand keeps its index, the new one is the next (later hands move up one).
  box.hands.splice(h, 1, ...halves);
  note(r, "splits");
  if (hand.split) note(r, "resplits");
  if (aces) note(r, "acesSplit");
  // Both hands get their second card at once, the hand in turn first.
  dealToHand(r, b, h, false);
  dealToHand(r, b, h + 1, false);
  endOfAction(r);
}

function answeredBox(r, playerId, number) {
  const s = r.s;
  if (s.phase !== "insurance") refuse("insurance is not on offer now");
  const box = s.boxes.find((b) => b.player_id === playerId && b.box === number);
  if (!box) refuse(`${playerId} has no box ${number} in this round`);
  if (box.ins !== OFFERED && box.ins !== EVEN_MONEY_OFFERED) refuse(`box ${number} has no open insurance offer`);
  return box;
}

function afterAnswer(r) {
  if (!r.s.boxes.some((b) => b.ins === OFFERED || b.ins === EVEN_MONEY_OFFERED)) afterInsurance(r);
}

function insure(r, playerId, number, amount) {
  const box = answeredBox(r, playerId, number);
  if (box.ins !== OFFERED) refuse("a blackjack is offered even money, not insurance");
  const half = Math.floor(box.bet / 2);
  const chip = r.s.options.chip_unit;
  if (r.rules.insurance === "half" && amount !== half) refuse(`insurance is half the bet, ${half}`);
  if (amount <= 0) refuse("insurance needs a positive amount");
  if (amount > half) refuse(`insurance is at most half the bet, ${half}`);
  if (amount % chip !== 0 && amount !== half) refuse(`insurance must be a multiple of ${chip}`);
  emit(r, "InsuranceTaken", { player_id: playerId, box: number, amount });
  box.insurance = amount;
  box.ins = "taken";
  note(r, "answers");
  afterAnswer(r);
}

function decline(r, playerId, number) {
  const box = answeredBox(r, playerId, number);
  emit(r, "InsuranceDeclined", { player_id: playerId, box: number, auto: false });
  box.ins = "declined";
  note(r, "answers");
  afterAnswer(r);
}

function evenMoney(r, playerId, number) {
  const box = answeredBox(r, playerId, number);
  if (box.ins !== EVEN_MONEY_OFFERED) refuse("even money is offered on a blackjack only");
  emit(r, "EvenMoneyTaken", { player_id: playerId, box: number });
  box.hands[0].status = EVEN_MONEY; // 000: "Accepting Even Money ends the action for that hand."
  box.ins = EVEN_MONEY;
  note(r, "answers");
  note(r, "evenMoney");
  afterAnswer(r);
}

function duelHit(r, playerId) {
  const s = r.s;
  if (s.phase !== "dueling") refuse("the duel is not in play");
  const i = s.boxes.findIndex((b) => b.player_id === playerId);
  if (i < 0) refuse(`${playerId} is not in this duel`);
  if (s.boxes[i].hands[0].status !== OPEN) refuse(`${playerId}'s hand is finished`);
  dealToHand(r, i, 0, true);
  note(r, "hits");
  finishDuel(r);
}

function duelStand(r, playerId) {
  const s = r.s;
  if (s.phase !== "dueling") refuse("the duel is not in play");
  const i = s.boxes.findIndex((b) => b.player_id === playerId);
  if (i < 0) refuse(`${playerId} is not in this duel`);
  const box = s.boxes[i];
  if (box.hands[0].status !== OPEN) refuse(`${playerId}'s hand is finished`);
  emit(r, "PlayerStood", { player_id: playerId, box: box.box, hand: 0, auto: false });
  box.hands[0].status = STOOD;
  note(r, "stands");
  finishDuel(r);
}

/** What a passed deadline makes happen at r.now (nothing before the deadline). */
function expire(r) {
  const s = r.s;
  if (s.phase === "settled" || s.phase === "voided" || s.deadline === null || r.now < s.deadline) return;
  if (s.phase === "betting") {
    note(r, "timeouts", "betting", AHEAD);
    if (s.boxes.length) {
      closeAndDeal(r); // the seats that did not bet sit this round out
    } else {
      emit(r, "RoundVoided", {
        reason: "no_bets", evidence: "", refunds: [], reversed_payouts: [], reversed_fee: 0,
        was_settled: false, voided_at_ms: r.now,
      });
      s.phase = "voided";
      s.deadline = null;
    }
  } else if (s.phase === "insurance") {
    note(r, "timeouts", "insurance", AHEAD);
    for (const box of s.boxes) {
      if (box.ins === OFFERED || box.ins === EVEN_MONEY_OFFERED) {
        emit(r, "InsuranceDeclined", { player_id: box.player_id, box: box.box, auto: true });
        box.ins = "declined";
      }
    }
    afterInsurance(r);
  } else if (s.phase === "playing" && s.turn !== null) {
    note(r, "timeouts", "turn", AHEAD);
    const box = s.boxes[s.turn.box];
    emit(r, "PlayerStood", { player_id: box.player_id, box: box.box, hand: s.turn.hand, auto: true });
    box.hands[s.turn.hand].status = STOOD;
    s.turn = null;
    s.deadline = null;
    nextTurn(r);
  } else if (s.phase === "dueling") {
    note(r, "timeouts", "duel", AHEAD);
    for (const box of s.boxes) {
      if (box.hands[0].status === OPEN) {
        emit(r, "PlayerStood", { player_id: box.player_id, box: box.box, hand: 0, auto: true });
        box.hands[0].status = STOOD;
      }
    }
    finishDuel(r);
  } else if (s.phase === "beacon") {
    note(r, "timeouts", "beacon", AHEAD);
    const spec = s.beacon;
    voidRound(r, BEACON_VOID_REASON,
      `${spec.name} round ${s.beaconRound} was not recorded within ${spec.wait_s} s`);
  }
}

const BEACON_VOID_REASON = "beacon_unavailable";

/** 000/002: "Malfunction voids all pays and plays": every stake back, every payout and fee
 * taken back when the round was already settled. */
function voidRound(r, reason, evidence) {
  const s = r.s;
  if (s.phase === "voided") refuse("the round is already void");
  const staked = new Map();
  for (const box of s.boxes) {
    const amount = box.insurance + box.hands.reduce((sum, h) => sum + h.stake, 0);
    staked.set(box.player_id, (staked.get(box.player_id) ?? 0) + amount);
  }
  const paid = new Map();
  const settled = s.phase === "settled" && s.settlement !== null;
  if (settled) {
    for (const result of [...s.settlement.hands, ...s.settlement.insurance]) {
      paid.set(result.player_id, (paid.get(result.player_id) ?? 0) + result.gross_return);
    }
  }
  const amounts = (map) => [...map].filter(([, a]) => a !== 0).map(([id, a]) => ({ player_id: id, amount: a }));
  const refunds = amounts(staked);
  const reversed = amounts(paid);
  emit(r, "RoundVoided", {
    reason, evidence, refunds, reversed_payouts: reversed,
    reversed_fee: settled ? s.settlement.fee : 0, was_settled: settled, voided_at_ms: r.now,
  });
  s.phase = "voided";
  s.turn = null;
  s.deadline = null;
  note(r, "voids");
  note(r, "refunds", refunds.length);
  note(r, "reversals", reversed.length);
}

function revealSeed(r, seed) {
  const s = r.s;
  if (s.phase !== "settled" && s.phase !== "voided") refuse("the seed is revealed only after the round ends");
  if (s.seedShown) refuse("the seed is already revealed");
  if (r.seedHashes.get(seed) !== s.commitment) refuse("the seed does not hash to the round's commitment");
  emit(r, "ServerSeedRevealed", { server_seed: seed });
  s.seedShown = true;
  note(r, "seed");
}

/** Run one choice on a copy of the round at time `now`: {events, state, notes} or {refused}. */
function decide(context, state, choice, now) {
  const r = {
    ...context, s: state === null ? null : structuredClone(state), now, events: [], notes: [],
  };
  try {
    const s = r.s;
    const kind = choice.kind;
    if (kind === "open") {
      if (s !== null) refuse("the round is already open");
      openRound(r, choice.recorded);
    } else if (kind === "timeout") {
      expire(r);
    } else if (kind === "void") {
      voidRound(r, choice.reason, choice.evidence);
    } else if (kind === "reveal") {
      revealSeed(r, choice.seed);
    } else {
      if (s.phase === "settled" || s.phase === "voided") refuse(`the round is ${s.phase}`);
      if (s.deadline !== null && now >= s.deadline) refuse(`its deadline (${s.deadline} ms) has passed`);
      if (kind === "beacon") {
        recordBeacon(r, choice.round, choice.signature);
      } else if (s.phase === "beacon") {
        refuse(`the deal waits for beacon round ${s.beaconRound}`);
      } else if (kind === "bet") {
        placeBet(r, choice.player, choice.amounts);
      } else {
        if (seatOf(s, choice.player) < 0) refuse(`${choice.player} is not seated in this round`);
        const duel = r.rules.kind === "duel";
        if (duel && kind !== "hit" && kind !== "stand") refuse("a duel allows hit and stand only");
        if (kind === "hit") (duel ? duelHit : hit)(r, choice.player);
        else if (kind === "stand") (duel ? duelStand : stand)(r, choice.player);
        else if (kind === "double") double(r, choice.player);
        else if (kind === "split") split(r, choice.player);
        else if (kind === "insure") insure(r, choice.player, choice.box, choice.amount);
        else if (kind === "decline") decline(r, choice.player, choice.box);
        else if (kind === "even_money") evenMoney(r, choice.player, choice.box);
      }
    }
  } catch (err) {
    if (err instanceof Refusal) return { refused: err.message };
    if (err instanceof ShoeMismatch) return { mismatch: err.message };
    throw err;
  }
  return { events: r.events, state: r.s, notes: r.notes };
}

// --- reading the choices out of the record -------------------------------------------------

const CHOICE_NAMES = {
  open: "opening the round", bet: "a bet", timeout: "a timeout", void: "a void",
  reveal: "the seed reveal", hit: "a hit", stand: "a stand", double: "a double",
  split: "a split", insure: "taking insurance", decline: "declining insurance",
  even_money: "taking even money", beacon: "recording the beacon round",
};

/** The choice recorded event i stands for (null: none; the rules must derive it). */
function choiceAt(events, i, state) {
  const { type, data } = events[i];
  switch (type) {
    case "RoundOpened": return { kind: "open", recorded: data };
    case "BetPlaced": {
      // One player's bets on several boxes are one decision.
      const byBox = new Map();
      for (let k = i; k < events.length; k++) {
        const e = events[k];
        if (e.type !== "BetPlaced" || e.data.player_id !== data.player_id) break;
        byBox.set(e.data.box, e.data.amount);
      }
      // Box b's amount, 0 where the record has none, boxes 0 up to the highest (a length past
      // any rule set's boxes is refused as such, so it is not built in full).
      const top = Math.max(...byBox.keys());
      const length = Math.min(Math.max(top + 1, 0), 65);
      const amounts = Array.from({ length }, (_, b) => byBox.get(b) ?? 0);
      return { kind: "bet", player: data.player_id, amounts };
    }
    case "InsuranceTaken": return { kind: "insure", player: data.player_id, box: data.box, amount: data.amount };
    case "InsuranceDeclined":
      return data.auto ? { kind: "timeout" } : { kind: "decline", player: data.player_id, box: data.box };
    case "EvenMoneyTaken": return { kind: "even_money", player: data.player_id, box: data.box };
    case "PlayerStood": return data.auto ? { kind: "timeout" } : { kind: "stand", player: data.player_id };
    case "HandDoubled": return { kind: "double", player: data.player_id };
    case "HandSplit": return { kind: "split", player: data.player_id };
    case "PlayerCardDealt": return { kind: "hit", player: data.player_id };
    case "BettingClosed": return { kind: "timeout" }; // closed by its deadline, not by a last bet
    case "ServerSeedRevealed": return { kind: "reveal", seed: data.server_seed };
    case "BeaconRecorded": return { kind: "beacon", round: data.round, signature: data.signature };
    case "RoundVoided": {
      // A void the rules derive at a deadline (nobody bet; the beacon never came) is the
      // timeout's; any other (a staff or malfunction void) is a decision of its own.
      const due = state !== null && state.deadline !== null && data.voided_at_ms >= state.deadline;
      const derived = due && (
        (state.phase === "betting" && data.reason === "no_bets")
        || (state.phase === "beacon" && data.reason === BEACON_VOID_REASON));
      if (derived) return { kind: "timeout" };
      return { kind: "void", reason: data.reason, evidence: data.evidence };
    }
    default: return null;
  }
}

/** The time a decision was taken, as the first timed event it derives records it. */
function timeOf(event, rules) {
  const d = event.data;
  switch (event.type) {
    case "RoundOpened": return d.opened_at_ms;
    case "BettingClosed": return d.closed_at_ms;
    case "BeaconRecorded": return d.recorded_at_ms;
    case "InsuranceOffered": return d.deadline_ms - rules.insurance_timeout_ms;
    case "TurnStarted": return d.deadline_ms - rules.turn_timeout_ms;
    case "DuelTimerStarted": return d.deadline_ms - rules.duel_timer_ms;
    case "RoundSettled": return d.settled_at_ms;
    case "RoundVoided": return d.voided_at_ms;
    default: return null;
  }
}

function recordedTime(derived, events, i, rules) {
  for (let k = 0; k < derived.length && i + k < events.length; k++) {
    if (derived[k].type !== events[i + k].type) return null;
    const t = timeOf(events[i + k], rules);
    if (t !== null) return t;
  }
  return null;
}

function equalJson(a, b) {
  if (a === b) return true;
  if (Array.isArray(a)) {
    return Array.isArray(b) && a.length === b.length && a.every((x, n) => equalJson(x, b[n]));
  }
  if (isObject(a) && isObject(b)) {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length
      && keys.every((k) => Object.hasOwn(b, k) && equalJson(a[k], b[k]));
  }
  return false;
}

/** The first field where two values differ: "hands[0].gross_return: recorded 5, derived 3". */
function difference(recorded, derived, path = "") {
  if (isObject(recorded) && isObject(derived)) {
    for (const key of [...new Set([...Object.keys(recorded), ...Object.keys(derived)])].sort()) {
      if (!equalJson(recorded[key], derived[key])) return difference(recorded[key], derived[key], `${path}.${key}`);
    }
  }
  if (Array.isArray(recorded) && Array.isArray(derived) && recorded.length === derived.length) {
    for (let n = 0; n < recorded.length; n++) {
      if (!equalJson(recorded[n], derived[n])) return difference(recorded[n], derived[n], `${path}[${n}]`);
    }
  }
  const show = (v) => (v === undefined ? "nothing" : JSON.stringify(v));
  return `${path.replace(/^\./, "") || "value"}: recorded ${show(recorded)}, derived ${show(derived)}`;
}

function show(event) {
  return `${event.type} ${canonicalJson(event.data)}`;
}

// --- the report: which checks ran and what they found ----------------------------------------

function newTally() {
  return {
    opened: 0, bets: 0, dealt: 0, up: null, peekDecided: 0, offers: 0, noOffer: 0, offersOff: 0,
    answers: 0, evenMoney: 0,
    insuranceResults: 0, peeks: [], turns: 0, hits: 0, stands: 0, doubles: 0, splits: 0,
    resplits: 0, acesSplit: 0, stoodOn21: 0, busts: 0, holeShown: 0,
    dealerDraws: 0, dealerStood: null, dealerIdle: 0, dealerTotal: null, hands: 0,
    blackjacks: 0, ties: [], revealed: 0, duel: null, timeouts: [], voids: 0, refunds: 0,
    reversals: 0, seed: 0, beacon: null, beaconRecorded: 0,
  };
}

/** Add the notes about the derived events before index `upto` to the tally. */
function merge(tally, notes, upto) {
  for (const { key, amount, at } of notes) {
    if (at >= upto) continue;
    if (typeof tally[key] === "number") tally[key] += amount;
    else if (Array.isArray(tally[key])) tally[key].push(amount);
    else tally[key] = amount;
  }
}

function plural(n, word, many = `${word}s`) {
  return `${n} ${n === 1 ? word : many}`;
}

function usdc(micro) {
  const text = (micro / USDC).toFixed(6).replace(/0{1,4}$/, "");
  return `${text} USDC`;
}

/** Whether a decision from `state` deals the first cards (the close, or the beacon). */
function dealing(state) {
  return state === null || state.phase === "betting" || state.phase === "beacon";
}

// Which check a derived (or recorded) event belongs to, to name the check a difference fails.
function checkOf(event, rules, state) {
  const banked = rules.kind !== "duel";
  switch (event.type) {
    case "RoundOpened": case "BetPlaced": case "BettingClosed": return "opening";
    case "BeaconAwaited": case "BeaconRecorded": return "beacon";
    case "DealerCardDealt": return dealing(state) ? "deal" : "dealer";
    case "PlayerCardDealt": return dealing(state) ? "deal" : "choices";
    case "InsuranceOffered": case "InsuranceTaken": case "InsuranceDeclined": case "EvenMoneyTaken":
      return "insurance";
    case "DealerPeeked": return "peek";
    case "HoleCardRevealed": return "dealer";
    case "TurnStarted": return "turns";
    case "PlayerStood": return event.data && event.data.auto ? "timeouts" : "choices";
    case "HandDoubled": return "choices";
    case "HandSplit": return "splits";
    case "DuelTimerStarted": return "timeouts";
    case "CardsRevealed": return "reveal";
    case "RoundSettled": return banked ? "payouts" : "pot";
    case "RoundVoided": return "void";
    case "ServerSeedRevealed": return "seed";
    default: return "stream";
  }
}

// The check a difference fails: the rule-forced event of the two (a recorded dealer card
// where the rules settle breaks the dealer's rule, not the payout's), else the event's own.
const FORCED_FIRST = ["beacon", "dealer", "peek", "insurance", "turns", "reveal", "deal"];

function blame(recorded, derived, rules, state) {
  const ids = [recorded, derived].filter(Boolean).map((e) => checkOf(e, rules, state));
  if (recorded && derived && recorded.type === derived.type) return ids[1];
  const forcedId = FORCED_FIRST.find((id) => ids.includes(id));
  if (forcedId) return forcedId;
  if (recorded && recorded.type === "PlayerCardDealt" && state) {
    const box = state.boxes.find((b) => b.player_id === recorded.data.player_id && b.box === recorded.data.box);
    const hand = box && box.hands[recorded.data.hand];
    if (hand && hand.status !== OPEN) return "autostand"; // a card to a finished hand
  }
  return ids[0];
}

const LABELS = {
  rules: "rule set parameters (payouts, timeouts, fee schedule)",
  opening: "round opening, bets and betting deadline",
  beacon: "shared table's beacon: the first round after the lock, its randomness in the shoe's "
    + "client material, a void if it is not recorded in time",
  deal: "deal order",
  peek: "dealer's peek for blackjack",
  insurance: "insurance and even money: offers, answers and results",
  turns: "turn order and turn deadlines",
  choices: "players' hits, stands and doubles, each allowed where it was made",
  splits: "splits and re-splits (the new hand's index), split aces one card each",
  autostand: "a hand reaching 21 stands, a bust hand takes no more cards",
  dealer: "dealer stands on soft 17 and draws below 17 (hole card turned first)",
  totals: "each hand's total",
  payouts: "outcomes and payouts",
  ties: "equal totals: 17 to 19 lose, 20 and 21 push",
  reveal: "duel's simultaneous reveal of the hidden cards",
  pot: "duel winners, pot split and fee",
  timeouts: "timeouts, each at or after its deadline",
  void: "void: refunds and reversals",
  seed: "server seed revealed after the round ended",
  stream: "every recorded event equals the derived one, field by field",
};

const BANKED_CHECKS = [
  "rules", "opening", "beacon", "deal", "peek", "insurance", "turns", "choices", "splits", "autostand",
  "dealer", "totals", "payouts", "ties", "timeouts", "void", "seed", "stream",
];
const DUEL_CHECKS = [
  "rules", "opening", "beacon", "deal", "choices", "autostand", "reveal", "totals", "pot", "timeouts",
  "void", "seed", "stream",
];

const ratio = ([num, den]) => `${num}:${den}`;
const seconds = (ms) => `${ms / 1000} s`;

/** What the beacon's check found: the round awaited, and whether it came. */
function beaconFinding(t) {
  const { round, roundTime, lock, margin, wait } = t.beacon;
  const awaited = `round ${round} awaited at the lock (at ${roundTime} s, the first round after `
    + `the lock's ${lock} s + ${margin} s)`;
  if (t.beaconRecorded) return `${awaited}; recorded, its randomness in the shoe's client material`;
  if (t.timeouts.includes("beacon")) return `${awaited}; not recorded within ${wait} s: the round is void`;
  return awaited;
}

/** Per check: [whether the play came to it, what it found], from the tally. */
function findings(rules, t, { done, name, hash, events }) {
  const duel = rules.kind === "duel";
  const timeouts = (kind) => t.timeouts.filter((k) => k === kind).length;
  const peeks = t.peeks.map((p) => `peeked with ${points(p.up) === 1 ? "an ace" : "a ten"} up: `
    + (p.blackjack ? "dealer blackjack, the round ends" : "no blackjack"));
  const answers = `${plural(t.answers, "answer")}${t.evenMoney ? ` (${t.evenMoney} even money)` : ""}`
    + (timeouts("insurance") ? ", the rest declined at the deadline" : "");
  const noOffer = t.offersOff ? "not offered: the player's Offer Insurance option is off" : "not offered: no ace up";
  let dealer = `hole card turned, ${plural(t.dealerDraws, "card")} drawn, stood on ${t.dealerStood}`;
  if (t.peeks.some((p) => p.blackjack)) dealer = "hole card turned on the dealer's blackjack";
  else if (t.dealerIdle) dealer = "hole card turned; no draw, no hand was left to beat";
  let blackjacks = "";
  if (t.blackjacks) {
    blackjacks = `, ${plural(t.blackjacks, "blackjack")} paid ${ratio(rules.blackjack_pays)}`;
    if (rules.blackjack_waits_for_dealer) blackjacks += ` (${ratio(rules.blackjack_vs_dealer_21_pays)} against a dealer's 21)`;
  }
  const pot = t.duel && `pot ${usdc(t.duel.pot)}, fee ${t.duel.bps / 100}% for ${t.duel.players} players `
    + `= ${usdc(t.duel.fee)}, ${plural(t.duel.winners, "winner")}`;
  return {
    rules: [true, `${name} version ${rules.version}: the page's parameters hash to the round's `
      + `ruleset_hash ${hash.slice(0, 16)}…`],
    opening: [t.opened > 0, `the betting deadline is the rules' ${seconds(rules.betting_timeout_ms)}; `
      + `${plural(t.bets, "bet")} within the table limits`
      + (timeouts("betting") ? "; betting closed at its deadline" : "")],
    beacon: [t.beacon !== null, t.beacon && beaconFinding(t)],
    deal: [t.dealt > 0, `${plural(t.dealt, "card")} dealt in the rules' order from shoe position 0, `
      + (duel ? "each seat's second card hidden"
        : `the dealer's ${rules.hole_card_index === 0 ? "first" : "second"} card face down`)],
    peek: [t.peekDecided > 0, peeks.length ? peeks.join("; ") : `no peek with ${t.up ? t.up[0] : "that card"} up`],
    insurance: [t.offers + t.noOffer > 0,
      t.offers ? `offered with an ace up: ${answers}; ${plural(t.insuranceResults, "insurance result")}` : noOffer],
    turns: [t.turns > 0, `${plural(t.turns, "turn")} in box and hand order, each with the rules' ${seconds(rules.turn_timeout_ms)}`],
    choices: [t.hits + t.stands + t.doubles > 0,
      [plural(t.hits, "hit"), plural(t.stands, "stand"), ...(duel ? [] : [plural(t.doubles, "double")])]
        .join(", ")],
    splits: [t.splits > 0, `${plural(t.splits, "split")}${t.resplits ? ` (${plural(t.resplits, "re-split")})` : ""}`
      + (t.acesSplit ? `, ${plural(t.acesSplit, "pair")} of aces, one card each` : "")],
    autostand: [t.stoodOn21 + t.busts > 0, `${plural(t.stoodOn21, "hand")} stood on 21, ${plural(t.busts, "bust")}`],
    dealer: [t.holeShown > 0, dealer],
    totals: [t.hands > 0, `${plural(t.hands, "hand")}${duel ? "" : ` and the dealer's ${t.dealerTotal}`}`],
    payouts: [t.hands > 0, `${plural(t.hands, "hand")} checked${blackjacks}`
      + (t.insuranceResults ? `, ${plural(t.insuranceResults, "insurance bet")}` : "")],
    ties: [t.hands > 0,
      t.ties.length ? `${plural(t.ties.length, "equal total")}: ${t.ties.join(", ")}` : "no equal totals in this round"],
    reveal: [t.duel !== null, `${plural(t.revealed, "hidden card")} revealed together, in shoe order`],
    pot: [t.duel !== null, pot],
    timeouts: [t.timeouts.length > 0, `${plural(t.timeouts.length, "timeout")} (${t.timeouts.join(", ")})`],
    void: [t.voids > 0, `${plural(t.refunds, "player")} refunded, ${plural(t.reversals, "payout")} reversed`],
    seed: [t.seed > 0, "revealed once the round was over; it hashes to the commitment"],
    stream: [done, `all ${plural(events, "event")}`],
  };
}

/** What was checked, in words: [{id, label, state, detail, text}], state "checked",
 * "failed", "not checked" (the play stopped before it) or "none in this round". */
function describe(rules, tally, { done, failedId, stopAt, events, name, hash, beacon }) {
  let ids = rules?.kind === "duel" ? DUEL_CHECKS : BANKED_CHECKS;
  if (!rules?.tie_loses_totals.length) ids = ids.filter((id) => id !== "ties");
  if (!beacon) ids = ids.filter((id) => id !== "beacon"); // a table without a beacon
  const found = rules ? findings(rules, tally, { done, name, hash, events }) : {};
  return ids.map((id) => {
    const [reached, detail] = found[id] ?? [false, ""];
    let state = "not checked";
    let note = stopAt ? `the play stops at the first difference, version ${stopAt}` : "";
    if (id === failedId) {
      [state, note] = ["failed", `at version ${stopAt}`];
    } else if (reached) {
      [state, note] = ["checked", done || id === "rules" ? detail : `before the first difference: ${detail}`];
    } else if (done) {
      [state, note] = ["none in this round", ""];
    }
    const text = `${LABELS[id]}: ${state}${note ? ` (${note})` : ""}`;
    return { id, label: LABELS[id], state, detail: note, text };
  });
}

/** The first event that is not the engine's event of its type (null: none). */
function shapeFailure(events) {
  for (let i = 0; i < events.length; i++) {
    const e = events[i];
    const fields = isObject(e) ? EVENT_FIELDS[e.type] : undefined;
    const problem = fields ? shapeProblem(e.data, fields, `${e.type}`)
      : `an event of unknown type ${JSON.stringify(e?.type)}`;
    if (problem) return { version: i + 1, id: "stream", message: `the record is not the engine's event: ${problem}` };
  }
  return null;
}

/** The round's rule set, by name, if the page's own parameters hash to its ruleset_hash. */
async function rulesOf(events) {
  const first = events[0];
  const refused = (message) => ({ rules: null, name: "", hash: "", found: { version: 1, id: "rules", message } });
  if (!first || first.type !== "RoundOpened") return refused("the round does not start with RoundOpened");
  const name = first.data.ruleset;
  if (!Object.hasOwn(RULESETS, name)) return refused(`unknown rule set ${JSON.stringify(name)}`);
  const hash = await rulesetHash(RULESETS[name]);
  if (hash !== first.data.ruleset_hash) {
    return refused(`ruleset_hash ${first.data.ruleset_hash} is not the hash of the ${name} rules `
      + `this page knows (${hash}): refused`);
  }
  return { rules: RULESETS[name], name, hash, found: null };
}

/** The first derived event of a decision that the record does not hold (null: all do). */
function firstDifference(made, events, i, rules, state) {
  for (let k = 0; k < made.events.length; k++) {
    const derived = made.events[k];
    const recorded = events[i + k];
    if (!recorded) {
      return {
        k, version: i + k + 1, id: blame(null, derived, rules, state),
        message: `the record ends, the rules derive ${show(derived)}`,
      };
    }
    if (recorded.type !== derived.type || !equalJson(recorded.data, derived.data)) {
      const field = recorded.type === derived.type ? ` (${difference(recorded.data, derived.data)})` : "";
      return {
        k, version: i + k + 1, id: blame(recorded, derived, rules, state),
        message: `recorded ${show(recorded)}, the rules derive ${show(derived)}${field}`,
      };
    }
  }
  return null;
}

/**
 * Decide the round again, choice by choice, each at the time its recorded events give
 * (a timeout at its deadline at the earliest; time never runs backwards), and compare.
 * Returns {found: the first failure or null, decisions}; the tally gets what was checked.
 */
function derive(events, context, tally) {
  const { rules } = context;
  let state = null;
  let now = events[0].data.opened_at_ms;
  let decisions = 0;
  for (let i = 0; i < events.length;) {
    const choice = choiceAt(events, i, state);
    const where = show(events[i]);
    const failure = (id, message) => ({ found: { version: i + 1, id, message }, decisions });
    const fail = (id, message) => failure(id, `${where}: ${message}`);
    if (!choice) {
      return failure(blame(events[i], null, rules, state),
        `recorded ${where}, which no player's choice makes here and the rules do not derive`);
    }
    const what = `${CHOICE_NAMES[choice.kind]}${choice.player !== undefined ? ` by ${choice.player}` : ""}`;
    const timeout = choice.kind === "timeout";
    let start = timeout && state !== null && state.deadline !== null ? Math.max(now, state.deadline) : now;
    // A beacon round's record carries its own time (a round is refused before the beacon
    // publishes it, so the decision is taken there, not at the one before).
    const own = choice.kind === "beacon" ? events[i].data.recorded_at_ms : null;
    if (Number.isSafeInteger(own) && own >= now) start = own;
    let at = start;
    let made = decide(context, state, choice, start);
    if (made.events) {
      const t = recordedTime(made.events, events, i, rules);
      if (t !== null && t !== start) {
        if (t < now) {
          return fail("timeouts", `time runs backwards: the record puts ${what} at ${t} ms, after a decision at ${now} ms`);
        }
        at = t;
        made = decide(context, state, choice, at);
      }
    }
    if (made.refused) return fail(blame(events[i], null, rules, state), `the rules refuse ${what} here (${made.refused})`);
    if (made.mismatch) return fail("deal", made.mismatch);
    const differs = firstDifference(made, events, i, rules, state);
    if (differs) {
      merge(tally, made.notes, differs.k); // what matched before the difference was checked
      return { found: differs, decisions };
    }
    if (!made.events.length) {
      return fail(timeout ? "timeouts" : blame(events[i], null, rules, state), `the rules derive no event from ${what} at ${at} ms`);
    }
    merge(tally, made.notes, Infinity);
    decisions += 1;
    now = at;
    state = made.state;
    i += made.events.length;
  }
  return { found: null, decisions };
}

/**
 * Proof of play for one round's events ([{version, type, data}, ...], in order).
 * `cardAt(position)` is the round's shoe (shoe.js `shoeCards`, rebuilt from the revealed
 * seed); `material`, when given, is the client material that shoe is shuffled with: the deal
 * must be from that material (the seats' seeds locked at the close, with the beacon's element
 * at a shared table). Returns {ok, failures, checks: [{id, label, state, detail, text}],
 * decisions, events}. A failure reads "play: version N: ..." with N the first event that is
 * not the rules' own.
 */
export async function checkPlay(events, cardAt, { material = null } = {}) {
  const tally = newTally();
  let found = null;
  let rules = null;
  let name = "";
  let hash = "";
  let decisions = 0;
  try {
    found = shapeFailure(events);
    if (!found) ({ rules, name, hash, found } = await rulesOf(events));
    if (rules) {
      const seedHashes = new Map();
      const beaconHashes = new Map(); // a beacon signature -> SHA-256 of its bytes (hex)
      for (const e of events) {
        if (e.type === "ServerSeedRevealed") seedHashes.set(e.data.server_seed, await hashSeed(e.data.server_seed));
        const signature = e.type === "BeaconRecorded" ? e.data.signature : null;
        if (typeof signature === "string" && SIGNATURE_RE.test(signature)) {
          beaconHashes.set(signature, await sha256Hex(fromHex(signature)));
        }
      }
      const context = { rules, rulesHash: hash, cardAt, seedHashes, beaconHashes, shoeMaterial: material };
      ({ found, decisions } = derive(events, context, tally));
    }
  } catch (err) {
    found = { version: found?.version ?? 1, id: "stream", message: `malformed round data (${err.message})` };
  }
  const ok = found === null;
  return {
    ok,
    failures: ok ? [] : [`play: version ${found.version}: ${found.message}`],
    checks: describe(rules, tally, {
      done: ok, failedId: found?.id ?? null, stopAt: found?.version ?? 0, events: events.length, name, hash,
      beacon: Array.isArray(events) && isObject(events[0]?.data) && Object.hasOwn(events[0].data, "beacon"),
    }),
    decisions,
    events: events.length,
  };
}
