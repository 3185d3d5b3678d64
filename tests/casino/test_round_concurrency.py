"""Concurrent commands on one round against PostgreSQL: one writer wins each version, the
other retries on the new state, and nothing is lost or posted twice."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest
from django.db import connection

from casino.engine.commands import Stand
from casino.eventstore.models import StoredEvent
from casino.models import Round
from casino.platform.errors import ApplicationError
from casino.rounds import services
from ledger.reconcile import ledger_reconcile
from tests.casino.conftest import make_player, make_table

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def in_parallel(actions: list[Callable[[], object]]) -> list[object]:
    """Run the actions in threads released together; return each result or exception."""
    barrier = threading.Barrier(len(actions))
    results: list[object] = [None] * len(actions)

    def run(index: int) -> None:
        barrier.wait()
        try:
            results[index] = actions[index]()
        except Exception as exc:  # collected and asserted on by the test
            results[index] = exc
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(actions))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return results


def test_every_duel_player_stands_at_the_same_moment() -> None:
    players = [make_player(f"duelist{i}") for i in range(4)]
    table = make_table("duel")
    opened = services.round_open(table=table, players=players)
    round_id = opened.round.id
    open_hands = [box.player_id for box in opened.state.boxes if box.hands[0].status == "open"]

    def stand(player_id: str) -> Callable[[], object]:
        return lambda: services.round_command(round_id=round_id, command=Stand(player_id))

    results = in_parallel([stand(pid) for pid in open_hands])
    errors = [r for r in results if isinstance(r, Exception)]
    # A stand that lost the race retried on the new state; none may fail for a conflict.
    assert all(isinstance(e, ApplicationError) and e.code != "version_conflict" for e in errors), [
        repr(e) for e in errors
    ]
    assert errors == [], errors
    versions = list(
        StoredEvent.objects.filter(stream_id=round_id)
        .order_by("version")
        .values_list("version", flat=True)
    )
    assert versions == list(range(1, len(versions) + 1))
    types = list(StoredEvent.objects.filter(stream_id=round_id).values_list("type", flat=True))
    assert types.count("PlayerStood") == len(open_hands)
    assert types.count("RoundSettled") == 1
    assert Round.objects.get(id=round_id).status == "settled"
    report = ledger_reconcile()
    assert report.ok, report.as_dict()


def test_the_same_void_sent_twice_at_once_voids_once() -> None:
    players = [make_player(f"pair{i}") for i in range(2)]
    round_id = services.round_open(table=make_table("duel"), players=players).round.id

    def void() -> object:
        return services.round_void(round_id=round_id, reason="double click")

    results = in_parallel([void, void])
    errors = [r for r in results if isinstance(r, Exception)]
    assert len(errors) == 1
    assert isinstance(errors[0], ApplicationError) and errors[0].code == "already_voided"
    types = list(StoredEvent.objects.filter(stream_id=round_id).values_list("type", flat=True))
    assert types.count("RoundVoided") == 1
    report = ledger_reconcile()
    assert report.ok, report.as_dict()
