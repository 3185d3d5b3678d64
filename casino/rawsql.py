"""Hot-path single-row reads and inserts as raw statements, each built once per shape.

The ORM compiles every query anew: about 0.2-0.4 ms of CPU per statement here, a tenth of a
game request's server time (docs/performance.md, API). `first` builds the SELECT of a
model's concrete columns once, keeps it with the columns' converters (the backend's and each
field's, as the ORM's compiler finds them: JSON, datetimes), and turns the row into a model
instance with `Model.from_db`, as the ORM does (`Model.objects.raw` re-resolved the columns
and their converters on every call: a fifth of a game request's CPU went to reading rows);
`insert` writes new rows with each field's own preparation, as `save()` does.

`query` runs a statement on a raw cursor kept on the connection, where Django would create
a cursor and its wrapper for every statement (66 against 20 µs of CPU for a one-row SELECT
on PostgreSQL here, on a hot path of about 15 statements a request). It keeps what the
wrapper does that matters: database errors become Django's (`wrap_database_errors`, which
also marks a broken connection for closing), a transaction already marked for rollback
refuses the statement, and wherever queries are logged (DEBUG, `CaptureQueriesContext`) or
an execute wrapper is installed, the statement goes through Django's own cursor instead, so
query counts and logs see every statement.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from django.db import DEFAULT_DB_ALIAS, connection, connections
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models import Model

M = TypeVar("M", bound=Model)
R = TypeVar("R")


def _kept_cursor(db: BaseDatabaseWrapper) -> Any:
    """The connection's reusable raw cursor, or None where Django's own cursor must run: no
    connection yet (Django's opens it), queries logged, or an execute wrapper installed."""
    raw = db.connection
    if raw is None or db.queries_logged or db.execute_wrappers:
        return None
    cursor = db.__dict__.get("_rawsql_cursor")
    if cursor is None or cursor.connection is not raw:  # a new (or pooled) connection
        with db.wrap_database_errors:
            cursor = db.__dict__["_rawsql_cursor"] = db.create_cursor()
    return cursor


def query(
    sql: str,
    params: Sequence[Any],
    fetch: Callable[[Any], R],
    *,
    using: str = DEFAULT_DB_ALIAS,
) -> R:
    """Run one statement on database `using` and return `fetch(cursor)` (see the module)."""
    db = connections[using]
    cursor = _kept_cursor(db)
    if cursor is None:
        with db.cursor() as wrapped:
            wrapped.execute(sql, params)
            return fetch(wrapped)
    db.validate_no_broken_transaction()
    with db.wrap_database_errors:
        cursor.execute(sql, params)
        return fetch(cursor)


def execute(sql: str, params: Sequence[Any], *, using: str = DEFAULT_DB_ALIAS) -> int:
    """Run one statement (see `query`); its row count."""
    return query(sql, params, _rowcount, using=using)


def later(sql: str, params: Sequence[Any], *, using: str = DEFAULT_DB_ALIAS) -> None:
    """Queue a write (UPDATE, INSERT or DELETE) that nothing reads back before the next
    `execute_with_queued` or `flush` on this connection, which sends it: on PostgreSQL in
    front of that statement, as a WITH clause of it (a statement and a round trip saved),
    elsewhere just before it. The queued writes and the flushing statement must touch
    different rows. Whoever queues must make sure a flush follows inside the same
    transaction, and `discard_queued` on the way out of one that fails (see the round
    service)."""
    connections[using].__dict__.setdefault("_rawsql_later", []).append((sql, list(params)))


def execute_with_queued(sql: str, params: Sequence[Any], *, using: str = DEFAULT_DB_ALIAS) -> int:
    """`execute` a write together with the writes `later` queued; its own row count."""
    db = connections[using]
    queued: list[tuple[str, list[Any]]] | None = db.__dict__.pop("_rawsql_later", None)
    if not queued:
        return execute(sql, params, using=using)
    if db.vendor != "postgresql":
        for statement, values in queued:
            execute(statement, values, using=using)
        return execute(sql, params, using=using)
    withs = ", ".join(f"q{i} AS ({statement})" for i, (statement, _) in enumerate(queued))
    values = [value for _, queued_values in queued for value in queued_values]
    return execute(f"WITH {withs} {sql}", [*values, *params], using=using)


def flush(*, using: str = DEFAULT_DB_ALIAS) -> None:
    """Send whatever `later` queued on this connection (each as it is)."""
    db = connections[using]
    for statement, values in db.__dict__.pop("_rawsql_later", None) or ():
        execute(statement, values, using=using)


def discard_queued(*, using: str = DEFAULT_DB_ALIAS) -> None:
    """Forget the queued writes (their transaction is rolling back)."""
    connections[using].__dict__.pop("_rawsql_later", None)


def _rowcount(cursor: Any) -> int:
    return int(cursor.rowcount)


def _one(cursor: Any) -> tuple[Any, ...] | None:
    row: tuple[Any, ...] | None = cursor.fetchone()
    return row


_SQL: dict[tuple[type[Model], str, str, bool, str], str] = {}
# Per model and backend: the concrete fields' attnames, and (index, converters, column) for
# every column that has converters.
_READERS: dict[tuple[type[Model], str], tuple[list[str], list[tuple[int, list[Any], Any]]]] = {}


def _reader(
    model: type[Model], db: BaseDatabaseWrapper
) -> tuple[list[str], list[tuple[int, list[Any], Any]]]:
    key = (model, db.vendor)
    found = _READERS.get(key)
    if found is None:
        fields = model._meta.concrete_fields
        converting = []
        for i, field in enumerate(fields):
            column = field.get_col(model._meta.db_table)
            converters = db.ops.get_db_converters(column) + column.get_db_converters(db)
            if converters:
                converting.append((i, converters, column))
        found = _READERS[key] = ([f.attname for f in fields], converting)
    return found


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
    return instance(
        model, fetch_one(select_one_sql(model, where, order_by=order_by, lock=lock), params)
    )


_UPDATES: dict[tuple[type[Model], str, str], str] = {}


def update_one(model: type[M], assignments: str, where: str, params: Sequence[Any]) -> M | None:
    """UPDATE `model` SET `assignments` WHERE `where` RETURNING the row as it is now, as an
    instance (None: no row matched, nothing changed). For a row that `where` picks out
    alone: a lock, a check and a write in one statement. Columns and %s as in `first`;
    PostgreSQL and SQLite (3.35+) both return the updated row."""
    key = (model, assignments, where)
    sql = _UPDATES.get(key)
    if sql is None:
        qn = connection.ops.quote_name
        columns = ", ".join(qn(f.column) for f in model._meta.concrete_fields)
        table = qn(model._meta.db_table)
        sql = _UPDATES[key] = f"UPDATE {table} SET {assignments} WHERE {where} RETURNING {columns}"
    return instance(model, fetch_one(sql, params))


def fetch_one(
    sql: str, params: Sequence[Any], *, using: str = DEFAULT_DB_ALIAS
) -> tuple[Any, ...] | None:
    """The first row of a raw statement on database `using`, or None."""
    return query(sql, params, _one, using=using)


def instance(
    model: type[M], row: Sequence[Any] | None, *, using: str = DEFAULT_DB_ALIAS
) -> M | None:
    """The `model` instance of a row (from database `using`) that starts with its concrete
    columns in field order (None for None), converted as the ORM converts them."""
    if row is None:
        return None
    db = connections[using]
    attnames, converting = _reader(model, db)
    values = list(row[: len(attnames)])
    for i, converters, column in converting:
        value = values[i]
        for convert in converters:
            value = convert(value, column, db)
        values[i] = value
    return model.from_db(using, attnames, values)


_INSERTS: dict[tuple[type[Model], tuple[str, ...], int, str, bool], str] = {}


def _insert_sql(
    model: type[Model], fields: Sequence[Any], rows: int, returning: str, ignore_conflicts: bool
) -> str:
    key = (model, tuple(f.attname for f in fields), rows, returning, ignore_conflicts)
    sql = _INSERTS.get(key)
    if sql is None:
        qn = connection.ops.quote_name
        columns = ", ".join(qn(f.column) for f in fields)
        marks = "(" + ", ".join(["%s"] * len(fields)) + ")"
        sql = f"INSERT INTO {qn(model._meta.db_table)} ({columns}) VALUES "
        sql += ", ".join([marks] * rows)
        if ignore_conflicts:
            sql += " ON CONFLICT DO NOTHING"
        if returning:
            sql += f" RETURNING {qn(returning)}"
        _INSERTS[key] = sql
    return sql


def _lastrowid(cursor: Any) -> Any:
    return cursor.lastrowid


def _returned(cursor: Any) -> Any:
    return cursor.fetchone()[0]


def insert_together(*groups: Sequence[Model]) -> None:
    """INSERT several models' new rows (each group one model, as `insert`), in order.

    On PostgreSQL in one statement (each INSERT but the last in a WITH: a round trip and a
    statement each saved; foreign keys between them are checked at the statement's end, when
    every row is in). Primary keys the database assigns are not read back: for rows nothing
    reads by key (a new round's seats). Elsewhere, one `insert` per group.
    """
    groups = tuple(group for group in groups if group)
    db = connections[DEFAULT_DB_ALIAS]
    if db.vendor != "postgresql" or len(groups) < 2:
        for group in groups:
            insert(group)
        return
    statements, params = [], []
    for group in groups:
        fields, values = _insert_values(group, db)
        statements.append(_insert_sql(type(group[0]), fields, len(group), "", False))
        params += values
    *first, last = statements
    withs = ", ".join(f"i{i} AS ({sql})" for i, sql in enumerate(first))
    execute(f"WITH {withs} {last}", params)
    for group in groups:
        for obj in group:
            obj._state.adding, obj._state.db = False, db.alias


def _insert_values(objs: Sequence[Model], db: BaseDatabaseWrapper) -> tuple[list[Any], list[Any]]:
    """The columns to write (all but an unset primary key) and the rows' prepared values."""
    pk_missing = objs[0].pk is None
    fields = [f for f in type(objs[0])._meta.concrete_fields if not (f.primary_key and pk_missing)]
    return fields, [f.get_db_prep_save(f.pre_save(obj, True), db) for obj in objs for f in fields]


def insert(objs: Sequence[Model], *, ignore_conflicts: bool = False) -> None:
    """INSERT new rows of one model as `save()` would (each field's `pre_save` for a new row,
    so auto_now_add is filled, then `get_db_prep_save`), in one raw statement.

    A single object whose primary key is unset gets the one the database assigned. Several
    objects must all carry their primary key or none (then their keys stay unknown: use it
    where nothing reads them, as for a new round's seats). `ignore_conflicts`: a row that
    would violate a unique constraint is skipped (ON CONFLICT DO NOTHING, as `bulk_create`'s
    `ignore_conflicts`); only for rows whose keys nothing reads.
    """
    if not objs:
        return
    db = connections[DEFAULT_DB_ALIAS]  # the wrapper itself: `connection` is a per-use lookup
    model = type(objs[0])
    pk_missing = objs[0].pk is None
    fields, params = _insert_values(objs, db)
    returning = ""
    if (
        pk_missing
        and len(objs) == 1
        and not ignore_conflicts
        and db.features.can_return_columns_from_insert
    ):
        returning = model._meta.pk.column
    sql = _insert_sql(model, fields, len(objs), returning, ignore_conflicts)
    if pk_missing and len(objs) == 1 and not ignore_conflicts:
        objs[0].pk = query(sql, params, _returned if returning else _lastrowid)
    else:
        execute(sql, params)
    for obj in objs:
        obj._state.adding, obj._state.db = False, db.alias
