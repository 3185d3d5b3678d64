"""`casino.client.leakcheck` on the in-between views a resumed WebSocket client is sent.

A resume replays one view per stored version, so a client also sees the states after the
reveal (HoleCardRevealed, CardsRevealed) and before the settlement, phase still "playing" or
"dueling". The simulation found the checker flagging those; these pin what is and is not a
leak.
"""

from __future__ import annotations

from typing import Any

from casino.client.leakcheck import view_leaks


def hand(status: str, *cards: str) -> dict[str, Any]:
    return {"cards": [{"card": c} for c in cards], "status": status}


def banked(status: str, *, turn: Any, blackjack: bool = False) -> dict[str, Any]:
    return {
        "round_id": "r",
        "ruleset": "duel_classic",  # hole card is the dealer's second
        "phase": "playing",
        "turn": turn,
        "server_seed": None,
        "boxes": [{"player_id": "1", "hands": [hand(status, "2S", "8H")]}],
        "dealer": {"cards": [{"card": "JD"}, {"card": "8C"}], "total": 18, "blackjack": blackjack},
    }


def test_the_dealers_turn_after_every_hand_is_done_is_not_a_leak() -> None:
    assert view_leaks(banked("stood", turn=None), "1") == []


def test_a_dealer_blackjack_found_by_the_peek_is_not_a_leak() -> None:
    assert view_leaks(banked("open", turn=None, blackjack=True), "1") == []


def test_the_hole_card_while_a_hand_is_still_open_is_a_leak() -> None:
    assert view_leaks(banked("open", turn={"box": 0, "hand": 0}), "1") == [
        "round r phase playing: the dealer's hole card 8C",
        "round r phase playing: the dealer's total",
    ]
    assert view_leaks(banked("open", turn=None), "1") != []


def duel(other_status: str) -> dict[str, Any]:
    return {
        "round_id": "d",
        "ruleset": "duel",
        "phase": "dueling",
        "turn": None,
        "server_seed": None,
        "dealer": None,
        "boxes": [
            {"player_id": "1", "hands": [hand("stood", "TS", "9H")]},
            {"player_id": "2", "hands": [hand(other_status, "8C", "7D")]},
        ],
    }


def test_duel_cards_shown_once_every_hand_stood_are_not_a_leak() -> None:
    assert view_leaks(duel("stood"), "1") == []


def test_another_duel_players_hidden_card_while_they_still_play_is_a_leak() -> None:
    assert view_leaks(duel("open"), "1") == ["round d phase dueling: player 2's hidden card 7D"]
