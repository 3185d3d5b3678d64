"""The rule sets as players read them: names, one-line summaries and the rules pages' text.

The text follows the seeds (../shared/seeds/: 000 classic, 002 atlantic_city, 004 duel and
duel_classic) in the players' own words; where a seed is silent it states this product's
choice (noted "Here:"). The engine (casino/engine/rules.py) decides; this only describes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final


@dataclass(frozen=True, slots=True)
class RuleSet:
    key: str
    name: str
    summary: str
    sections: tuple[tuple[str, tuple[str, ...]], ...]
    personal: bool = False  # a personal table on demand


CARD_VALUES: Final = (
    "Cards 2 to 10 count their face value; jack, queen and king count 10; an ace counts 11, "
    "or 1 when 11 would bust the hand.",
    "A blackjack is an ace and a ten-value card as the first two cards of a hand.",
)

RULESETS: Final[dict[str, RuleSet]] = {
    r.key: r
    for r in (
        RuleSet(
            "classic",
            "Classic blackjack",
            "One box against the dealer; eight decks shuffled every round; blackjack pays 3 to 2.",
            (
                (
                    "Betting",
                    (
                        "Click chips to add them to your bet; Deal starts the round once the "
                        "table's minimum is reached. Clear removes the bet, X2 doubles it.",
                        "After a round: Change bet, Rebet & deal (the same bet) or Double bet & "
                        "deal (twice the last bet).",
                    ),
                ),
                ("Cards", CARD_VALUES),
                (
                    "Playing",
                    (
                        "You and the dealer get two cards; the dealer's first card is face down.",
                        "Hit draws a card (a hand at 21 stands by itself), Stand stops, Double "
                        "doubles the bet for exactly one more card (also after a split), Split "
                        "makes two hands of a pair: up to three splits, four hands; split aces "
                        "take one card each.",
                        "The dealer draws to 16 and stands on every 17, soft 17 included.",
                    ),
                ),
                (
                    "Insurance and even money",
                    (
                        "With an ace up, insurance (half your bet) is offered before the dealer "
                        "checks for blackjack; it pays 2 to 1. With a ten up the dealer checks "
                        "without offering it.",
                        "Holding a blackjack against an ace you may take even money: paid 1 to 1 "
                        "at once.",
                    ),
                ),
                (
                    "Payouts",
                    (
                        "A win pays 1 to 1, a blackjack 3 to 2, a tie pushes (your bet back). A "
                        "bust loses even if the dealer busts too.",
                        "Malfunction voids all pays and plays.",
                    ),
                ),
                (
                    "Options",
                    (
                        "Animation, Audio, Offer insurance, Left-handed (the buttons swap sides), "
                        "Safety net (a warning before hitting soft 20 or hard 17 and above) and "
                        "Felt. Here: they are saved with your account and follow you to any "
                        "browser.",
                    ),
                ),
            ),
            personal=True,
        ),
        RuleSet(
            "atlantic_city",
            "Atlantic City",
            "Up to three boxes (centre, right, left), one split per box, RTP 99.51%.",
            (
                (
                    "Betting",
                    (
                        "Bet on up to three boxes: centre, right and left, each with its own bet "
                        "between the table's min and max. A box may stay empty.",
                    ),
                ),
                ("Cards", CARD_VALUES),
                (
                    "Playing",
                    (
                        "Each box is dealt two cards face up; the dealer one face up and one face "
                        "down (the second card). Boxes play in turn: centre, right, left.",
                        "Hit, Stand, Double (one more card), Split once per box; split aces take "
                        "one card each, and an ace with a ten after a split is 21, not blackjack.",
                        "With a ten or an ace up the dealer checks for blackjack; with an ace up "
                        "insurance (half the bet, pays 2 to 1) is offered before the check.",
                        "The dealer stands on 17.",
                    ),
                ),
                (
                    "Payouts",
                    (
                        "A win pays 1 to 1, a blackjack 3 to 2, a tie pushes, insurance 2 to 1.",
                        "RTP (return to player) is 99.51%.",
                        "Malfunction voids all plays and pays.",
                    ),
                ),
            ),
            personal=True,
        ),
        RuleSet(
            "duel",
            "Duel blackjack",
            "Players against each other for a fixed stake; 30 s to play; the best hand wins.",
            (
                ("The stake", ("Every player stakes the table's fixed amount (0.5 to 500 USDC).",)),
                (
                    "Playing",
                    (
                        "Sit, then press Ready. The duel starts when every seat is ready, or "
                        "shortly after a second player is (the lobby countdown).",
                        "You see both your cards and one card of every opponent. For 30 s "
                        "everyone may Hit or Stand at once; no double, split or insurance.",
                        "When all stood or the timer ends, every card is revealed together.",
                    ),
                ),
                (
                    "Winning",
                    (
                        "The hand closest to 21 wins; 22 or more loses; a blackjack beats a "
                        "21. Tied best hands share the pot; if everyone busts, all share it.",
                        "The fee comes off the pot: 3% with 2 players, 2% with 3, 1.5% with 4, "
                        "1.2% with 5 and 1% with 6 to 8.",
                    ),
                ),
                ("Cards", CARD_VALUES),
            ),
        ),
        RuleSet(
            "duel_classic",
            "Duel classic",
            "A shared table against the dealer; seats play in turn; 20-21 push, 17-19 lose.",
            (
                (
                    "Betting",
                    (
                        "Sit, then bet at least the table's minimum within the betting window "
                        "(30 s after the first bet); who does not bet sits the round out.",
                    ),
                ),
                (
                    "Playing",
                    (
                        "Seats play one after another, each turn with a 30 s timer (a turn that "
                        "times out stands). Everyone's cards are public; the dealer's hole card "
                        "is hidden until the dealer plays.",
                        "Hit, Stand, Double, Split (a pair). With an ace up, insurance up to half "
                        "the bet pays 2 to 1.",
                    ),
                ),
                (
                    "Ties and blackjack",
                    (
                        "A tie at 17, 18 or 19 loses your bet; a tie at 20 or 21 pushes.",
                        "A blackjack pays 2.5 to 1 against a dealer below 21 and 2 to 1 against "
                        "a dealer 21; against a dealer blackjack it pushes.",
                    ),
                ),
                ("Cards", CARD_VALUES),
            ),
        ),
    )
}
