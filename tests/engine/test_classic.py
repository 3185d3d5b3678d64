"""Known-answer tests for `classic` (seed 000_75ccea3adeabb2ad.txt), one per rule line.

Deal order (classic): player, dealer (face down), player, dealer (face up): positions 0-3.
"""

from __future__ import annotations

import pytest

from casino.engine import errors as E
from casino.engine.commands import (
    DeclineInsurance,
    Double,
    Hit,
    PlaceBet,
    Split,
    Stand,
    TakeEvenMoney,
    TakeInsurance,
)
from casino.engine.errors import DomainError
from casino.engine.events import (
    DealerCardDealt,
    DealerPeeked,
    HandSplit,
    InsuranceOffered,
    PlayerCardDealt,
    PlayerStood,
    RoundSettled,
    TurnStarted,
)
from casino.engine.evolve import BLACKJACK, SETTLED, STOOD
from casino.engine.rules import RULESETS
from casino.engine.shoe import FastShoe

from .helpers import deal, open_table, result, usdc


def types(events: list[object]) -> list[str]:
    return [type(e).__name__ for e in events]


def test_eight_decks_of_52_cards() -> None:
    # 000: "played using eight standard 52-card decks"
    assert RULESETS["classic"].decks == 8
    shoe = FastShoe(1)
    cards = [shoe.card_at(i) for i in range(416)]
    assert len(set(cards)) == 52 and all(cards.count(c) == 8 for c in set(cards))


def test_deal_order_player_dealer_twice_dealer_first_card_face_down() -> None:
    # 000: "dealt to the Player and the Dealer ... beginning with the Player. The Dealer
    # receives their first card facedown."
    t = deal("classic", ["9S", "5H", "TD", "KC", "8D"])
    cards = [e for e in t.events if isinstance(e, PlayerCardDealt | DealerCardDealt)]
    assert [(type(e).__name__, e.position, e.card) for e in cards] == [
        ("PlayerCardDealt", 0, "9S"),
        ("DealerCardDealt", 1, "5H"),
        ("PlayerCardDealt", 2, "TD"),
        ("DealerCardDealt", 3, "KC"),
    ]
    assert [e.hole for e in cards if isinstance(e, DealerCardDealt)] == [True, False]


def test_blackjack_pays_3_to_2() -> None:
    # 000: "Player automatically wins and is paid 3 to 2 on the main bet."
    t = deal("classic", ["AS", "7C", "KH", "9D"])
    assert t.s.boxes[0].hands[0].status == BLACKJACK
    assert t.s.phase == SETTLED
    assert result(t) == ("blackjack", usdc(25))
    assert t.s.dealer.cards == ("7C", "9D")  # nothing left to beat: the dealer does not draw


def test_dealer_blackjack_with_ten_up_peeked_without_insurance() -> None:
    # 000: "If the Dealer's faceup card is a 10-value card, the Dealer's facedown card is
    # checked without offering Insurance." / "Dealer automatically wins"
    t = deal("classic", ["9S", "AS", "8H", "KD"])
    assert "InsuranceOffered" not in types(t.events)
    assert DealerPeeked(True) in t.events
    assert result(t) == ("lose", 0)


def test_both_blackjack_push() -> None:
    # 000: "Both Player and Dealer: This is a tie and the Player's bet is returned."
    t = deal("classic", ["AS", "AH", "KH", "KD"])
    assert result(t) == ("push", usdc(10))


def test_insurance_half_the_bet_pays_2_to_1_on_dealer_blackjack() -> None:
    # 000: insurance "another bet equal to half the main bet"; "Blackjack: Player's bet is
    # forfeited. Paid 2 to 1"
    t = deal("classic", ["9S", "KD", "9H", "AC"])
    assert isinstance(t.events[-1], InsuranceOffered)
    t.do(TakeInsurance("p1"))
    assert t.s.boxes[0].insurance == usdc(5)
    assert result(t) == ("lose", 0)
    settled = t.s.settlement
    assert settled is not None
    assert [(i.stake, i.gross_return) for i in settled.insurance] == [(usdc(5), usdc(15))]
    assert t.balances()["player:p1"] == 0  # even: -10 - 5 + 15


def test_insurance_forfeited_when_no_blackjack_and_bet_remains_active() -> None:
    # 000: "Not Blackjack: Bet remains active. Forfeited"
    t = deal("classic", ["9S", "7D", "9H", "AC"])
    t.do(TakeInsurance("p1"))
    assert isinstance(t.events[-1], TurnStarted)
    t.do(Stand("p1"))
    assert result(t) == ("push", usdc(10))  # 18 v dealer soft 18
    settled = t.s.settlement
    assert settled is not None and settled.insurance[0].gross_return == 0


