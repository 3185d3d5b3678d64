"""Shoes: where the engine's cards come from. The engine only calls `card_at(position)`.

Positions count from 0 and every round deals 0, 1, 2, ... in order (fairness-v1 section 4).
- `StackedShoe(cards)`: exact cards for tests.
- `FastShoe(seed)`: seeded, non-cryptographic, lazy 8-deck Fisher-Yates for the simulator
  (`reshuffle()` for the next round).
- The provably fair shoe is `fairness.shoe.FairShoe` (same protocol).
"""

from __future__ import annotations

from random import Random
from typing import Final, Protocol

from casino.engine.cards import DECK, is_card

SHOE_SIZE: Final = 416  # seed 000/002: eight 52-card decks
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
    """Seeded 416-card shoe, shuffled lazily: only the positions asked for are drawn. Not for
    real money: for the simulator and benchmarks only.

    Forward Fisher-Yates as in fairness-v1 (position i final after step i) on a list of the
    416 cards: j = i + (r * (416 - i)) >> 30, r being 30 bits of Python's Mersenne Twister
    (`random.Random(seed)`), so each j is within 416 / 2^30 (4e-7) of uniform.

    `reshuffle()` makes it the next round's shoe: every card back in, drawn anew from the same
    generator. The card list stays in the order the draws left it, which deals as well as the
    unshuffled order: each Fisher-Yates step picks uniformly among the cards not drawn yet,
    whatever their order, so every round's cards are a uniform draw from a full shoe and
    independent of the rounds before. The simulator reshuffles one shoe per chunk instead of
    seeding a shoe a round: seeding and copying 416 cards cost more than a duel's few draws.
    """

    __slots__ = ("_bits", "_dealt", "_deck")

    def __init__(self, seed: int) -> None:
        self._bits = Random(seed).getrandbits
        self._deck = list(_SHOE_ORDER)
        self._dealt = 0  # positions 0 .. _dealt - 1 are final

    def reshuffle(self) -> FastShoe:
        """The shoe for a new round (this one, all cards back in); returns itself."""
        self._dealt = 0
        return self

    def card_at(self, position: int) -> str:
        deck = self._deck
        dealt = self._dealt
        if position < dealt:
            return deck[position]
        if position >= SHOE_SIZE:
            raise IndexError(f"shoe position {position} outside 0..{SHOE_SIZE - 1}")
        bits = self._bits
        # The first call draws positions 0..5 (a one-box round's deal and a card or two: one
        # call that draws 6 positions is cheaper than 6 calls), later calls draw only up to
        # the position asked for (the cards after the deal are fewer than a second batch).
        end = position + 1 if position >= 6 else 6
        for i in range(dealt, end):
            j = i + ((bits(30) * (SHOE_SIZE - i)) >> 30)
            deck[i], deck[j] = deck[j], deck[i]
        self._dealt = end
        return deck[position]
