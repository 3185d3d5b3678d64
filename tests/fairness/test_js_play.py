"""The browser's proof of play (fairness/static/fairness/play.js) against the Python one.

play.js is a second, independent implementation of the rules (written from the rule
documents): it reads the players' choices out of a round's events, decides the round again
on the shoe rebuilt from the revealed seed, and requires the recorded stream to equal the
derived one. Here its verdict, run in Node 20 through tests/fairness/js/batch.mjs (hundreds
of rounds per node call), must be the Python verifier's (`fairness.verify.verify_round` with
the engine's proof of play) on thousands of real rounds of all four rule sets with random
choices (`tests.fairness.rewrites.play_round`, and `play_rich` here, whose choices seek the
rare paths: splits and re-splits, split aces, even money, insurance, 2 to 8 duellists at odd
stakes), untouched and forged by an operator who holds the signing key (cards re-dealt from
the true shoe, settlement recomputed, chain and receipt rebuilt and re-signed:
`rewrites.forge`), so that only the play can tell: test_proof_of_play's rewrites of what the
rules force (drop, repeat, move, insert a card, the dealer's card swapped for the next one)
and this module's (a changed choice, a changed payout, a moved clock, a flipped flag).
`census` names the rule paths a round takes; the coverage test requires every one of them.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import random
import re
from collections.abc import Callable
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from casino.engine import commands as c
from casino.engine.decider import evolve, step
from casino.engine.errors import DomainError
from casino.engine.events import (
    BetPlaced,
    DealerCardDealt,
    DealerPeeked,
    EvenMoneyTaken,
    Event,
    HandDoubled,
    HandSplit,
    InsuranceDeclined,
    InsuranceTaken,
    Participant,
    PlayerCardDealt,
    PlayerStood,
    RoundOpened,
    RoundOptions,
    RoundSettled,
    RoundVoided,
)
from casino.engine.rules import RULESETS
from fairness.chain import create_chain
from fairness.receipt import receipt_from_events
from fairness.sample import NOW_MS, bundle_line, stored_events
from fairness.shoe import FairShoe, first_cards
from fairness.verify import KeyRing, load_engine_replay, verify_round
from tests.fairness.rewrites import (
    KEY,
    REWRITES,
    RULESET_NAMES,
    card_indexes,
    forced,
    forge,
    play_round,
)
from tests.fairness.test_js import run_batch

CHECK = load_engine_replay()
assert CHECK is not None
ROUNDS_PER_CALL = 200  # rounds verified by one node process
CALLS = 12  # Hypothesis examples of the property: 2,400 generated rounds per run

Pick = Callable[[int], int]


def python_verdict(line: dict[str, Any]) -> list[str]:
    return verify_round(line, KeyRing(), replay_check=CHECK).failures


def picker(seed: int) -> Pick:
    rng = random.Random(seed)
    return lambda n: rng.randrange(n) if n > 1 else 0


# --- a second round player: choices biased towards the rare paths ----------------------------
# rewrites.play_round tries the choices in a random rotation, so a pair is split about one
# time in seven and even money is taken about once in 4,000 rounds; its duels are two or
# three seats at a 10 USDC stake. This one splits whenever the rules allow, takes even money
# when offered, insures any allowed amount, seats 2 to 8 duellists at odd stakes (the pot's
# remainder, every fee tier), and sometimes leaves betting to its deadline with no bet.

# A chain of its own with a fixed head: the same rounds on every run (rewrites.CHAIN is new in
# every process).
CHAIN = create_chain(64, head=hashlib.sha256(b"test_js_play").hexdigest())
# (pot - fee) / winners is whole for 2 winners at any stake on the chip grid; a third winner
# leaves a remainder at stakes of 10,000 x m with m not a multiple of 3.
DUEL_STAKES = (500_000, 700_000, 1_100_000, 1_230_000, 10_000_000, 500_000_000)

# Openings a one-box banked deal can be steered to by the choice of client seed (the cards
# are still the fair shoe's): (first player card, second, the dealer's up card, hole card).
OPENINGS: dict[str, Callable[[str, str, str, str], bool]] = {
    "pair": lambda a, b, up, hole: _points(a) == _points(b),
    "aces": lambda a, b, up, hole: a[0] == b[0] == "A",
    "blackjack against an ace": lambda a, b, up, hole: _natural(a, b) and up[0] == "A",
    "ace up": lambda a, b, up, hole: up[0] == "A",
    "dealer blackjack": lambda a, b, up, hole: _natural(up, hole),
}


def _points(card: str) -> int:
    return 1 if card[0] == "A" else 10 if card[0] in "TJQK" else int(card[0])


def _natural(a: str, b: str) -> bool:
    return {_points(a), _points(b)} == {1, 10}


def rigged_seed(ruleset: str, nonce: int, tag: str, opening: str) -> str:
    """A client seed whose shoe opens a one-box round of `ruleset` as `opening` says."""
    up, hole = (3, 1) if RULESETS[ruleset].hole_card_index == 0 else (1, 3)
    wanted = OPENINGS[opening]
    for k in range(20_000):
        seed = f"{tag}-{k}"
        cards = first_cards(CHAIN.seed(nonce), seed, nonce, 4)
        if wanted(cards[0], cards[2], cards[up], cards[hole]):
            return seed
    raise AssertionError(f"no {opening} opening for {tag}")


def play_rich(ruleset: str, seed: int) -> tuple[list[Event], FairShoe]:
    pick = picker(seed)
    rules = RULESETS[ruleset]
    nonce = 1 + pick(63)
    most = min(rules.max_seats, 8 if rules.kind == "duel" else 3)
    seats = rules.min_seats + pick(most - rules.min_seats + 1)
    client_seeds = [f"rich-{seed}-{i}" for i in range(seats)]
    one_box = False
    if rules.kind != "duel" and pick(3) == 0:  # a steered opening, on one box
        seats, one_box = 1, True
        steer = sorted(OPENINGS)[pick(len(OPENINGS))]
        client_seeds = [rigged_seed(ruleset, nonce, f"rich-{seed}", steer)]
    shoe = FairShoe(CHAIN.seed(nonce), "|".join(client_seeds), nonce)
    names = [f"p{i + 1}" for i in range(seats)]
    stake = DUEL_STAKES[pick(len(DUEL_STAKES))] if rules.kind == "duel" else 0
    seeds = zip(names, client_seeds, strict=True)
    opening = c.OpenRound(
        f"r{nonce}", "table-1", ruleset, "chain-1", nonce, CHAIN.seed(nonce - 1),
        tuple(Participant(n, cs, pick(10) != 0, pick(3) == 0) for n, cs in seeds),
        RoundOptions(1_000_000, 100_000_000, stake=stake),
    )  # fmt: skip
    now = NOW_MS + pick(10**9)
    events, state = step(None, opening, now, shoe)
    void_at = pick(25) if pick(8) == 0 else -1
    nobody = pick(25) == 0
    decisions = 0

    def act(command: Any) -> bool:
        nonlocal state, events
        try:
            more, state = step(state, command, now, shoe)
        except DomainError:
            return False
        events += more
        return True

    while not state.finished:
        decisions += 1
        deadline = state.deadline_ms
        if decisions == void_at:
            act(c.VoidRound("malfunction", f"test {seed}"))
            break
        betting = state.phase == "betting"
        if deadline is not None and (nobody if betting else pick(9) == 0):
            now = max(now, deadline) + pick(3) * 777  # a timeout, at or after the deadline
            act(c.Timeout())
            continue
        if deadline is not None:
            now += pick(max(1, min(5_000, deadline - now - 1)))
        if state.phase == "betting":
            seated = {b.player_id for b in state.boxes}
            waiting = [n for n in names if n not in seated]
            name = waiting[pick(len(waiting))]
            if len(waiting) > 1 or not seated or pick(6):
                boxes = 1 if one_box else 1 + pick(rules.max_boxes)
                amounts = [1_000_000 * (1 + pick(20)) * (pick(4) != 0) for _ in range(boxes)]
                amounts[pick(boxes)] = 1_000_000 * (1 + pick(20))
                act(c.PlaceBet(name, tuple(amounts)))
            else:
                now = max(now, deadline or now)  # the last seat sits out: betting closes late
                act(c.Timeout())
        elif state.phase == "insurance":
            box = next(b for b in state.boxes if b.insurance_status.endswith("offered"))
            half = box.bet // 2
            if rules.insurance != "half" and pick(3):
                half = 10_000 * (1 + pick(half // 10_000))  # any chip amount up to half
            answers: list[Any] = [c.TakeInsurance(box.player_id, box.box, half)] if pick(2) else []
            if pick(4):
                answers.insert(0, c.TakeEvenMoney(box.player_id, box.box))
            for answer in (*answers, c.DeclineInsurance(box.player_id, box.box)):
                if act(answer):
                    break
        elif state.phase == "dueling":
            open_boxes = [b for b in state.boxes if b.hands[0].status == "open"]
            box = open_boxes[pick(len(open_boxes))]
            total = box.hands[0].total
            act((c.Hit if total < 16 + pick(3) else c.Stand)(box.player_id))
        else:
            box = state.boxes[state.turn]
            hand = box.hands[state.turn_hand]
            moves: list[Any] = [c.Split(box.player_id)] if pick(10) else []
            moves += [c.Double(box.player_id)] if pick(3) == 0 else []
            moves.append(c.Hit(box.player_id, True) if hand.total < 12 + pick(9) else None)
            for move in (*moves, c.Stand(box.player_id)):
                if move is not None and act(move):
                    break
    if state.phase == "settled" and pick(15) == 0:
        now += 1
        act(c.VoidRound("found later", "test"))
    act(c.RevealSeed(CHAIN.seed(nonce)))
    if state.phase == "settled" and pick(30) == 0:
        now += 1_000
        act(c.VoidRound("found after the reveal", "test"))
    return events, shoe


# --- rewrites beyond tests/fairness/test_proof_of_play.py's (which move, drop, repeat and insert
# what the rules force): a changed choice, a changed payout, a moved clock, a flipped flag.


def _choice(events: list[Event], pick: Pick) -> list[Event]:
    """One player's choice made another: a stand for a hit and back, a double or a split
    taken back (its cards stay, as hits), insurance taken for declined and back, even money
    declined, a timeout for an answer and back, a bet of another amount."""
    out = list(events)
    at = [i for i, e in enumerate(events) if type(e) in _CHOICES and i > 0]
    if not at:
        return out
    i = at[pick(len(at))]
    e: Any = events[i]
    kind = type(e)
    if kind is PlayerStood:
        out[i] = (
            dataclasses.replace(e, auto=not e.auto)
            if pick(3) == 0
            else PlayerCardDealt(0, "", e.player_id, e.box, e.hand, False)
        )
    elif kind is PlayerCardDealt:
        out[i] = PlayerStood(e.player_id, e.box, e.hand, False)
    elif kind in (HandDoubled, HandSplit):
        del out[i]
    elif kind is InsuranceTaken:
        out[i] = InsuranceDeclined(e.player_id, e.box, bool(pick(2)))
    elif kind is InsuranceDeclined:
        out[i] = (
            dataclasses.replace(e, auto=not e.auto)
            if pick(2)
            else InsuranceTaken(e.player_id, e.box, 500_000 * (1 + pick(4)))
        )
    elif kind is EvenMoneyTaken:
        out[i] = InsuranceDeclined(e.player_id, e.box, False)
    elif kind is BetPlaced:
        out[i] = dataclasses.replace(e, amount=e.amount + 1_000_000 * (1 - 2 * pick(2)))
    return out


_CHOICES = (
    PlayerStood, PlayerCardDealt, HandDoubled, HandSplit, InsuranceTaken, InsuranceDeclined,
    EvenMoneyTaken, BetPlaced,
)  # fmt: skip

_TIMED = {
    "RoundOpened": ("opened_at_ms", "betting_deadline_ms"),
    "BettingClosed": ("closed_at_ms",),
    "InsuranceOffered": ("deadline_ms",),
    "TurnStarted": ("deadline_ms",),
    "DuelTimerStarted": ("deadline_ms",),
    "RoundSettled": ("settled_at_ms",),
    "RoundVoided": ("voided_at_ms",),
}


def _clock(events: list[Event], pick: Pick) -> list[Event]:
    """A recorded time or deadline moved (some moves keep the round valid: a settlement a
    little later, still before its deadline)."""
    out = list(events)
    at = [i for i, e in enumerate(events) if e.type in _TIMED]
    i = at[pick(len(at))]
    e: Any = events[i]
    name = _TIMED[e.type][pick(len(_TIMED[e.type]))]
    shift = (1, 999, 1_000, 29_999, 60_000, 120_000)[pick(6)] * (1 - 2 * pick(2))
    out[i] = dataclasses.replace(e, **{name: getattr(e, name) + shift})
    return out


def _flag(events: list[Event], pick: Pick) -> list[Event]:
    """A true/false flipped: a card's hidden or face-down flag, the peek's verdict, a seat's
    Offer Insurance or Safety Net option (the safety net changes nothing a confirmed hit
    does), a void's was_settled."""
    out = list(events)
    i = pick(len(events))
    e: Any = events[i]
    if type(e) is PlayerCardDealt:
        out[i] = dataclasses.replace(e, hidden=not e.hidden)
    elif type(e) is DealerCardDealt:
        out[i] = dataclasses.replace(e, hole=not e.hole)
    elif type(e) is DealerPeeked:
        out[i] = dataclasses.replace(e, blackjack=not e.blackjack)
    elif type(e) is RoundVoided:
        out[i] = dataclasses.replace(e, was_settled=not e.was_settled)
    else:
        opened: Any = events[0]
        seats = list(opened.participants)
        k = pick(len(seats))
        seat: Participant = seats[k]
        seats[k] = (
            dataclasses.replace(seat, offer_insurance=not seat.offer_insurance)
            if pick(2)
            else dataclasses.replace(seat, safety_net=not seat.safety_net)
        )
        out[0] = dataclasses.replace(opened, participants=tuple(seats))
    return out


