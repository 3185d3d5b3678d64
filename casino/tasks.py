"""Celery tasks of the casino app. Timer nudges arrive with the live-tables work."""

from __future__ import annotations

from typing import Any

from celery import shared_task
from django.db import connection


@shared_task(name="casino.ping")
def ping() -> dict[str, Any]:
    """Answer with the database this worker talks to (used by health checks and tests)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return {"pong": True, "vendor": connection.vendor, "database": connection.settings_dict["NAME"]}
