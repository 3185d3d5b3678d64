"""Basic strategy (8 decks, S17, DAS, peek) and duel strategy: well-known chart cells."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from casino.engine.bots import bot_command
from casino.engine.commands import OpenRound
from casino.engine.decider import step
from casino.engine.evolve import PLAYING
from casino.engine.rules import RULESETS
from casino.engine.shoe import FastShoe
from casino.engine.simulator import BankedBot
from casino.engine.strategy import (
    DOUBLE,
    DUEL_DEFAULT,
    HARD,
    HIT,
    PAIRS_DAS,
    SOFT,
    SPLIT,
    STAND,
    UP_CARDS,
    DuelStrategy,
    Move,
    basic_strategy,
    hand_total,
    takes_insurance,
)
from casino.engine.views import allowed_moves

from .helpers import COMMITMENT, T0, options_for, participants

ALL: frozenset[Move] = frozenset({HIT, STAND, DOUBLE, SPLIT})
NO_SPLIT: frozenset[Move] = frozenset({HIT, STAND, DOUBLE})
HIT_STAND: frozenset[Move] = frozenset({HIT, STAND})


@pytest.mark.parametrize(
    ("cards", "up", "expected"),
    [
        # Hard totals
        (["TS", "6H"], "TD", HIT),  # 16 v 10: hit (no surrender)
        (["TS", "6H"], "6D", STAND),
        (["TS", "2H"], "2D", HIT),  # 12 v 2 and 3: hit
        (["TS", "2H"], "3D", HIT),
        (["TS", "2H"], "4D", STAND),
        (["TS", "3H"], "2D", STAND),  # 13 v 2: stand
        (["6S", "5H"], "TD", DOUBLE),  # 11 v 10: double
        (["6S", "5H"], "AD", HIT),  # 11 v A: hit at 8 decks S17
        (["6S", "4H"], "9D", DOUBLE),
        (["6S", "4H"], "TD", HIT),
        (["5S", "4H"], "2D", HIT),  # 9 v 2: hit
        (["5S", "4H"], "3D", DOUBLE),
        (["5S", "3H"], "5D", HIT),  # 8: always hit
        (["TS", "7H"], "AD", STAND),
        # Soft totals
        (["AS", "7H"], "2D", STAND),  # soft 18 v 2: stand (S17)
        (["AS", "7H"], "3D", DOUBLE),
        (["AS", "7H"], "7D", STAND),
        (["AS", "7H"], "9D", HIT),
        (["AS", "7H"], "AD", HIT),
        (["AS", "6H"], "2D", HIT),
        (["AS", "6H"], "3D", DOUBLE),
        (["AS", "2H"], "4D", HIT),
        (["AS", "2H"], "5D", DOUBLE),
        (["AS", "4H"], "4D", DOUBLE),
        (["AS", "8H"], "6D", STAND),  # soft 19 v 6: stand (S17)
        # Pairs (double after split)
        (["AS", "AH"], "AD", SPLIT),
        (["8S", "8H"], "TD", SPLIT),
        (["8S", "8H"], "AD", SPLIT),
        (["TS", "KH"], "6D", STAND),  # never split tens
        (["9S", "9H"], "7D", STAND),
        (["9S", "9H"], "8D", SPLIT),
        (["9S", "9H"], "AD", STAND),
        (["5S", "5H"], "9D", DOUBLE),  # fives are a hard 10
        (["4S", "4H"], "5D", SPLIT),
        (["4S", "4H"], "4D", HIT),
        (["2S", "2H"], "2D", SPLIT),
        (["2S", "2H"], "8D", HIT),
        (["6S", "6H"], "7D", HIT),
        (["7S", "7H"], "7D", SPLIT),
        (["7S", "7H"], "8D", HIT),
    ],
)
def test_known_chart_cells(cards: list[str], up: str, expected: Move) -> None:
    assert basic_strategy(cards, up, ALL) == expected


def test_without_das_small_pairs_split_less() -> None:
    assert basic_strategy(["2S", "2H"], "2D", ALL, double_after_split=False) == HIT
    assert basic_strategy(["4S", "4H"], "5D", ALL, double_after_split=False) == HIT
    assert basic_strategy(["6S", "6H"], "2D", ALL, double_after_split=False) == HIT
    assert basic_strategy(["8S", "8H"], "TD", ALL, double_after_split=False) == SPLIT


def test_double_falls_back_to_hit_or_stand() -> None:
    # "D" cells hit when a double is not allowed; "Ds" (soft 18) stands.
    assert basic_strategy(["6S", "3H", "2C"], "TD", HIT_STAND) == HIT
    assert basic_strategy(["AS", "4H", "3C"], "4D", HIT_STAND) == STAND
    assert basic_strategy(["AS", "2H", "2C"], "5D", HIT_STAND) == HIT


def test_pair_without_split_plays_the_total() -> None:
    assert basic_strategy(["8S", "8H"], "TD", NO_SPLIT) == HIT  # hard 16 v 10
    assert basic_strategy(["AS", "AH"], "6D", NO_SPLIT) == HIT  # soft 12
    assert basic_strategy(["9S", "9H"], "6D", NO_SPLIT) == STAND


def test_multi_card_hands() -> None:
    assert basic_strategy(["AS", "5H", "TC"], "TD", HIT_STAND) == HIT  # hard 16
    assert basic_strategy(["AS", "AH", "AC", "AD", "3S"], "TD", HIT_STAND) == HIT  # soft 17
    assert basic_strategy(["2S", "2H", "2C"], "TD", HIT_STAND) == HIT  # hard 6


def test_bust_hand_is_rejected() -> None:
    with pytest.raises(ValueError):
        basic_strategy(["TS", "TH", "2C"], "TD", HIT_STAND)
    with pytest.raises(ValueError):
        basic_strategy(["TS", "7H"], "TD", ())


def test_tables_are_complete() -> None:
    assert set(HARD) == set(range(4, 22))
    assert set(SOFT) == set(range(12, 22))
    assert set(PAIRS_DAS) == set(range(1, 11))
    for table in (HARD, SOFT, PAIRS_DAS):
        for row in table.values():
            assert tuple(row) == UP_CARDS


def test_hand_total() -> None:
    assert hand_total(["AS", "KH"]) == (21, True)
    assert hand_total(["AS", "AH"]) == (12, True)
    assert hand_total(["AS", "7H", "8C"]) == (16, False)
    assert hand_total(["T", "6"]) == (16, False)


def test_insurance_never_taken() -> None:
    assert takes_insurance(["AS", "KH"], "AD") is False
    assert takes_insurance(["TS", "TH"], "AD") is False


card_codes = st.builds(
    lambda rank, suit: rank + suit, st.sampled_from("A23456789TJQK"), st.sampled_from("SHDC")
)


@settings(max_examples=300, deadline=None)
@given(
    cards=st.lists(card_codes, min_size=2, max_size=5),
    up=card_codes,
    allowed=st.sets(st.sampled_from([HIT, STAND, DOUBLE, SPLIT]), min_size=1),
)
def test_move_is_always_allowed(cards: list[str], up: str, allowed: set[Move]) -> None:
    if hand_total(cards)[0] > 21:
        return
    assert basic_strategy(cards, up, allowed) in allowed


def test_duel_strategy() -> None:
    assert DUEL_DEFAULT.move(["TS", "6H"]) == HIT
    assert DUEL_DEFAULT.move(["TS", "7H"]) == STAND
    assert DUEL_DEFAULT.move(["AS", "5H"]) == HIT  # soft 16
    assert DUEL_DEFAULT.move(["AS", "KH"]) == STAND
    cautious = DuelStrategy(hit_until=12)
    assert cautious.move(["TS", "3H"]) == STAND
    assert cautious.move(["TS", "2H"]) == HIT
    assert DuelStrategy(hit_until=25).move(["TS", "AH"]) == STAND  # 21 never hits
    with pytest.raises(ValueError):
        DUEL_DEFAULT.move(["TS", "6H"], ())


@settings(max_examples=150, deadline=None)
@given(
    name=st.sampled_from(["classic", "atlantic_city", "duel_classic"]), seed=st.integers(0, 2**40)
)
def test_the_simulators_memoised_bot_plays_basic_strategy(name: str, seed: int) -> None:
    """BankedBot answers from a memo keyed on what the chart reads: it must give the move
    `basic_strategy` gives, hand by hand, over whole rounds."""
    rules = RULESETS[name]
    bot = BankedBot(rules)
    shoe = FastShoe(seed)
    opening = OpenRound("r", "t", name, "c", 1, COMMITMENT, participants(1), options_for(name))
    _, state = step(None, opening, T0, shoe)
    while not state.finished:
        command = bot_command(state, "p1", (options_for(name).min_bet,) * rules.max_boxes)
        assert command is not None, state.phase
        if state.phase == PLAYING and state.turn >= 0:
            up = state.dealer.cards[1 - rules.hole_card_index]
            hand = state.boxes[state.turn].hands[state.turn_hand]
            expected = basic_strategy(
                hand.cards,
                up,
                allowed_moves(rules, state),
                double_after_split=rules.double_after_split,
            )
            assert bot.move(state, up) == expected
        _, state = step(state, command, T0, shoe)
