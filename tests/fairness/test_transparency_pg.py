"""The transparency log under real concurrency (PostgreSQL): two sequencers started at once
never both write, and leaves queued by parallel game transactions each get one index."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest

from fairness import logaudit, transparency
from fairness.models import JournalLink, LogCheckpoint, LogLeaf, LogPending
from ledger.models import JournalEntry
from tests.api.conftest import make_player
from tests.fairness.factories import race

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def test_two_sequencers_started_at_once_never_both_write() -> None:
    for _ in range(30):
        make_player(funds=1_000_000)
    queued = LogPending.objects.count()
    assert queued == 30
    results = race(lambda: transparency.sequence(batch=10), 2)
    assert all(isinstance(r, transparency.Sequenced) for r in results), results
    # Each pass took the lock in turn or found it busy: never the same leaves twice.
    assert sum(r.added for r in results) <= 20
    while transparency.sequence(batch=10).added:
        pass
    assert LogLeaf.objects.count() == queued and not LogPending.objects.exists()
    assert sorted(LogLeaf.objects.values_list("index", flat=True)) == list(range(queued))
    assert JournalLink.objects.count() == JournalEntry.objects.count() == queued
    assert logaudit.log_problems() == []


def test_a_busy_sequencer_is_skipped_not_waited_for() -> None:
    transparency.sequence()  # the log's row exists, as the migration leaves it
    make_player(funds=1_000_000)
    entered, release = threading.Event(), threading.Event()
    original = transparency._write_tiles

    def slow_tiles(changed: Any) -> None:
        entered.set()
        release.wait(10)
        original(changed)

    transparency._write_tiles = slow_tiles  # the first pass holds the lock here
    try:
        first: list[Any] = []
        holder = threading.Thread(target=lambda: first.append(race(transparency.sequence, 1)))
        holder.start()
        assert entered.wait(10)
        transparency._write_tiles = original
        second = transparency.sequence()
        assert second.busy and second.added == 0
        release.set()
        holder.join()
    finally:
        transparency._write_tiles = original
        release.set()
    assert first[0][0].added == 1 and LogCheckpoint.objects.filter(size=1).exists()


def test_leaves_of_parallel_deposits_each_get_one_index() -> None:
    players = [make_player(funds=0) for _ in range(8)]
    from ledger import services

    def deposit(user: Any) -> Callable[[], Any]:
        return lambda: services.wallet_deposit(
            user=user, amount_micro=5_000_000, idempotency_key=f"par-{user.pk}"
        )

    workers = [deposit(p) for p in players]
    index = iter(range(len(workers)))
    results = race(lambda: workers[next(index)](), len(workers))
    assert all(not isinstance(r, str) for r in results), results
    while transparency.sequence().added:
        pass
    entries = set(JournalEntry.objects.values_list("id", flat=True))
    logged = {
        int(r) for r in LogLeaf.objects.filter(kind="journal_entry").values_list("ref", flat=True)
    }
    assert logged == entries and len(entries) == 8
    assert logaudit.log_problems() == []
