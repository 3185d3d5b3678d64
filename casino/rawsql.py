"""Hot-path single-row reads and inserts as raw statements, each built once per shape.

The ORM compiles every query anew: about 0.2-0.4 ms of CPU per statement here, a tenth of a
game request's server time (docs/performance.md, API). `first` builds the SELECT of a
model's concrete columns once, keeps it, and reads through `Model.objects.raw`, so rows still
come back as model instances with the backend's converters applied (JSON, datetimes);
`insert` writes new rows with each field's own preparation, as `save()` does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

from django.db import connection
from django.db.models import Model

M = TypeVar("M", bound=Model)

_SQL: dict[tuple[type[Model], str, str, bool, str], str] = {}


def select_one_sql(
    model: type[Model], where: str, *, order_by: str = "", lock: bool = False
) -> str:
    """SELECT every concrete column of `model` WHERE `where` [ORDER BY] LIMIT 1 [FOR UPDATE].

    `where` and `order_by` name database columns and use %s placeholders. FOR UPDATE is
    added where the backend has row locks (not on SQLite, whose writers are serialized).
    """
    key = (model, where, order_by, lock, connection.vendor)
    sql = _SQL.get(key)
    if sql is None:
        qn = connection.ops.quote_name
        columns = ", ".join(qn(f.column) for f in model._meta.concrete_fields)
        sql = f"SELECT {columns} FROM {qn(model._meta.db_table)} WHERE {where}"
        if order_by:
            sql += f" ORDER BY {order_by}"
        sql += " LIMIT 1"
        if lock and connection.features.has_select_for_update:
            sql += " FOR UPDATE"
        _SQL[key] = sql
    return sql


def first(
    model: type[M],
    where: str,
    params: Sequence[Any],
    *,
    order_by: str = "",
    lock: bool = False,
) -> M | None:
    """The first `model` row matching `where` (see `select_one_sql`), or None."""
    sql = select_one_sql(model, where, order_by=order_by, lock=lock)
    for row in model._default_manager.raw(sql, list(params)):
        return row
    return None


_INSERTS: dict[tuple[type[Model], tuple[str, ...], int, str], str] = {}


def _insert_sql(model: type[Model], fields: Sequence[Any], rows: int, returning: str) -> str:
    key = (model, tuple(f.attname for f in fields), rows, returning)
    sql = _INSERTS.get(key)
    if sql is None:
        qn = connection.ops.quote_name
        columns = ", ".join(qn(f.column) for f in fields)
        marks = "(" + ", ".join(["%s"] * len(fields)) + ")"
        sql = f"INSERT INTO {qn(model._meta.db_table)} ({columns}) VALUES "
        sql += ", ".join([marks] * rows)
        if returning:
            sql += f" RETURNING {qn(returning)}"
        _INSERTS[key] = sql
    return sql


def insert(objs: Sequence[Model]) -> None:
    """INSERT new rows of one model as `save()` would (each field's `pre_save` for a new row,
    so auto_now_add is filled, then `get_db_prep_save`), in one raw statement.

    A single object whose primary key is unset gets the one the database assigned. Several
    objects must all carry their primary key or none (then their keys stay unknown: use it
    where nothing reads them, as for a new round's seats).
    """
    if not objs:
        return
    model = type(objs[0])
    meta = model._meta
    pk_missing = objs[0].pk is None
    fields = [f for f in meta.concrete_fields if not (f.primary_key and pk_missing)]
    returning = ""
    if pk_missing and len(objs) == 1 and connection.features.can_return_columns_from_insert:
        returning = meta.pk.column
    params = [f.get_db_prep_save(f.pre_save(obj, True), connection) for obj in objs for f in fields]
    with connection.cursor() as cursor:
        cursor.execute(_insert_sql(model, fields, len(objs), returning), params)
        if pk_missing and len(objs) == 1:
            objs[0].pk = cursor.fetchone()[0] if returning else cursor.lastrowid
    for obj in objs:
        obj._state.adding, obj._state.db = False, connection.alias
