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
from django.conf import settings
from django.db import connection

from casino.engine.evolve import BEACON
from casino.models import Round, RoundStatus
from casino.platform.errors import ApplicationError
from casino.rounds.services import round_record_beacon, round_timeout
from casino.rounds.stream import round_load
from fairness import beaconsource

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


BEACON_RETRY_S = 1.0  # a beacon nudge that found its round not yet published asks again


def record_beacon(round_id: str) -> str:
    """Record the beacon round that `round_id` waits for, once the beacon source has it
    published and verified: "recorded", "waiting" (not published or not reachable yet: the
    round voids at its deadline if it never comes), "not_waiting", or a refusal's code. A
    round locked under another beacon than the one configured now is left to void."""
    _, state = round_load(round_id=round_id)
    if state is None or state.phase != BEACON or state.finished:
        return "not_waiting"
    if state.opened.beacon != beaconsource.spec():
        logger.warning("round %s waits for a beacon this server no longer uses", round_id)
        return "beacon_changed"
    signature = beaconsource.signature_for(state.beacon_round)
    if signature is None:
        return "waiting"
    try:
        round_record_beacon(round_id=round_id, beacon_round=state.beacon_round, signature=signature)
    except ApplicationError as error:
        _, now = round_load(round_id=round_id)
        if now is None or now.phase != BEACON:
            return "not_waiting"  # another sweep or nudge recorded it (or the round voided)
        logger.info("beacon for round %s refused: %s", round_id, error.code)
        return error.code
    return "recorded"


@shared_task(name="casino.beacon_nudge", acks_late=True)
def beacon_nudge(*, round_id: str) -> str:
    """Record a round's beacon round; not there yet: ask again in a second (a repeated or
    lost nudge is harmless: the round's phase says whether it still waits, and beat's sweep
    asks for every waiting round)."""
    outcome = record_beacon(round_id)
    if outcome == "waiting" and not settings.CELERY_TASK_ALWAYS_EAGER:
        beacon_nudge.apply_async(kwargs={"round_id": round_id}, countdown=BEACON_RETRY_S)
    return outcome


@shared_task(name="casino.sweep_beacons")
def sweep_beacons(limit: int = 500) -> int:
    """Record the beacon of every round whose beacon round is due (its deadline, the round's
    time + BEACON_WAIT_S, is at most that far off). Returns how many were recorded."""
    horizon = int(time.time() * 1000) + settings.BEACON_WAIT_S * 1000
    due = list(
        Round.objects.filter(status=RoundStatus.OPEN, phase=BEACON, deadline_ms__lte=horizon)
        .order_by("deadline_ms")
        .values_list("id", flat=True)[:limit]
    )
    return sum(record_beacon(round_id) == "recorded" for round_id in due)


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
