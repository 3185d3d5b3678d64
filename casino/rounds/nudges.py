"""Timer nudges after commit: ask a worker to apply a round's next deadline when it passes.

A nudge only issues the `Timeout` command (casino.rounds.tasks.round_nudge); the deadline
itself is data in the round's state, so a lost, late or repeated nudge changes nothing.

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
import logging
import os
import threading
import time

from celery import current_app
from django.conf import settings

from casino.engine.events import RoundOpened, beacon_round_time

logger = logging.getLogger(__name__)


def _schedule_nudge(round_id: str, deadline_ms: int) -> None:
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
        _schedule_nudge(round_id, deadline_ms)
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
        current_app.send_task(  # by name, as _schedule_nudge does
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
