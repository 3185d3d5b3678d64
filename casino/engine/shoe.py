"""Shoes: where the engine's cards come from. The engine only calls `card_at(position)`.

Positions count from 0 and every round deals 0, 1, 2, ... in order (fairness-v1 section 4).
- `StackedShoe(cards)`: exact cards for tests.
- `FastShoe(seed)`: seeded, non-cryptographic, lazy 8-deck Fisher-Yates for the simulator.
- The provably fair shoe is `fairness.shoe.FairShoe` (same protocol).
"""

from __future__ import annotations

from typing import Final, Protocol

from casino.engine.cards import DECK, is_card

SHOE_SIZE: Final = 416  # seed 000/002: eight 52-card decks
_MASK64: Final = (1 << 64) - 1
_GOLDEN: Final = 0x9E3779B97F4A7C15
_SHOE_ORDER: Final = DECK * 8  # unshuffled shoe position q -> DECK[q % 52]


class Shoe(Protocol):
    def card_at(self, position: int) -> str: ...


class ShoeExhausted(IndexError):
    """A stacked shoe ran out of cards (a test stacked too few)."""


class StackedShoe:
    """A shoe whose cards are given in dealing order (position 0 first)."""

    __slots__ = ("cards",)

    def __init__(self, cards: list[str] | tuple[str, ...]) -> None:
        for card in cards:
            if not is_card(card):
                raise ValueError(f"not a card code: {card!r}")
        self.cards = tuple(cards)

    def card_at(self, position: int) -> str:
        try:
            return self.cards[position]
        except IndexError:
            raise ShoeExhausted(f"stacked shoe has no card at position {position}") from None


class FastShoe:
    """Seeded 416-card shoe, shuffled lazily: only the positions asked for are drawn.

    Forward Fisher-Yates as in fairness-v1 (position i final after step i), driven by a
    64-bit LCG (Knuth MMIX constants) seeded through splitmix64; j = i + (x * (416 - i)) >> 32
    from the top 32 bits. Not for real money: for the simulator and benchmarks only.
    """

    __slots__ = ("_cards", "_state", "_swapped")

    def __init__(self, seed: int) -> None:
        z = (seed * _GOLDEN + _GOLDEN) & _MASK64
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
        self._state = z ^ (z >> 31)
        self._cards: list[str] = []
        self._swapped: dict[int, int] = {}

    def card_at(self, position: int) -> str:
        cards = self._cards
        if position < len(cards):
            return cards[position]
        if position >= SHOE_SIZE:
            raise IndexError(f"shoe position {position} outside 0..{SHOE_SIZE - 1}")
        swapped = self._swapped
        get = swapped.get
        append = cards.append
        state = self._state
        # The first call fills positions 0..5 (a one-box round's deal and a card or two: one
        # call that fills 6 positions is cheaper than 6 calls), later calls draw only up to
        # the position asked for (the cards after the deal are fewer than a second batch).
        for i in range(len(cards), max(position + 1, 6)):
            state = (state * 6364136223846793005 + 1442695040888963407) & _MASK64
            j = i + (((state >> 32) * (SHOE_SIZE - i)) >> 32)
            picked = get(j, j)
            swapped[j] = get(i, i)
            append(_SHOE_ORDER[picked])
        self._state = state
        return cards[position]
