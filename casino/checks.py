"""Reconciliation of each round's ledger legs against its events (`manage.py reconcile`)."""

from __future__ import annotations

from casino.eventstore.models import StoredEvent
from ledger.reconcile import Problem, register_check


@register_check("round_legs")
def check_round_legs() -> list[Problem]:
    """Every round's ledger postings net exactly what its events imply, per account."""
    from casino.roundmoney import round_legs_problems
    from casino.services import round_load, stored_to_event

    problems: list[Problem] = []
    stream_ids = StoredEvent.objects.filter(type="RoundOpened").values_list("stream_id", flat=True)
    for round_id in stream_ids.iterator():
        stored, _ = round_load(round_id=round_id)
        for message in round_legs_problems(round_id, (stored_to_event(e) for e in stored)):
            problems.append(
                Problem(
                    check="round_legs",
                    message=f"round {round_id}: {message}",
                    details={"round": round_id},
                )
            )
    return problems
