"""Automatic flags: malfunction voids, wins above the threshold, periodic audit failures."""

from __future__ import annotations

from typing import Any

import pytest

from casino.dashboard import review
from casino.dashboard.models import RoundReview
from casino.dashboard.tasks import audit_recent, audit_recent_rounds
from casino.engine.commands import Stand
from casino.models import Round
from casino.platform.errors import ApplicationError
from casino.rounds import projections, services
from fairness.models import RoundProof
from tests.dashboard.conftest import OPEN_HAND, make_player, make_table

pytestmark = pytest.mark.django_db


def pending_reasons(round_id: str) -> list[str]:
    row = RoundReview.objects.filter(round_id=round_id, pending=True).first()
    return row.reasons if row else []


def test_a_malfunction_void_is_flagged(open_round, monkeypatch, django_capture_on_commit_callbacks):
    round_id, player = open_round
    real = projections.project
    calls = {"n": 0}

    def broken_once(**kwargs: Any) -> Any:
        calls["n"] += 1
        if calls["n"] == 1:
            raise RuntimeError("disk on fire")
        return real(**kwargs)

    monkeypatch.setattr(projections, "project", broken_once)
    with django_capture_on_commit_callbacks(execute=True), pytest.raises(ApplicationError):
        services.round_command(round_id=round_id, command=Stand(str(player.pk)))
    assert Round.objects.get(id=round_id).status == "voided"
    assert pending_reasons(round_id) == [review.MALFUNCTION]
    flagged = review.review_events(round_id)[0]
    assert flagged.data["by"] == review.SYSTEM and "disk on fire" in flagged.data["detail"]


def test_a_win_above_the_threshold_is_flagged(
    stack_shoe, settings, django_capture_on_commit_callbacks
) -> None:
    from casino.engine.commands import PlaceBet
    from casino.engine.rules import USDC

    stack_shoe(OPEN_HAND)  # player stands on 16, dealer 5C TS 4S = 19: the player loses
    settings.REVIEW_WIN_THRESHOLD_MICRO = 5 * USDC
    player = make_player("lucky")
    table = make_table()
    with django_capture_on_commit_callbacks(execute=True):
        lost = services.round_open(table=table, players=[player]).round.id
        services.round_command(round_id=lost, command=PlaceBet(str(player.pk), (10 * USDC,)))
        services.round_command(round_id=lost, command=Stand(str(player.pk)))
    assert pending_reasons(lost) == []
    # Player TH 9C = 19 against dealer 6D + 9S (hole) = 15, draws TS: bust; the player wins 10.
    stack_shoe(["TH", "9S", "9C", "6D", "TS"])
    with django_capture_on_commit_callbacks(execute=True):
        won = services.round_open(table=table, players=[player]).round.id
        services.round_command(round_id=won, command=PlaceBet(str(player.pk), (10 * USDC,)))
        services.round_command(round_id=won, command=Stand(str(player.pk)))
    assert Round.objects.get(id=won).return_total == 20 * USDC
    assert pending_reasons(won) == [review.BIG_WIN]


def test_periodic_audit_flags_failures_once(fair_round) -> None:
    assert audit_recent_rounds() == {"audited": 1, "failed": 0, "flagged": 0}
    RoundProof.objects.filter(round_id=fair_round).delete()
    assert audit_recent(minutes=60) == {"audited": 1, "failed": 1, "flagged": 1}
    assert pending_reasons(fair_round) == [review.AUDIT_FAILURE]
    assert audit_recent(minutes=60)["flagged"] == 0  # the same failure is not flagged twice
    assert "receipt" in review.review_events(fair_round)[0].data["detail"]


def test_review_needs_notes_and_a_flag_needs_a_reason(open_round, staff) -> None:
    round_id, _ = open_round
    with pytest.raises(ApplicationError):
        review.round_flag(round_id=round_id, reason="  ", user=staff["reviewer"])
    with pytest.raises(ApplicationError):
        review.round_review_mark(round_id=round_id, notes="", user=staff["reviewer"])
    with pytest.raises(ApplicationError):
        review.round_flag(round_id="no-such-round", reason="x", user=staff["reviewer"])
    assert review.review_queue().count() == 0
    review.round_flag(round_id=round_id, reason="manual", user=staff["reviewer"])
    review.round_flag(round_id=round_id, reason="manual", user=staff["manager"])
    assert [r.id for r in review.review_queue()] == [round_id]
    assert len(review.review_events(round_id)) == 2  # staff flags are never deduplicated


def test_a_win_equal_to_the_threshold_is_not_flagged(
    stack_shoe, settings, django_capture_on_commit_callbacks
) -> None:
    from casino.engine.commands import PlaceBet
    from casino.engine.rules import USDC

    settings.REVIEW_WIN_THRESHOLD_MICRO = 10 * USDC  # "above": a net win of exactly 10 is fine
    stack_shoe(["TH", "9S", "9C", "6D", "TS"])  # the player's 19 beats the dealer's bust
    player = make_player("even")
    with django_capture_on_commit_callbacks(execute=True):
        won = services.round_open(table=make_table(), players=[player]).round.id
        services.round_command(round_id=won, command=PlaceBet(str(player.pk), (10 * USDC,)))
        services.round_command(round_id=won, command=Stand(str(player.pk)))
    assert Round.objects.get(id=won).return_total == 20 * USDC
    assert pending_reasons(won) == []
    assert review.review_events(won) == []
