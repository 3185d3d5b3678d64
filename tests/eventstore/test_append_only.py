"""The database itself refuses to change or remove events (both databases)."""

from __future__ import annotations

import pytest
from django.db import DatabaseError, connection, transaction

from casino.eventstore import NewEvent, append
from casino.eventstore.models import StoredEvent
from tests.eventstore.conftest import new_stream

pytestmark = pytest.mark.django_db

TABLE = "eventstore_storedevent"


@pytest.fixture
def stream() -> str:
    stream = new_stream()
    append(
        stream_id=stream,
        expected_version=0,
        events=[NewEvent("BetPlaced", {"amount": 5_000_000}), NewEvent("RoundSettled", {})],
    )
    return stream


def _rejected(sql: str, params: list[object]) -> str:
    with pytest.raises(DatabaseError) as caught, transaction.atomic(), connection.cursor() as c:
        c.execute(sql, params)
    return str(caught.value)


def test_raw_update_is_rejected(stream: str) -> None:
    message = _rejected(
        f"UPDATE {TABLE} SET data = %s WHERE stream_id = %s", ['{"amount": 1}', stream]
    )

    assert "append-only" in message
    assert StoredEvent.objects.get(stream_id=stream, version=1).data == {"amount": 5_000_000}


def test_raw_delete_is_rejected(stream: str) -> None:
    message = _rejected(f"DELETE FROM {TABLE} WHERE stream_id = %s", [stream])

    assert "append-only" in message
    assert StoredEvent.objects.filter(stream_id=stream).count() == 2


def test_orm_update_and_delete_are_rejected(stream: str) -> None:
    with pytest.raises(DatabaseError), transaction.atomic():
        StoredEvent.objects.filter(stream_id=stream).update(type="Other")
    with pytest.raises(DatabaseError), transaction.atomic():
        StoredEvent.objects.filter(stream_id=stream).delete()

    assert StoredEvent.objects.filter(stream_id=stream, type="Other").count() == 0


@pytest.mark.postgres
def test_truncate_is_rejected_on_postgres(stream: str) -> None:
    message = _rejected(f"TRUNCATE {TABLE}", [])

    assert "append-only: TRUNCATE" in message
    assert StoredEvent.objects.filter(stream_id=stream).count() == 2
