"""Deadlines, voids, seeds, ledger legs and views of house-banked rounds; cards and rule data."""

from __future__ import annotations

import pytest

from casino.engine.cards import DECK, best_total, totals_of
from casino.engine.commands import PlaceBet, RevealSeed, Stand, Timeout, VoidRound
from casino.engine.decider import expire
from casino.engine.events import (
    InsuranceDeclined,
    PlayerStood,
    RoundVoided,
    ServerSeedRevealed,
    event_from_dict,
    event_to_dict,
)
from casino.engine.evolve import Hand
from casino.engine.money import ledger_legs
from casino.engine.rules import RULESETS
from casino.engine.shoe import FastShoe, ShoeExhausted, StackedShoe
from casino.engine.views import Viewer, view

from .helpers import SERVER_SEED, T0, deal, open_table, result, usdc


def test_totals_hard_soft_and_the_seed_002_example() -> None:
    # 002: "Ace and 7 ... can be either 8 or 18 ... Ace, 7 and 8. Its total value is 16."
    assert best_total(*totals_of(["AS", "7D"])) == 18
    assert best_total(*totals_of(["AS", "7D", "8C"])) == 16
    assert best_total(*totals_of(["AS", "AD", "9C"])) == 21
    assert best_total(*totals_of(["KS", "QD", "JC"])) == 30


def test_blackjack_only_the_first_two_cards_of_an_unsplit_hand() -> None:
    hard, ace = totals_of(["AS", "KD"])
    assert Hand(("AS", "KD"), (0, 1), 1, hard, ace, False, False, False, "open").is_blackjack
    assert not Hand(("AS", "KD"), (0, 1), 1, hard, ace, True, True, False, "open").is_blackjack
    hard, ace = totals_of(["AS", "5D", "5C"])
    assert not Hand(
        ("AS", "5D", "5C"), (0, 1, 2), 1, hard, ace, False, False, False, "o"
    ).is_blackjack


def test_version_hashes_are_stable_and_distinct() -> None:
    hashes = {name: r.version_hash for name, r in RULESETS.items()}
    assert set(RULESETS) == {"classic", "atlantic_city", "duel", "duel_classic"}
    assert len(set(hashes.values())) == 4
    assert all(len(h) == 64 for h in hashes.values())
    # changing a parameter changes the hash
    from dataclasses import replace

    assert replace(RULESETS["classic"], max_hands=3).version_hash != hashes["classic"]


def test_shoes() -> None:
    assert FastShoe(42).card_at(10) == FastShoe(42).card_at(10)
    assert [FastShoe(1).card_at(i) for i in range(5)] != [FastShoe(2).card_at(i) for i in range(5)]
    with pytest.raises(ShoeExhausted):
        StackedShoe(["AS"]).card_at(1)
    with pytest.raises(ValueError):
        StackedShoe(["1S"])
    with pytest.raises(IndexError):
        FastShoe(1).card_at(416)


def test_a_reshuffled_fast_shoe_deals_a_full_shoe_anew_each_round() -> None:
    """The simulator plays a chunk's rounds on one FastShoe, reshuffled before each: every
    round is a whole 8-deck shoe, drawn anew, and its first cards are uniform whatever the
    order the rounds before left the card list in."""
    shoe = FastShoe(7)
    first = [shoe.card_at(i) for i in range(416)]
    shoe.reshuffle()
    again = [shoe.card_at(i) for i in range(416)]
    assert sorted(first) == sorted(again) == sorted(DECK * 8)
    assert first != again
    # the same seed deals the same rounds, round after round
    twin = FastShoe(7)
    assert [twin.card_at(i) for i in range(416)] == first
    twin.reshuffle()
    assert [twin.card_at(i) for i in range(416)] == again
    # 26,000 rounds of 2 cards: the first card is uniform over the 52 codes (chi-square, 51
    # degrees of freedom: 99.9999% of fair shoes stay under 115) and the second repeats the
    # first's code 7 times in 415, as a full shoe deals (expected 438.6, sd 20.8)
    rounds = 26_000
    counts = dict.fromkeys(DECK, 0)
    repeats = 0
    for _ in range(rounds):
        card = shoe.reshuffle().card_at(0)
        counts[card] += 1
        repeats += shoe.card_at(1) == card
    expected = rounds / 52
    chi2 = sum((n - expected) ** 2 / expected for n in counts.values())
    assert chi2 < 115
    assert abs(repeats - rounds * 7 / 415) < 5 * 20.8


def test_betting_deadline_with_no_bets_voids_the_round() -> None:
    t = open_table("classic", ["TS"] * 6)
    assert expire(t.s, T0 + 119_999, t.shoe) == []
    t.do(Timeout(), now=T0 + 120_000)
    assert isinstance(t.events[-1], RoundVoided) and t.events[-1].reason == "no_bets"


def test_betting_deadline_deals_to_the_seats_that_bet() -> None:
    t = open_table("duel_classic", ["TS", "9D", "KH", "7C"], players=2)
    t.do(PlaceBet("p2", (usdc(1),)))
    t.do(Timeout(), now=T0 + 30_000)
    assert [b.player_id for b in t.s.boxes] == ["p2"]
    assert t.s.client_material == "seed-1|seed-2"  # every participant, in seat order


def test_insurance_deadline_declines_and_turn_deadline_stands() -> None:
    t = deal("classic", ["9S", "7D", "9H", "AC", "5S"])
    t.do(Timeout(), now=T0 + 30_000)
    assert InsuranceDeclined("p1", 0, True) in t.events
    t.do(Timeout(), now=T0 + 90_000)
    assert PlayerStood("p1", 0, 0, True) in t.events
    assert result(t) == ("push", usdc(10))


