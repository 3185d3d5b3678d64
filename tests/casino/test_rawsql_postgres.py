"""`casino.platform.rawsql` on PostgreSQL: statements straight through libpq give what psycopg's
cursor gives (rows, types, errors, transactions), its prepared statements survive psycopg's
DEALLOCATE ALL, and the psycopg private parts it leans on are there and behave as it assumes.

The tests of what a statement gives run twice: on the libpq path and with it off (as on a
psycopg release it was not checked against: the kept cursor and psycopg's public
`execute(..., prepare=...)`), which must give the same."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import Any

import psycopg
import pytest
from django.db import IntegrityError, ProgrammingError, connection, transaction

from casino.models import Round
from casino.platform import rawsql
from ledger.models import IdempotencyRecord

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

ROW_SQL = (
    "SELECT 7::int, 'déjà'::text, now()::timestamptz, '{\"a\": [1, 2]}'::jsonb, "
    "12.5::numeric, true, NULL::int, %s::int, %s::text"
)


@pytest.fixture(params=["libpq", "cursor"])
def path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The statement path under test; "cursor" turns the libpq path off."""
    if request.param == "cursor":
        monkeypatch.setattr(rawsql, "LIBPQ_PATH", False)
        monkeypatch.setattr(rawsql, "_pg_run", _not_called)
    yield request.param


def _not_called(*args: Any) -> None:
    raise AssertionError("the libpq path ran while off")


