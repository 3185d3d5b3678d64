"""`GET /healthz`: the state of the database, the channel layer and the task broker."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.conf import settings
from django.db import connection
from django.http import HttpRequest, JsonResponse


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
    from casino.celery import app

    if settings.CELERY_TASK_ALWAYS_EAGER:
        return {"ok": True, "backend": "in-process"}
    with app.connection_for_write() as conn:
        conn.ensure_connection(max_retries=1, timeout=2)
    return {"ok": True, "backend": "redis"}


CHECKS = {"database": check_database, "channel_layer": check_channel_layer, "broker": check_broker}


def healthz(request: HttpRequest) -> JsonResponse:
    """200 when every dependency answers, 503 (with the failing one named) otherwise."""
    started = time.monotonic()
    results: dict[str, Any] = {}
    for name, check in CHECKS.items():
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
