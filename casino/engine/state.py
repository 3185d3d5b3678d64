"""Round state: folded from events by `evolve`, never stored as the truth.

State values are NamedTuples: immutable tuples, typed, and about five times cheaper to
build than frozen dataclasses here, which matters because every event builds a new state.
"""

from __future__ import annotations

from typing import Final, NamedTuple

from casino.engine.events import RoundOpened, RoundSettled, RoundVoided
from casino.engine.rules import RuleSet

# Hand status
OPEN: Final = "open"  # waiting for the player (or for its turn)
STOOD: Final = "stood"  # stood, doubled, reached 21, or a split ace got its card
BUST: Final = "bust"
BLACKJACK: Final = "blackjack"  # two-card 21 of an unsplit hand
EVEN_MONEY: Final = "even_money"  # seed 000: paid 1:1 at once, hand over

# Box insurance status
INS_NONE: Final = ""
INS_OFFERED: Final = "offered"
INS_EVEN_MONEY_OFFERED: Final = "even_money_offered"
INS_TAKEN: Final = "taken"
INS_DECLINED: Final = "declined"
INS_EVEN_MONEY: Final = "even_money"

# Round phase
BETTING: Final = "betting"
INSURANCE: Final = "insurance"
PLAYING: Final = "playing"  # house-banked: one hand at a time, in turn
DUELING: Final = "dueling"  # duel: everyone acts at once until the timer
BEACON: Final = "beacon"  # shared table: betting closed, the deal waits for the beacon round
SETTLED: Final = "settled"
VOIDED: Final = "voided"


class Hand(NamedTuple):
    cards: tuple[str, ...]
    positions: tuple[int, ...]
    stake: int
    hard: int  # total with every ace counted as 1
    has_ace: bool
    split: bool  # this hand came from a split
    split_aces: bool
    doubled: bool
    status: str

    @property
    def total(self) -> int:
        """Best total: an ace counts 11 unless that busts (cards.best_total, inlined)."""
        hard = self.hard
        return hard + 10 if self.has_ace and hard <= 11 else hard

    @property
    def is_soft(self) -> bool:
        return self.has_ace and self.hard <= 11

    @property
    def is_blackjack(self) -> bool:
        """Only the first two cards of an unsplit hand (seeds 000, 002)."""
        return len(self.cards) == 2 and not self.split and self.has_ace and self.hard == 11


EMPTY_HAND: Final = Hand((), (), 0, 0, False, False, False, False, OPEN)


class Box(NamedTuple):
    player_id: str
    box: int
    bet: int
    hands: tuple[Hand, ...]
    insurance: int  # insurance stake
    insurance_status: str


class RoundState(NamedTuple):
    opened: RoundOpened  # the static facts of the round
    rules: RuleSet
    phase: str
    boxes: tuple[Box, ...]  # deal and play order: seat order, then box number
    dealer: Hand
    next_position: int  # the shoe position the next card must come from
    turn: int  # index into boxes of the hand to act (-1: nobody)
    turn_hand: int
    deadline_ms: int | None
    revealed: bool  # banked: the hole card is face up; duel: every hidden card is shown
    dealer_blackjack: bool
    client_material: str
    settlement: RoundSettled | None
    voided: RoundVoided | None
    server_seed: str | None
    beacon_round: int  # the beacon round the deal waits for or took (0: none)

    @property
    def finished(self) -> bool:
        return self.phase in (SETTLED, VOIDED)

    def box_index(self, player_id: str, box: int) -> int:
        """Index into `boxes` of a player's box, or -1."""
        for i, b in enumerate(self.boxes):
            if b.player_id == player_id and b.box == box:
                return i
        return -1
