"""Leak checks on what a client receives (pure: used by the playing client and the tests).

A round view leaks when, before the round ended, it shows the dealer's hole card, a card of
another duel player beyond their first, or the server seed.
"""

from __future__ import annotations

from typing import Any

from casino.engine.rules import RULESETS

LIVE_PHASES = frozenset({"betting", "insurance", "playing", "dueling"})


def view_leaks(view: dict[str, Any], viewer_id: str | None) -> list[str]:
    """What `view` shows that its viewer must not see yet (empty: nothing)."""
    problems: list[str] = []
    phase = view.get("phase")
    where = f"round {view.get('round_id')} phase {phase}"
    if phase in LIVE_PHASES and view.get("server_seed") is not None:
        problems.append(f"{where}: server seed before the round ended")
    if phase not in LIVE_PHASES:
        return problems
    rules = RULESETS.get(str(view.get("ruleset")))
    dealer = view.get("dealer")
    if rules is not None and dealer is not None and rules.hole_card_index >= 0:
        if _hands_done(view) or dealer.get("blackjack") is True:
            return problems  # the dealer turned the hole card over: hands done, or a peek hit
        cards = dealer.get("cards") or []
        hole = rules.hole_card_index
        if len(cards) > hole and "card" in cards[hole]:
            problems.append(f"{where}: the dealer's hole card {cards[hole]['card']}")
        if len(cards) > hole and dealer.get("total") is not None:
            problems.append(f"{where}: the dealer's total")
    if dealer is None and phase == "dueling" and not _hands_done(view):
        for box in view.get("boxes") or []:
            if box.get("player_id") == viewer_id:
                continue
            for hand in box.get("hands") or []:
                shown = [c for c in (hand.get("cards") or [])[1:] if "card" in c]
                if shown:
                    problems.append(
                        f"{where}: player {box.get('player_id')}'s hidden card {shown[0]['card']}"
                    )
    return problems


def _hands_done(view: dict[str, Any]) -> bool:
    """No hand is left to act: the dealer plays out, or the duel shows every card.

    A resumed client is sent one view per stored version, so it also sees the states between
    the reveal (HoleCardRevealed, CardsRevealed) and the settlement, phase still "playing" or
    "dueling".
    """
    if view.get("phase") not in ("playing", "dueling") or view.get("turn") is not None:
        return False
    hands = [h for box in view.get("boxes") or [] for h in box.get("hands") or []]
    return all(h.get("status") != "open" for h in hands)


def message_leaks(message: Any, viewer_id: str | None) -> list[str]:
    """Leaks in any JSON a client received: every embedded round view is checked."""
    found: list[str] = []
    if isinstance(message, dict):
        if "boxes" in message and "phase" in message:
            found.extend(view_leaks(message, viewer_id))
        for value in message.values():
            if isinstance(value, dict | list):
                found.extend(message_leaks(value, viewer_id))
    elif isinstance(message, list):
        for item in message:
            found.extend(message_leaks(item, viewer_id))
    return found
