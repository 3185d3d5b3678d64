"""The Channels publisher: after a command commits, each viewer of a round gets its view.

Groups: `table.<id>` (spectators; the public view) and `player.<id>` (a participant's own
view, private). A participant's consumer ignores the public copy, so each recipient gets
exactly one message per committed command. Messages carry the round's stream versions
(`from_version`..`version`): a consumer that sees a gap reads the missed versions from the
event store (`round_messages`), so a message dropped by the layer is never lost to a client.
Nothing here reads a secret: views hide hole cards, hidden duel cards and unrevealed seeds.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from channels.layers import get_channel_layer

from casino.engine.evolve import evolve
from casino.engine.state import RoundState
from casino.engine.views import Viewer, view
from casino.eventstore.models import StoredEvent
from casino.platform import layersend
from casino.rounds.stream import stored_to_event
from casino.rounds.viewjson import round_view_out

logger = logging.getLogger(__name__)


def table_group(table_id: str | int) -> str:
    return f"table.{table_id}"


def player_group(player_id: str | int) -> str:
    return f"player.{player_id}"


def message(
    *, state: RoundState, viewer: Viewer, from_version: int, version: int, types: Sequence[str]
) -> dict[str, Any]:
    """The one message shape a client receives about a round."""
    return {
        "type": "round",
        "round_id": state.opened.round_id,
        "table_id": state.opened.table_id,
        "from_version": from_version,
        "version": version,
        "events": list(types),
        "view": round_view_out(view(state, viewer)),  # amounts as USDC strings
        "published_at": time.time(),  # lets a client measure publish-to-receive latency
    }


def publish_round(round_id: str, state: RoundState, events: Sequence[StoredEvent]) -> None:
    """After commit (casino.rounds.services): the public view to the table, each player's own to
    them."""
    layer = get_channel_layer()
    if layer is None or not events:
        return
    first, last = events[0].version, events[-1].version
    types = [e.type for e in events]
    participants = [p.player_id for p in state.opened.participants]
    meta = {
        "round_id": round_id,
        "table_id": state.opened.table_id,
        "from_version": first,
        "version": last,
    }

    # Each view is built (and serialized once: the layer then copies one string per socket,
    # not a nested dict) only if someone listens on its group (casino.platform.layersend).
    def public() -> dict[str, Any]:
        shown = message(
            state=state, viewer=Viewer("public"), from_version=first, version=last, types=types
        )
        return {
            "type": "round.public",
            "participants": participants,
            "meta": meta,
            "text": json.dumps(shown),
        }

    def private(player_id: str) -> Callable[[], dict[str, Any]]:
        def build() -> dict[str, Any]:
            own = message(
                state=state,
                viewer=Viewer("player", player_id),
                from_version=first,
                version=last,
                types=types,
            )
            return {"type": "round.private", "meta": meta, "text": json.dumps(own)}

        return build

    sends: list[layersend.Send] = [(table_group(state.opened.table_id), public)]
    sends += [(player_group(player_id), private(player_id)) for player_id in participants]
    # In order, the table's first, then each player's; with the command's other after-commit
    # sends, together (casino.platform.layersend).
    layersend.send(sends)


def round_messages(
    stored: Sequence[StoredEvent], viewer: Viewer, *, after_version: int, upto: int | None = None
) -> Iterator[dict[str, Any]]:
    """One message per stored version in (after_version, upto], rebuilt from the event store."""
    state: RoundState | None = None
    for event in stored:
        state = evolve(state, stored_to_event(event))
        if event.version <= after_version:
            continue
        if upto is not None and event.version > upto:
            break
        yield message(
            state=state,
            viewer=viewer,
            from_version=event.version,
            version=event.version,
            types=[event.type],
        )
