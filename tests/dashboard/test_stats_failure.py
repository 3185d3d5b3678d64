"""A failing stats write never fails the round it describes."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pytest
from django.db import connection

from casino.dashboard import stats
from casino.engine.commands import Double, PlaceBet
from casino.engine.rules import USDC
from casino.models import Round, RoundStatus
from casino.rounds import services
from ledger.reconcile import ledger_reconcile
from tests.casino.conftest import available, make_player, make_table

pytestmark = pytest.mark.django_db

Stack = Callable[[Sequence[str]], None]


def test_a_database_error_in_the_stats_write_leaves_the_settled_round_standing(
    stack_shoe: Stack,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    django_capture_on_commit_callbacks: Any,
) -> None:
    def broken(**kwargs: Any) -> None:
        # A real database error: on PostgreSQL it aborts the transaction it runs in.
        with connection.cursor() as cursor:
            cursor.execute("SELECT * FROM no_such_stats_table")

    monkeypatch.setattr(stats, "round_contribute", broken)
    stack_shoe(["9H", "5C", "7D", "TS", "4S", "2H"])
    ann = make_player("ann")
    round_id = services.round_open(table=make_table("classic"), players=[ann]).round.id
    services.round_command(round_id=round_id, command=PlaceBet(str(ann.pk), (10 * USDC,)))
    with django_capture_on_commit_callbacks(execute=True):
        result = services.round_command(round_id=round_id, command=Double(str(ann.pk)))
    # The double wins 20 against the dealer's 17: settled and paid, not voided.
    assert result.state.phase == "settled"
    assert Round.objects.get(id=round_id).status == RoundStatus.SETTLED
    assert available(ann) == 120 * USDC
    assert ledger_reconcile().ok
    assert f"stats rows of round {round_id} not written" in caplog.text


def test_a_settled_rounds_rows_are_written_exactly_as_its_contributions(stack_shoe: Stack) -> None:
    """round_contribute writes raw values; `contributions` (what `rebuild` compares) gives
    model rows: they must be the same rows."""
    from casino.dashboard.models import StatsContribution

    stack_shoe(["9H", "5C", "7D", "TS", "4S", "2H"])
    ann = make_player("ann")
    round_id = services.round_open(table=make_table("classic"), players=[ann]).round.id
    services.round_command(round_id=round_id, command=PlaceBet(str(ann.pk), (10 * USDC,)))
    result = services.round_command(round_id=round_id, command=Double(str(ann.pk)))
    assert result.state.finished

    def fields(row: Any) -> dict[str, Any]:
        return {f.attname: getattr(row, f.attname) for f in StatsContribution._meta.concrete_fields}

    stored = [fields(r) for r in StatsContribution.objects.filter(round_id=round_id)]
    expected = [fields(r) for r in stats.contributions(round_id, result.state)]
    assert [{**r, "id": None} for r in stored] == expected
    assert stored[0]["stake"] == 20 * USDC and stored[0]["user_id"] == ann.pk
    assert stats.rebuild(write=False) == {"rows": 1, "missing": [], "extra": []}
