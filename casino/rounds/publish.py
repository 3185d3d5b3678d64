"""What a client receives about a round, and what a command sends after it commits.

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

**Timer nudges after commit** (`after_commit`): ask a worker to apply a round's next deadline
when it passes. A nudge only issues the `Timeout` command (casino.rounds.tasks.round_nudge); the
deadline itself is data in the round's state, so a lost, late or repeated nudge changes nothing.

With a broker, nudges are coalesced per round (`NUDGE_COALESCE_S`): a command whose round's
deadline is further away than twice that leaves the nudge pending in this process, and a
background thread sends it (one task message, for the round's latest deadline) once it has
waited that long. A later command of the round replaces the pending deadline; one that
finishes the round drops it; a deadline no further than twice the window away is sent at
once, as is every pending nudge when the process exits. So a round played out within the
window costs no broker call, and a nudge still reaches the broker long before its deadline.
A nudge this process never sends (it dies first) is a lost nudge: beat's sweep applies the
deadline (casino.rounds.tasks.sweep_deadlines), as for a nudge lost in the broker.
"""

from __future__ import annotations

import atexit
import json
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Final

from celery import current_app
from channels.layers import get_channel_layer
from django.conf import settings

from casino.engine.events import RoundOpened, beacon_round_time
from casino.engine.evolve import RoundState, evolve
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


# ---- timer nudges after commit ----


def schedule_nudge(round_id: str, deadline_ms: int) -> None:
    """Ask a worker to apply the deadline when it passes (a lost nudge is caught by the sweep)."""
    if settings.CELERY_TASK_ALWAYS_EAGER:
        return  # no broker: the in-process sweep applies deadlines (casino.tables.timers)
    delay = max(0.0, deadline_ms / 1000 - time.time())
    # By name: the task's module runs the round service, which calls this one.
    current_app.send_task(
        "casino.round_nudge",
        kwargs={"round_id": round_id, "deadline_ms": deadline_ms},
        countdown=delay,
    )


def _send_nudge(round_id: str, deadline_ms: int) -> None:
    try:
        schedule_nudge(round_id, deadline_ms)
    except Exception:  # the round has committed; beat's sweep applies the deadline
        logger.exception("scheduling the nudge of round %s failed", round_id)


class _Coalescer:
    """Pending nudges of this process: round id -> (deadline_ms, monotonic time to send)."""

    def __init__(self) -> None:
        self.pending: dict[str, tuple[int, float]] = {}
        self.cond = threading.Condition()
        self.thread: threading.Thread | None = None
        self.pid = 0

    def put(self, round_id: str, deadline_ms: int | None, window_s: float) -> None:
        """Record the round's deadline after a commit (None: finished, nothing to nudge)."""
        if deadline_ms is None:
            if round_id in self.pending:
                with self.cond:
                    self.pending.pop(round_id, None)
            return
        if deadline_ms / 1000 - time.time() <= 2 * window_s:  # near: send it now
            with self.cond:
                self.pending.pop(round_id, None)
            _send_nudge(round_id, deadline_ms)
            return
        with self.cond:
            if round_id not in self.pending:
                self.pending[round_id] = (deadline_ms, time.monotonic() + window_s)
                self._ensure_thread()
                self.cond.notify()
            else:  # a later command of the same round: its deadline replaces the pending one
                self.pending[round_id] = (deadline_ms, self.pending[round_id][1])

    def _ensure_thread(self) -> None:
        if self.thread is None or self.pid != os.getpid() or not self.thread.is_alive():
            self.pid = os.getpid()  # a forked child (a prefork worker) starts its own
            self.thread = threading.Thread(target=self._run, name="casino-nudges", daemon=True)
            self.thread.start()

    def _due(self, everything: bool) -> list[tuple[str, int]]:
        now = time.monotonic()
        due = [
            (round_id, deadline)
            for round_id, (deadline, send_at) in self.pending.items()
            if everything or send_at <= now
        ]
        for round_id, _ in due:
            del self.pending[round_id]
        return due

    def _run(self) -> None:
        while True:
            with self.cond:
                while True:
                    due = self._due(False)
                    if due:
                        break
                    wait = min((s for _, s in self.pending.values()), default=None)
                    self.cond.wait(None if wait is None else max(0.0, wait - time.monotonic()))
            for round_id, deadline in due:
                _send_nudge(round_id, deadline)

    def flush(self) -> None:
        """Send every pending nudge now (process exit; tests)."""
        with self.cond:
            due = self._due(True)
        for round_id, deadline in due:
            _send_nudge(round_id, deadline)


_nudges = _Coalescer()
flush_nudges = _nudges.flush
atexit.register(flush_nudges)


def beacon_after_commit(round_id: str, opened: RoundOpened, beacon_round: int) -> None:
    """Betting closed at a shared table: ask a worker to record beacon round `beacon_round`
    once it is published (`casino.beacon_nudge`, which asks again each second until the
    deadline). Without a broker the in-process timer's sweep does it; with one, beat's
    `casino.sweep_beacons` catches a nudge that was lost."""
    if settings.CELERY_TASK_ALWAYS_EAGER or opened.beacon is None:
        return
    due = beacon_round_time(opened.beacon, beacon_round) - time.time()
    try:
        current_app.send_task(  # by name, as schedule_nudge does
            "casino.beacon_nudge", kwargs={"round_id": round_id}, countdown=max(0.0, due) + 0.1
        )
    except Exception:  # the round has committed; beat's sweep records the beacon
        logger.exception("scheduling the beacon nudge of round %s failed", round_id)


def after_commit(round_id: str, deadline_ms: int | None) -> None:
    """A command committed: nudge its round's next deadline (None: finished, nothing to nudge)."""
    window = settings.NUDGE_COALESCE_S
    if window > 0 and not settings.CELERY_TASK_ALWAYS_EAGER:
        _nudges.put(round_id, deadline_ms, window)
    elif deadline_ms is not None:
        _send_nudge(round_id, deadline_ms)
