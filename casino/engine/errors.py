"""The engine's one business error: a stable code plus a message for humans."""

from __future__ import annotations

from typing import Final

NOT_YOUR_TURN: Final = "not_your_turn"
ACTION_NOT_ALLOWED: Final = "action_not_allowed"
BET_BELOW_MINIMUM: Final = "bet_below_minimum"
BET_ABOVE_MAXIMUM: Final = "bet_above_maximum"
INSUFFICIENT_STAKE: Final = "insufficient_stake"
ROUND_FINISHED: Final = "round_finished"
INVALID_AMOUNT: Final = "invalid_amount"
NOT_A_PARTICIPANT: Final = "not_a_participant"
ALREADY_BET: Final = "already_bet"
CONFIRM_REQUIRED: Final = "confirm_required"
DEADLINE_PASSED: Final = "deadline_passed"
SHOE_REQUIRED: Final = "shoe_required"
INVALID_TABLE: Final = "invalid_table"
ROUND_ALREADY_OPEN: Final = "round_already_open"
ROUND_NOT_OPEN: Final = "round_not_open"
ROUND_NOT_FINISHED: Final = "round_not_finished"
SEED_MISMATCH: Final = "seed_mismatch"
SEED_ALREADY_REVEALED: Final = "seed_already_revealed"
ALREADY_VOIDED: Final = "already_voided"
BEACON_MISMATCH: Final = "beacon_mismatch"  # not the awaited beacon round, or a bad signature

ALL_CODES: Final[tuple[str, ...]] = (
    NOT_YOUR_TURN,
    ACTION_NOT_ALLOWED,
    BET_BELOW_MINIMUM,
    BET_ABOVE_MAXIMUM,
    INSUFFICIENT_STAKE,
    ROUND_FINISHED,
    INVALID_AMOUNT,
    NOT_A_PARTICIPANT,
    ALREADY_BET,
    CONFIRM_REQUIRED,
    DEADLINE_PASSED,
    SHOE_REQUIRED,
    INVALID_TABLE,
    ROUND_ALREADY_OPEN,
    ROUND_NOT_OPEN,
    ROUND_NOT_FINISHED,
    SEED_MISMATCH,
    SEED_ALREADY_REVEALED,
    ALREADY_VOIDED,
    BEACON_MISMATCH,
)


class DomainError(Exception):
    """A command the rules refuse. `code` is stable (API clients switch on it)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
