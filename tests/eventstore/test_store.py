"""The append contract, load, read_after and upcasting (both databases)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.db import connection, connections, transaction
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from casino.eventstore import (
    ConcurrencyError,
    NewEvent,
    append,
    last_position,
    load,
    load_many,
    read_after,
    register_upcaster,
    verify_stream,
)
from casino.eventstore.models import StoredEvent
from casino.eventstore.store import _heads
from casino.eventstore.upcasting import unregister_upcaster
from fairness.canonical import GENESIS, event_body, event_hash
from tests.eventstore.conftest import new_stream

pytestmark = pytest.mark.django_db


def _events(*types: str) -> list[NewEvent]:
    return [NewEvent(t, {"n": i, "stake": 5_000_000}) for i, t in enumerate(types)]


def test_append_numbers_versions_from_one_and_chains_hashes() -> None:
    stream = new_stream()
    stored = append(stream_id=stream, expected_version=0, events=_events("A", "B"))
    stored += append(stream_id=stream, expected_version=2, events=_events("C"))

    assert [e.version for e in stored] == [1, 2, 3]
    assert [e.prev_hash for e in stored] == [GENESIS, stored[0].hash, stored[1].hash]
    first = stored[0]
    body = event_body(
        stream=stream,
        version=1,
        type="A",
        schema_version=1,
        data={"n": 0, "stake": 5_000_000},
        recorded_at=first.recorded_at_text,
    )
    assert first.hash == event_hash(GENESIS, body)
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z", first.recorded_at_text)


def test_load_returns_what_was_appended_with_its_positions() -> None:
    stream = new_stream()
    stored = append(stream_id=stream, expected_version=0, events=_events("A", "B", "C"))

    loaded = load(stream)

    assert [(e.position, e.version, e.type, e.data, e.hash) for e in loaded] == [
        (e.position, e.version, e.type, e.data, e.hash) for e in stored
    ]
    assert [e.recorded_at_text for e in loaded] == [e.recorded_at_text for e in stored]
    assert verify_stream(loaded) == []
    assert load(new_stream()) == []
    # The fast-built instances are ordinary model instances, equal to what the ORM loads.
    orm = StoredEvent.objects.get(pk=loaded[1].pk)
    assert orm == loaded[1]
    assert (orm.recorded_at, orm.data, orm.hash) == (
        loaded[1].recorded_at,
        loaded[1].data,
        loaded[1].hash,
    )
    assert (
        verify_stream(list(StoredEvent.objects.filter(stream_id=stream).order_by("version"))) == []
    )


def test_load_many_returns_every_asked_stream() -> None:
    a, b, missing = new_stream(), new_stream(), new_stream()
    append(stream_id=a, expected_version=0, events=_events("A", "B"))
    append(stream_id=b, expected_version=0, events=_events("C"))

    streams = load_many([a, b, missing])

    assert {k: [e.type for e in v] for k, v in streams.items()} == {
        a: ["A", "B"],
        b: ["C"],
        missing: [],
    }
    assert [e.hash for e in streams[a]] == [e.hash for e in load(a)]
    assert load_many([]) == {}


def test_positions_increase_across_appends_and_streams() -> None:
    a, b = new_stream(), new_stream()
    first = append(stream_id=a, expected_version=0, events=_events("A", "B"))
    second = append(stream_id=b, expected_version=0, events=_events("A"))
    third = append(stream_id=a, expected_version=2, events=_events("C"))

    positions = [e.position for e in first + second + third]
    assert positions == sorted(positions)
    assert len(set(positions)) == 3 + 1


def test_taken_version_raises_concurrency_error_as_409() -> None:
    stream = new_stream()
    append(stream_id=stream, expected_version=0, events=_events("A", "B"))

    with pytest.raises(ConcurrencyError) as caught, transaction.atomic():
        append(stream_id=stream, expected_version=1, events=_events("X"))

    assert caught.value.status_code == 409
    assert caught.value.code == "version_conflict"
    assert [e.type for e in load(stream)] == ["A", "B"]


def test_new_stream_twice_conflicts() -> None:
    stream = new_stream()
    append(stream_id=stream, expected_version=0, events=_events("A"))

    with pytest.raises(ConcurrencyError), transaction.atomic():
        append(stream_id=stream, expected_version=0, events=_events("B"))


def test_expected_version_beyond_the_head_conflicts() -> None:
    stream = new_stream()
    append(stream_id=stream, expected_version=0, events=_events("A"))

    with pytest.raises(ConcurrencyError), transaction.atomic():
        append(stream_id=stream, expected_version=3, events=_events("B"))


def test_conflict_marks_the_transaction_for_rollback() -> None:
    stream = new_stream()
    append(stream_id=stream, expected_version=0, events=_events("A"))

    with transaction.atomic():
        with pytest.raises(ConcurrencyError):
            append(stream_id=stream, expected_version=0, events=_events("B"))
        assert transaction.get_rollback()


def test_a_stale_cached_head_is_rechecked_not_trusted() -> None:
    stream = new_stream()
    append(stream_id=stream, expected_version=0, events=_events("A"))
    # Version 2 appended in a savepoint that rolls back leaves a cached head that never committed.
    with transaction.atomic():
        append(stream_id=stream, expected_version=1, events=_events("ghost"))
        transaction.set_rollback(True)
    append(stream_id=stream, expected_version=1, events=_events("B"))
    # The cache now says (2, hash of B); pretend it went stale with a wrong hash.
    _heads.put("default", stream, 2, "f" * 64)

    append(stream_id=stream, expected_version=2, events=_events("C"))

    events = load(stream)
    assert [e.type for e in events] == ["A", "B", "C"]
    assert verify_stream(events) == []


def test_a_head_hash_given_by_the_caller_is_used_and_rechecked() -> None:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    stream = new_stream()
    first = append(stream_id=stream, expected_version=0, events=_events("A"))
    _heads.drop("default", stream)  # another thread's append: this one's cache knows nothing
    with CaptureQueriesContext(connection) as queries:
        append(stream_id=stream, expected_version=1, events=_events("B"), head_hash=first[-1].hash)
    assert not any(q["sql"].startswith("SELECT hash") for q in queries), queries.captured_queries
    _heads.drop("default", stream)
    append(stream_id=stream, expected_version=2, events=_events("C"), head_hash="f" * 64)  # wrong
    events = load(stream)
    assert [e.type for e in events] == ["A", "B", "C"]
    assert verify_stream(events) == []


@pytest.mark.django_db(transaction=True)
def test_appends_go_on_after_rolled_back_transactions(purge_events: None) -> None:
    # On PostgreSQL the append statement is prepared per connection, and a rollback drops it.
    stream = new_stream()
    for version in range(3):
        with pytest.raises(RuntimeError), transaction.atomic(durable=True):
            append(stream_id=new_stream(), expected_version=0, events=_events("gone"))
            raise RuntimeError("roll back")
        with pytest.raises(ConcurrencyError), transaction.atomic(durable=True):
            append(stream_id=stream, expected_version=version + 1, events=_events("early"))
        with transaction.atomic(durable=True):
            append(stream_id=stream, expected_version=version, events=_events(f"E{version}"))

    events = load(stream)
    assert [(e.version, e.type) for e in events] == [(1, "E0"), (2, "E1"), (3, "E2")]
    assert verify_stream(events) == []


def test_a_type_and_data_that_need_escaping_store_and_hash_as_given() -> None:
    stream = new_stream()
    data = {"quote": 'a"b\\c', "text": "é ☃ \n", "z": [1, {"b": None, "a": True}]}
    append(stream_id=stream, expected_version=0, events=[NewEvent('Odd "type" \\', data)])

    (event,) = load(stream)
    assert (event.type, event.data) == ('Odd "type" \\', data)
    assert verify_stream([event]) == []


def test_append_refuses_to_run_outside_a_transaction(monkeypatch: pytest.MonkeyPatch) -> None:
    # As if in autocommit (the test itself runs inside pytest-django's transaction).
    monkeypatch.setattr(connections["default"], "in_atomic_block", False)

    with pytest.raises(transaction.TransactionManagementError):
        append(stream_id=new_stream(), expected_version=0, events=_events("A"))


@pytest.mark.parametrize(
    "data",
    [
        {"amount": 1.5},
        {"nested": [{"x": float("nan")}]},
        {1: "int key"},
        {"s": "a\x00b"},
        {"s": "\ud800"},
    ],
)
def test_data_must_be_json_native_without_floats(data: dict[Any, Any]) -> None:
    with pytest.raises((TypeError, ValueError)):
        append(stream_id=new_stream(), expected_version=0, events=[NewEvent("A", data)])


def test_read_after_returns_log_order_in_pages() -> None:
    start = last_position()
    streams = [new_stream() for _ in range(3)]
    appended = []
    for stream in streams:
        appended += append(stream_id=stream, expected_version=0, events=_events("A", "B"))
    if connection.vendor == "postgresql":
        # Our own transaction is still open: its rows are not below the watermark yet.
        assert read_after(start) == []
        return

    page1 = read_after(start, limit=4)
    page2 = read_after(page1[-1].position, limit=4)

    assert [e.position for e in page1 + page2] == [e.position for e in appended]
    assert last_position() == appended[-1].position


TEXT_CHARS = st.characters(codec="utf-8", exclude_characters="\x00")
JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63 - 1)
    | st.text(alphabet=TEXT_CHARS, max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.text(alphabet=TEXT_CHARS, max_size=5),
            inner,
            max_size=3,
        )
    ),
    max_leaves=8,
)
BATCHES = st.lists(
    st.lists(
        st.builds(
            NewEvent,
            type=st.sampled_from(["RoundOpened", "BetPlaced", "CardDealt", "RoundSettled"]),
            data=st.dictionaries(st.text(alphabet=TEXT_CHARS, max_size=5), JSON),
            schema_version=st.integers(min_value=1, max_value=3),
        ),
        min_size=1,
        max_size=5,
    ),
    min_size=1,
    max_size=4,
)


@settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(batches=BATCHES)
def test_any_sequence_of_appends_loads_back_intact(batches: list[list[NewEvent]]) -> None:
    stream = new_stream()
    version = 0
    for batch in batches:
        append(stream_id=stream, expected_version=version, events=batch)
        version += len(batch)

    loaded = load(stream)

    expected = [e for batch in batches for e in batch]
    assert [(e.type, e.data, e.schema_version) for e in loaded] == [
        (e.type, e.data, e.schema_version) for e in expected
    ]
    assert [e.version for e in loaded] == list(range(1, version + 1))
    assert verify_stream(loaded) == []


def test_an_old_schema_version_is_upcast_on_replay() -> None:
    stream = new_stream()
    # v1 stored the bet in whole USDC; v2 uses micro-USDC and names the currency.
    append(
        stream_id=stream,
        expected_version=0,
        events=[NewEvent("TestBetPlaced", {"player": "7", "amount": 5}, schema_version=1)],
    )
    register_upcaster("TestBetPlaced", 1)(
        lambda d: {"player": d["player"], "amount": d["amount"] * 1_000_000}
    )
    register_upcaster("TestBetPlaced", 2)(lambda d: {**d, "currency": "USDC"})
    try:
        (event,) = load(stream)
        (raw,) = load(stream, upcast_events=False)
    finally:
        unregister_upcaster("TestBetPlaced", 1)
        unregister_upcaster("TestBetPlaced", 2)

    assert event.schema_version == 3
    assert event.data == {"player": "7", "amount": 5_000_000, "currency": "USDC"}
    assert raw.schema_version == 1 and raw.data == {"player": "7", "amount": 5}
    # The chain is over the stored shape, so the upcast event still verifies.
    assert verify_stream([event]) == []
