"""Celery tasks of the fairness app: prepare seed chains ahead of time."""

from __future__ import annotations

from celery import shared_task

from fairness import services
from fairness.models import SeedChain


@shared_task(name="fairness.chains_refill")
def chains_refill() -> dict[str, int]:
    """Prepare the next chain of every table whose active chain is running low."""
    tables = SeedChain.objects.filter(status="active").values_list("table_id", flat=True)
    prepared = sum(services.chain_prepare_next(table_id=t) is not None for t in sorted(set(tables)))
    return {"prepared": prepared}
