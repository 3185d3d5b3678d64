"""`/healthz` reports the timer path and answers 503 when nobody sweeps deadlines (issue 21).

With beat running and no live worker (or no beat, or a stuck in-process timer thread), round
deadlines passed and nothing said so. Every finished deadline sweep is now recorded
(`casino.tables.heartbeat.record_sweep`): the in-process timer after each tick, a worker after each
`casino.sweep_deadlines` (Celery's task_success); `/healthz` names the path and fails when the
last sweep is older than TIMERS_STALE_S, or missing once the process is past its start.
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from django.core.cache import cache
from django.test import Client

from casino.platform import health, heartbeat
from casino.tables import timers

pytestmark = pytest.mark.django_db


@pytest.fixture
def started_long_ago(monkeypatch: pytest.MonkeyPatch) -> None:
    """This process has been up longer than TIMERS_STALE_S: a missing sweep is a failure."""
    monkeypatch.setattr(health, "_STARTED", time.monotonic() - 3600)


@pytest.fixture
def in_process(settings: Any) -> None:
    """The embedded default's path (also in CI's second pass, which has a broker)."""
    settings.CELERY_TASK_ALWAYS_EAGER = True
    settings.IN_PROCESS_TIMERS = True


@pytest.fixture
def with_broker(settings: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A broker configured (the worker path), its connection check answering."""
    settings.CELERY_TASK_ALWAYS_EAGER = False
    settings.IN_PROCESS_TIMERS = False
    monkeypatch.setitem(health.CHECKS, "broker", lambda: {"ok": True, "backend": "redis"})


def timers_check(client: Client, status: int) -> dict[str, Any]:
    response = client.get("/healthz")
    assert response.status_code == status, response.content
    return dict(response.json()["checks"]["timers"])


def test_no_sweep_from_the_in_process_timer_is_a_503(
    client: Client, in_process: None, started_long_ago: None
) -> None:
    cache.delete(heartbeat.SWEPT_KEY)
    found = timers_check(client, 503)
    assert found["ok"] is False
    assert "no deadline sweep" in found["error"] and "in-process timer" in found["error"]


def test_a_tick_of_the_in_process_timer_makes_it_healthy(
    client: Client, in_process: None, started_long_ago: None
) -> None:
    timers.tick()
    found = timers_check(client, 200)
    assert found["ok"] is True and found["path"] == "in_process"
    assert 0 <= found["last_sweep_s"] < 5


def test_a_sweep_older_than_the_limit_is_a_503(
    client: Client, settings: Any, in_process: None, started_long_ago: None
) -> None:
    settings.TIMERS_STALE_S = 10
    cache.set(heartbeat.SWEPT_KEY, {"at": time.time() - 11, "by": "in_process"})
    assert "11 s ago (in_process)" in timers_check(client, 503)["error"]
    cache.set(heartbeat.SWEPT_KEY, {"at": time.time() - 9, "by": "in_process"})
    assert timers_check(client, 200)["ok"] is True


def test_a_process_just_started_waits_for_its_first_sweep(
    client: Client, in_process: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(health, "_STARTED", time.monotonic())
    cache.delete(heartbeat.SWEPT_KEY)
    found = timers_check(client, 200)
    assert found == {"ok": True, "path": "in_process", "last_sweep_s": None, "waiting": True}


def test_beat_without_a_live_worker_is_a_503_and_a_worker_s_sweep_heals_it(
    client: Client, with_broker: None, started_long_ago: None
) -> None:
    cache.delete(heartbeat.SWEPT_KEY)
    found = timers_check(client, 503)
    assert "celery beat" in found["error"] and "worker" in found["error"]
    from celery.signals import task_success

    from casino.rounds.tasks import sweep_deadlines

    task_success.send(sender=sweep_deadlines, result=0)  # what a worker sends after the task
    healed = timers_check(client, 200)
    assert healed["path"] == "worker" and healed["last_sweep_s"] < 5


def test_other_tasks_are_no_heartbeat(
    client: Client, with_broker: None, started_long_ago: None
) -> None:
    from celery.signals import task_success

    from casino.rounds.tasks import ping

    cache.delete(heartbeat.SWEPT_KEY)
    task_success.send(sender=ping, result={})
    timers_check(client, 503)


@pytest.mark.worker
def test_a_real_worker_records_its_sweep(
    client: Client, celery_worker_process: Any, started_long_ago: None, settings: Any
) -> None:
    """On a real worker (CI's second pass): the sweep beat would send, run by the worker."""
    from casino.rounds.tasks import sweep_deadlines

    settings.IN_PROCESS_TIMERS = False
    cache.delete(heartbeat.SWEPT_KEY)
    assert timers_check(client, 503)["ok"] is False
    sweep_deadlines.apply_async().get(timeout=30)
    deadline = time.monotonic() + 10  # the signal runs after the result is stored
    while heartbeat.last_sweep() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    found = timers_check(client, 200)
    assert found["path"] == "worker"