def _ours() -> set[str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT name FROM pg_prepared_statements")
        return {name for (name,) in cursor.fetchall() if name.startswith("_rawsql_")}


def _psycopg_prepares_its_own() -> None:
    for _ in range(8):  # from its fifth run the ORM's statement is psycopg's prepared one
        list(Round.objects.filter(status="open")[:1])


def test_rows_and_types_are_the_cursors(path: str) -> None:
    with connection.cursor() as cursor:
        cursor.execute(ROW_SQL, [3, "x"])
        expected = cursor.fetchone()
    found = rawsql.fetch_one(ROW_SQL, [3, "x"])
    assert found is not None and expected is not None
    assert found[:2] == expected[:2] == (7, "déjà")
    assert isinstance(found[2], datetime) and found[2].tzinfo is not None
    assert found[3:] == expected[3:]
    assert rawsql.query("SELECT g FROM generate_series(1, 3) g", [], lambda c: c.fetchall()) == [
        (1,),
        (2,),
        (3,),
    ]
    assert rawsql.fetch_one("SELECT 1 WHERE false", []) is None


def test_percent_signs_and_placeholder_counts(path: str) -> None:
    assert rawsql.fetch_one("SELECT 'a%%b', %s::text", ["c"]) == ("a%b", "c")
    with pytest.raises(ProgrammingError):
        rawsql.fetch_one("SELECT %s::int, %s::int", [1])


def test_a_statement_is_prepared_from_the_threshold_and_survives_deallocate_all() -> None:
    connection.ensure_connection()
    threshold = connection.connection.prepare_threshold
    assert threshold is not None
    sql = "SELECT count(*) FROM casino_round WHERE status = %s AND 'threshold test' <> ''"
    before = _ours()  # the connection may come from the pool with statements of its own
    for _ in range(threshold):
        assert rawsql.fetch_one(sql, ["open"]) == (0,)
    assert _ours() == before
    assert rawsql.fetch_one(sql, ["open"]) == (0,)
    assert len(_ours() - before) == 1
    _psycopg_prepares_its_own()
    with pytest.raises(RuntimeError), transaction.atomic():
        rawsql.fetch_one(sql, ["open"])
        raise RuntimeError("roll back")  # psycopg clears its cache: DEALLOCATE ALL
    assert _ours() == set()
    for _ in range(threshold + 2):  # unprepared again, then prepared again
        assert rawsql.fetch_one(sql, ["open"]) == (0,)
    assert len(_ours()) == 1


def test_statements_run_inside_the_transaction_and_roll_back_with_it(path: str) -> None:
    def insert(key: str) -> None:
        rawsql.execute(
            "INSERT INTO ledger_idempotencyrecord (key, operation, fingerprint, status_code,"
            " response, created_at) VALUES (%s, 'test', '-', 200, '{}'::jsonb, now())",
            [key],
        )

    with pytest.raises(RuntimeError), transaction.atomic():
        insert("rolled-back")
        raise RuntimeError("roll back")
    insert("kept")
    assert list(IdempotencyRecord.objects.values_list("key", flat=True)) == ["kept"]
    with pytest.raises(IntegrityError) as raised:
        insert("kept")
    cause: Any = raised.value.__cause__
    assert cause.diag.constraint_name == "ledger_idempotencyrecord_key_key"
    insert("after the error")  # autocommit: the failed statement left nothing broken
    assert IdempotencyRecord.objects.count() == 2


def test_prepare_true_prepares_on_the_first_run() -> None:
    before = _ours()
    rawsql.query("SELECT %s::int + 1", [1], lambda c: c.fetchone(), prepare=True)
    assert len(_ours() - before) == 1


def _prepared_here() -> dict[str, str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT name, statement FROM pg_prepared_statements")
        return dict(cursor.fetchall())


def test_with_the_libpq_path_off_psycopg_prepares_on_the_first_run_or_from_its_threshold(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(rawsql, "LIBPQ_PATH", False)
    monkeypatch.setattr(rawsql, "_pg_run", _not_called)
    connection.ensure_connection()
    threshold = connection.connection.prepare_threshold
    assert threshold is not None
    first = "SELECT %s::int + 2 AS fallback_prepared_at_once"
    assert rawsql.query(first, [1], lambda c: c.fetchone(), prepare=True) == (3,)
    assert [s for s in _prepared_here().values() if "fallback_prepared_at_once" in s]
    later = "SELECT %s::int + 3 AS fallback_prepared_later"
    for _ in range(threshold):
        assert rawsql.fetch_one(later, [1]) == (4,)
    assert not [s for s in _prepared_here().values() if "fallback_prepared_later" in s]
    assert rawsql.fetch_one(later, [1]) == (4,)
    assert [s for s in _prepared_here().values() if "fallback_prepared_later" in s]


def test_the_same_statements_give_the_same_results_on_both_paths(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Rows, row counts, returned keys and errors of the hot path's kinds of statement."""

    def run() -> list[Any]:
        results: list[Any] = []
        with transaction.atomic():
            fixed_time = ROW_SQL.replace("now()", "'2026-01-02T03:04:05Z'")
            results.append(rawsql.fetch_one(fixed_time, [1, "a"]))
            for key in ("p1", "p2"):
                results.append(
                    rawsql.execute(
                        "INSERT INTO ledger_idempotencyrecord (key, operation, fingerprint,"
                        " status_code, response, created_at) VALUES (%s, 'test', '-', 200,"
                        " %s::jsonb, '2026-01-02T03:04:05Z')",
                        [key, '{"n": 1}'],
                    )
                )
            results.append(
                rawsql.query(
                    "SELECT key, response FROM ledger_idempotencyrecord ORDER BY key",
                    [],
                    lambda c: c.fetchall(),
                )
            )
            results.append(
                rawsql.execute("UPDATE ledger_idempotencyrecord SET status_code = %s", [201])
            )
            try:
                with rawsql.savepoint():
                    rawsql.execute("SELECT 1/0", [])
            except Exception as error:  # the error's class is the result
                results.append(type(error).__name__)
            results.append(rawsql.execute("DELETE FROM ledger_idempotencyrecord", []))
        return results

    on = run()
    monkeypatch.setattr(rawsql, "LIBPQ_PATH", False)
    monkeypatch.setattr(rawsql, "_pg_run", _not_called)
    off = run()
    assert on == off
    assert on[1:3] == [1, 1] and on[-1] == 2 and on[-2] == "DataError"


def test_psycopgs_private_parts_are_there_and_behave_as_the_libpq_path_assumes() -> None:
    """What `_PgState` and `_pg_run` read or replace on a psycopg connection. A psycopg
    release that moves or changes them fails here (and must not get the libpq path)."""
    assert rawsql.LIBPQ_PATH, f"psycopg {psycopg.__version__}: the libpq path is off"
    connection.ensure_connection()
    conn: Any = connection.connection
    assert conn._pipeline is None  # outside a pipeline
    with conn.pipeline():
        assert conn._pipeline is not None
    assert conn._pipeline is None
    assert conn._get_tx_start_command().startswith(b"BEGIN")
    rawsql.fetch_one("SELECT 1", [])
    state = conn.__dict__["_rawsql_state"]
    manager = conn._prepared
    assert state.manager is manager and manager.clear is not type(manager).clear  # wrapped
    # psycopg prepares the ORM's statements; a rollback clears its cache, and the wrapped
    # clear() forgets ours with them (DEALLOCATE ALL took them from the server).
    _psycopg_prepares_its_own()
    assert manager._names
    rawsql.query("SELECT %s::int AS private_parts", [1], lambda c: c.fetchone(), prepare=True)
    assert state.prepared and _ours()
    with pytest.raises(RuntimeError), transaction.atomic():
        rawsql.fetch_one("SELECT 1", [])
        raise RuntimeError("roll back")
    assert not manager._names and not state.prepared and _ours() == set()
    assert not manager._to_flush  # the rollback sent its DEALLOCATE ALL at once
    # After a DROP, ALTER or DISCARD psycopg clears its cache and queues DEALLOCATE ALL (None)
    # for its next statement: the libpq path sends it before its own statement.
    _psycopg_prepares_its_own()
    rawsql.query("SELECT %s::int AS private_parts", [1], lambda c: c.fetchone(), prepare=True)
    assert manager.clear() is True
    assert list(manager._to_flush) == [None] and not state.prepared
    assert rawsql.fetch_one("SELECT %s::int AS after_clear", [2]) == (2,)
    assert not manager._to_flush
    assert _prepared_here() == {}
