"""Reconciliation of each round's ledger legs against its events (`manage.py reconcile`)."""

from __future__ import annotations

from casino.eventstore.models import StoredEvent
from casino.rounds.money import round_legs_problems
from casino.rounds.stream import round_load, stored_to_event
from ledger.reconcile import Problem, Progress, register_check

PROGRESS_EVERY = 100  # rounds between two progress reports (and one after the last)


@register_check("round_legs", progress=True)
def check_round_legs(*, progress: Progress | None = None) -> list[Problem]:
    """Every round's ledger postings net exactly what its events imply, per account."""
    problems: list[Problem] = []
    stream_ids = StoredEvent.objects.filter(type="RoundOpened").values_list("stream_id", flat=True)
    total = stream_ids.count() if progress is not None else 0
    for done, round_id in enumerate(stream_ids.iterator(), start=1):
        stored, _ = round_load(round_id=round_id)
        for message in round_legs_problems(round_id, (stored_to_event(e) for e in stored)):
            problems.append(
                Problem(
                    check="round_legs",
                    message=f"round {round_id}: {message}",
                    details={"round": round_id},
                )
            )
        if progress is not None and (done % PROGRESS_EVERY == 0 or done == total):
            progress(done, total)
    return problems
