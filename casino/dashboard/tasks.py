"""Periodic audit of recently finished rounds: a failing round is flagged for staff.

Scheduled by `CELERY_BEAT_SCHEDULE["audit-recent-rounds"]`; on the embedded default it can
be run by hand with `manage.py audit_recent`. Flags are idempotent per reason, so running it
again over the same window changes nothing.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from celery import shared_task
from django.conf import settings
from django.utils import timezone

from casino.dashboard.review import AUDIT_FAILURE, round_flag
from casino.models import Round, RoundStatus
from casino.rounds.audit import audit


def audit_recent(*, minutes: int | None = None, limit: int = 2000) -> dict[str, Any]:
    """Audit rounds finished in the last `minutes`; flag each failure. Returns the counts."""
    window = minutes if minutes is not None else settings.REVIEW_AUDIT_WINDOW_MINUTES
    since = timezone.now() - timedelta(minutes=window)
    round_ids = list(
        Round.objects.exclude(status=RoundStatus.OPEN)
        .filter(finished_at__gte=since)
        .order_by("finished_at", "id")
        .values_list("id", flat=True)[:limit]
    )
    reports = audit(round_ids)
    flagged = 0
    for report in reports:
        if not report.ok:
            detail = "; ".join(report.problems)[:2000]
            flagged += round_flag(round_id=report.round_id, reason=AUDIT_FAILURE, detail=detail)
    return {"audited": len(reports), "failed": sum(not r.ok for r in reports), "flagged": flagged}


@shared_task(name="dashboard.audit_recent_rounds")
def audit_recent_rounds(minutes: int | None = None) -> dict[str, Any]:
    """Celery beat entry point of `audit_recent`."""
    return audit_recent(minutes=minutes)
