"""Timers: the duel lobby, in-process sweeps, idempotent nudges, simultaneous duel actions."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from casino.models import Round, RoundStatus, Seat, Table
from casino.rounds.services import round_open
from casino.rounds.tasks import round_nudge
from casino.tables import services as tables
from casino.tables import timers
from tests.api.conftest import Api, make_player


def duel_table(seats: int) -> Table:
    return tables.table_add(
        Table(name="d", ruleset="duel", min_bet=10**6, max_bet=10**6, stake=10**6, seats=seats)
    )


def now_ms() -> int:
    return int(time.time() * 1000)


@pytest.mark.django_db
def test_duel_starts_after_the_lobby_timer_with_two_ready_players_and_only_once() -> None:
    table = duel_table(3)
    a, b, c = (Api(make_player()) for _ in range(3))
    for p in (a, b, c):
        p.post(f"/api/tables/{table.pk}/sit/")
    a.post(f"/api/tables/{table.pk}/ready/")
    assert tables.lobby_deadline(table) is None  # one ready player: no lobby timer
    listed = b.post(f"/api/tables/{table.pk}/ready/").json()
    deadline = listed["lobby_deadline_ms"]
    assert listed["open_round"] is None and deadline is not None
    assert tables.lobby_check(table=table, at_ms=deadline - 1) is None
    started = tables.lobby_check(table=table, at_ms=deadline)
    assert started is not None
    assert sorted(started.players.values_list("user_id", flat=True)) == sorted(
        [a.user.pk, b.user.pk]
    )
    assert tables.lobby_check(table=table, at_ms=deadline + 10) is None  # a late duplicate
    assert timers.lobby_nudge(table_id=table.pk) is None
    assert Round.objects.filter(table=table).count() == 1
    assert not Seat.objects.filter(table=table, ready=True).exists()  # READY is spent


@pytest.mark.django_db
def test_in_process_tick_applies_an_expired_deadline(stack: Any) -> None:
    stack(["TS", "9H", "8C", "7D"])
    table = duel_table(2)
    players = [make_player(), make_player()]
    opened = round_open(table=table, players=players, at_ms=now_ms() - 60_000)
    assert Round.objects.get(pk=opened.round.id).status == RoundStatus.OPEN
    timers.tick()
    settled = Round.objects.get(pk=opened.round.id)
    assert settled.status == RoundStatus.SETTLED
    timers.tick()  # nothing left to do: a second pass changes nothing
    assert Round.objects.get(pk=opened.round.id).version == settled.version


@pytest.mark.django_db
def test_a_duplicate_or_late_nudge_changes_nothing() -> None:
    table = duel_table(2)
    players = [make_player(), make_player()]
    opened = round_open(table=table, players=players, at_ms=now_ms() - 60_000)
    assert round_nudge(round_id=opened.round.id, deadline_ms=0) == "settled"
    version = Round.objects.get(pk=opened.round.id).version
    assert round_nudge(round_id=opened.round.id, deadline_ms=0) == "settled"
    assert Round.objects.get(pk=opened.round.id).version == version


@pytest.mark.postgres  # SQLite's shared in-memory test database locks tables, not rows
@pytest.mark.django_db(transaction=True)
def test_two_duel_players_standing_at_the_same_moment_both_count(stack: Any) -> None:
    stack(["TS", "9H", "8C", "7D"])  # no blackjack: both hands are open
    table = duel_table(2)
    a, b = Api(make_player()), Api(make_player())
    for p in (a, b):
        p.post(f"/api/tables/{table.pk}/sit/")
    for p in (a, b):
        p.post(f"/api/tables/{table.pk}/ready/")
    round_id = Round.objects.get(table=table).id
    barrier = threading.Barrier(2)
    results: dict[int, Any] = {}

    def stand(p: Api) -> None:
        from django.db import connection

        barrier.wait()
        results[p.user.pk] = p.post(f"/api/rounds/{round_id}/stand/")
        connection.close()

    threads = [threading.Thread(target=stand, args=(p,)) for p in (a, b)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [r.status_code for r in results.values()] == [200, 200], [
        r.content for r in results.values()
    ]
    final = a.get(f"/api/rounds/{round_id}/").json()
    assert final["status"] == "settled"
    assert all(b["hands"][0]["status"] != "open" for b in final["view"]["boxes"])


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_the_real_worker_applies_a_nudge_and_its_duplicate_is_harmless(
    celery_worker_process: Any,
) -> None:
    table = duel_table(2)
    opened = round_open(
        table=table, players=[make_player(), make_player()], at_ms=now_ms() - 60_000
    )
    first = round_nudge.apply_async(kwargs={"round_id": opened.round.id, "deadline_ms": 0})
    second = round_nudge.apply_async(kwargs={"round_id": opened.round.id, "deadline_ms": 0})
    assert first.get(timeout=30) == "settled" and second.get(timeout=30) == "settled"
    settled = Round.objects.get(pk=opened.round.id)
    assert settled.status == RoundStatus.SETTLED
    from casino.eventstore.models import StoredEvent

    stream = StoredEvent.objects.filter(stream_id=opened.round.id)
    assert stream.filter(type="RoundSettled").count() == 1  # the duplicate settled nothing twice
    assert stream.count() == settled.version
