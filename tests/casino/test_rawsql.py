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
