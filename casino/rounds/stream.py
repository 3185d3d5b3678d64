"""A round's event stream as the engine sees it: stored rows to events, and back.

The round service writes through this module and every reader of a round (projections,
publishing, the dashboard, reconciliation) loads through it, so none of them needs the
service itself.
"""

from __future__ import annotations

from casino.engine.decider import replay
from casino.engine.events import Event, event_from_dict, event_to_dict
from casino.engine.state import RoundState
from casino.eventstore.models import StoredEvent
from casino.eventstore.store import NewEvent, load
from casino.platform.errors import ApplicationError

SCHEMA_VERSION = 1  # of the stored event data (fairness.bundle.EVENT_SCHEMA_VERSION)


def stored_to_event(stored: StoredEvent) -> Event:
    return event_from_dict({**stored.data, "type": stored.type})


def event_to_new(event: Event) -> NewEvent:
    data = event_to_dict(event)
    del data["type"]
    return NewEvent(type=event.type, data=data, schema_version=SCHEMA_VERSION)


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
