"""The money each event implies, in one place: the round service posts exactly these legs and
reconciliation re-derives them from the stored events.

A leg moves `amount` (> 0, micro-USDC) from `source` to `destination`, both abstract
accounts the ledger maps to its own:
- "player:<id>": the player's balance,
- "round": the round's escrow (every stake sits here until settlement; ends at 0),
- "house": the house bankroll (banked games win or lose against it),
- "fees": the house's duel fee revenue.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from casino.engine.events import (
    EVENT_TYPES,
    BetPlaced,
    Event,
    HandDoubled,
    HandSplit,
    InsuranceTaken,
    RoundSettled,
    RoundVoided,
)
from casino.engine.fastdata import fast_init

ROUND: Final = "round"
HOUSE: Final = "house"
FEES: Final = "fees"


def player_account(player_id: str) -> str:
    return f"player:{player_id}"


@fast_init  # the frozen dataclass's __init__ without object.__setattr__ per field
@dataclass(frozen=True, slots=True)
class Leg:
    source: str
    destination: str
    amount: int
    reason: str  # stake, payout, fee, house, refund, payout_reversal, fee_reversal


def _add(legs: list[Leg], source: str, destination: str, amount: int, reason: str) -> None:
    if amount > 0:
        legs.append(Leg(source, destination, amount, reason))
    elif amount < 0:
        legs.append(Leg(destination, source, -amount, reason))


_STAKES: Final = (BetPlaced, HandDoubled, HandSplit, InsuranceTaken)
# The event classes that move money (ledger_legs tests for these), and every other event
# class (no instance of one is an instance of these: ledger_legs gives [] for it).
MONEY_EVENTS: Final = frozenset({*_STAKES, RoundSettled, RoundVoided})
NO_MONEY_EVENTS: Final = frozenset(
    cls for cls in EVENT_TYPES.values() if not issubclass(cls, tuple(MONEY_EVENTS))
)


def ledger_legs(event: Event) -> list[Leg]:
    """The money `event` moves (empty for events that move none)."""
    legs: list[Leg] = []
    if isinstance(event, _STAKES):
        _add(legs, player_account(event.player_id), ROUND, event.amount, "stake")
    elif isinstance(event, RoundSettled):
        staked = 0
        paid: dict[str, int] = {}
        for results in (event.hands, event.insurance):
            for r in results:
                staked += r.stake
                paid[r.player_id] = paid.get(r.player_id, 0) + r.gross_return
        for player_id, amount in paid.items():
            _add(legs, ROUND, player_account(player_id), amount, "payout")
        _add(legs, ROUND, FEES, event.fee, "fee")
        # Banked games: what is left in escrow is the house's (negative: the house pays in).
        _add(legs, ROUND, HOUSE, staked - sum(paid.values()) - event.fee, "house")
    elif isinstance(event, RoundVoided):
        refunded = sum(r.amount for r in event.refunds)
        reversed_ = sum(r.amount for r in event.reversed_payouts)
        for back in event.reversed_payouts:
            _add(legs, player_account(back.player_id), ROUND, back.amount, "payout_reversal")
        _add(legs, FEES, ROUND, event.reversed_fee, "fee_reversal")
        if event.was_settled:
            # Settled before the void: the house hands back what it kept from escrow.
            _add(legs, HOUSE, ROUND, refunded - reversed_ - event.reversed_fee, "house_reversal")
        for refund in event.refunds:
            _add(legs, ROUND, player_account(refund.player_id), refund.amount, "refund")
    return legs
