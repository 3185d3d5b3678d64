"""Basic strategy (8 decks, dealer stands on soft 17, double after split, peek) and duel strategy.

The tables are data: one row per player total (or pair), one column per dealer up card
(2..10, then A). Cell codes, the usual chart notation:

- ``H`` hit, ``S`` stand, ``P`` split,
- ``D`` double if allowed, otherwise hit; ``Ds`` double if allowed, otherwise stand.

Surrender is not offered by any of our rule sets, so the chart has no surrender cells.
Insurance and even money are never taken: at 8 decks the insurance bet loses about 7%.

Pure: no Django, no I/O. Cards are the engine's codes (rank + suit, e.g. ``"TD"``); only the
rank is read, so a bare rank (``"T"``, ``"A"``) works too.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final, Literal

from casino.engine.cards import RANK_POINTS

Move = Literal["hit", "stand", "double", "split"]

HIT: Final[Move] = "hit"
STAND: Final[Move] = "stand"
DOUBLE: Final[Move] = "double"
SPLIT: Final[Move] = "split"

# Column order of every table row: dealer up card value 2..10, then Ace (value 1).
UP_CARDS: Final[tuple[int, ...]] = (2, 3, 4, 5, 6, 7, 8, 9, 10, 1)

_RANK_VALUES: Final = RANK_POINTS  # seed 000 card values, ace = 1


def _row(cells: str) -> dict[int, str]:
    """Parse one chart row written as space-separated cells for up cards 2..10, A."""
    parts = cells.split()
    if len(parts) != len(UP_CARDS):
        raise ValueError(f"a chart row needs {len(UP_CARDS)} cells: {cells!r}")
    return dict(zip(UP_CARDS, parts, strict=True))


# Hard totals (no ace counted as 11). 4-8 always hit, 17+ always stand.
#                   2  3  4  5  6  7  8  9  10 A
HARD: Final[Mapping[int, Mapping[int, str]]] = {
    **{total: _row("H  H  H  H  H  H  H  H  H  H") for total in range(4, 9)},
    9: _row("H  D  D  D  D  H  H  H  H  H"),
    10: _row("D  D  D  D  D  D  D  D  H  H"),
    11: _row("D  D  D  D  D  D  D  D  D  H"),  # S17, multi-deck: hit 11 against an Ace
    12: _row("H  H  S  S  S  H  H  H  H  H"),
    13: _row("S  S  S  S  S  H  H  H  H  H"),
    14: _row("S  S  S  S  S  H  H  H  H  H"),
    15: _row("S  S  S  S  S  H  H  H  H  H"),
    16: _row("S  S  S  S  S  H  H  H  H  H"),
    **{total: _row("S  S  S  S  S  S  S  S  S  S") for total in range(17, 22)},
}

# Soft totals (an ace counted as 11): soft 12 = AA unsplit, soft 13 = A2 ... soft 21.
#                   2  3  4  5  6  7  8  9  10 A
SOFT: Final[Mapping[int, Mapping[int, str]]] = {
    12: _row("H  H  H  H  H  H  H  H  H  H"),
    13: _row("H  H  H  D  D  H  H  H  H  H"),
    14: _row("H  H  H  D  D  H  H  H  H  H"),
    15: _row("H  H  D  D  D  H  H  H  H  H"),
    16: _row("H  H  D  D  D  H  H  H  H  H"),
    17: _row("H  D  D  D  D  H  H  H  H  H"),
    18: _row("S  Ds Ds Ds Ds S  S  H  H  H"),  # S17: stand soft 18 against a 2
    19: _row("S  S  S  S  S  S  S  S  S  S"),  # S17: stand soft 19 against a 6
    20: _row("S  S  S  S  S  S  S  S  S  S"),
    21: _row("S  S  S  S  S  S  S  S  S  S"),
}

# Pairs, keyed by the value of one card (1 = aces), with double after split allowed.
# A cell that is not P falls through to the hard/soft tables ("-").
#                   2  3  4  5  6  7  8  9  10 A
PAIRS_DAS: Final[Mapping[int, Mapping[int, str]]] = {
    1: _row("P  P  P  P  P  P  P  P  P  P"),
    2: _row("P  P  P  P  P  P  -  -  -  -"),
    3: _row("P  P  P  P  P  P  -  -  -  -"),
    4: _row("-  -  -  P  P  -  -  -  -  -"),
    5: _row("-  -  -  -  -  -  -  -  -  -"),  # never split fives: play them as hard 10
    6: _row("P  P  P  P  P  -  -  -  -  -"),
    7: _row("P  P  P  P  P  P  -  -  -  -"),
    8: _row("P  P  P  P  P  P  P  P  P  P"),
    9: _row("P  P  P  P  P  -  P  P  -  -"),
    10: _row("-  -  -  -  -  -  -  -  -  -"),
}

# The same chart where doubling after a split is not allowed (splitting small pairs is worth
# less when the split hands cannot be doubled).
PAIRS_NO_DAS: Final[Mapping[int, Mapping[int, str]]] = {
    **PAIRS_DAS,
    2: _row("-  -  P  P  P  P  -  -  -  -"),
    3: _row("-  -  P  P  P  P  -  -  -  -"),
    4: _row("-  -  -  -  -  -  -  -  -  -"),
    6: _row("-  P  P  P  P  -  -  -  -  -"),
}


def card_value(card: str) -> int:
    """Point value of a card code with the ace as 1 (``"KH"`` -> 10, ``"AS"`` -> 1)."""
    return _RANK_VALUES[card[0]]


def hand_total(cards: Iterable[str]) -> tuple[int, bool]:
    """Best total of a hand and whether it is soft (an ace counted as 11)."""
    total = 0
    has_ace = False
    for card in cards:
        value = _RANK_VALUES[card[0]]
        total += value
        has_ace = has_ace or value == 1
    if has_ace and total <= 11:
        return total + 10, True
    return total, False


def basic_strategy(
    cards: Sequence[str],
    dealer_up: str,
    allowed: Collection[Move],
    *,
    double_after_split: bool = True,
) -> Move:
    """The basic-strategy move for a hand against the dealer's up card.

    ``allowed`` is what the rules permit right now (e.g. ``{"hit", "stand", "double"}``);
    the returned move is always one of them. ``double_after_split`` picks the pair chart.
    """
    if not allowed:
        raise ValueError("no move is allowed")
    up = _RANK_VALUES[dealer_up[0]]
    if SPLIT in allowed and len(cards) == 2:
        first = _RANK_VALUES[cards[0][0]]
        if first == _RANK_VALUES[cards[1][0]]:
            pairs = PAIRS_DAS if double_after_split else PAIRS_NO_DAS
            if pairs[first][up] == "P":
                return SPLIT
    total, soft = hand_total(cards)
    if total > 21:
        raise ValueError(f"hand {list(cards)} is bust")
    cell = (SOFT if soft else HARD)[max(total, 4)][up]
    for move in _PREFERENCES[cell]:
        if move in allowed:
            return move
    # Only a split or double is left (a rule set would have to forbid hit and stand).
    return sorted(allowed)[0]


# What each chart cell asks for, best first (a double that is not allowed falls back).
_PREFERENCES: Final[dict[str, tuple[Move, ...]]] = {
    "D": (DOUBLE, HIT, STAND),
    "Ds": (DOUBLE, STAND, HIT),
    "H": (HIT, STAND),
    "S": (STAND, HIT),
}


def takes_insurance(cards: Sequence[str], dealer_up: str) -> bool:
    """Basic strategy never takes insurance (nor even money): the bet has a negative edge."""
    return False


@dataclass(frozen=True, slots=True)
class DuelStrategy:
    """Duel play (hit or stand only): hit while the best total is at most ``hit_until``."""

    hit_until: int = 16

    def move(self, cards: Sequence[str], allowed: Iterable[Move] = (HIT, STAND)) -> Move:
        """Hit on ``hit_until`` or less, otherwise stand (a blackjack or 21 always stands)."""
        permitted = frozenset(allowed)
        total, _ = hand_total(cards)
        wanted = (HIT, STAND) if self.hits(total) else (STAND, HIT)
        for move in wanted:
            if move in permitted:
                return move
        raise ValueError("duel play needs hit or stand to be allowed")

    def hits(self, total: int) -> bool:
        """Whether a hand of best total `total` hits (when both moves are allowed)."""
        return total <= self.hit_until and total < 21


DUEL_DEFAULT: Final = DuelStrategy()
