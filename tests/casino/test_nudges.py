"""Timer nudges with a broker: coalesced per round in the process that committed the command.

`casino.rounds.publish` keeps a round's nudge pending for NUDGE_COALESCE_S; a later command replaces
its deadline, a finished round drops it, a deadline closer than twice the window is sent at
once, and a pending nudge is sent when its window ends (or when the process exits).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from casino.engine.commands import Hit, PlaceBet, Stand
from casino.engine.rules import USDC
from casino.rounds import publish, services
from tests.casino.conftest import make_player, make_table

pytestmark = pytest.mark.django_db


@pytest.fixture
def sent(settings: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[str, int]]]:
    settings.CELERY_TASK_ALWAYS_EAGER = False  # a broker is configured
    settings.NUDGE_COALESCE_S = 0.3
    calls: list[tuple[str, int]] = []
    monkeypatch.setattr(publish, "schedule_nudge", lambda r, d: calls.append((r, d)))
    yield calls
    publish.flush_nudges()


def test_a_round_played_within_the_window_sends_no_nudge(
    sent: list[tuple[str, int]], stack_shoe: Any, django_capture_on_commit_callbacks: Any
) -> None:
    stack_shoe(["9H", "5C", "7D", "TS", "2C", "4D"])
    alice = make_player("alice")
    with django_capture_on_commit_callbacks(execute=True):
        opened = services.round_open(table=make_table("classic"), players=[alice])
        for command in (PlaceBet(str(alice.pk), (USDC,)), Hit(str(alice.pk)), Stand(str(alice.pk))):
            result = services.round_command(round_id=opened.round.id, command=command)
    assert result.state.finished
    assert opened.round.id not in publish._nudges.pending  # dropped at once, not left to expire
    time.sleep(0.8)  # past the window (a real thread on real time): still nothing was sent
    assert sent == []


def test_an_open_round_gets_one_nudge_for_its_latest_deadline(
    sent: list[tuple[str, int]], stack_shoe: Any, django_capture_on_commit_callbacks: Any
) -> None:
    stack_shoe(["9H", "5C", "7D", "TS", "2C", "4D"])
    alice = make_player("alice")
    with django_capture_on_commit_callbacks(execute=True):
        opened = services.round_open(table=make_table("classic"), players=[alice])
        services.round_command(round_id=opened.round.id, command=PlaceBet(str(alice.pk), (USDC,)))
        result = services.round_command(round_id=opened.round.id, command=Hit(str(alice.pk)))
    assert not result.state.finished and result.state.deadline_ms is not None
    assert sent == []  # still inside the window
    deadline = time.monotonic() + 10
    while not sent and time.monotonic() < deadline:
        time.sleep(0.05)
    assert sent == [(opened.round.id, result.state.deadline_ms)]  # the hit's turn deadline


def test_a_near_deadline_is_sent_at_once(
    sent: list[tuple[str, int]],
    settings: Any,
    stack_shoe: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    settings.NUDGE_COALESCE_S = 40.0  # the 60 s turn timer is closer than twice the window
    stack_shoe(["9H", "5C", "7D", "TS", "2C", "4D"])
    alice = make_player("alice")
    with django_capture_on_commit_callbacks(execute=True):
        opened = services.round_open(table=make_table("classic"), players=[alice])
        result = services.round_command(
            round_id=opened.round.id, command=PlaceBet(str(alice.pk), (USDC,))
        )
    assert (opened.round.id, result.state.deadline_ms) in sent


def test_pending_nudges_are_sent_by_a_flush(
    sent: list[tuple[str, int]], settings: Any, django_capture_on_commit_callbacks: Any
) -> None:
    settings.NUDGE_COALESCE_S = 30.0  # the 2 min betting window is further than 60 s
    with django_capture_on_commit_callbacks(execute=True):
        opened = services.round_open(table=make_table("classic"), players=[make_player("bo")])
    assert sent == []
    publish.flush_nudges()  # what the process does at exit
    assert sent == [(opened.round.id, opened.state.deadline_ms)]
