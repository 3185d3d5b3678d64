"""Known-answer tests for `duel` (seed 004_ca44145c343a4f8f.txt, "Duel BlackJack rules").

Deal order: two passes over the seats in order; the first card face up, the second hidden.
"""

from __future__ import annotations

import pytest

from casino.engine import errors as E
from casino.engine.commands import (
    Double,
    Hit,
    PlaceBet,
    Split,
    Stand,
    TakeInsurance,
    Timeout,
)
from casino.engine.errors import DomainError
from casino.engine.events import (
    BetPlaced,
    CardsRevealed,
    DuelTimerStarted,
    PlayerCardDealt,
    PlayerStood,
    RoundSettled,
)
from casino.engine.evolve import DUELING, SETTLED
from casino.engine.settle import duel_payouts
from casino.engine.views import Viewer, view

from .helpers import T0, open_table, result, usdc


def duel(cards: list[str], players: int = 2, stake: float = 10) -> object:
    return open_table("duel", cards, players=players, stake=usdc(stake))


@pytest.mark.parametrize("players", [1, 9])
def test_two_to_eight_players(players: int) -> None:
    # 004 fee table covers "2 players" to "6-8 players"
    with pytest.raises(DomainError) as err:
        open_table("duel", ["TS"] * 20, players=players, stake=usdc(1))
    assert err.value.code == E.INVALID_TABLE


@pytest.mark.parametrize("stake", [0.49, 500.01])
def test_stake_from_half_to_500_usdc(stake: float) -> None:
    # 004: "Minimum bets will vary from table to table, ranging from 0.5 USDC to 500 USDC."
    with pytest.raises(DomainError) as err:
        open_table("duel", ["TS"] * 8, players=2, stake=usdc(stake))
    assert err.value.code == E.INVALID_TABLE


def test_everyone_bets_the_fixed_stake_and_gets_two_cards() -> None:
    # 004: "Each round starts with all players betting the set limit, and then receiving
    # their 2 cards." / "all players bet the same amount each round"
    t = open_table("duel", ["TS", "9S", "8H", "7D"], players=2, stake=usdc(0.5))
    assert [e for e in t.events if isinstance(e, BetPlaced)] == [
        BetPlaced("p1", 0, usdc(0.5)),
        BetPlaced("p2", 0, usdc(0.5)),
    ]
    dealt = [
        (e.position, e.player_id, e.hidden) for e in t.events if isinstance(e, PlayerCardDealt)
    ]
    assert dealt == [(0, "p1", False), (1, "p2", False), (2, "p1", True), (3, "p2", True)]
    with pytest.raises(DomainError) as err:
        t.do(PlaceBet("p1", (usdc(1),)))
    assert err.value.code == E.ACTION_NOT_ALLOWED


def test_players_see_their_own_two_cards_and_one_card_of_the_others() -> None:
    # 004: "The players can see both of their own cards, but only 1 of the other players cards."
    t = open_table("duel", ["TS", "9S", "8H", "7D", "5C"], players=2, stake=usdc(1))
    mine = view(t.s, Viewer("player", "p1"))["boxes"]
    assert [c.get("card") for c in mine[0]["hands"][0]["cards"]] == ["TS", "8H"]
    assert mine[1]["hands"][0]["cards"] == [{"card": "9S", "position": 1}, {"hidden": True}]
    t.do(Hit("p2"))  # others see that p2 drew, not what
    other = view(t.s, Viewer("player", "p1"))["boxes"][1]["hands"][0]
    assert other["card_count"] == 3 and other["cards"][2] == {"hidden": True}
    assert other["total"] is None


def test_thirty_second_timer_then_everyone_stands_and_all_cards_are_revealed() -> None:
    # 004: "A timer of 30 sec then starts ... Once all players have chosen "Stand", or the 30
    # sec timer runs out, all players cards are revealed at the same time."
    t = open_table("duel", ["TS", "9S", "8H", "7D", "2C"], players=2, stake=usdc(1))
    assert DuelTimerStarted(T0 + 30_000) in t.events
    assert t.do(Timeout(), now=T0 + 29_999) == []
    with pytest.raises(DomainError) as err:
        t.do(Hit("p1"), now=T0 + 30_000)
    assert err.value.code == E.DEADLINE_PASSED
    events = t.do(Timeout(), now=T0 + 30_000)
    assert [type(e).__name__ for e in events] == [
        "PlayerStood",
        "PlayerStood",
        "CardsRevealed",
        "RoundSettled",
    ]
    assert all(e.auto for e in events if isinstance(e, PlayerStood))
    revealed = events[2]
    assert isinstance(revealed, CardsRevealed)
    assert [(c.player_id, c.position, c.card) for c in revealed.cards] == [
        ("p1", 2, "8H"),
        ("p2", 3, "7D"),
    ]


