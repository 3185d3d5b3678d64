"""The append contract under concurrency, and readers that never skip a late commit (PostgreSQL)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection, transaction
from django.db.models import Max

from casino.eventstore import ConcurrencyError, NewEvent, append, load, read_after, verify_stream
from casino.eventstore.models import StoredEvent
from tests.eventstore.conftest import new_stream

pytestmark = [pytest.mark.postgres, pytest.mark.slow, pytest.mark.usefixtures("purge_events")]

WRITERS = 10
APPENDS_PER_WRITER = 100
STREAMS = 10
READERS = 2
WAIT = 60.0  # seconds: a bound on waits that normally end in milliseconds


def _in_thread(fn: Callable[[], Any], errors: list[BaseException]) -> threading.Thread:
    def run() -> None:
        try:
            fn()
        except BaseException as exc:  # reported by the test thread
            errors.append(exc)
        finally:
            connection.close()

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def test_ten_writers_lose_and_duplicate_nothing_and_readers_see_no_gap() -> None:
    streams = [new_stream() for _ in range(STREAMS)]
    conflicts = [0] * WRITERS
    errors: list[BaseException] = []
    writers_done = threading.Event()
    seen: list[list[int]] = [[] for _ in range(READERS)]

    def writer(w: int) -> None:
        for i in range(APPENDS_PER_WRITER):
            stream = streams[(w + i) % STREAMS]
            while True:
                try:
                    with transaction.atomic(durable=True):
                        head = StoredEvent.objects.filter(stream_id=stream).aggregate(
                            v=Max("version")
                        )["v"]
                        append(
                            stream_id=stream,
                            expected_version=head or 0,
                            events=[NewEvent("Appended", {"writer": w, "i": i})],
                        )
                    break
                except ConcurrencyError:
                    conflicts[w] += 1

    def reader(r: int) -> None:
        cursor = 0
        deadline = None
        idle = threading.Event()  # never set: wait() is only a pause between empty pages
        while len(seen[r]) < WRITERS * APPENDS_PER_WRITER:
            if deadline is None and writers_done.is_set():
                # Other sessions' open transactions may hold the watermark back for a while.
                deadline = time.monotonic() + WAIT
            if deadline is not None and time.monotonic() > deadline:
                return
            page = read_after(cursor, limit=50)
            seen[r] += [e.position for e in page]
            if page:
                cursor = page[-1].position
            else:
                idle.wait(0.005)

    readers = [_in_thread(lambda r=r: reader(r), errors) for r in range(READERS)]
    writers = [_in_thread(lambda w=w: writer(w), errors) for w in range(WRITERS)]
    for thread in writers:
        thread.join(WAIT)
    writers_done.set()
    for thread in readers:
        thread.join(WAIT)
    assert not errors, errors

    appended = sorted(
        (e["data"]["writer"], e["data"]["i"])
        for e in StoredEvent.objects.filter(stream_id__in=streams).values("data")
    )
    assert appended == [(w, i) for w in range(WRITERS) for i in range(APPENDS_PER_WRITER)]
    for stream in streams:
        events = load(stream)
        assert [e.version for e in events] == list(range(1, len(events) + 1))
        assert verify_stream(events) == []
    everything = list(StoredEvent.objects.order_by("position").values_list("position", flat=True))
    assert len(everything) == WRITERS * APPENDS_PER_WRITER
    for positions in seen:
        # In order, no repeats, and nothing committed late below a position already passed.
        assert positions == everything
    print(f"conflicts retried: {sum(conflicts)}")


def test_a_late_commit_below_the_cursor_is_not_skipped() -> None:
    early, late = new_stream(), new_stream()
    early_appended = threading.Event()
    release_early = threading.Event()
    errors: list[BaseException] = []

    def early_writer() -> None:
        with transaction.atomic(durable=True):
            append(stream_id=early, expected_version=0, events=[NewEvent("Early", {})])
            early_appended.set()
            assert release_early.wait(WAIT)

    thread = _in_thread(early_writer, errors)
    assert early_appended.wait(WAIT)
    with transaction.atomic(durable=True):
        (late_event,) = append(stream_id=late, expected_version=0, events=[NewEvent("Late", {})])

    # The late transaction committed first; a naive "position > P" reader would take it now
    # and later skip the early one, whose position is lower.
    assert list(StoredEvent.objects.values_list("stream_id", flat=True)) == [late]
    assert [e.stream_id for e in read_after(0)] == []

    release_early.set()
    thread.join(WAIT)
    assert not errors, errors
    deadline = time.monotonic() + WAIT
    while len(events := read_after(0)) < 2 and time.monotonic() < deadline:
        release_early.wait(0.01)  # other sessions' open transactions can hold the watermark back
    assert [e.stream_id for e in events] == [early, late]
    assert events[0].position < late_event.position