def test_even_money_pays_1_to_1_at_once_and_ends_the_hand() -> None:
    # 000: "paid for their Blackjack immediately at a rate of 1 to 1. Accepting Even Money
    # ends the action for that hand."
    t = deal("classic", ["AS", "7D", "KH", "AC"])
    with pytest.raises(DomainError) as err:
        t.do(TakeInsurance("p1"))
    assert err.value.code == E.ACTION_NOT_ALLOWED
    t.do(TakeEvenMoney("p1"))
    assert t.s.phase == SETTLED
    assert result(t) == ("even_money", usdc(20))


def test_even_money_declined_blackjack_still_pays_3_to_2() -> None:
    t = deal("classic", ["AS", "7D", "KH", "AC"])
    t.do(DeclineInsurance("p1"))
    assert result(t) == ("blackjack", usdc(25))


def test_offer_insurance_option_off_skips_the_offer_but_still_peeks() -> None:
    # 000 Options: "Offer Insurance - Disable: the game will not offer the ... side bet"
    t = deal("classic", ["9S", "KD", "9H", "AC"], offer_insurance=False)
    assert "InsuranceOffered" not in types(t.events)
    assert DealerPeeked(True) in t.events
    assert result(t) == ("lose", 0)


def test_hit_reaching_21_stands_by_itself() -> None:
    # 000: "If the hand value becomes 21, the hand automatically stands."
    t = deal("classic", ["5S", "TD", "6H", "7C", "KS"])
    t.do(Hit("p1"))
    assert not any(isinstance(e, PlayerStood) for e in t.events)
    assert t.s.boxes[0].hands[0].total == 21
    assert result(t) == ("win", usdc(20))  # dealer T+7 = 17 stands


def test_bust_loses_and_dealer_does_not_draw() -> None:
    # 000: "If the hand busts, all bets placed on that hand are forfeited."
    t = deal("classic", ["TS", "6D", "6H", "TC", "KS", "9D"])
    t.do(Hit("p1"))
    assert result(t) == ("bust", 0)
    assert t.s.dealer.cards == ("6D", "TC")


def test_split_equal_value_cards_king_and_jack_with_an_equal_bet() -> None:
    # 000: "Split: only available when the initial two cards dealt are the same value ...
    # an additional bet equal to the main bet"
    t = deal("classic", ["KS", "7D", "JH", "9C", "5S", "6H", "TC"])
    t.do(Split("p1"))
    assert HandSplit("p1", 0, 0, usdc(10)) in t.events
    hands = t.s.boxes[0].hands
    assert [h.cards for h in hands] == [("KS", "5S"), ("JH", "6H")]
    t.do(Stand("p1"))
    assert t.events[-1] == TurnStarted("p1", 0, 1, t.now + 60_000)
    t.do(Stand("p1"))
    # dealer 7+9 = 16 draws TC: bust, every standing hand wins
    assert result(t, 0) == ("win", usdc(20)) and result(t, 1) == ("win", usdc(20))
    assert t.balances()["player:p1"] == usdc(20)


def test_split_at_most_three_times_making_four_hands() -> None:
    # 000: "Except for Aces, Players may split a maximum of three times, creating four hands."
    cards = ["8S", "7D", "8H", "9C", "8D", "8C", "8H", "2S", "8S", "3S"]
    t = deal("classic", cards)
    t.do(Split("p1"))  # h0 8S8D, h1 8H8C
    t.do(Split("p1"))  # h0 8S8H, h1 8D2S, h2 8H8C
    t.do(Split("p1"))  # h0 8S8S, h1 8H3S, h2 8D2S, h3 8H8C
    assert len(t.s.boxes[0].hands) == 4
    assert t.s.boxes[0].hands[0].cards == ("8S", "8S")
    with pytest.raises(DomainError) as err:
        t.do(Split("p1"))
    assert err.value.code == E.ACTION_NOT_ALLOWED


