"""Known-answer tests for `atlantic_city` (seed 002_400c2f4efcde6aba.txt).

Deal order: every box in order (left, centre, right = box 0, 1, 2), dealer face up, every
box again, dealer face down.
"""

from __future__ import annotations

import pytest

from casino.engine import errors as E
from casino.engine.commands import Double, PlaceBet, Split, Stand, TakeInsurance
from casino.engine.errors import DomainError
from casino.engine.events import (
    DealerCardDealt,
    DealerPeeked,
    InsuranceOffered,
    PlayerCardDealt,
    TurnStarted,
)
from casino.engine.evolve import STOOD
from casino.engine.rules import RULESETS

from .helpers import deal, open_table, result, usdc


def test_up_to_three_boxes_each_with_its_own_bet_and_deal_order() -> None:
    # 002: "allowed to bet on up to three hands ... For each hand, two cards are dealt"
    cards = ["TS", "9S", "8S", "7D", "TH", "9H", "8H", "KC", "2C"]
    t = open_table("atlantic_city", cards)
    t.do(PlaceBet("p1", (usdc(10), usdc(20), usdc(30))))
    dealt = [e for e in t.events if isinstance(e, PlayerCardDealt | DealerCardDealt)]
    assert [(e.position, getattr(e, "box", "dealer")) for e in dealt] == [
        (0, 0),
        (1, 1),
        (2, 2),
        (3, "dealer"),
        (4, 0),
        (5, 1),
        (6, 2),
        (7, "dealer"),
    ]
    assert [e.hole for e in dealt if isinstance(e, DealerCardDealt)] == [False, True]
    assert [b.bet for b in t.s.boxes] == [usdc(10), usdc(20), usdc(30)]
    # each hand is treated separately, played box 0, 1, 2
    assert t.events[-1] == TurnStarted("p1", 0, 0, t.now + 60_000)
    t.do(Stand("p1"))
    assert isinstance(t.events[-1], TurnStarted) and t.events[-1].box == 1
    t.do(Stand("p1"))
    t.do(Stand("p1"))
    # dealer 7 + K = 17 stands: 20 wins, 18 wins, 16 loses
    assert [result(t, box=b)[1] for b in range(3)] == [usdc(20), usdc(40), 0]


def test_min_max_per_betting_field() -> None:
    # 002: "Min/Max ... amount that can be placed on each betting field."
    t = open_table("atlantic_city", [])
    with pytest.raises(DomainError) as err:
        t.do(PlaceBet("p1", (usdc(10), usdc(2000))))
    assert err.value.code == E.BET_ABOVE_MAXIMUM
    with pytest.raises(DomainError) as err:
        t.do(PlaceBet("p1", (usdc(10), usdc(10), usdc(10), usdc(10))))
    assert err.value.code == E.ACTION_NOT_ALLOWED


def test_peek_with_ten_up_dealer_blackjack_beats_all_but_a_blackjack() -> None:
    # 002: "If the Dealer has a Blackjack, his face-down card opens. Your and the dealer's
    # hands are compared." / "You lose your original bet (unless you also have Blackjack)"
    t = open_table("atlantic_city", ["AS", "9S", "KD", "KH", "8D", "AH"])
    t.do(PlaceBet("p1", (usdc(10), usdc(10))))
    assert DealerPeeked(True) in t.events
    assert result(t, box=0) == ("push", usdc(10))
    assert result(t, box=1) == ("lose", 0)


def test_insurance_offered_with_ace_before_peek_half_bet_pays_2_to_1() -> None:
    # 002: "With an initial bet of $10, your insurance bet will be $5 ... you will be
    # returned your bet and the win of $10, $15 in total."
    t = deal("atlantic_city", ["9S", "AC", "9H", "KD"])
    assert isinstance(t.events[-1], InsuranceOffered)
    assert not any(isinstance(e, DealerPeeked) for e in t.events)
    with pytest.raises(DomainError) as err:
        t.do(TakeInsurance("p1", amount=usdc(3)))
    assert err.value.code == E.INVALID_AMOUNT
    t.do(TakeInsurance("p1"))
    settled = t.s.settlement
    assert settled is not None
    assert (settled.insurance[0].stake, settled.insurance[0].gross_return) == (usdc(5), usdc(15))


