"""A round's stored events as the engine sees them, and its state folded from them.

Every reader of a round (the round service, projections, publishing, the dashboard,
reconciliation) loads through this module, so none of them needs the service itself.
"""

from __future__ import annotations

from casino.engine.decider import replay
from casino.engine.events import Event, event_from_dict
from casino.engine.evolve import RoundState
from casino.eventstore.models import StoredEvent
from casino.eventstore.store import load
from casino.platform.errors import ApplicationError


def stored_to_event(stored: StoredEvent) -> Event:
    return event_from_dict({**stored.data, "type": stored.type})


def round_load(*, round_id: str) -> tuple[list[StoredEvent], RoundState | None]:
    """A round's stored events and the state folded from them (None: no such round)."""
    stored = load(round_id)
    if not stored:
        return stored, None
    return stored, replay(stored_to_event(e) for e in stored)


def round_state_for(*, round_id: str) -> RoundState:
    """The folded state of a round (404 if none)."""
    _, state = round_load(round_id=round_id)
    if state is None:
        raise ApplicationError(f"No round {round_id}.", code="not_found", status_code=404)
    return state