def test_all_stood_reveals_and_closest_to_21_wins_the_pot_less_fee() -> None:
    # 004: "The player that is closest to 21 wins"; fee "2 players = 3%"
    t = open_table("duel", ["TS", "9S", "8H", "7D"], players=2, stake=usdc(10))
    t.do(Stand("p1"))
    assert t.s.phase == DUELING
    t.do(Stand("p2"))
    assert t.s.phase == SETTLED
    assert result(t, player="p1") == ("win", usdc(19.4))
    assert result(t, player="p2") == ("lose", 0)
    settled = t.s.settlement
    assert settled is not None and settled.fee == usdc(0.6)


def test_hitting_22_or_more_loses() -> None:
    # 004: "Any player hitting 22 or higher automatically loses"
    t = open_table("duel", ["TS", "5S", "6H", "7D", "KC"], players=2, stake=usdc(10))
    t.do(Hit("p1"))  # 16 + K: bust, finished
    t.do(Stand("p2"))
    assert result(t, player="p1") == ("lose", 0)
    assert result(t, player="p2")[0] == "win"


def test_blackjack_beats_21() -> None:
    # 004: "Any player hitting a Blackjack wins, regardless if other players hit 21"
    t = open_table("duel", ["AS", "7S", "KH", "7D", "7C"], players=2, stake=usdc(10))
    t.do(Hit("p2"))  # 7 + 7 + 7 = 21 stands by itself; p1's blackjack already finished
    assert isinstance(t.events[-1], RoundSettled)
    assert result(t, player="p1") == ("win", usdc(19.4))
    assert result(t, player="p2") == ("lose", 0)


def test_tie_splits_the_pot() -> None:
    # 004: "If more than 1 player end up with the same winning count, the pot is split"
    t = open_table("duel", ["TS", "KS", "5C", "9H", "9D", "8C"], players=3, stake=usdc(10))
    for p in ("p1", "p2", "p3"):
        t.do(Stand(p))
    assert result(t, player="p1") == ("split", usdc(14.7))  # 30 - 2% = 29.4, halved
    assert result(t, player="p2") == ("split", usdc(14.7))
    assert result(t, player="p3") == ("lose", 0)


def test_everyone_bust_shares_the_pot() -> None:
    # 004: "If all players bust (Hit 22+), the pot is shared between all players"
    t = open_table("duel", ["TS", "TD", "6H", "6D", "KC", "QC"], players=2, stake=usdc(10))
    t.do(Hit("p1"))
    t.do(Hit("p2"))
    assert [result(t, player=p) for p in ("p1", "p2")] == [("split", usdc(9.7))] * 2


@pytest.mark.parametrize(
    ("players", "fee_percent"), [(2, 3), (3, 2), (4, 1.5), (5, 1.2), (6, 1), (7, 1), (8, 1)]
)
def test_fee_schedule(players: int, fee_percent: float) -> None:
    # 004 FEES: "2 players = 3%, 3 = 2%, 4 = 1.5%, 5 = 1.2%, 6-8 players = 1%"
    cards = ["TS"] + ["2C"] * (players - 1) + ["KS"] + ["3C"] * (players - 1)
    t = open_table("duel", cards, players=players, stake=usdc(100))
    for i in range(players):
        t.do(Stand(f"p{i + 1}"))
    settled = t.s.settlement
    assert settled is not None
    assert settled.fee == round(players * usdc(100) * fee_percent / 100)
    assert settled.hands[0].gross_return + settled.fee == players * usdc(100)


def test_indivisible_remainder_goes_one_micro_each_to_the_first_winners_in_seat_order() -> None:
    # 8 players at 0.5 USDC: pot 4.0, fee 1% = 0.04, 3.96 USDC shared by 7 tied winners.
    gross, fee = duel_payouts([(20, False)] * 7 + [(18, False)], usdc(0.5), 100)
    assert fee == usdc(0.04)
    assert gross == [565_715, 565_715, 565_714, 565_714, 565_714, 565_714, 565_714, 0]
    assert sum(gross) + fee == usdc(4)


@pytest.mark.parametrize("command", [Double("p1"), Split("p1"), TakeInsurance("p1")])
def test_only_hit_and_stand(command: object) -> None:
    # 004: "Doubling, Insurance and Splits are not available as options in Duel Blackjack"
    t = open_table("duel", ["TS", "TD", "TH", "TC"], players=2, stake=usdc(1))
    with pytest.raises(DomainError) as err:
        t.do(command)  # type: ignore[arg-type]
    assert err.value.code == E.ACTION_NOT_ALLOWED


def test_fee_is_exact_for_every_stake_on_the_chip_grid_and_every_table_size() -> None:
    # Every stake 0.50 .. 500.00 USDC in 0.01 steps, 2..8 players: the fee needs no rounding,
    # so "payouts + fee = pot" never depends on the remainder rule for the fee itself.
    from casino.engine.rules import RULESETS

    rules = RULESETS["duel"]
    for players in range(2, 9):
        bps = rules.fee_bps_for(players)
        for stake in range(usdc(0.5), usdc(500) + 1, 10_000):
            assert players * stake * bps % 10_000 == 0