def test_blackjack_may_insure_no_even_money() -> None:
    # reading: 002 names no even money; a blackjack is offered plain insurance.
    t = deal("atlantic_city", ["AS", "AC", "KH", "KD"])
    t.do(TakeInsurance("p1"))
    assert result(t) == ("push", usdc(10))
    settled = t.s.settlement
    assert settled is not None and settled.insurance[0].gross_return == usdc(15)


def test_split_only_once() -> None:
    # 002: "You can split your hand only once."
    t = deal("atlantic_city", ["8S", "9C", "8H", "7D", "8D", "2S"])
    t.do(Split("p1"))
    assert t.s.boxes[0].hands[0].cards == ("8S", "8D")
    with pytest.raises(DomainError) as err:
        t.do(Split("p1"))
    assert err.value.code == E.ACTION_NOT_ALLOWED
    assert RULESETS["atlantic_city"].max_hands == 2


def test_split_aces_one_card_each_21_is_not_blackjack() -> None:
    # 002: "allowed to draw only one card to each Ace ... not considered a Blackjack, but
    # treated as a normal 21."
    t = deal("atlantic_city", ["AS", "9C", "AH", "8D", "KS", "9D"])
    t.do(Split("p1"))
    assert [h.status for h in t.s.boxes[0].hands] == [STOOD, STOOD]
    assert result(t, 0) == ("win", usdc(20))  # 21 v 17, paid 1:1
    assert result(t, 1) == ("win", usdc(20))  # soft 20 v 17


def test_double_on_any_first_two_cards_and_after_split() -> None:
    # 002: "Double - ... get one more card to your hand. No more cards can be drawn";
    # reading: double after split allowed (needed for the advertised 99.51%).
    t = deal("atlantic_city", ["3S", "9C", "2H", "8D", "TS"])
    t.do(Double("p1"))  # hard 5 doubles
    assert t.s.boxes[0].hands[0].stake == usdc(20)
    assert result(t) == ("lose", 0)  # 15 v 17
    das = deal("atlantic_city", ["8S", "9C", "8H", "8D", "3S", "TC", "KD"])
    das.do(Split("p1"))
    das.do(Double("p1"))  # 8 + 3 doubled, draws K: 21
    assert das.s.boxes[0].hands[0].stake == usdc(20)
    assert das.s.boxes[0].hands[0].total == 21
    assert das.s.turn_hand == 1


def test_dealer_stands_on_17_and_blackjack_pays_3_to_2() -> None:
    # 002: "The Dealer stands on 17." / "If you place $10 and have Blackjack, you will be
    # returned your bet and the win of 15$, 25$ in total."
    t = deal("atlantic_city", ["AS", "6C", "KH", "AD"])
    assert result(t) == ("blackjack", usdc(25))
    soft = deal("atlantic_city", ["TS", "6C", "8H", "AD"])
    soft.do(Stand("p1"))
    assert soft.s.dealer.cards == ("6C", "AD")  # soft 17 stands
    assert result(soft) == ("win", usdc(20))  # "$20 in total"


def test_tie_returns_the_bet() -> None:
    # 002: "In case of tie hands, you are returned your original bet."
    t = deal("atlantic_city", ["TS", "TC", "8H", "8D"])
    t.do(Stand("p1"))
    assert result(t) == ("push", usdc(10))


def test_insurance_is_answered_per_box_and_unanswered_boxes_decline_at_the_deadline() -> None:
    from casino.engine.commands import DeclineInsurance, Timeout
    from casino.engine.events import InsuranceDeclined

    from .helpers import T0

    # boxes 9,9 / 8,8 / T,7 ; dealer A up, K down: blackjack
    t = open_table("atlantic_city", ["9S", "8S", "TS", "AC", "9H", "8H", "7S", "KD"])
    t.do(PlaceBet("p1", (usdc(10), usdc(20), usdc(30))))
    assert isinstance(t.events[-1], InsuranceOffered)
    t.do(TakeInsurance("p1", 0))
    t.do(DeclineInsurance("p1", 1))
    assert t.s.phase == "insurance"
    t.do(Timeout(), now=T0 + 30_000)
    assert InsuranceDeclined("p1", 2, True) in t.events
    settled = t.s.settlement
    assert settled is not None
    assert [(i.box, i.stake, i.gross_return) for i in settled.insurance] == [(0, usdc(5), usdc(15))]
    assert [r.gross_return for r in settled.hands] == [0, 0, 0]
    assert t.balances()["player:p1"] == -usdc(10 + 20 + 30 + 5) + usdc(15)
