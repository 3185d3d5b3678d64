"""Other apps' observers of committed round commands (the dashboard's stats and flags).

The round service calls its own steps itself (casino.rounds.services: publishing, nudges);
an app above it that must follow every command without the service importing it registers
here, from its `AppConfig.ready`:
- `add_in_transaction`: called inside the command's transaction with its new events (a
  failure fails the command: nothing commits), for rows that must commit with the round;
- `add_after_commit`: called once the transaction committed (a failure is logged; the round
  stays committed), for work that must not delay or undo the command.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from casino.engine.state import RoundState
from casino.eventstore.models import StoredEvent

Observer = Callable[[str, RoundState, Sequence[StoredEvent]], None]
_in_transaction: list[Observer] = []
_after_commit: list[Observer] = []


def add_in_transaction(observer: Observer) -> None:
    if observer not in _in_transaction:
        _in_transaction.append(observer)


def add_after_commit(observer: Observer) -> None:
    if observer not in _after_commit:
        _after_commit.append(observer)


def in_transaction(*, round_id: str, state: RoundState, events: Sequence[StoredEvent]) -> None:
    for observer in list(_in_transaction):
        observer(round_id, state, events)


def after_commit() -> list[Observer]:
    """The after-commit observers, in registration order."""
    return list(_after_commit)
