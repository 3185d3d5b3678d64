"""Tamper detection: verify_stream finds changed, missing and reordered events."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from django.db import connection

from casino.eventstore import NewEvent, append, load, verify_stream
from casino.eventstore.testing import bypass_sqlite_triggers
from tests.eventstore.conftest import new_stream

pytestmark = pytest.mark.django_db

TABLE = "eventstore_storedevent"


@contextmanager
def bypassing_triggers() -> Iterator[object]:
    """What an attacker with superuser rights can do: write past the append-only triggers."""
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("SET LOCAL session_replication_role = replica")
            try:
                yield cursor
            finally:
                cursor.execute("SET LOCAL session_replication_role = origin")
        else:
            with bypass_sqlite_triggers(cursor):
                yield cursor


@pytest.fixture
def stream() -> str:
    stream = new_stream()
    append(
        stream_id=stream,
        expected_version=0,
        events=[
            NewEvent("RoundOpened", {"table": "t1"}),
            NewEvent("BetPlaced", {"player": "7", "amount": 5_000_000}),
            NewEvent("CardDealt", {"card": "AS", "position": 0}),
            NewEvent("CardDealt", {"card": "TD", "position": 1}),
            NewEvent("RoundSettled", {"gross_return": 12_500_000}),
        ],
    )
    assert verify_stream(load(stream)) == []
    return stream


def _codes(stream: str) -> list[tuple[int | None, str]]:
    return [(p.version, p.code) for p in verify_stream(load(stream))]


def test_a_changed_amount_is_found(stream: str) -> None:
    with bypassing_triggers() as cursor:
        cursor.execute(  # type: ignore[attr-defined]
            f"UPDATE {TABLE} SET data = %s WHERE stream_id = %s AND version = 5",
            ['{"gross_return": 99000000}', stream],
        )

    assert _codes(stream) == [(5, "hash_mismatch")]


def test_a_rehashed_change_still_breaks_the_next_link(stream: str) -> None:
    events = load(stream)
    forged = events[1].hash[::-1]
    with bypassing_triggers() as cursor:
        cursor.execute(  # type: ignore[attr-defined]
            f"UPDATE {TABLE} SET hash = %s WHERE stream_id = %s AND version = 2", [forged, stream]
        )

    assert _codes(stream) == [(2, "hash_mismatch"), (3, "prev_hash_mismatch")]


def test_a_deleted_middle_event_is_found(stream: str) -> None:
    with bypassing_triggers() as cursor:
        cursor.execute(  # type: ignore[attr-defined]
            f"DELETE FROM {TABLE} WHERE stream_id = %s AND version = 3", [stream]
        )

    codes = _codes(stream)
    assert (4, "version_gap") in codes
    assert (4, "prev_hash_mismatch") in codes


def test_two_swapped_cards_are_found(stream: str) -> None:
    # The same swap a dealer could wish for: ten first, ace second.
    JSON = "jsonb" if connection.vendor == "postgresql" else "text"
    with bypassing_triggers() as cursor:
        cursor.execute(  # type: ignore[attr-defined]
            f"UPDATE {TABLE} SET data = CAST(CASE version WHEN 3 THEN %s ELSE %s END AS {JSON})"
            " WHERE stream_id = %s AND version IN (3, 4)",
            ['{"card": "TD", "position": 0}', '{"card": "AS", "position": 1}', stream],
        )

    assert _codes(stream) == [(3, "hash_mismatch"), (4, "hash_mismatch")]


def test_two_swapped_events_are_found(stream: str) -> None:
    with bypassing_triggers() as cursor:
        for old, new in ((3, 99), (4, 3), (99, 4)):
            cursor.execute(  # type: ignore[attr-defined]
                f"UPDATE {TABLE} SET version = %s WHERE stream_id = %s AND version = %s",
                [new, stream, old],
            )

    codes = _codes(stream)
    assert (3, "hash_mismatch") in codes
    assert (3, "prev_hash_mismatch") in codes
    assert any(code == "position_order" for _, code in codes)


def test_events_given_out_of_order_are_found(stream: str) -> None:
    events = load(stream)
    events[1], events[2] = events[2], events[1]

    codes = [(p.version, p.code) for p in verify_stream(events)]

    assert (3, "version_gap") in codes
    assert (2, "version_gap") in codes


def test_an_event_from_another_stream_is_found(stream: str) -> None:
    other = new_stream()
    append(stream_id=other, expected_version=0, events=[NewEvent("RoundOpened", {})])

    problems = verify_stream([*load(stream), *load(other)])

    assert any(p.code == "wrong_stream" for p in problems)