def _payout(data: dict[str, Any], pick: Pick) -> None:
    """In a settlement (or a void), one amount or word changed, in place."""
    if "hands" in data:
        results = [r for r in (*data["hands"], *data["insurance"])]
        target = pick(len(results) + 2)
        if target == len(results):
            data["fee"] += 1 + pick(10_000)
            return
        if target > len(results):
            data["dealer_total"] += 1 - 2 * pick(2)
            return
        result = results[target]
        field = ("gross_return", "stake", "outcome", "total")[pick(4) if "total" in result else 0]
        if field == "outcome":
            outcomes = ["win", "lose", "push", "blackjack", "bust", "even_money", "split"]
            outcomes.remove(result["outcome"])
            result["outcome"] = outcomes[pick(len(outcomes))]
        else:
            result[field] += (1, 10_000, 500_000, 5_000_000)[pick(4)] * (1 - 2 * pick(2))
    else:
        amounts = [*data["refunds"], *data["reversed_payouts"]]
        if amounts and pick(3):
            amounts[pick(len(amounts))]["amount"] += 10_000 * (1 - 2 * pick(2))
        else:
            data["reversed_fee"] += 1


def resign(line: dict[str, Any], pairs: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """The line for these (type, data) events as the forger writes it: chain, receipt and
    signature rebuilt, nothing re-dealt or re-settled."""
    stream = line["receipt"]["stream"]
    stored = stored_events(stream, pairs)
    return bundle_line(receipt_from_events(stream, stored), stored, KEY)


TAMPERS = ("none", "none", "none", *range(len(REWRITES)), "choice", "payout", "clock", "flag")


def make_line(spec: tuple[str, int, int, int, Any, Any, int]) -> dict[str, Any] | None:
    """A real round as `spec` says, forged by `spec`'s rewrite (None: nothing to sign)."""
    ruleset, nonce, seed, players, void_at, tamper, tamper_seed = spec
    rules = RULESETS[ruleset]
    seats = min(max(players, rules.min_seats), rules.max_seats)
    if void_at == "rich":
        events, shoe = play_rich(ruleset, seed)
    else:
        events, shoe = play_round(
            ruleset, nonce, picker(seed), players=seats, void_at=void_at, tag=f"j{seed}"
        )
    pick = picker(tamper_seed)
    try:
        if tamper == "none":
            return forge(events, shoe)
        if tamper == "payout":
            line = forge(events, shoe)
            pairs = [(e["type"], json.loads(json.dumps(e["data"]))) for e in line["events"]]
            ends = [data for t, data in pairs if t in ("RoundSettled", "RoundVoided")]
            _payout(ends[pick(len(ends))], pick)
            return resign(line, pairs)
        if tamper == "choice":
            return forge(_choice(events, pick), shoe)
        if tamper == "clock":
            return forge(_clock(events, pick), shoe)
        if tamper == "flag":
            return forge(_flag(events, pick), shoe)
        rules_forced = forced(events)
        if not rules_forced:
            return forge(events, shoe)
        return forge(REWRITES[tamper](events, rules_forced, pick), shoe)
    except (KeyError, StopIteration, IndexError):  # no receipt can be built: nothing to sign
        return None


VOIDS = (None,) * 8 + (1, 2, 3, -1) + ("rich",) * 12  # play_round's void_at, or play_rich


def batch_specs(seed: int) -> list[tuple[str, int, int, int, Any, Any, int]]:
    """ROUNDS_PER_CALL specs for make_line, drawn from `seed`: (rule set, nonce, choices seed,
    seats, play_round's void_at or "rich" for play_rich, rewrite, rewrite seed)."""
    rng = random.Random(seed)
    return [
        (
            rng.choice(RULESET_NAMES),
            rng.randint(1, 63),
            rng.randrange(2**32),
            rng.randint(1, 3),
            rng.choice(VOIDS),
            rng.choice(TAMPERS),
            rng.randrange(2**32),
        )
        for _ in range(ROUNDS_PER_CALL)
    ]


_VERSION = re.compile(r"play: version (\d+): ")


def play_version(failures: list[str]) -> int | None:
    """The version a proof-of-play failure names first (None: none names one)."""
    for failure in failures:
        found = _VERSION.match(failure)
        if found:
            return int(found.group(1))
    return None


def compare(lines: list[dict[str, Any]], labels: list[Any] | None = None) -> dict[str, int]:
    """Run the lines through both verifiers; every verdict and the version the first play
    failure names must agree. Returns counts of what was compared. `labels`: what made each
    line (shown when they disagree)."""
    js = run_batch({"bundles": lines})["bundles"]
    counts = {"rounds": len(lines), "passed": 0, "failed_play": 0, "failed_other": 0}
    for n, (line, found) in enumerate(zip(lines, js, strict=True)):
        python = python_verdict(line)
        label = labels[n] if labels else line["receipt"]["ruleset"]
        where = (label, python[:1], found["failures"][:1])
        assert found["ok"] == (not python), where
        assert found["play"]["ran"] == (not python or python[0].startswith("play: ")), where
        if not python:
            counts["passed"] += 1
            assert found["play"]["ok"] and found["play"]["states"]["stream"] == "checked"
        elif python[0].startswith("play: "):
            counts["failed_play"] += 1
            assert len(python) == 1 and len(found["failures"]) == 1, where
            version = play_version(python)
            if version is not None:
                assert play_version(found["failures"]) == version, where
            assert "failed" in found["play"]["states"].values(), where
        else:
            counts["failed_other"] += 1
            assert found["failures"][0] == python[0], where
    return counts


# An example is one node call over a batch of ROUNDS_PER_CALL rounds drawn from one seed (each
# batch mixes every rule set, generator and rewrite); no shrinking: a disagreement names its
# round's spec, and make_line(spec) rebuilds the line (in the same process: play_round's
# rounds are on rewrites.CHAIN).
@settings(
    max_examples=CALLS, deadline=None, phases=(Phase.explicit, Phase.reuse, Phase.generate),
    suppress_health_check=[HealthCheck.too_slow],
)  # fmt: skip
@given(st.integers(0, 2**64 - 1))
def test_the_page_and_the_python_verifier_reach_the_same_verdict_on_every_round(
    seed: int,
) -> None:
    made = [(spec, make_line(spec)) for spec in batch_specs(seed)]
    kept = [(spec, line) for spec, line in made if line is not None]
    counts = compare([line for _, line in kept], [spec for spec, _ in kept])
    assert counts["passed"] and counts["failed_play"], counts


def census(events: list[Any]) -> set[str]:
    """The rule paths one round goes through, by name."""
    opened = events[0]
    rules = RULESETS[opened.ruleset]
    states: list[Any] = [None]
    for event in events:
        states.append(evolve(states[-1], event))
    found: set[str] = set()
    settled = revealed = False
    for i, e in enumerate(events):
        kind = type(e)
        before, after = states[i], states[i + 1]
        found.add(e.type)
        if kind in (PlayerStood, InsuranceDeclined) and e.auto:
            found.add(f"{e.type} at the deadline")
        if kind is HandSplit:
            index = before.box_index(e.player_id, e.box)
            found.add("split aces" if after.boxes[index].hands[e.hand].split_aces else "split")
            if before.boxes[index].hands[e.hand].split:
                found.add("re-split")
        if kind is PlayerCardDealt and before.phase in ("playing", "dueling"):
            hand = after.boxes[after.box_index(e.player_id, e.box)].hands[e.hand]
            if hand.total == 21 and len(hand.cards) > 2:
                found.add("21 by a card")
        if kind is DealerPeeked:
            found.add("dealer blackjack" if e.blackjack else "peek, no blackjack")
        if e.type == "BettingClosed" and e.closed_at_ms >= opened.betting_deadline_ms:
            found.add("betting closed at its deadline")
        if kind is DealerCardDealt and before.revealed:
            found.add("dealer draws")
        if kind is RoundSettled:
            settled = True
            found |= _settled(rules, e)
        if kind is RoundVoided:
            found.add(
                "no bets" if e.reason == "no_bets"
                else "void after the seed reveal" if revealed
                else "void after settlement" if settled else "void in play"
            )  # fmt: skip
        revealed = revealed or e.type == "ServerSeedRevealed"
    if rules.kind == "duel" and any(
        len(h.cards) == 2 and h.total == 21 for b in states[-1].boxes for h in b.hands
    ):
        found.add("duel blackjack")
    return {f"{opened.ruleset}: {name}" for name in found}


def _settled(rules: Any, e: Any) -> set[str]:
    found = set()
    for h in e.hands:
        found.add(f"outcome {h.outcome}")
        tie = h.total == e.dealer_total <= 21 and h.outcome in ("lose", "push")
        if rules.tie_loses_totals and tie:
            found.add(f"equal {h.total}: {h.outcome}")
        if h.outcome == "blackjack" and e.dealer_total == 21:
            found.add("blackjack against a dealer's 21")
    if rules.kind == "banked" and e.dealer_total > 21:
        found.add("dealer bust")
    if any(r.gross_return for r in e.insurance):
        found.add("insurance won")
    if rules.kind == "duel":
        found.add(f"fee for {len(e.hands)} players")
        if len({h.gross_return for h in e.hands if h.gross_return}) > 1:
            found.add("pot remainder to the first winners")
        if all(h.total > 21 for h in e.hands):
            found.add("everyone bust")
    return found


_COMMON = (
    "RoundOpened", "PlayerCardDealt", "PlayerStood", "PlayerStood at the deadline",
    "RoundSettled", "ServerSeedRevealed", "void in play", "void after settlement",
    "void after the seed reveal", "21 by a card", "outcome lose",
)  # fmt: skip
_BANKED = (
    *_COMMON, "no bets", "dealer blackjack",
    "peek, no blackjack", "InsuranceOffered", "InsuranceTaken", "InsuranceDeclined",
    "InsuranceDeclined at the deadline", "insurance won", "HandDoubled", "split", "split aces",
    "TurnStarted", "dealer draws", "dealer bust", "outcome win", "outcome push",
    "outcome blackjack", "outcome bust",
)  # fmt: skip
REACHED = {
    "classic": (*_BANKED, "re-split", "EvenMoneyTaken", "outcome even_money"),
    "atlantic_city": _BANKED,
    "duel_classic": (
        *_BANKED,
        "re-split",
        "betting closed at its deadline",
        "blackjack against a dealer's 21",
        *(f"equal {t}: lose" for t in (17, 18, 19)),
        *(f"equal {t}: push" for t in (20, 21)),
    ),
    "duel": (
        *_COMMON,
        "CardsRevealed",
        "outcome win",
        "outcome split",
        "everyone bust",
        "pot remainder to the first winners",
        "duel blackjack",
        *(f"fee for {n} players" for n in range(2, 9)),
    ),
}
COVERAGE_SEEDS = range(600)  # per rule set: 2,400 rounds


def test_the_generated_rounds_reach_every_rule_path_and_both_verifiers_pass_them() -> None:
    """The rounds the property draws reach every path of the rules (listed in REACHED), and
    each of these untouched rounds passes the page's proof of play and the Python one."""
    found: set[str] = set()
    lines = []
    for ruleset in RULESET_NAMES:
        for seed in COVERAGE_SEEDS:
            events, shoe = play_rich(ruleset, seed)
            found |= census(events)
            lines.append(forge(events, shoe))
    wanted = {f"{ruleset}: {name}" for ruleset, names in REACHED.items() for name in names}
    assert sorted(wanted - found) == []
    counts = compare(lines)
    assert counts["passed"] == len(lines), counts


def test_the_pages_rule_sets_are_the_engines() -> None:
    """play.js holds the four rule sets in the engine's field names: each equals the engine's
    field for field, and hashes (in the page's own code) to the engine's version hash."""
    tables = run_batch({"rulesets": True})["rulesets"]
    assert sorted(tables) == sorted(RULESETS)
    for name, rules in RULESETS.items():
        as_json = json.loads(json.dumps(dataclasses.asdict(rules)))
        assert tables[name]["rules"] == as_json
        assert tables[name]["hash"] == rules.version_hash


def test_a_round_under_an_unknown_rule_set_hash_is_refused() -> None:
    events, shoe = play_round("classic", 5, picker(5))
    opened: Any = events[0]
    for changed in (
        dataclasses.replace(opened, ruleset_hash="0" * 64),
        dataclasses.replace(opened, ruleset="atlantic_city"),
        dataclasses.replace(opened, ruleset="baccarat"),
    ):
        line = forge([changed, *events[1:]], shoe)
        python = python_verdict(line)
        found = run_batch({"bundles": [line]})["bundles"][0]
        assert python[0].startswith("play: version 1: ") and not found["ok"]
        assert found["failures"][0].startswith("play: version 1: ")
        assert found["play"]["states"]["rules"] == "failed"
        assert set(found["play"]["states"].values()) == {"failed", "not checked"}


def find_round(ruleset: str, wanted: Callable[[list[Any]], bool], players: int = 1) -> Any:
    for seed in range(20_000):
        events, shoe = play_round(
            ruleset, 1 + seed % 63, picker(seed), players=players, tag=f"f{seed}"
        )
        if wanted(events):
            return events, shoe
    raise AssertionError(f"no such {ruleset} round")


def checks_of(line: dict[str, Any]) -> dict[str, str]:
    found = run_batch({"bundles": [line]})["bundles"][0]
    return {text.split(": ")[0]: text for text in found["play"]["checks"]}


def test_the_page_says_what_it_checked_in_a_classic_round() -> None:
    def dealer_drew_and_split(events: list[Event]) -> bool:
        types = [e.type for e in events]
        return (
            "HandSplit" in types and "DealerCardDealt" in types[types.index("HoleCardRevealed") :]
        )

    events, shoe = find_round("classic", dealer_drew_and_split)
    settled: Any = next(e for e in events if type(e) is RoundSettled)
    shown = checks_of(forge(events, shoe))
    dealer = shown["dealer stands on soft 17 and draws below 17 (hole card turned first)"]
    assert re.fullmatch(
        r".*: checked \(hole card turned, \d+ cards? drawn, stood on (1[789]|2[01]|2[2-6])\)",
        dealer,
    ), dealer
    assert shown["outcomes and payouts"].startswith(
        f"outcomes and payouts: checked ({len(settled.hands)} hands checked"
    )
    assert (
        ": checked ("
        in shown["splits and re-splits (the new hand's index), split aces one card each"]
    )
    stream = "every recorded event equals the derived one, field by field"
    assert shown[stream] == f"{stream}: checked (all {len(events)} events)"


def test_the_page_says_what_it_checked_in_a_duel() -> None:
    events, shoe = find_round("duel", lambda e: True, players=2)
    settled: Any = next(e for e in events if type(e) is RoundSettled)
    shown = checks_of(forge(events, shoe))
    fee = settled.fee / 1_000_000
    winners = sum(1 for h in settled.hands if h.gross_return)
    assert shown["duel winners, pot split and fee"] == (
        f"duel winners, pot split and fee: checked (pot 20.00 USDC, fee 3% for 2 players = "
        f"{fee:.2f} USDC, {winners} winner{'s' if winners > 1 else ''})"
    )
    assert "dealer stands on soft 17 and draws below 17 (hole card turned first)" not in shown


def test_the_page_names_the_first_difference_and_what_it_did_not_check() -> None:
    """A dealer who draws on a hard 17: the page fails the dealer's check at that version,
    counts what it checked before, and says the rest was not checked."""

    def dealer_stood_on_hard_17(events: list[Event]) -> bool:
        settled = next((e for e in events if type(e) is RoundSettled), None)
        return (
            settled is not None
            and settled.dealer_total == 17
            and events[-3].type == "DealerCardDealt"
            and not any(c in ("AS", "AH", "AD", "AC") for c in _dealer_cards(events))
        )

    events, shoe = find_round("classic", dealer_stood_on_hard_17)
    at = next(i for i, e in enumerate(events) if type(e) is RoundSettled)
    line = forge([*events[:at], DealerCardDealt(0, "", False), *events[at:]], shoe)
    python = python_verdict(line)
    found = run_batch({"bundles": [line]})["bundles"][0]
    assert play_version(python) == play_version(found["failures"]) == at + 1
    assert found["failures"][0].startswith(f"play: version {at + 1}: recorded DealerCardDealt {{")
    states = found["play"]["states"]
    assert states["dealer"] == "failed" and states["stream"] == "not checked"
    assert states["deal"] == states["turns"] == "checked"
    assert states["payouts"] == states["seed"] == "not checked"
    shown = {text.split(": ")[0]: text for text in found["play"]["checks"]}
    assert shown["each hand's total"] == (
        f"each hand's total: not checked (the play stops at the first difference, version {at + 1})"
    )


def _dealer_cards(events: list[Event]) -> list[str]:
    return [e.card for e in events if type(e) is DealerCardDealt]


def test_a_receipt_alone_says_the_play_was_not_checked() -> None:
    events, shoe = play_round("classic", 7, picker(7))
    line = forge(events, shoe)
    signed = {k: line[k] for k in ("receipt", "signature", "key_id", "public_key")}
    found = run_batch({"receipts": [signed]})["receipts"][0]
    assert found["ok"] and found["play"] == (
        "not run: a receipt alone has no events; paste the whole bundle line to check the play"
    )
    assert card_indexes(events)  # the round dealt cards: there was play to check
    assert isinstance(shoe, FairShoe) and isinstance(events[0], RoundOpened)
