"""Folding bets in any order gives the reference fold's boxes: `evolve`'s bet handler appends a
box that comes after the others in (seat, box) order without sorting, and sorts otherwise."""

from __future__ import annotations

from itertools import permutations

from casino.engine.decider import evolve
from casino.engine.events import BetPlaced, RoundOpened
from casino.engine.rules import RULESETS

from .helpers import COMMITMENT, T0, options_for, participants
from .reference import evolve as reference_evolve


def opened(ruleset: str, players: int) -> RoundOpened:
    rules = RULESETS[ruleset]
    return RoundOpened(
        "round-1", "table-1", ruleset, rules.version_hash, "chain-1", 7, COMMITMENT,
        participants(players), options_for(ruleset), T0, T0 + rules.betting_timeout_ms,
    )  # fmt: skip


def test_bets_in_every_order_fold_to_the_reference_boxes() -> None:
    # Seats p1..p3, each betting one box; and the same boxes repeated (an equal key).
    bets = [BetPlaced(f"p{i}", 0, 10_000 * i) for i in (1, 2, 3)]
    cases = 0
    for order in permutations([*bets, BetPlaced("p2", 0, 20_000)]):
        start = opened("duel_classic", 3)
        state = reference = evolve(None, start)
        for bet in order:
            state = evolve(state, bet)
            reference = reference_evolve.evolve(reference, bet)
            assert state == reference
            assert [(b.player_id, b.box, b.bet) for b in state.boxes] == [
                (b.player_id, b.box, b.bet) for b in reference.boxes
            ]
        cases += 1
    assert cases == 24


def test_boxes_of_one_seat_in_every_order_fold_to_the_reference_boxes() -> None:
    bets = [BetPlaced("p1", box, 10_000 * (box + 1)) for box in (0, 1, 2)]
    for order in permutations(bets):
        state = reference = evolve(None, opened("atlantic_city", 1))
        for bet in order:
            state = evolve(state, bet)
            reference = reference_evolve.evolve(reference, bet)
        assert state == reference
        assert [b.box for b in state.boxes] == [0, 1, 2]
