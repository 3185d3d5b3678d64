// node --test tests/fairness/js/ : the browser's proof of play (play.js) on hand-written rounds,
// dealt from a stacked shoe. (tests/fairness/test_js_play.py holds its verdicts equal to the
// Python verifier's on thousands of generated rounds.)
import assert from "node:assert/strict";
import { test } from "node:test";

import { RULESETS, checkPlay, rulesetHash } from "../../../fairness/static/fairness/play.js";
import { hashSeed } from "../../../fairness/static/fairness/shoe.js";

const SEED = "ab".repeat(32);
const T = 1_767_225_600_000;
const STAKE = 10_000_000;
const seat = { player_id: "p1", box: 0 };

/** The settlement of the player's 19 against the dealer's `total`. */
const result = (total, outcome, gross) => ({
  hands: [{ ...seat, hand: 0, outcome, stake: STAKE, gross_return: gross, total: 19 }],
  insurance: [], fee: 0, dealer_total: total, settled_at_ms: T + 5_000,
});

/** A classic round: the player has T 9 (19), the dealer's hole card an ace and a 6 up (a soft
 * 17); the player stands. `middle` replaces what happens after the stand. */
async function classicRound(middle = null) {
  const opened = {
    round_id: "r1", table_id: "t1", ruleset: "classic", ruleset_hash: await rulesetHash(RULESETS.classic),
    chain_id: "c1", nonce: 1, commitment: await hashSeed(SEED),
    participants: [{ player_id: "p1", client_seed: "a", offer_insurance: true, safety_net: false }],
    options: { min_bet: 1_000_000, max_bet: 100_000_000, chip_unit: 10_000, stake: 0 },
    opened_at_ms: T, betting_deadline_ms: T + 120_000,
  };
  const card = (position, code) => ({ position, card: code, ...seat, hand: 0, hidden: false });
  const rest = middle ?? [
    ["HoleCardRevealed", { position: 1, card: "AS" }],
    ["RoundSettled", result(17, "win", 2 * STAKE)],
  ];
  const events = [
    ["RoundOpened", opened],
    ["BetPlaced", { ...seat, amount: STAKE }],
    ["BettingClosed", { client_material: "a", closed_at_ms: T }],
    ["PlayerCardDealt", card(0, "TS")],
    ["DealerCardDealt", { position: 1, card: "AS", hole: true }],
    ["PlayerCardDealt", card(2, "9H")],
    ["DealerCardDealt", { position: 3, card: "6D", hole: false }],
    ["TurnStarted", { ...seat, hand: 0, deadline_ms: T + 60_000 }],
    ["PlayerStood", { ...seat, hand: 0, auto: false }],
    ...rest,
    ["ServerSeedRevealed", { server_seed: SEED }],
  ];
  return events.map(([type, data], i) => ({ version: i + 1, type, data }));
}

const shoe = ["TS", "AS", "9H", "6D", "5C", "KD"];
const cardAt = (position) => shoe[position];
const state = (play, id) => play.checks.find((c) => c.id === id);

test("play: the dealer stands on a soft 17 and the 19 is paid 1:1", async () => {
  const events = await classicRound();
  const play = await checkPlay(events, cardAt);
  assert.deepEqual(play.failures, []);
  assert.equal(state(play, "dealer").text,
    "dealer stands on soft 17 and draws below 17 (hole card turned first): checked (hole card turned, 0 cards drawn, stood on 17)");
  assert.equal(state(play, "payouts").text, "outcomes and payouts: checked (1 hand checked)");
  assert.equal(state(play, "peek").detail, "no peek with 6 up");
  assert.equal(state(play, "splits").state, "none in this round");
});

test("play: a dealer who draws on a soft 17 is named at that card", async () => {
  const events = await classicRound([
    ["HoleCardRevealed", { position: 1, card: "AS" }],
    ["DealerCardDealt", { position: 4, card: "5C", hole: false }],
    ["RoundSettled", result(12, "win", 2 * STAKE)],
  ]);
  const play = await checkPlay(events, cardAt);
  assert.equal(play.ok, false);
  assert.match(play.failures[0], /^play: version 11: recorded DealerCardDealt \{"card":"5C","hole":false,"position":4\}, the rules derive RoundSettled /);
  assert.equal(state(play, "dealer").state, "failed");
  assert.equal(state(play, "turns").state, "checked");
  assert.equal(state(play, "stream").state, "not checked");
});

test("play: a payout that is not the rules' is named field by field", async () => {
  const events = await classicRound([
    ["HoleCardRevealed", { position: 1, card: "AS" }],
    ["RoundSettled", result(17, "win", 2 * STAKE - 1)],
  ]);
  const play = await checkPlay(events, cardAt);
  assert.match(play.failures[0], /^play: version 11: .*\(hands\[0\]\.gross_return: recorded 19999999, derived 20000000\)$/);
  assert.equal(state(play, "payouts").state, "failed");
  assert.equal(state(play, "dealer").state, "checked");
});

test("play: a stand at its turn's deadline is refused", async () => {
  const events = await classicRound([
    ["HoleCardRevealed", { position: 1, card: "AS" }],
    ["RoundSettled", { ...result(17, "win", 2 * STAKE), settled_at_ms: T + 60_000 }],
  ]);
  const play = await checkPlay(events, cardAt);
  assert.match(play.failures[0], /^play: version 9: PlayerStood .*: the rules refuse a stand by p1 here \(its deadline/);
});

test("play: a round under rules this page does not know is refused", async () => {
  const events = await classicRound();
  events[0].data.ruleset_hash = "0".repeat(64);
  const play = await checkPlay(events, cardAt);
  assert.match(play.failures[0], /^play: version 1: ruleset_hash 0{64} is not the hash of the classic rules this page knows/);
  assert.deepEqual(new Set(play.checks.map((c) => c.state)), new Set(["failed", "not checked"]));
});

test("play: an event with a field the engine's has not is refused", async () => {
  const events = await classicRound();
  events[8].data.confirm = true;
  const play = await checkPlay(events, cardAt);
  assert.match(play.failures[0], /^play: version 9: the record is not the engine's event: PlayerStood has a field the engine's event has not: confirm$/);
});
