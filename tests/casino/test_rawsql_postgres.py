"""`casino.platform.rawsql` on PostgreSQL: statements straight through libpq give what psycopg's
cursor gives (rows, types, errors, transactions), and its prepared statements survive
psycopg's DEALLOCATE ALL."""

from __future__ import annotations

from datetime import datetime
from typing import Any

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


def _ours() -> set[str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT name FROM pg_prepared_statements")
        return {name for (name,) in cursor.fetchall() if name.startswith("_rawsql_")}


def _psycopg_prepares_its_own() -> None:
    for _ in range(8):  # from its fifth run the ORM's statement is psycopg's prepared one
        list(Round.objects.filter(status="open")[:1])


def test_rows_and_types_are_the_cursors() -> None:
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


def test_percent_signs_and_placeholder_counts() -> None:
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


def test_statements_run_inside_the_transaction_and_roll_back_with_it() -> None:
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