def test_void_before_settlement_refunds_every_stake() -> None:
    t = deal("classic", ["8S", "7D", "8H", "9C", "3S", "TC"])
    t.do(VoidRound("malfunction", "shoe reader fault"))
    voided = t.events[-1]
    assert isinstance(voided, RoundVoided)
    assert [(r.player_id, r.amount) for r in voided.refunds] == [("p1", usdc(10))]
    assert t.balances()["player:p1"] == 0 and t.balances()["round"] == 0


def test_void_after_settlement_reverses_the_payout() -> None:
    t = deal("classic", ["AS", "7C", "KH", "9D"])  # blackjack paid 25
    assert t.balances()["player:p1"] == usdc(15)
    t.do(VoidRound("malfunction"))
    assert t.balances()["player:p1"] == 0
    assert t.balances()["house"] == 0 and t.balances()["round"] == 0


def test_seed_reveal_after_the_round() -> None:
    t = deal("classic", ["AS", "7C", "KH", "9D"])
    t.do(RevealSeed(SERVER_SEED))
    assert t.events[-1] == ServerSeedRevealed(SERVER_SEED)
    assert view(t.s, Viewer("public"))["server_seed"] == SERVER_SEED


def test_ledger_legs_of_a_settled_round() -> None:
    t = deal("classic", ["TS", "TD", "KH", "8C"])
    t.do(Stand("p1"))
    legs = [
        (leg.source, leg.destination, leg.amount, leg.reason)
        for e in t.events
        for leg in ledger_legs(e)
    ]
    assert legs == [
        ("player:p1", "round", usdc(10), "stake"),
        ("round", "player:p1", usdc(20), "payout"),
        ("house", "round", usdc(10), "house"),
    ]


def test_views_hide_the_hole_card_until_revealed() -> None:
    t = deal("classic", ["TS", "7D", "9H", "6C", "5S"])
    for viewer in (Viewer("public"), Viewer("player", "p1"), Viewer("auditor"), Viewer("staff")):
        dealer = view(t.s, viewer)["dealer"]
        assert dealer["cards"] == [{"hidden": True}, {"card": "6C", "position": 3}]
        assert dealer["total"] is None
    staff = view(t.s, Viewer("staff", can_see_hole=True))["dealer"]
    assert staff["cards"][0] == {"card": "7D", "position": 1}
    t.do(Stand("p1"))
    assert view(t.s, Viewer("public"))["dealer"]["cards"][0] == {"card": "7D", "position": 1}


def test_player_options_are_carried_in_the_round() -> None:
    t = deal("classic", ["TS", "7D", "9H", "6C"], offer_insurance=False, safety_net=True)
    assert view(t.s, Viewer("player", "p1"))["my_options"] == {
        "offer_insurance": False,
        "safety_net": True,
    }
    opened = t.events[0]
    assert event_from_dict(event_to_dict(opened)) == opened


def test_pushed_events_hide_the_hole_card_and_others_duel_cards() -> None:
    from casino.engine.events import DealerCardDealt, PlayerCardDealt
    from casino.engine.views import event_for_viewer

    hole = DealerCardDealt(1, "7D", True)
    assert event_for_viewer(hole, Viewer("public"))["card"] is None
    assert event_for_viewer(hole, Viewer("staff", can_see_hole=True))["card"] == "7D"
    second = PlayerCardDealt(3, "9H", "p1", 0, 0, True)
    assert event_for_viewer(second, Viewer("player", "p1"))["card"] == "9H"
    assert event_for_viewer(second, Viewer("player", "p2"))["card"] is None
    assert event_for_viewer(second, Viewer("auditor"))["card"] is None


def test_reenact_finds_a_tampered_round() -> None:
    from dataclasses import replace

    from casino.engine.audit import reenact
    from casino.engine.events import DealerCardDealt, RoundSettled, TurnStarted

    t = deal("classic", ["TS", "TD", "9H", "8C", "5S"])
    t.do(Stand("p1"))
    assert reenact(t.events) == []
    # the dealer "drew" on 18
    extra = DealerCardDealt(4, "5S", False)
    at = next(i for i, e in enumerate(t.events) if isinstance(e, RoundSettled))
    assert reenact([*t.events[:at], extra, *t.events[at:]])
    # a richer payout
    settled = t.events[at]
    assert isinstance(settled, RoundSettled)
    richer = replace(settled, hands=(replace(settled.hands[0], gross_return=usdc(25)),))
    assert reenact([*t.events[:at], richer])
    # a turn deadline shortened to 1 s
    turn = next(i for i, e in enumerate(t.events) if isinstance(e, TurnStarted))
    event = t.events[turn]
    assert isinstance(event, TurnStarted)
    short = replace(event, deadline_ms=event.deadline_ms - 59_000)
    assert reenact([*t.events[:turn], short, *t.events[turn + 1 :]])


def test_reenact_checks_timeouts_against_their_deadline() -> None:
    from dataclasses import replace

    from casino.engine.audit import reenact
    from casino.engine.events import RoundSettled

    t = deal("classic", ["TS", "7D", "9H", "8C", "KS"])
    t.do(Timeout(), now=T0 + 60_000)  # 19 stands by timeout; dealer 15 draws K: bust
    assert PlayerStood("p1", 0, 0, True) in t.events
    assert reenact(t.events) == []
    settled = t.events[-1]
    assert isinstance(settled, RoundSettled)
    early = replace(settled, settled_at_ms=T0 + 30_000)  # "timed out" before the deadline
    assert reenact([*t.events[:-1], early])
