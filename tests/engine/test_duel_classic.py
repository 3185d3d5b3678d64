"""Known-answer tests for `duel_classic` (seed 004_ca44145c343a4f8f.txt, "CLASSIC BLACKJACK").

Deal order: every seat in order, dealer face up, every seat again, dealer face down.
"""

from __future__ import annotations

import pytest

from casino.engine import errors as E
from casino.engine.commands import (
    DeclineInsurance,
    Double,
    Hit,
    OpenRound,
    PlaceBet,
    Split,
    Stand,
    TakeInsurance,
)
from casino.engine.errors import DomainError
from casino.engine.events import InsuranceOffered, RoundOptions, TurnStarted
from casino.engine.evolve import SETTLED
from casino.engine.rules import RULESETS

from .helpers import COMMITMENT, Table, deal, open_table, participants, result, usdc


@pytest.mark.parametrize("total", [17, 18, 19])
def test_equal_totals_17_18_19_lose(total: int) -> None:
    # 004: "If the player and dealer both end up at 17, 18 or 19, the player loses their bet."
    seven = {17: "7", 18: "8", 19: "9"}[total]
    t = deal("duel_classic", ["TS", "TD", f"{seven}H", f"{seven}C"])
    t.do(Stand("p1"))
    assert t.s.dealer.total == total
    assert result(t) == ("lose", 0)


def test_equal_20_pushes() -> None:
    # 004: "both end up at 20 or 21 without hitting a Blackjack ... the bet is considered a push"
    t = deal("duel_classic", ["TS", "TD", "KH", "KC"])
    t.do(Stand("p1"))
    assert result(t) == ("push", usdc(10))


def test_equal_21_without_blackjack_pushes() -> None:
    t = deal("duel_classic", ["7S", "TD", "4H", "6C", "TS", "5D"])
    t.do(Hit("p1"))  # 21 stands by itself; dealer 16 draws 5: 21
    assert t.s.dealer.total == 21
    assert result(t) == ("push", usdc(10))


def test_blackjack_against_dealer_21_pays_even_money() -> None:
    # 004: "player hits a Blackjack and the dealer hits 21 without a Blackjack, the player
    # wins 2:1 (as any normal win)": total return 2x the stake
    t = deal("duel_classic", ["AS", "9D", "KH", "7C", "5S"])
    assert t.s.dealer.cards == ("9D", "7C", "5S")  # the dealer plays out against a blackjack
    assert result(t) == ("blackjack", usdc(20))


def test_blackjack_against_dealer_below_21_pays_3_to_2() -> None:
    # 004: "dealer hits anything below 21, the player is paid 2.5:1" (total return)
    t = deal("duel_classic", ["AS", "9D", "KH", "9C"])
    assert result(t) == ("blackjack", usdc(25))


def test_blackjack_against_dealer_bust_pays_3_to_2() -> None:
    # reading: 004 is silent on a dealer bust; it pays as "below 21" (a bust is worse).
    t = deal("duel_classic", ["AS", "9D", "KH", "7C", "TS"])
    assert t.s.dealer.total == 26
    assert result(t) == ("blackjack", usdc(25))


def test_dealer_blackjack_beats_player_and_two_blackjacks_push() -> None:
    # 004: "If the dealer has blackjack and the player doesn't, the player automatically
    # loses." / "If both the player and dealer have blackjack then it's a push."
    t = deal("duel_classic", ["9S", "AD", "9H", "KC"])
    t.do(DeclineInsurance("p1"))
    assert result(t) == ("lose", 0)
    both = deal("duel_classic", ["AS", "AD", "KH", "KC"])
    both.do(DeclineInsurance("p1"))
    assert result(both) == ("push", usdc(10))


