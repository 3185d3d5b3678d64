"""Timers: turn and betting deadlines, the duel's 30 s timer and the duel lobby.

Deadlines are data (a round's `deadline_ms`, a duel table's lobby deadline); a timer is only
a nudge that applies them, so a lost, late or repeated nudge changes nothing:

- with a broker (REDIS_URL): `casino.rounds.publish` schedules `casino.round_nudge` at each
  round deadline and `casino.tables.services.schedule_lobby` schedules `casino.lobby_nudge`;
  beat runs `sweep_deadlines` and `sweep_lobbies` every 5 s to catch any nudge that was lost;
- embedded default (no broker): the ASGI process runs `InProcessTimers`, a daemon thread that
  runs the same two sweeps every `TICK_S` seconds.

Every finished sweep of the deadlines is recorded (`record_sweep`: when, and by whom, in the
cache, which is Redis with a broker): the in-process timer after each tick, a Celery worker
after each `casino.sweep_deadlines` it ran (the `task_success` signal). `/healthz` reports
that timer path and answers 503 when nobody swept for `TIMERS_STALE_S` (beat running and no
live worker, no beat, the in-process thread stuck): deadlines would pass and nothing say so.

Abandoned hands (the watchdog): a player who stops acting is timed out by the rule set's
deadlines: no bet within the betting window sits the round out (a round nobody bet in is
voided), no insurance answer declines it, an idle hand stands when its turn timer ends, and a
duel hand stands when the 30 s timer ends. A player who comes back before that resumes where
they left off (GET /api/me/rounds/current/, or the WebSocket's resume).
"""

from __future__ import annotations

import logging
import sys
import threading
import time
from typing import Any

from celery import shared_task
from celery.signals import task_success
from django.conf import settings
from django.db import close_old_connections
from django.db.models import Count, Q

from casino.engine.rules import DUEL, RULESETS
from casino.models import RoundStatus, Table, TableStatus
from casino.platform.heartbeat import record_sweep
from casino.rounds.tasks import sweep_beacons, sweep_deadlines
from casino.tables.services import lobby_check
from fairness.tasks import log_sequence

logger = logging.getLogger(__name__)

TICK_S = 0.5
_started: threading.Thread | None = None
_lock = threading.Lock()


@task_success.connect
def _worker_swept(sender: Any = None, **kwargs: Any) -> None:
    """A worker finished `casino.sweep_deadlines` (beat sends it every 5 s): its heartbeat."""
    if getattr(sender, "name", None) == "casino.sweep_deadlines":
        record_sweep("worker")


@shared_task(name="casino.lobby_nudge", acks_late=True)
def lobby_nudge(*, table_id: int) -> str | None:
    """Start a duel whose lobby timer ended (a repeated or early nudge is a no-op)."""
    table = Table.objects.filter(pk=table_id).first()
    if table is None:
        return None
    started = lobby_check(table=table)
    return started.id if started is not None else None


@shared_task(name="casino.sweep_lobbies")
def sweep_lobbies() -> int:
    """Check every duel table with at least two READY seats and no round in play."""
    duels = [name for name, rules in RULESETS.items() if rules.kind == DUEL]
    tables = (
        Table.objects.filter(ruleset__in=duels, status=TableStatus.OPEN)
        .annotate(
            ready=Count("seated", filter=Q(seated__ready=True), distinct=True),
            playing=Count("rounds", filter=Q(rounds__status=RoundStatus.OPEN), distinct=True),
        )
        .filter(ready__gte=2, playing=0)
    )
    started = 0
    for table in tables:
        try:
            if lobby_check(table=table) is not None:
                started += 1
        except Exception:  # one table's failure (e.g. a player short of funds) spares the rest
            logger.exception("lobby of table %s did not start", table.pk)
    return started


def tick() -> None:
    """One pass of the in-process timers: expired round deadlines, the beacon rounds that
    came, ended lobbies, and the transparency log's sequencer."""
    sweep_deadlines()
    sweep_beacons()
    sweep_lobbies()
    record_sweep("in_process")
    log_sequence()


def _run() -> None:
    while True:
        close_old_connections()
        try:
            tick()
        except Exception:  # the loop must outlive a failing pass (e.g. a locked SQLite file)
            logger.exception("in-process timer pass failed")
        finally:
            close_old_connections()
        time.sleep(TICK_S)


def start_in_process() -> bool:
    """Start the timer thread once per process when there is no broker (embedded default)."""
    global _started
    if not getattr(settings, "IN_PROCESS_TIMERS", settings.CELERY_TASK_ALWAYS_EAGER):
        return False
    if "pytest" in sys.modules:
        return False  # a test process drives time itself
    with _lock:
        if _started is None:
            _started = threading.Thread(target=_run, name="casino-timers", daemon=True)
            _started.start()
            logger.info("in-process timers started (tick %.1f s)", TICK_S)
    return True
