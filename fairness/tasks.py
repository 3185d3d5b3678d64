"""Celery tasks of the fairness app: prepare seed chains ahead of time, sequence the log."""

from __future__ import annotations

from celery import shared_task

from fairness import services, transparency
from fairness.models import SeedChain


@shared_task(name="fairness.log_sequence")
def log_sequence() -> dict[str, int]:
    """One pass of the transparency log's sequencer (beat sends it every second)."""
    done = transparency.sequence()
    return {"added": done.added, "size": done.size, "busy": int(done.busy)}


@shared_task(name="fairness.chains_refill")
def chains_refill() -> dict[str, int]:
    """Prepare the next chain of every table whose active chain is running low."""
    tables = SeedChain.objects.filter(status="active").values_list("table_id", flat=True)
    prepared = sum(services.chain_prepare_next(table_id=t) is not None for t in sorted(set(tables)))
    return {"prepared": prepared}