def test_seats_play_in_order_and_a_bust_loses_even_if_the_dealer_busts() -> None:
    # 004: "each player plays out his hand, one at a time" / "if the player busts he loses,
    # even if the dealer also busts"
    t = open_table("duel_classic", ["TS", "9S", "6D", "6H", "9H", "TC", "KS", "9D"], players=2)
    t.do(PlaceBet("p1", (usdc(10),)))
    t.do(PlaceBet("p2", (usdc(10),)))
    assert t.events[-1] == TurnStarted("p1", 0, 0, t.now + 30_000)
    with pytest.raises(DomainError) as err:
        t.do(Stand("p2"))
    assert err.value.code == E.NOT_YOUR_TURN
    t.do(Hit("p1"))  # 16 + K: bust
    assert isinstance(t.events[-1], TurnStarted) and t.events[-1].player_id == "p2"
    t.do(Stand("p2"))
    assert t.s.dealer.total == 25
    assert result(t, player="p1") == ("bust", 0)
    assert result(t, player="p2") == ("win", usdc(20))


def test_insurance_any_amount_up_to_half_pays_2_to_1() -> None:
    # 004: "can bet an amount up to half his original bet" / the $10 bet, $5 insurance
    # example: "receives $10 (on top of the $5 ...) ... came out even"
    t = deal("duel_classic", ["TS", "AD", "9H", "KC"])
    assert isinstance(t.events[-1], InsuranceOffered)
    with pytest.raises(DomainError) as err:
        t.do(TakeInsurance("p1", amount=usdc(5.01)))
    assert err.value.code == E.BET_ABOVE_MAXIMUM
    t.do(TakeInsurance("p1", amount=usdc(5)))
    assert result(t) == ("lose", 0)
    assert t.balances()["player:p1"] == 0
    partial = deal("duel_classic", ["TS", "AD", "9H", "KC"])
    partial.do(TakeInsurance("p1", amount=usdc(3)))
    settled = partial.s.settlement
    assert settled is not None and settled.insurance[0].gross_return == usdc(9)


def test_table_minimum_from_half_to_500_usdc_and_bets_may_exceed_it() -> None:
    # 004: "Minimum bets will vary from table to table, ranging from 0.5 USDC to 500 USDC"
    # / "Players can opt to bet higher than the minimum (I.e ... 0.5 USDC table but bets 1)"
    for minimum, ok in (
        (usdc(0.4), False),
        (usdc(0.5), True),
        (usdc(500), True),
        (usdc(501), False),
    ):
        table = Table(shoe=deal("duel_classic", ["TS", "9D", "KH", "9C"]).shoe)
        command = OpenRound(
            "r", "t", "duel_classic", "c", 1, COMMITMENT, participants(1),
            RoundOptions(min_bet=minimum, max_bet=usdc(5000)),
        )  # fmt: skip
        if ok:
            table.do(command)
        else:
            with pytest.raises(DomainError) as err:
                table.do(command)
            assert err.value.code == E.INVALID_TABLE
    t = open_table("duel_classic", ["TS", "9D", "KH", "9C"])
    t.do(PlaceBet("p1", (usdc(1),)))
    assert t.s.boxes[0].bet == usdc(1)


def test_double_and_split_allowed_up_to_four_hands() -> None:
    # 004: "Double down: Double the wager, take exactly one more card, and then stand." /
    # "Split: Double the wager and have each card be the first card in a new hand."
    # reading: split limit as classic (four hands), double after split allowed.
    t = deal("duel_classic", ["6S", "9D", "5H", "7C", "TS", "KC"])
    t.do(Double("p1"))
    assert t.s.phase == SETTLED and result(t) == ("win", usdc(40))  # 21 v 16 + K
    assert RULESETS["duel_classic"].max_hands == 4
    s = deal("duel_classic", ["8S", "9D", "8H", "7C", "3S", "TC", "KD", "TH"])
    s.do(Split("p1"))
    s.do(Double("p1"))
    s.do(Stand("p1"))
    assert result(s, 0) == ("win", usdc(40))  # 21 v dealer 9 + 7 + T = 26
    assert result(s, 1) == ("win", usdc(20))


def test_dealer_stands_on_soft_17() -> None:
    # reading: 004 names no drawing rule; the dealer stands on all 17s as the other tables.
    t = deal("duel_classic", ["TS", "6D", "9H", "AC"])
    t.do(Stand("p1"))
    assert t.s.dealer.cards == ("6D", "AC")
    assert result(t) == ("win", usdc(20))
