"""Proof of play: rounds rewritten by an operator who holds the signing key fail, by name.

Each rewrite starts from a real round (played through the rule engine on the fair shoe with
random choices, `tests.fairness.rewrites.play_round`) and is forged as an operator would:
every card re-dealt from the true shoe, the settlement recomputed by the engine's own code,
the hash chain recomputed and the receipt rebuilt and re-signed (`rewrites.forge`). The
seed, card, chain and signature checks all pass on such a line; only deciding the round
anew from its players' choices can tell, and the failure names the rule broken.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from casino.engine.decider import evolve
from casino.engine.events import (
    DealerCardDealt,
    Event,
    HandSplit,
    HoleCardRevealed,
    PlayerCardDealt,
    PlayerStood,
    RoundSettled,
    TurnStarted,
)
from fairness.shoe import FairShoe
from fairness.verify import KeyRing, load_engine_replay, verify_round
from tests.fairness.rewrites import (
    REWRITES,
    RULESET_NAMES,
    Rewrite,
    card_indexes,
    forced,
    forge,
    play_round,
    rounds,
)

CHECK = load_engine_replay()
assert CHECK is not None


def verdict(line: dict[str, Any]) -> list[str]:
    return verify_round(line, KeyRing(), replay_check=CHECK).failures


def without_play(line: dict[str, Any]) -> list[str]:
    """Every check but the proof of play: what a shoe-only verifier sees."""
    return verify_round(line, KeyRing()).failures


def find(
    ruleset: str, wanted: Callable[[list[Event], FairShoe], int | None], tries: int = 20_000
) -> tuple[list[Event], FairShoe, int]:
    """The first real round (over shoes and choices) in which `wanted` finds an index."""
    for attempt in range(tries):
        rng = random.Random(attempt)
        events, shoe = play_round(
            ruleset, 1 + attempt % 63, lambda n, r=rng: r.randrange(n) if n > 1 else 0,
            tag=f"x{attempt}",
        )  # fmt: skip
        index = wanted(events, shoe)
        if index is not None:
            return events, shoe, index
    raise AssertionError(f"no such {ruleset} round in {tries} tries")


def states(events: list[Event]) -> list[Any]:
    """states[i] is the state after events[:i]."""
    out: list[Any] = [None]
    for event in events:
        out.append(evolve(out[-1], event))
    return out


def assert_fails(line: dict[str, Any], version: int, recorded: str, rule: str) -> None:
    assert without_play(line) == []  # consistent on its face: seed, cards, chain, signature
    found = verdict(line)
    assert len(found) == 1, found
    assert found[0].startswith(f"play: version {version}: recorded {recorded} {{"), found
    assert found[0].endswith(rule), found


def test_untouched_real_rounds_of_every_rule_set_pass() -> None:
    for ruleset in RULESET_NAMES:
        for attempt in range(40):
            rng = random.Random(attempt)
            void = (None, None, 2, -1)[attempt % 4]
            events, shoe = play_round(
                ruleset, 1 + attempt, lambda n, r=rng: r.randrange(n) if n > 1 else 0,
                void_at=void,
            )  # fmt: skip
            line = forge(events, shoe)
            assert [e["type"] for e in line["events"]] == [e.type for e in events]
            report = verify_round(line, KeyRing(), replay_check=CHECK)
            assert report.ok and report.replayed, (ruleset, report.failures)


def test_the_dealer_drawing_on_hard_17_to_beat_a_20_fails() -> None:
    """The house knows the shoe: one more card on a hard 17, the true next card, turns the
    player's winning 20 into a loss. The forged settlement is the engine's own for it."""

    def dealer_hard_17_next_4(events: list[Event], shoe: FairShoe) -> int | None:
        settled = events[-2] if events[-1].type == "ServerSeedRevealed" else None
        if type(settled) is not RoundSettled or len(settled.hands) != 1:
            return None
        before = states(events)[len(events) - 2]
        dealer, hand = before.dealer, settled.hands[0]
        if dealer.hard != 17 or dealer.has_ace or hand.total != 20 or hand.outcome != "win":
            return None
        return len(events) - 2 if shoe.card_at(before.next_position)[0] == "4" else None

    events, shoe, at = find("classic", dealer_hard_17_next_4)
    extra = DealerCardDealt(0, "", False)  # re-dealt by the forger: the shoe's next card
    forged = forge([*events[:at], extra, *events[at:]], shoe)
    settled = next(e for e in forged["events"] if e["type"] == "RoundSettled")["data"]
    assert settled["dealer_total"] == 21 and settled["hands"][0]["outcome"] == "lose"
    assert_fails(forged, at + 1, "DealerCardDealt", "(the dealer stands on 17)")


def test_a_card_dealt_to_a_bust_hand_fails() -> None:
    def bust_by_a_hit(events: list[Event], shoe: FairShoe) -> int | None:
        after = states(events)
        for i in card_indexes(events, PlayerCardDealt):
            e = events[i]
            box = after[i + 1].box_index(e.player_id, e.box)  # type: ignore[union-attr]
            if after[i + 1].boxes[box].hands[e.hand].status == "bust":  # type: ignore[union-attr]
                return i + 1
        return None

    events, shoe, at = find("classic", bust_by_a_hit)
    bust: Any = events[at - 1]
    extra = dataclasses.replace(bust)  # the same hand again, re-dealt the next card
    forged = forge([*events[:at], extra, *events[at:]], shoe)
    total = states(events)[at].boxes[0].hands[bust.hand].hard
    assert_fails(
        forged, at + 1, "PlayerCardDealt", f"(the hand is bust at {total}: it takes no more cards)"
    )


def test_a_missing_turn_started_fails() -> None:
    def a_turn(events: list[Event], shoe: FairShoe) -> int | None:
        return next((i for i, e in enumerate(events) if type(e) is TurnStarted), None)

    events, shoe, at = find("classic", a_turn)
    turn: Any = events[at]
    forged = forge([*events[:at], *events[at + 1 :]], shoe)
    rule = f"(the turn of {turn.player_id} box {turn.box} hand {turn.hand} starts here)"
    assert_fails(forged, at + 1, events[at + 1].type, rule)


def test_a_missing_stand_fails() -> None:
    def a_stand_before_the_dealer(events: list[Event], shoe: FairShoe) -> int | None:
        for i, e in enumerate(events[:-1]):
            if type(e) is PlayerStood and not e.auto and type(events[i + 1]) is HoleCardRevealed:
                return i
        return None

    events, shoe, at = find("classic", a_stand_before_the_dealer)
    stood: Any = events[at]
    found = verdict(forge([*events[:at], *events[at + 1 :]], shoe))
    assert len(found) == 1 and found[0].startswith(
        f"play: version {at + 1}: recorded HoleCardRevealed {{"
    ), found
    assert found[0].endswith(
        f"({stood.player_id} box {stood.box} hand {stood.hand} is still to act: nothing "
        "happens until that hand stands, busts or times out)"
    ), found


def test_the_dealer_drawing_before_the_hole_card_is_turned_fails() -> None:
    def a_dealer_draw(events: list[Event], shoe: FairShoe) -> int | None:
        for i, e in enumerate(events[:-1]):
            if type(e) is HoleCardRevealed and type(events[i + 1]) is DealerCardDealt:
                return i
        return None

    events, shoe, at = find("classic", a_dealer_draw)
    swapped = [*events[:at], events[at + 1], events[at], *events[at + 2 :]]
    assert_fails(
        forge(swapped, shoe),
        at + 1,
        "DealerCardDealt",
        "(the dealer draws only after the hole card is turned over)",
    )


def test_a_split_ace_given_a_second_card_fails() -> None:
    def split_aces(events: list[Event], shoe: FairShoe) -> int | None:
        for i, e in enumerate(events):
            if type(e) is HandSplit and events[i - 1].type == "TurnStarted":
                hand = states(events)[i + 1].boxes[0].hands[e.hand]
                if hand.split_aces:
                    return i + 3  # after the split and each ace's one card
        return None

    events, shoe, at = find("classic", split_aces, tries=60_000)
    card: Any = events[at - 1]
    forged = forge([*events[:at], dataclasses.replace(card), *events[at:]], shoe)
    found = verdict(forged)
    assert len(found) == 1 and found[0].startswith(f"play: version {at + 1}: recorded "), found
    assert "it takes no more cards)" in found[0], found


@settings(
    max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)  # fmt: skip
@given(rounds(), st.sampled_from(REWRITES), st.lists(st.integers(0, 2**32 - 1), min_size=4))
def test_every_rewrite_of_what_the_rules_force_fails(
    played: tuple[list[Event], FairShoe], rewrite: Rewrite, numbers: list[int]
) -> None:
    events, shoe = played
    drawn = iter(numbers * 8)

    def pick(n: int) -> int:
        return next(drawn) % n if n > 1 else 0

    rules = forced(events)
    if not rules:  # a round voided before anything was derived
        return
    rewritten = rewrite(events, rules, pick)
    original = forge(events, shoe)
    assert verdict(original) == []
    try:
        forged = forge(rewritten, shoe)
    except (KeyError, StopIteration, IndexError):  # no receipt can be built: nothing to sign
        return
    if forged["events"] == original["events"]:
        assert verdict(forged) == []
    else:
        assert verdict(forged), [e["type"] for e in forged["events"]]
