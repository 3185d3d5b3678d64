"""Bets in any order fold to boxes in (seat, box) order: `evolve`'s bet handler appends a box
that comes after the others without sorting, and sorts otherwise (a stable sort: of two
equal keys the earlier box stays first)."""

from __future__ import annotations

from itertools import permutations

from casino.engine.decider import evolve
from casino.engine.events import BetPlaced, RoundOpened
from casino.engine.rules import RULESETS

from .helpers import COMMITMENT, T0, options_for, participants


def opened(ruleset: str, players: int) -> RoundOpened:
    rules = RULESETS[ruleset]
    return RoundOpened(
        "round-1", "table-1", ruleset, rules.version_hash, "chain-1", 7, COMMITMENT,
        participants(players), options_for(ruleset), T0, T0 + rules.betting_timeout_ms,
    )  # fmt: skip


def test_bets_in_every_order_fold_to_seat_order() -> None:
    # Seats p1..p3, each betting one box; and p2's box 0 again (an equal key).
    bets = [BetPlaced(f"p{i}", 0, 10_000 * i) for i in (1, 2, 3)]
    again = BetPlaced("p2", 0, 20_000)
    cases = 0
    for order in permutations([*bets, again]):
        state = evolve(None, opened("duel_classic", 3))
        for bet in order:
            state = evolve(state, bet)
        p2 = [bet for bet in order if bet.player_id == "p2"]  # in the order they came
        expected = [bets[0], *p2, bets[2]]
        assert [(b.player_id, b.box, b.bet) for b in state.boxes] == [
            (e.player_id, e.box, e.amount) for e in expected
        ]
        cases += 1
    assert cases == 24


def test_boxes_of_one_seat_in_every_order_fold_to_box_order() -> None:
    bets = [BetPlaced("p1", box, 10_000 * (box + 1)) for box in (0, 1, 2)]
    for order in permutations(bets):
        state = evolve(None, opened("atlantic_city", 1))
        for bet in order:
            state = evolve(state, bet)
        assert [(b.box, b.bet) for b in state.boxes] == [(0, 10_000), (1, 20_000), (2, 30_000)]
        assert all(b.hands[0].stake == b.bet and not b.hands[0].cards for b in state.boxes)
