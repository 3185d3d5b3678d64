"""Celery tasks of the casino app: timer nudges and the deadline sweep.

A nudge only issues the `Timeout` command; the deadline itself is data in the round's state,
and any later command applies an expired deadline first. A nudge that is lost, late or
delivered twice therefore changes nothing that the next command would not.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from celery import shared_task
from django.db import connection

from casino.models import Round, RoundStatus
from casino.platform.errors import ApplicationError
from casino.rounds.services import round_timeout

logger = logging.getLogger(__name__)


@shared_task(name="casino.ping")
def ping() -> dict[str, Any]:
    """Answer with the database this worker talks to (used by health checks and tests)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return {"pong": True, "vendor": connection.vendor, "database": connection.settings_dict["NAME"]}


@shared_task(name="casino.round_nudge", acks_late=True)
def round_nudge(*, round_id: str, deadline_ms: int) -> str:
    """Apply a round's expired deadline. An early, late or repeated nudge is harmless."""
    try:
        result = round_timeout(round_id=round_id)
    except ApplicationError as error:
        logger.info("nudge for round %s refused: %s", round_id, error.code)
        return error.code
    return result.state.phase


@shared_task(name="casino.sweep_deadlines")
def sweep_deadlines(limit: int = 500) -> int:
    """Nudge every open round whose deadline has passed (catches lost nudges). Returns the count."""
    now_ms = int(time.time() * 1000)
    due = list(
        Round.objects.filter(status=RoundStatus.OPEN, deadline_ms__lte=now_ms)
        .order_by("deadline_ms")
        .values_list("id", "deadline_ms")[:limit]
    )
    for round_id, deadline_ms in due:
        round_nudge(round_id=round_id, deadline_ms=deadline_ms)
    return len(due)
