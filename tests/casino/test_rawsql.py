"""`casino.platform.rawsql`: the hot path's single-row reads give what the ORM gives, built once."""

from __future__ import annotations

import contextlib
from typing import Any

import pytest
from django.db import connection

from casino.models import PlayerPreferences, Round
from casino.platform import rawsql
from casino.rounds import services
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


def test_an_instance_is_built_as_the_orm_builds_it_and_init_receivers_still_run() -> None:
    from django.db.models.signals import post_init

    alice = make_player("alice")
    table = make_table("classic")
    opened = services.round_open(table=table, players=[alice])
    expected = Round.objects.get(id=opened.round.id)
    found = rawsql.first(Round, "id = %s", [opened.round.id])
    assert found is not None
    assert {k: v for k, v in vars(found).items() if k != "_state"} == {
        k: v for k, v in vars(expected).items() if k != "_state"
    }
    assert (found._state.adding, found._state.db) == (False, expected._state.db)
    assert found.table.pk == table.pk and found.pk == expected.pk  # relations and pk work
    found.status = "settled"
    assert found.get_deferred_fields() == set()  # every field loaded
    seen: list[object] = []

    def receiver(sender: type, instance: object, **kwargs: object) -> None:
        seen.append(instance)

    post_init.connect(receiver, sender=Round)
    try:
        again = rawsql.first(Round, "id = %s", [opened.round.id])
    finally:
        post_init.disconnect(receiver, sender=Round)
    assert seen == [again]  # a model with an init receiver goes through from_db


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


def test_statements_run_on_a_kept_cursor_or_none_unless_queries_are_logged() -> None:
    from django.db import connections
    from django.test.utils import CaptureQueriesContext

    db = connections["default"]  # the wrapper itself (`connection` is a proxy to it)
    db.ensure_connection()
    db.__dict__.pop("_rawsql_cursor", None)
    assert rawsql.fetch_one("SELECT %s, %s", [7, "seven"]) == (7, "seven")
    assert rawsql.query("SELECT %s", [8], lambda cursor: cursor.fetchall()) == [(8,)]
    if db.vendor == "postgresql":  # straight through libpq: no cursor at all
        assert "_rawsql_cursor" not in db.__dict__
    else:
        kept = db.__dict__["_rawsql_cursor"]
        assert rawsql.fetch_one("SELECT %s", [8]) == (8,)
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


def test_insert_together_writes_a_round_and_its_seats_in_one_statement_on_postgres() -> None:
    from django.test.utils import CaptureQueriesContext

    from casino.models import RoundPlayer

    alice, bob = make_player("alice"), make_player("bob")
    table = make_table("classic")
    opened = Round.objects.get(id=services.round_open(table=table, players=[alice]).round.id)
    fresh = Round(
        **{
            f.attname: getattr(opened, f.attname)
            for f in Round._meta.concrete_fields
            if f.attname != "id"
        },
        id="11111111-2222-4333-8444-555555555555",
    )
    seats = [
        RoundPlayer(round=fresh, user_id=user.pk, seat=i, stake=5 * i, gross_return=0)
        for i, user in enumerate([alice, bob])
    ]
    with CaptureQueriesContext(connection) as queries:
        rawsql.insert_together([fresh], seats, [])
    assert len(queries) == (1 if connection.vendor == "postgresql" else 2)
    assert Round.objects.get(id=fresh.id).nonce == opened.nonce
    written = RoundPlayer.objects.filter(round_id=fresh.id).order_by("seat")
    assert [(p.user_id, p.seat, p.stake) for p in written] == [(alice.pk, 0, 0), (bob.pk, 1, 5)]
    assert not fresh._state.adding and not seats[1]._state.adding


def test_a_round_opens_with_the_players_preferences_and_client_seed_read_together() -> None:
    from django.test.utils import CaptureQueriesContext

    from fairness.models import ClientSeed

    alice, bob = make_player("alice"), make_player("bob")
    # bob has neither row yet: both are created on first use, as before.
    PlayerPreferences.objects.update_or_create(user_id=alice.pk, defaults={"safety_net": True})
    ClientSeed.objects.update_or_create(user_id=alice.pk, defaults={"seed": "alice-own-seed"})
    assert not PlayerPreferences.objects.filter(user_id=bob.pk).exists()
    assert not ClientSeed.objects.filter(user_id=bob.pk).exists()
    with CaptureQueriesContext(connection) as queries:
        assert services._preferences_and_seed(alice.pk)[1] == "alice-own-seed"
    assert len(queries) == 1
    prefs, seed = services._preferences_and_seed(bob.pk)
    assert prefs.user_id == bob.pk and seed == ClientSeed.objects.get(user_id=bob.pk).seed
    table = make_table("duel_classic")
    opened = services.round_open(table=table, players=[alice, bob])
    participants = opened.state.opened.participants
    assert [(p.client_seed, p.safety_net) for p in participants] == [
        ("alice-own-seed", True),
        (seed, False),  # the default
    ]


