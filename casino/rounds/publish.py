"""What a client receives about a round: its view as JSON, and the pushes after a command.

**The view's JSON** (`round_view_out`): money at the game API's edge is USDC as a decimal
string with exactly 6 places. The engine, the events and the ledger keep integer micro-USDC
(1 USDC = 1,000,000). Every response and WebSocket message prints an amount with
`ledger.money.format_amount` (`1000000` -> `"1.000000"`); requests take a decimal string with
at most 6 places (`ledger.money.parse_amount`). A JSON number is never money.
`round_view_out` is the one conversion of a round view (`casino.engine.views.view`) for a
client: REST answers, command results, pushes and the recall list all pass through it. The
fairness bundle and the verifier keep their integer micro-USDC (their own spec).

**The Channels publisher** (`publish_round`): after a command commits, each viewer of a round
gets its view. Groups: `table.<id>` (spectators; the public view) and `player.<id>` (a
participant's own view, private). A participant's consumer ignores the public copy, so each
recipient gets exactly one message per committed command. Messages carry the round's stream
versions (`from_version`..`version`): a consumer that sees a gap reads the missed versions
from the event store (`round_messages`), so a message dropped by the layer is never lost to a
client. Nothing here reads a secret: views hide hole cards, hidden duel cards and unrevealed
seeds.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Final

from channels.layers import get_channel_layer

from casino.engine.evolve import evolve
from casino.engine.state import RoundState
from casino.engine.views import Viewer, view
from casino.eventstore.models import StoredEvent
from casino.platform import layersend
from casino.platform.errors import ApplicationError
from casino.rounds.stream import stored_to_event
from ledger.money import format_amount, parse_amount

logger = logging.getLogger(__name__)

# The money keys of a round view, by where they sit.
BOX_MONEY: Final = ("bet", "insurance")
HAND_MONEY: Final = ("stake",)
OPTIONS_MONEY: Final = ("min_bet", "max_bet", "chip_unit", "stake")
RESULT_MONEY: Final = ("stake", "gross_return")  # settlement.hands[], settlement.insurance[]
SETTLEMENT_MONEY: Final = ("fee",)
VOID_MONEY: Final = ("reversed_fee",)
VOID_LISTS: Final = ("refunds", "reversed_payouts")  # [{"player_id", "amount"}]


def usdc(value: Any) -> Any:
    """An int of micro-USDC as its 6-place string; anything else (None) as it is."""
    if type(value) is int:
        return format_amount(value)
    return value


def usdc_any(value: Any) -> Any:
    """An amount given as micro-USDC or as a decimal string, printed with 6 places (a string
    that is no amount, or None, stays as it is)."""
    if type(value) is str:
        try:
            return format_amount(parse_amount(value, allow_zero=True))
        except ApplicationError:  # not an amount this edge would take: shown as it came
            return value
    return usdc(value)


def _amounts(item: Any, keys: tuple[str, ...]) -> Any:
    if not isinstance(item, dict):
        return item
    out = dict(item)
    for key in keys:
        if key in out:
            out[key] = usdc(out[key])
    return out


def _each(items: Any, keys: tuple[str, ...]) -> Any:
    if not isinstance(items, list):
        return items
    return [_amounts(item, keys) for item in items]


def round_view_out(view: dict[Any, Any]) -> dict[str, Any]:
    """A round view for a client: the same keys, every amount a 6-place USDC string."""
    out = {str(key): value for key, value in view.items()}
    boxes = out.get("boxes")
    if isinstance(boxes, list):
        shown = []
        for box in boxes:
            box = _amounts(box, BOX_MONEY)
            if isinstance(box, dict) and "hands" in box:
                box["hands"] = _each(box["hands"], HAND_MONEY)
            shown.append(box)
        out["boxes"] = shown
    if "options" in out:
        out["options"] = _amounts(out["options"], OPTIONS_MONEY)
    settlement = out.get("settlement")
    if isinstance(settlement, dict):
        settlement = _amounts(settlement, SETTLEMENT_MONEY)
        for key in ("hands", "insurance"):
            if key in settlement:
                settlement[key] = _each(settlement[key], RESULT_MONEY)
        out["settlement"] = settlement
    voided = out.get("voided")
    if isinstance(voided, dict):
        voided = _amounts(voided, VOID_MONEY)
        for key in VOID_LISTS:
            if key in voided:
                voided[key] = _each(voided[key], ("amount",))
        out["voided"] = voided
    return out


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