def test_split_aces_get_one_card_each_and_21_is_not_blackjack() -> None:
    # 000: "Split Aces only receive one card per Ace." / blackjack = first two cards
    t = deal("classic", ["AS", "7D", "AH", "9C", "KS", "5D", "2S"])
    t.do(Split("p1"))
    hands = t.s.boxes[0].hands
    assert [h.status for h in hands] == [STOOD, STOOD]
    assert not hands[0].is_blackjack and hands[0].total == 21
    assert result(t, 0) == ("win", usdc(20))  # 1:1, not 3:2; dealer 7+9+2 = 18
    assert result(t, 1) == ("lose", 0)  # soft 16


def test_double_one_card_twice_the_stake() -> None:
    # 000: "Double Down: Double the main bet and draw exactly one additional card."
    t = deal("classic", ["6S", "7D", "5H", "9C", "TS", "9S"])
    t.do(Double("p1"))
    hand = t.s.boxes[0].hands[0]
    assert hand.cards == ("6S", "5H", "TS") and hand.stake == usdc(20)
    assert result(t) == ("win", usdc(40))  # dealer 16 draws 9: bust


def test_double_after_split_allowed() -> None:
    # 000: "Doubling Down on the first two cards after a split is allowed."
    t = deal("classic", ["8S", "7D", "8H", "9C", "3S", "TC", "KD", "2S"])
    t.do(Split("p1"))
    t.do(Double("p1"))  # h0 8+3+K = 21
    t.do(Stand("p1"))  # h1 8+T = 18
    assert result(t, 0) == ("win", usdc(40))
    assert result(t, 1) == ("push", usdc(10))  # dealer 7+9+2 = 18


def test_dealer_stands_on_soft_17() -> None:
    # 000: "Dealer must stand on all totals of 17. This includes soft values"
    t = deal("classic", ["TS", "AD", "8H", "6C", "5S"])
    t.do(Stand("p1"))
    assert t.s.dealer.cards == ("AD", "6C")
    assert result(t) == ("win", usdc(20))


def test_dealer_draws_on_16_or_less() -> None:
    # 000: "Dealer must draw additional cards with any hand total of 16 or less."
    t = deal("classic", ["TS", "TD", "9H", "6C", "5S"])
    t.do(Stand("p1"))
    assert t.s.dealer.cards == ("TD", "6C", "5S")
    assert result(t) == ("lose", 0)  # 19 v 21


def test_safety_net_warns_on_hard_17_and_soft_20_until_confirmed() -> None:
    # 000 Options: "Safety Net: warns the Player when they attempt to hit on soft 20 or on a
    # hard 17 or above"
    t = deal("classic", ["TS", "7D", "7H", "9C", "2S"], safety_net=True)
    with pytest.raises(DomainError) as err:
        t.do(Hit("p1"))
    assert err.value.code == E.CONFIRM_REQUIRED
    t.do(Hit("p1", confirm=True))
    assert t.s.boxes[0].hands[0].total == 19
    soft = deal("classic", ["AS", "7D", "9H", "9C"], safety_net=True)
    with pytest.raises(DomainError) as err:
        soft.do(Hit("p1"))
    assert err.value.code == E.CONFIRM_REQUIRED


def test_safety_net_quiet_below_the_threshold_and_when_off() -> None:
    t = deal("classic", ["AS", "7D", "7H", "9C", "2S"], safety_net=True)  # soft 18
    t.do(Hit("p1"))
    assert t.s.boxes[0].hands[0].total == 20
    off = deal("classic", ["TS", "7D", "7H", "9C", "2S"])  # hard 17, net off
    off.do(Hit("p1"))
    assert off.s.boxes[0].hands[0].total == 19


def test_deal_needs_the_table_minimum_and_any_valid_amount_is_accepted() -> None:
    # 000: "Once the game's minimum bet is reached, the Player can begin ... Deal";
    # REBET & DEAL / DOUBLE BET & DEAL are amounts the client sends.
    t = open_table("classic", ["9S", "5H", "TD", "KC", "8D"])
    with pytest.raises(DomainError) as err:
        t.do(PlaceBet("p1", (usdc(0.5),)))
    assert err.value.code == E.BET_BELOW_MINIMUM
    t.do(PlaceBet("p1", (usdc(20),)))  # "double bet" of a 10 USDC last bet
    assert t.s.boxes[0].bet == usdc(20)


def test_higher_total_wins_1_to_1() -> None:
    # 000: "Player's Hand is Higher: The Player wins and is paid 1 to 1."
    t = deal("classic", ["TS", "TD", "KH", "8C"])
    t.do(Stand("p1"))
    assert result(t) == ("win", usdc(20))
    assert isinstance(t.events[-1], RoundSettled)