@pytest.mark.django_db(transaction=True)
def test_queued_writes_go_out_with_the_next_flushing_write_or_are_forgotten() -> None:
    from django.db import transaction
    from django.test.utils import CaptureQueriesContext

    alice = make_player("alice")
    PlayerPreferences.objects.update_or_create(user_id=alice.pk, defaults={"last_bet": [1]})
    table = make_table("classic")
    update_table = "UPDATE casino_table SET version = %s WHERE id = %s"
    update_prefs = "UPDATE casino_playerpreferences SET last_bet = %s WHERE user_id = %s"
    with transaction.atomic(), CaptureQueriesContext(connection) as queries:
        rawsql.later(update_table, [7, table.pk])
        assert table.__class__.objects.get(pk=table.pk).version == table.version  # not sent
        changed = rawsql.execute_with_queued(update_prefs, ["[2]", alice.pk])
    writes = [q["sql"] for q in queries.captured_queries if q["sql"].startswith(("UPDATE", "WITH"))]
    assert changed == 1  # the flushing statement's own row count
    assert len(writes) == (1 if connection.vendor == "postgresql" else 2), writes
    table.refresh_from_db()
    assert table.version == 7
    assert PlayerPreferences.objects.get(user_id=alice.pk).last_bet == [2]

    with transaction.atomic():  # nothing flushes: `flush` sends it as it is
        rawsql.later(update_table, [8, table.pk])
        rawsql.flush()
    table.refresh_from_db()
    assert table.version == 8

    rawsql.later(update_table, [9, table.pk])
    rawsql.discard_queued()  # a failed command's rollback
    rawsql.flush()
    table.refresh_from_db()
    assert table.version == 8


def test_a_savepoint_undoes_a_failed_block_and_the_transaction_goes_on() -> None:
    from django.db import IntegrityError, transaction

    from casino.dashboard.models import StatsContribution

    alice = make_player("alice")

    def row(net: int) -> StatsContribution:
        return StatsContribution(
            round_id="r1", user=alice, table_id=1, ruleset="classic", day="2026-11-30",
            stake=10, gross_return=10 + net, net=net, finished_at="2026-11-30T10:00:00Z",
        )  # fmt: skip

    with transaction.atomic():
        row(1).save()
        with pytest.raises(IntegrityError), rawsql.savepoint():  # raised through the block
            StatsContribution.objects.filter(round_id="r1").update(net=2)
            row(3).save()  # the same (round, user): refused, marks the transaction
        assert not connection.needs_rollback
        with rawsql.savepoint():  # an ORM error caught inside the block
            StatsContribution.objects.filter(round_id="r1").update(net=4)
            with contextlib.suppress(IntegrityError):
                row(5).save()
        assert not connection.needs_rollback
        with rawsql.savepoint():  # a block that succeeds keeps its writes
            StatsContribution.objects.filter(round_id="r1").update(stake=11)
    assert list(StatsContribution.objects.values_list("net", "stake")) == [(1, 11)]


def test_each_thread_and_event_loop_gets_its_own_connection() -> None:
    """Statements run on Django's connection of the calling thread (`connections[alias]`):
    another thread's statement opens that thread's own wrapper, and this one's stays as it
    was."""
    import asyncio
    import threading

    from django.db import connections

    here = connections["default"]
    assert rawsql.fetch_one("SELECT %s", [1]) == (1,)
    seen: list[Any] = []

    def other_thread() -> None:
        seen.append(rawsql.fetch_one("SELECT %s", [2]))
        seen.append(connections["default"] is not here)
        connections.close_all()

    if connection.vendor != "sqlite" or not connection.is_in_memory_db():
        thread = threading.Thread(target=other_thread)
        thread.start()
        thread.join()
        assert seen == [(2,), True]
    assert connections["default"] is here

    async def in_a_loop() -> bool:
        return rawsql.later_collect("loop-test", lambda items: None) is not None

    assert asyncio.run(in_a_loop())
    rawsql.discard_queued()


def test_queries_are_logged_as_djangos_cursor_logs_them(settings: Any) -> None:
    """DEBUG on (also under override_settings) or a forced debug cursor sends the statement
    through Django's cursor, which logs it."""
    from django.db import reset_queries
    from django.test.utils import CaptureQueriesContext

    settings.DEBUG = True
    reset_queries()
    rawsql.fetch_one("SELECT 1", [])
    assert [q["sql"] for q in connection.queries] == ["SELECT 1"]
    settings.DEBUG = False
    reset_queries()
    rawsql.fetch_one("SELECT 2", [])
    assert connection.queries == []
    with CaptureQueriesContext(connection) as captured:
        rawsql.fetch_one("SELECT 3", [])
    assert [q["sql"] for q in captured.captured_queries] == ["SELECT 3"]


def test_the_installed_psycopg_is_of_the_series_the_libpq_path_was_checked_against() -> None:
    """The libpq path (casino/platform/rawsql.py) leans on psycopg's private parts and runs only
    on `PSYCOPG_CHECKED`. A psycopg upgrade out of it fails here: check those parts again
    (tests/casino/test_rawsql_postgres.py) and move the series, or delete the path
    (docs/decisions/rawsql-libpq.md)."""
    import re
    from pathlib import Path

    import psycopg

    pinned = re.search(
        r"^psycopg\[[^]]*\]==(\S+)$",
        (Path(__file__).resolve().parents[2] / "requirements.txt").read_text(),
        re.MULTILINE,
    )
    assert pinned is not None
    assert rawsql.libpq_path_checked(pinned.group(1)), pinned.group(1)
    assert rawsql.libpq_path_checked(psycopg.__version__), psycopg.__version__
    assert rawsql.LIBPQ_PATH is True
    assert not rawsql.libpq_path_checked("3.4.0") and not rawsql.libpq_path_checked("3.2.12")
    assert not rawsql.libpq_path_checked("4.3.3")
