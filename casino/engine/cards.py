"""Cards and hand totals.

A card is a two-character code, rank then suit: rank in "A23456789TJQK", suit in "SHDC"
("AS", "TD"). Points are precomputed per code (ace = 1); a hand keeps its hard total (aces
as 1) and whether it holds an ace, so the soft total is one comparison away.
"""

from __future__ import annotations

from typing import Final

RANKS: Final = "A23456789TJQK"
SUITS: Final = "SHDC"

# Seed 000 "Card Point Value": 2-9 face value, 10/J/Q/K = 10, Ace 1 or 11.
RANK_POINTS: Final[dict[str, int]] = {
    "A": 1,
    "2": 2,
    "3": 3,
    "4": 4,
    "5": 5,
    "6": 6,
    "7": 7,
    "8": 8,
    "9": 9,
    "T": 10,
    "J": 10,
    "Q": 10,
    "K": 10,
}

# Every one of the 52 codes -> points (ace = 1); the hot path reads this dict only.
CARD_POINTS: Final[dict[str, int]] = {r + s: RANK_POINTS[r] for s in SUITS for r in RANKS}

# Unshuffled deck order (fairness-v1 section 4): q -> SUITS[q // 13] + RANKS[q % 13].
DECK: Final[tuple[str, ...]] = tuple(RANKS[q % 13] + SUITS[q // 13] for q in range(52))


def is_card(code: str) -> bool:
    """True if `code` is a valid card code."""
    return code in CARD_POINTS


def points(card: str) -> int:
    """Point value of one card, ace counted as 1."""
    return CARD_POINTS[card]


def best_total(hard: int, has_ace: bool) -> int:
    """The hand's value: one ace counts 11 when that does not bust (seed 000, 002, 004)."""
    if has_ace and hard <= 11:
        return hard + 10
    return hard


def is_soft(hard: int, has_ace: bool) -> bool:
    """A soft total counts an ace as 11."""
    return has_ace and hard <= 11


def totals_of(cards: tuple[str, ...] | list[str]) -> tuple[int, bool]:
    """(hard total, has ace) of a sequence of cards."""
    hard = 0
    has_ace = False
    for card in cards:
        p = CARD_POINTS[card]
        hard += p
        if p == 1:
            has_ace = True
    return hard, has_ace
