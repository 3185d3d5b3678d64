"""`casino.rawsql`: the hot path's single-row reads give what the ORM gives, built once."""

from __future__ import annotations

import pytest
from django.db import connection

from casino import rawsql, services
from casino.models import PlayerPreferences, Round
from tests.casino.conftest import make_player, make_table

pytestmark = pytest.mark.django_db


def test_first_returns_the_same_instance_the_orm_reads() -> None:
    alice = make_player("alice")
    table = make_table("classic")
    opened = services.round_open(table=table, players=[alice])
    expected = Round.objects.get(id=opened.round.id)
    found = rawsql.first(Round, "id = %s", [opened.round.id], lock=True)
    assert found is not None
    assert {f.attname: getattr(found, f.attname) for f in Round._meta.concrete_fields} == {
        f.attname: getattr(expected, f.attname) for f in Round._meta.concrete_fields
    }
    assert found.opened_at == expected.opened_at and found.opened_at.tzinfo is not None
    assert found._state.adding is False  # a saved row: save() updates it
    assert rawsql.first(Round, "id = %s", ["no-such-round"]) is None


def test_json_columns_come_back_decoded() -> None:
    alice = make_player("alice")
    PlayerPreferences.objects.update_or_create(user_id=alice.pk, defaults={"last_bet": [5, 7]})
    found = rawsql.first(PlayerPreferences, "user_id = %s", [alice.pk])
    assert found is not None and found.last_bet == [5, 7]


def test_order_by_and_lock_are_part_of_the_statement_built_once() -> None:
    sql = rawsql.select_one_sql(Round, "table_id = %s", order_by="opened_at DESC", lock=True)
    assert sql is rawsql.select_one_sql(
        Round, "table_id = %s", order_by="opened_at DESC", lock=True
    )
    assert " ORDER BY opened_at DESC LIMIT 1" in sql
    assert sql.endswith(" FOR UPDATE") == connection.features.has_select_for_update
    assert not rawsql.select_one_sql(Round, "table_id = %s").endswith("FOR UPDATE")


def test_insert_writes_what_save_writes() -> None:
    """A row inserted raw reads back equal to the instance, auto_now_add filled, pk set."""
    from fairness.models import ClientSeed

    alice = make_player("alice")
    ClientSeed.objects.filter(user_id=alice.pk).delete()
    seed = ClientSeed(user_id=alice.pk, seed="my-own-seed")
    rawsql.insert([seed])
    assert seed.pk is not None and seed._state.adding is False
    stored = ClientSeed.objects.get(pk=seed.pk)
    assert (stored.user_id, stored.seed) == (alice.pk, "my-own-seed")
    assert stored.updated_at == seed.updated_at and seed.updated_at is not None  # auto_now


def test_insert_many_rows_in_one_statement() -> None:
    from django.test.utils import CaptureQueriesContext

    from casino.models import RoundPlayer

    alice, bob = make_player("alice"), make_player("bob")
    table = make_table("classic")
    opened = services.round_open(table=table, players=[alice])
    RoundPlayer.objects.filter(round_id=opened.round.id).delete()
    rows = [
        RoundPlayer(round_id=opened.round.id, user_id=alice.pk, seat=0, stake=5, gross_return=0),
        RoundPlayer(round_id=opened.round.id, user_id=bob.pk, seat=1, stake=7, gross_return=14),
    ]
    with CaptureQueriesContext(connection) as queries:
        rawsql.insert(rows)
    assert len(queries) == 1
    stored = RoundPlayer.objects.filter(round_id=opened.round.id).order_by("seat")
    assert [(p.user_id, p.seat, p.stake, p.gross_return) for p in stored] == [
        (alice.pk, 0, 5, 0),
        (bob.pk, 1, 7, 14),
    ]


def test_statements_run_on_one_kept_cursor_unless_queries_are_logged() -> None:
    from django.db import connections
    from django.test.utils import CaptureQueriesContext

    db = connections["default"]  # the wrapper itself (`connection` is a proxy to it)
    db.ensure_connection()
    db.__dict__.pop("_rawsql_cursor", None)
    assert rawsql.fetch_one("SELECT %s, %s", [7, "seven"]) == (7, "seven")
    kept = db.__dict__["_rawsql_cursor"]
    assert rawsql.query("SELECT %s", [8], lambda cursor: cursor.fetchall()) == [(8,)]
    assert db.__dict__["_rawsql_cursor"] is kept  # reused, not created per statement
    with CaptureQueriesContext(connection) as queries:
        assert rawsql.fetch_one("SELECT %s", [9]) == (9,)
    assert [q["sql"] for q in queries.captured_queries] == ["SELECT 9"]  # logged: Django's cursor


def test_the_kept_cursor_raises_djangos_errors_and_respects_a_broken_transaction() -> None:
    from django.db import IntegrityError, transaction
    from django.db.transaction import TransactionManagementError

    from casino.models import Table

    table = make_table("classic")
    connection.ensure_connection()
    sql = f"INSERT INTO {Table._meta.db_table} (id, name) VALUES (%s, %s)"
    with pytest.raises(IntegrityError), transaction.atomic():  # Django's class, not the driver's
        rawsql.execute(sql, [table.pk, "duplicate id"])
    with transaction.atomic():
        transaction.set_rollback(True)
        with pytest.raises(TransactionManagementError):
            rawsql.fetch_one("SELECT 1", [])


def test_insert_can_skip_rows_that_conflict() -> None:
    from casino.models import RoundPlayer

    alice = make_player("alice")
    table = make_table("classic")
    opened = services.round_open(table=table, players=[alice])
    again = RoundPlayer(
        round_id=opened.round.id, user_id=alice.pk, seat=0, stake=99, gross_return=0
    )
    rawsql.insert([again], ignore_conflicts=True)  # the open wrote this seat: skipped, no error
    assert list(RoundPlayer.objects.filter(round_id=opened.round.id).values_list("stake")) == [(0,)]
