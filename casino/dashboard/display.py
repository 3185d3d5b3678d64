"""How the staff dashboard prints money and people: one formatter each, used by every page,
the daily report's chart and its CSV.

Amounts are int micro-USDC (6 decimals) in and text out, by integer arithmetic only
(`ledger.money.format_amount`): at least 2 decimals, more only when the amount has them, so
nothing is rounded away (600000000 -> "600.00 USDC", 1 -> "0.000001 USDC").
"""

from __future__ import annotations

import re
from collections.abc import Mapping

SHORT_ID = 8


def short_id(value: str) -> str:
    """A round id cut to its first 8 characters (the page keeps the full id in a title)."""
    return value if len(value) <= SHORT_ID + 1 else f"{value[:SHORT_ID]}…"


def hand_label(name: str, box: int, hand: int = 0, hands: int = 1) -> str:
    """ "alice, box 1" (boxes and split hands counted from 1 for people)."""
    label = f"{name}, box {box + 1}"
    return f"{label}, hand {hand + 1}" if hands > 1 else label


def player_name(names: Mapping[str, str], player_id: str) -> str:
    """The username of an engine player id (a user's pk as text), or "player <id>"."""
    return names.get(str(player_id)) or f"player {player_id}"


_OUTCOME = re.compile(r"(\w+)/(\d+)\.(\d+):(\S+)")


def outcome_text(outcome: str, names: Mapping[str, str]) -> str:
    """`casino.rounds.projections.outcome_text` ("3/0.0:win 4/0.0:loss") with names:
    "alice box 1: win, bob box 1: loss"; a split hand adds ".2"; "voided: ..." unchanged."""
    parts = []
    for match in _OUTCOME.finditer(outcome):
        player, box, hand, result = match.groups()
        suffix = f".{int(hand) + 1}" if int(hand) else ""
        parts.append(f"{player_name(names, player)} box {int(box) + 1}{suffix}: {result}")
    return ", ".join(parts) if parts else outcome
