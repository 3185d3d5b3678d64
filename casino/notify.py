"""After-commit side effects of the round service: publishing and timer nudges.

Projections that must commit with the round (the dashboard's stats rows) register with
`add_in_transaction` instead: the round service calls them inside the command's transaction,
so they cost no transaction of their own and roll back with the command.

Both run only once the transaction commits (a rolled-back command never reaches a browser or
schedules a timer). Publishing to Channels groups arrives with the live tables; until then
`publish` only records what would be sent, so tests can see the hook fire after commit.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence

from django.conf import settings
from django.db import transaction

from casino.engine.state import RoundState
from casino.eventstore.models import StoredEvent

logger = logging.getLogger(__name__)

Publisher = Callable[[str, RoundState, Sequence[StoredEvent]], None]
_publishers: list[Publisher] = []
_in_transaction: list[Publisher] = []


def add_in_transaction(hook: Publisher) -> None:
    """Register a function called inside the command's transaction with its new events."""
    if hook not in _in_transaction:
        _in_transaction.append(hook)


def in_transaction(*, round_id: str, state: RoundState, events: Sequence[StoredEvent]) -> None:
    """Run the in-transaction hooks (a failure fails the command: nothing commits)."""
    for hook in list(_in_transaction):
        hook(round_id, state, events)


def add_publisher(publisher: Publisher) -> None:
    """Register a function called after commit with (round_id, state, new events)."""
    if publisher not in _publishers:
        _publishers.append(publisher)


def remove_publisher(publisher: Publisher) -> None:
    if publisher in _publishers:
        _publishers.remove(publisher)


def _publish(round_id: str, state: RoundState, events: Sequence[StoredEvent]) -> None:
    for publisher in list(_publishers):
        try:
            publisher(round_id, state, events)
        except Exception:  # a failed push never undoes a committed round; clients resume
            logger.exception("publishing round %s failed", round_id)


def _schedule_nudge(round_id: str, deadline_ms: int) -> None:
    """Ask a worker to apply the deadline when it passes (a lost nudge is caught by the sweep)."""
    if settings.CELERY_TASK_ALWAYS_EAGER:
        return  # no broker: the in-process sweep applies deadlines (casino.tasks)
    from casino.tasks import round_nudge

    delay = max(0.0, deadline_ms / 1000 - time.time())
    round_nudge.apply_async(
        kwargs={"round_id": round_id, "deadline_ms": deadline_ms}, countdown=delay
    )


def on_commit(*, round_id: str, state: RoundState, events: Sequence[StoredEvent]) -> None:
    """Publish the new events and schedule the next deadline, once the transaction commits."""
    deadline = None if state.finished else state.deadline_ms

    def after() -> None:
        _publish(round_id, state, events)
        if deadline is not None:
            try:
                _schedule_nudge(round_id, deadline)
            except Exception:  # the round has committed; beat's sweep applies the deadline
                logger.exception("scheduling the nudge of round %s failed", round_id)

    transaction.on_commit(after)
