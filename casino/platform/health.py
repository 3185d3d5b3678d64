"""`GET /healthz`: the state of the database, the channel layer, the task broker and the timers,
and the checks of the layers above (the URL gives them: the transparency log, the beacon).

`timers` is the path that applies expired deadlines: the in-process timer thread (embedded
default) or a Celery worker running beat's `casino.sweep_deadlines` (with a broker). Each
finished sweep is recorded (`casino.platform.heartbeat.record_sweep`); none for
`TIMERS_STALE_S` (30 s: six of beat's 5 s periods) is a 503: beat running without a live
worker, no beat at all, or a stuck timer thread would let deadlines pass silently. A process
that started less than `TIMERS_STALE_S` ago and has seen no sweep yet reports `waiting` (its
sweeper may be starting).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping
from typing import Any

from asgiref.sync import async_to_sync
from celery import current_app
from channels.layers import get_channel_layer
from django.conf import settings
from django.db import connection
from django.http import HttpRequest, JsonResponse

from casino.platform.heartbeat import last_sweep


def check_database() -> dict[str, Any]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        cursor.fetchone()
    return {"ok": True, "vendor": connection.vendor}


async def _layer_roundtrip() -> None:
    layer = get_channel_layer()
    if layer is None:
        raise RuntimeError("no channel layer configured")
    channel = await layer.new_channel("healthz.")
    await layer.send(channel, {"type": "healthz.ping"})
    message = await asyncio.wait_for(layer.receive(channel), timeout=2.0)
    if message.get("type") != "healthz.ping":
        raise RuntimeError("channel layer returned the wrong message")


def check_channel_layer() -> dict[str, Any]:
    async_to_sync(_layer_roundtrip)()
    backend = settings.CHANNEL_LAYERS["default"]["BACKEND"].rsplit(".", 1)[-1]
    return {"ok": True, "backend": backend}


def check_broker() -> dict[str, Any]:
    if settings.CELERY_TASK_ALWAYS_EAGER:
        return {"ok": True, "backend": "in-process"}
    with current_app.connection_for_write() as conn:
        conn.ensure_connection(max_retries=1, timeout=2)
    return {"ok": True, "backend": "redis"}


_STARTED = time.monotonic()


def check_timers() -> dict[str, Any]:
    stale_s = float(getattr(settings, "TIMERS_STALE_S", 30.0))
    in_process = bool(getattr(settings, "IN_PROCESS_TIMERS", settings.CELERY_TASK_ALWAYS_EAGER))
    path = "in_process" if in_process else "worker"
    found = last_sweep()
    if found is not None:
        age = max(0.0, time.time() - float(found["at"]))
        if age <= stale_s:
            return {"ok": True, "path": found.get("by", path), "last_sweep_s": round(age, 1)}
    elif time.monotonic() - _STARTED < stale_s:
        return {"ok": True, "path": path, "last_sweep_s": None, "waiting": True}
    since = "never" if found is None else f"{age:.0f} s ago ({found.get('by')})"
    hint = (
        "the in-process timer thread is not running (IN_PROCESS_TIMERS)"
        if in_process
        else "is celery beat running, and a worker consuming its tasks?"
    )
    raise RuntimeError(f"no deadline sweep within {stale_s:.0f} s (last: {since}): {hint}")


def status_check(check: Callable[[], Mapping[str, Any]]) -> Callable[[], dict[str, Any]]:
    """A check that answers {"status": ...} (the beacon's, fairness.beaconsource.check) as one
    of /healthz's: "ok" and "off" (nothing to reach) are healthy, any other status is not."""

    def run() -> dict[str, Any]:
        result = dict(check())
        return {"ok": result.get("status") in ("ok", "off"), **result}

    return run


CHECKS = {
    "database": check_database,
    "channel_layer": check_channel_layer,
    "broker": check_broker,
    "timers": check_timers,
}


def healthz(
    request: HttpRequest, extra: Mapping[str, Callable[[], dict[str, Any]]] | None = None
) -> JsonResponse:
    """200 when every dependency answers, 503 (with the failing one named) otherwise.
    `extra`: the checks of layers above this one, given by the URL that routes here."""
    started = time.monotonic()
    results: dict[str, Any] = {}
    for name, check in {**CHECKS, **(extra or {})}.items():
        try:
            results[name] = check()
        except Exception as exc:  # a health check reports every failure, whatever its type
            results[name] = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
    healthy = all(r["ok"] for r in results.values())
    body = {
        "status": "ok" if healthy else "unhealthy",
        "checks": results,
        "elapsed_ms": round((time.monotonic() - started) * 1000, 1),
    }
    return JsonResponse(body, status=200 if healthy else 503)
