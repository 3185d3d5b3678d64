"""Exact dealer odds: sums, published 8-deck S17 figures, and the peek conditioning."""

from __future__ import annotations

import math

import pytest

from casino.engine.odds import (
    OUTCOMES,
    UP_CARD_KEYS,
    dealer_distribution,
    dealer_table,
    format_table,
    shoe_composition,
    up_card_value,
)


@pytest.mark.parametrize("hits_soft_17", [False, True])
@pytest.mark.parametrize("peek", [False, True])
def test_every_distribution_sums_to_one(peek: bool, hits_soft_17: bool) -> None:
    table = dealer_table(peek=peek, hits_soft_17=hits_soft_17)
    assert tuple(table) == UP_CARD_KEYS
    for row in table.values():
        assert tuple(row) == OUTCOMES
        assert math.isclose(sum(row.values()), 1.0, abs_tol=1e-12)
        assert all(p > 0 for p in row.values())


# Published 8-deck S17 dealer bust rates (peek, no dealer blackjack), e.g. the
# Wizard of Odds dealer-outcome tables; they agree with ours to the 3rd decimal.
@pytest.mark.parametrize(
    ("up", "bust"),
    [("2", 0.3535), ("3", 0.3741), ("4", 0.3955), ("5", 0.4179), ("6", 0.4229), ("7", 0.2620)],
)
def test_published_bust_rates(up: str, bust: float) -> None:
    assert dealer_distribution(up)["bust"] == pytest.approx(bust, abs=0.002)


def test_six_up_busts_about_42_percent() -> None:
    assert 0.42 < dealer_distribution("6")["bust"] < 0.425


def test_peek_conditions_on_no_dealer_blackjack() -> None:
    # Without peek, an Ace up is: blackjack (128 tens of 415 cards) or the peeked distribution.
    peeked = dealer_distribution("A")
    open_ = dealer_distribution("A", peek=False)
    blackjack = 128 / 415
    for outcome in OUTCOMES:
        expected = (1 - blackjack) * peeked[outcome] + (blackjack if outcome == "21" else 0.0)
        assert open_[outcome] == pytest.approx(expected, abs=1e-12)
    ten_blackjack = 32 / 415
    ten_peeked = dealer_distribution("10")
    ten_open = dealer_distribution("K", peek=False)
    expected_21 = (1 - ten_blackjack) * ten_peeked["21"] + ten_blackjack
    assert ten_open["21"] == pytest.approx(expected_21, abs=1e-12)


def test_peek_does_not_change_small_up_cards() -> None:
    assert dealer_distribution("5", peek=False) == dealer_distribution("5")


def test_soft_17_rule_changes_only_where_soft_17_is_possible() -> None:
    # Hitting soft 17 moves mass out of 17 with a 6 or Ace up; a 7 up cannot make soft 17.
    assert dealer_distribution("6", hits_soft_17=True)["17"] < dealer_distribution("6")["17"]
    assert dealer_distribution("7", hits_soft_17=True) == dealer_distribution("7")


def test_more_decks_move_toward_the_infinite_deck() -> None:
    # Infinite-deck S17 bust with 6 up is 0.4232; removing a 6 matters less with more decks.
    one = dealer_distribution("6", decks=1)["bust"]
    eight = dealer_distribution("6", decks=8)["bust"]
    assert abs(eight - 0.4232) < abs(one - 0.4232)


def test_up_card_spellings() -> None:
    assert up_card_value("10") == up_card_value("T") == up_card_value("QH") == 10
    assert up_card_value("AS") == 1
    assert dealer_distribution("JD") == dealer_distribution("10")
    with pytest.raises(ValueError):
        up_card_value("1")
    with pytest.raises(ValueError):
        shoe_composition(0)
    assert sum(shoe_composition(8)) == 416


def test_format_table_lists_every_up_card() -> None:
    text = format_table(dealer_table())
    lines = text.splitlines()
    assert len(lines) == 2 + len(UP_CARD_KEYS)
    assert lines[-1].startswith("A ")
    assert "42.29" in text  # bust with 6 up
