"""Exact dealer odds: the final-total distribution for each up card, from the shoe's composition.

Cards are drawn without replacement from the full shoe less the up card (8 decks: 416 cards,
so 415 remain), following the dealer's drawing rule. For an Ace or ten-value up card the
dealer has peeked, so the hole card is conditioned on "no dealer blackjack": the figures are
what a player who is still in the hand faces. No player cards are removed (the usual
published convention), so these are the odds before any player card is known.

Pure: no Django, no I/O. Probabilities are floats from an exhaustive enumeration (memoised
recursion over the remaining composition), not a sample.
"""

from __future__ import annotations

from functools import cache
from typing import Final

from casino.engine.cards import RANK_POINTS
from casino.engine.rules import DUEL, RuleSet

# Result keys, in display order.
OUTCOMES: Final[tuple[str, ...]] = ("17", "18", "19", "20", "21", "bust")
# Up-card keys, in display order (ten-value cards are one key).
UP_CARD_KEYS: Final[tuple[str, ...]] = ("2", "3", "4", "5", "6", "7", "8", "9", "10", "A")

_UP_VALUES: Final[dict[str, int]] = {**RANK_POINTS, "10": 10}  # "10" names every ten

# A distribution over OUTCOMES, as a tuple in that order.
_Dist = tuple[float, float, float, float, float, float]
_BUST: Final = 5


def up_card_value(up: str) -> int:
    """Value (ace = 1) of an up card given as a key ("10", "A"), a rank ("K") or a code ("KH")."""
    if up in _UP_VALUES:
        return _UP_VALUES[up]
    if len(up) == 2 and up[0] in _UP_VALUES:
        return _UP_VALUES[up[0]]
    raise ValueError(f"not an up card: {up!r}")


def shoe_composition(decks: int) -> tuple[int, ...]:
    """Card counts by value (index 0 = aces ... index 9 = ten-value cards) for ``decks`` decks."""
    if decks < 1:
        raise ValueError("a shoe has at least one deck")
    return (4 * decks,) * 9 + (16 * decks,)


def dealer_distribution(
    up: str, *, decks: int = 8, hits_soft_17: bool = False, peek: bool = True
) -> dict[str, float]:
    """Probability of each dealer final total (17..21, bust) given the up card.

    With ``peek`` (the dealer checks for blackjack), an Ace or ten up is conditioned on the
    dealer not having blackjack. Without it, a dealer blackjack counts as a 21.
    """
    value = up_card_value(up)
    counts = list(shoe_composition(decks))
    counts[value - 1] -= 1
    excluded = -1
    if peek and value == 1:
        excluded = 9  # a ten under an Ace is a blackjack
    elif peek and value == 10:
        excluded = 0  # an Ace under a ten is a blackjack
    remaining = sum(counts) - (counts[excluded] if excluded >= 0 else 0)
    totals = [0.0] * len(OUTCOMES)
    for index, count in enumerate(counts):
        if count == 0 or index == excluded:
            continue
        after = list(counts)
        after[index] -= 1
        hard = value + index + 1
        branch = _finish(tuple(after), hard, value == 1 or index == 0, hits_soft_17)
        weight = count / remaining
        for outcome, probability in enumerate(branch):
            totals[outcome] += weight * probability
    return dict(zip(OUTCOMES, totals, strict=True))


def dealer_table(
    *, decks: int = 8, hits_soft_17: bool = False, peek: bool | tuple[int, ...] = True
) -> dict[str, dict[str, float]]:
    """The distribution for every up card, keyed "2".."10", "A".

    ``peek`` is a flag for all up cards or, like ``RuleSet.peek_up_points``, the up-card
    values (ace = 1) on which the dealer peeks.
    """
    points = (1, 10) if peek is True else () if peek is False else peek
    return {
        key: dealer_distribution(
            key, decks=decks, hits_soft_17=hits_soft_17, peek=_UP_VALUES[key] in points
        )
        for key in UP_CARD_KEYS
    }


def ruleset_dealer_table(rules: RuleSet) -> dict[str, dict[str, float]]:
    """The table for a house-banked rule set (its decks, soft-17 rule and peek policy)."""
    if rules.kind == DUEL:
        raise ValueError(f"{rules.name} has no dealer")
    return dealer_table(
        decks=rules.decks, hits_soft_17=rules.dealer_hits_soft_17, peek=rules.peek_up_points
    )


@cache
def _finish(counts: tuple[int, ...], hard: int, has_ace: bool, hits_soft_17: bool) -> _Dist:
    """Distribution of the dealer's final total from a hand (hard total + ace flag)."""
    best = hard + 10 if has_ace and hard + 10 <= 21 else hard
    soft = best != hard
    if best > 21:
        return (0.0, 0.0, 0.0, 0.0, 0.0, 1.0)
    if best > 17 or (best == 17 and not (soft and hits_soft_17)):
        result = [0.0] * len(OUTCOMES)
        result[best - 17] = 1.0
        return (result[0], result[1], result[2], result[3], result[4], result[5])
    remaining = sum(counts)
    totals = [0.0] * len(OUTCOMES)
    for index, count in enumerate(counts):
        if count == 0:
            continue
        after = (*counts[:index], count - 1, *counts[index + 1 :])
        branch = _finish(after, hard + index + 1, has_ace or index == 0, hits_soft_17)
        weight = count / remaining
        for outcome in range(len(OUTCOMES)):
            totals[outcome] += weight * branch[outcome]
    return (totals[0], totals[1], totals[2], totals[3], totals[4], totals[_BUST])


def format_table(table: dict[str, dict[str, float]]) -> str:
    """A readable table: one row per up card, percentages per final total."""
    header = "up    " + "".join(f"{outcome:>8}" for outcome in OUTCOMES)
    lines = [header, "-" * len(header)]
    for key in UP_CARD_KEYS:
        if key not in table:
            continue
        row = table[key]
        lines.append(f"{key:<6}" + "".join(f"{100 * row[o]:>7.3f}%" for o in OUTCOMES))
    return "\n".join(lines)
