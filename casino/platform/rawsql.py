"""Hot-path single-row reads and inserts as raw statements, each built once per shape.

The ORM compiles every query anew, and on the hot path that compilation was a large part of a
game request's server time. `first` builds the SELECT of a model's concrete columns once,
keeps it with the columns' converters (the backend's and each field's, as the ORM's compiler
finds them: JSON, datetimes), and turns the row into a model instance as `Model.from_db`
does (`Model.objects.raw` re-resolved the columns and their converters on every call);
`insert` writes new rows with each field's own preparation, as `save()` does.

`query` runs a statement on a raw cursor kept on the connection, where Django would create a
cursor and its wrapper for every statement. It keeps what the wrapper does that matters:
database errors become Django's (`wrap_database_errors`, which also marks a broken connection
for closing), a transaction already marked for rollback refuses the statement, and wherever
queries are logged (DEBUG, `CaptureQueriesContext`) or an execute wrapper is installed, the
statement goes through Django's own cursor instead, so query counts and logs see every
statement. On PostgreSQL, with the psycopg versions it was checked against, a statement
skips the cursor too and goes straight through libpq (see `_pg_run`;
docs/decisions/rawsql-libpq.md says what it saves and when to delete it).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any, TypeVar

import psycopg
from django.db import DEFAULT_DB_ALIAS, connections
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models import Model
from django.db.models.base import ModelState
from django.db.models.signals import post_init, pre_init
from psycopg.adapt import Transformer

M = TypeVar("M", bound=Model)
R = TypeVar("R")


def _open_connection(db: BaseDatabaseWrapper) -> Any:
    """The wrapper's raw connection (opened first, as Django's cursor opens it), or None where
    Django's own cursor must run: queries logged, an execute wrapper installed, or a
    connection shared between threads (a live test server's in-memory SQLite, used by its
    request threads at once): the kept cursor must never run in two threads together."""
    if db.queries_logged or db.execute_wrappers or db.allow_thread_sharing:
        return None
    raw = db.connection
    if raw is None:
        db.ensure_connection()
        raw = db.connection
    return raw


def _kept_cursor(db: BaseDatabaseWrapper, raw: Any) -> Any:
    """The connection's reusable raw cursor (created on first use)."""
    cursor = db.__dict__.get("_rawsql_cursor")
    if cursor is None or cursor.connection is not raw:  # a new (or pooled) connection
        cursor = db.__dict__["_rawsql_cursor"] = db.create_cursor()
    return cursor


def query(
    sql: str,
    params: Sequence[Any],
    fetch: Callable[[Any], R],
    *,
    using: str = DEFAULT_DB_ALIAS,
    prepare: bool = False,
) -> R:
    """Run one statement on database `using` and return `fetch(cursor)` (see the module).
    `prepare`: on PostgreSQL, prepare it on its first run on a connection (not only from the
    connection's `prepare_threshold`-th), as psycopg's `execute(..., prepare=True)` does; a
    connection whose threshold is None prepares nothing."""
    return _run(connections[using], sql, params, fetch, prepare)


def _run(
    db: BaseDatabaseWrapper,
    sql: str,
    params: Sequence[Any],
    fetch: Callable[[Any], R],
    prepare: bool = False,
) -> R:
    """`query` on the wrapper `db` (looked up once by each public function: a lookup in
    Django's connection handler is not free, and one call here runs several statements)."""
    raw = _open_connection(db)
    if raw is None:
        with db.cursor() as wrapped:
            wrapped.execute(sql, params)
            return fetch(wrapped)
    db.validate_no_broken_transaction()
    with db.wrap_database_errors:
        if db.vendor == "postgresql":
            if LIBPQ_PATH:  # no cursor at all (each request's wrapper is new)
                result = _pg_run(raw, sql, params, prepare)
                if result is not None:
                    return fetch(result)
            cursor = _kept_cursor(db, raw)
            cursor.execute(sql, params, prepare=True if prepare else None)
            return fetch(cursor)
        cursor = _kept_cursor(db, raw)
        cursor.execute(sql, params)
        return fetch(cursor)


# PostgreSQL: one statement straight through libpq, without psycopg's cursor machinery.
#
# psycopg's cursor spends much of a statement's client-side work in Python (its query
# conversion, its prepared-statement bookkeeping, its generator-driven I/O). The same work,
# done by the same pieces, is cheaper in a straight line: the statement's %s placeholders
# become $n once per text; psycopg's own Transformer (its C implementation) dumps the
# parameters with the connection's adapters and loads the rows with its loaders (Django's
# included), exactly as the cursor would; libpq sends the statement with PQexecParams, or with
# PQexecPrepared from its `prepare_threshold`-th run on the connection (the connection's own
# setting: None, behind a transaction-mode pooler, prepares nothing), and blocks in C without
# the GIL. An error result raises psycopg's own exception for it (Django's wrapper turns it
# into Django's), and a transaction starts as psycopg starts it (BEGIN before the first
# statement when autocommit is off). Statements this path cannot take (placeholders other
# than %s, a mapping of parameters, a pipeline open) take the cursor's.
#
# It leans on psycopg's private parts (`_PgState`, `_pg_run`: the connection's `_prepared`
# manager with its `clear`, `_to_flush` and `maintain_gen`, its `_pipeline` and
# `_get_tx_start_command`), so it runs only on the psycopg versions it was checked against
# (`PSYCOPG_CHECKED`; requirements.txt pins one of them): on any other, every statement takes the
# kept cursor and psycopg's public `execute(..., prepare=...)`.
# tests/casino/test_rawsql_postgres.py fails when the installed psycopg leaves that range or
# those parts stop behaving as assumed, and runs the same statements with the path off.

PSYCOPG_CHECKED = "3.3"  # the psycopg release series the libpq path was checked against


def libpq_path_checked(version: str) -> bool:
    """Whether psycopg `version` ("3.3.9") is of the series the libpq path was checked on."""
    return version.split(".")[:2] == PSYCOPG_CHECKED.split(".")


LIBPQ_PATH = libpq_path_checked(psycopg.__version__)

_PG_MAX_PREPARED = 200  # per connection; beyond it statements run unprepared
_IDLE = psycopg.pq.TransactionStatus.IDLE
_COMMAND_OK = psycopg.pq.ExecStatus.COMMAND_OK
_TUPLES_OK = psycopg.pq.ExecStatus.TUPLES_OK
_AUTO = psycopg.adapt.PyFormat.AUTO


class _PgResult:
    """What `query`'s fetch functions read from a cursor, for one finished statement."""

    __slots__ = ("_next", "_rows", "lastrowid", "rowcount")

    def __init__(self, rows: list[tuple[Any, ...]], rowcount: int, lastrowid: Any) -> None:
        self._rows, self._next, self.rowcount, self.lastrowid = rows, 0, rowcount, lastrowid

    def fetchone(self) -> tuple[Any, ...] | None:
        if self._next >= len(self._rows):
            return None
        self._next += 1
        return self._rows[self._next - 1]

    def fetchall(self) -> list[tuple[Any, ...]]:
        rows, self._next = self._rows[self._next :], len(self._rows)
        return rows


class _PgState:
    """Per psycopg connection (kept on it): its Transformer, and the statements run and
    prepared on it.

    psycopg deallocates every prepared statement of the connection (DEALLOCATE ALL) when it
    clears its own cache: on a rollback, and after a DROP, ALTER or DISCARD ALL, whenever it
    has prepared statements of its own (it prepares the ORM's from their fifth run). That
    takes this path's statements with it, so its `clear` is wrapped to forget them too, and
    a DEALLOCATE ALL psycopg has queued is sent before this path prepares anything.
    """

    __slots__ = ("encoding", "manager", "named", "prepared", "runs", "tx")

    def __init__(self, conn: Any) -> None:
        self.tx = Transformer(conn)
        self.runs: dict[tuple[str, Any], int] = {}
        self.prepared: dict[tuple[str, Any], bytes] = {}
        self.named = 0  # names are never reused: one forgotten here may still be prepared there
        self.encoding = conn.info.encoding
        self.manager = manager = conn._prepared
        clear = manager.clear

        def clear_both() -> bool:
            dropped = bool(clear())
            if dropped:
                self.prepared.clear()
            return dropped

        manager.clear = clear_both


_PG_QUERIES: dict[str, tuple[bytes, int] | None] = {}  # text -> ($n form, parameter count)
_PLACEHOLDER = re.compile(r"%(.)", re.DOTALL)


def _pg_query_text(sql: str) -> tuple[bytes, int] | None:
    """`sql` with its %s as $1, $2, ... and %% as %; None if it has any other % escape."""
    count = 0
    unsupported = False

    def replace(match: re.Match[str]) -> str:
        nonlocal count, unsupported
        if match.group(1) == "%":
            return "%"
        if match.group(1) != "s":
            unsupported = True
            return match.group(0)
        count += 1
        return f"${count}"

    text = _PLACEHOLDER.sub(replace, sql)
    return None if unsupported else (text.encode(), count)


def _pg_run(conn: Any, sql: str, params: Sequence[Any], prepare: bool) -> _PgResult | None:
    """Run one statement on psycopg connection `conn` (see above); None: use the cursor."""
    if sql in _PG_QUERIES:
        converted = _PG_QUERIES[sql]
    else:
        converted = _PG_QUERIES[sql] = _pg_query_text(sql)
    if converted is None or not isinstance(params, (list, tuple)) or conn._pipeline is not None:
        return None
    text, count = converted
    if count != len(params):
        raise psycopg.ProgrammingError(
            f"the query has {count} placeholders but {len(params)} parameters were passed"
        )
    state: _PgState | None = conn.__dict__.get("_rawsql_state")
    if state is None:
        state = conn.__dict__["_rawsql_state"] = _PgState(conn)
    if state.manager._to_flush:  # psycopg's pending DEALLOCATE (ALL): send it first
        conn.wait(state.manager.maintain_gen(conn))
    pgconn = conn.pgconn
    if not conn.autocommit and pgconn.transaction_status == _IDLE:
        # BEGIN (with the connection's isolation level), as psycopg's cursor would send it.
        begun = pgconn.exec_(conn._get_tx_start_command())
        if begun.status != _COMMAND_OK:
            raise psycopg.errors.error_from_result(begun, encoding=state.encoding)
    tx = state.tx
    values = tx.dump_sequence(params, [_AUTO] * count) if count else []
    types = tx.types if count else ()
    formats = tx.formats if count else None
    key = (sql, types)
    name = state.prepared.get(key)
    if name is None:
        threshold = conn.prepare_threshold
        runs = state.runs[key] = state.runs.get(key, 0) + 1
        if (
            threshold is not None
            and (prepare or runs > threshold)
            and len(state.prepared) < _PG_MAX_PREPARED
        ):
            name = b"_rawsql_%d" % state.named
            state.named += 1
            prepared = pgconn.prepare(name, text, types)
            if prepared.status != _COMMAND_OK:
                raise psycopg.errors.error_from_result(prepared, encoding=state.encoding)
            state.prepared[key] = name
            del state.runs[key]
    if name is None:
        result = pgconn.exec_params(text, values, types, formats)
    else:
        result = pgconn.exec_prepared(name, values, formats)
    status = result.status
    if status == _TUPLES_OK:
        tx.set_pgresult(result)
        rows = tx.load_rows(0, result.ntuples, tuple)
    elif status == _COMMAND_OK:
        rows = []
    else:
        error = psycopg.errors.error_from_result(result, encoding=state.encoding)
        if isinstance(error, psycopg.errors.InvalidSqlStatementName):
            state.prepared.clear()  # gone from the session: prepare them again
        raise error
    tuples = result.command_tuples
    return _PgResult(rows, -1 if tuples is None else tuples, result.oid_value or None)


def execute(sql: str, params: Sequence[Any], *, using: str = DEFAULT_DB_ALIAS) -> int:
    """Run one statement (see `query`); its row count."""
    return _run(connections[using], sql, params, _rowcount)


def later(sql: str, params: Sequence[Any], *, using: str = DEFAULT_DB_ALIAS) -> None:
    """Queue a write (UPDATE, INSERT or DELETE) that nothing reads back before the next
    `execute_with_queued` or `flush` on this connection, which sends it: on PostgreSQL in
    front of that statement, as a WITH clause of it (a statement and a round trip saved),
    elsewhere just before it. The queued writes and the flushing statement must touch
    different rows. Whoever queues must make sure a flush follows inside the same
    transaction, and `discard_queued` on the way out of one that fails (see the round
    service)."""
    connections[using].__dict__.setdefault("_rawsql_later", []).append((sql, list(params)))


class _Collected:
    """A queued write built when it is sent, from what was collected under its key."""

    __slots__ = ("build", "items", "key")

    def __init__(self, key: str, build: Callable[[Any], tuple[str, list[Any]] | None]) -> None:
        self.key, self.build = key, build
        self.items: dict[Any, Any] = {}


def later_collect(
    key: str,
    build: Callable[[dict[Any, Any]], tuple[str, list[Any]] | None],
    *,
    using: str = DEFAULT_DB_ALIAS,
) -> dict[Any, Any]:
    """Like `later`, for one write that several callers add to: the dict collected under `key`
    on this connection (a new one the first time), which the caller fills in. When the queue
    is sent, `build(that dict)` gives the statement and its parameters (None: nothing to
    send). Two `later` writes to the same row in one statement would lose one of them; one
    collected write per key cannot."""
    queue = connections[using].__dict__.setdefault("_rawsql_later", [])
    for entry in queue:
        if isinstance(entry, _Collected) and entry.key == key:
            return entry.items
    collected = _Collected(key, build)
    queue.append(collected)
    return collected.items


def _take_queued(db: Any) -> list[tuple[str, list[Any]]]:
    """The queued writes as statements (collected ones built now), the queue emptied."""
    taken: list[tuple[str, list[Any]]] = []
    for entry in db.__dict__.pop("_rawsql_later", None) or ():
        if isinstance(entry, _Collected):
            built = entry.build(entry.items)
            if built is not None:
                taken.append(built)
        else:
            taken.append(entry)
    return taken


def execute_with_queued(sql: str, params: Sequence[Any], *, using: str = DEFAULT_DB_ALIAS) -> int:
    """`execute` a write together with the writes `later` queued; its own row count."""
    db = connections[using]
    return _execute_with(_take_queued(db), sql, params, db)


def _execute_with(
    queued: list[tuple[str, list[Any]]], sql: str, params: Sequence[Any], db: Any
) -> int:
    if not queued:
        return _run(db, sql, params, _rowcount)
    if db.vendor != "postgresql":
        for statement, values in queued:
            _run(db, statement, values, _rowcount)
        return _run(db, sql, params, _rowcount)
    withs = ", ".join(f"q{i} AS ({statement})" for i, (statement, _) in enumerate(queued))
    values = [value for _, queued_values in queued for value in queued_values]
    return _run(db, f"WITH {withs} {sql}", [*values, *params], _rowcount)


def flush(*, using: str = DEFAULT_DB_ALIAS) -> None:
    """Send whatever `later` queued on this connection (on PostgreSQL as one statement)."""
    db = connections[using]
    queued = _take_queued(db)
    if queued:
        last, values = queued.pop()
        _execute_with(queued, last, values, db)


def discard_queued(*, using: str = DEFAULT_DB_ALIAS) -> None:
    """Forget the queued writes (their transaction is rolling back)."""
    connections[using].__dict__.pop("_rawsql_later", None)


@contextmanager
def queued_block(*, using: str = DEFAULT_DB_ALIAS) -> Iterator[None]:
    """A block inside a transaction whose writes may be queued: what `later` and
    `write_soon` queue in it is sent at its end (`flush`), or forgotten if it fails."""
    db = connections[using]
    outer = db.__dict__.get("_rawsql_block", False)
    db.__dict__["_rawsql_block"] = True
    try:
        yield
    except BaseException:
        discard_queued(using=using)
        raise
    finally:
        db.__dict__["_rawsql_block"] = outer
    flush(using=using)


def write_soon(
    key: str,
    build: Callable[[dict[Any, Any]], tuple[str, list[Any]] | None],
    item_key: Any,
    item: Any,
    *,
    using: str = DEFAULT_DB_ALIAS,
) -> None:
    """Add `item` to the write collected under `key` (`later_collect`) inside a
    `queued_block`, where it goes out with the block's last write; elsewhere write it now."""
    db = connections[using]
    if db.__dict__.get("_rawsql_block"):
        later_collect(key, build, using=using)[item_key] = item
        return
    built = build({item_key: item})
    if built is not None:
        _run(db, built[0], built[1], _rowcount)


@contextmanager
def savepoint(*, using: str = DEFAULT_DB_ALIAS) -> Iterator[None]:
    """A savepoint inside the current transaction as raw statements, with what Django's nested
    `transaction.atomic()` does at its end: if the block raises, or an ORM write in it failed
    and marked the transaction for rollback, the database goes back to the savepoint and the
    transaction is usable again (also after a failed statement on PostgreSQL); an exception
    propagates. Two statements on the fast path, where a nested `atomic()` also ran Django's
    savepoint bookkeeping and cursor."""
    db = connections[using]
    if not db.in_atomic_block:
        raise RuntimeError("rawsql.savepoint runs inside a transaction (atomic block)")
    _run(db, "SAVEPOINT rawsql_savepoint", [], _rowcount)
    try:
        yield
    except BaseException:
        _back_to_savepoint(db)
        raise
    if db.needs_rollback:  # an ORM write failed inside and its error was caught there
        _back_to_savepoint(db)
        return
    _run(db, "RELEASE SAVEPOINT rawsql_savepoint", [], _rowcount)


def _back_to_savepoint(db: BaseDatabaseWrapper) -> None:
    db.needs_rollback = False  # as Django's Atomic does: the savepoint makes it usable again
    try:
        _run(db, "ROLLBACK TO SAVEPOINT rawsql_savepoint", [], _rowcount)
        _run(db, "RELEASE SAVEPOINT rawsql_savepoint", [], _rowcount)
    except BaseException:
        db.needs_rollback = True
        raise


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
    return _select_one_sql(model, where, order_by, lock, connections[DEFAULT_DB_ALIAS])


def _select_one_sql(
    model: type[Model], where: str, order_by: str, lock: bool, db: BaseDatabaseWrapper
) -> str:
    key = (model, where, order_by, lock, db.vendor)
    sql = _SQL.get(key)
    if sql is None:
        qn = db.ops.quote_name
        columns = ", ".join(qn(f.column) for f in model._meta.concrete_fields)
        sql = f"SELECT {columns} FROM {qn(model._meta.db_table)} WHERE {where}"
        if order_by:
            sql += f" ORDER BY {order_by}"
        sql += " LIMIT 1"
        if lock and db.features.has_select_for_update:
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
    db = connections[DEFAULT_DB_ALIAS]
    sql = _select_one_sql(model, where, order_by, lock, db)
    return _instance(model, _run(db, sql, params, _one), db)


_UPDATES: dict[tuple[type[Model], str, str, str], str] = {}


def update_one(model: type[M], assignments: str, where: str, params: Sequence[Any]) -> M | None:
    """UPDATE `model` SET `assignments` WHERE `where` RETURNING the row as it is now, as an
    instance (None: no row matched, nothing changed). For a row that `where` picks out
    alone: a lock, a check and a write in one statement. Columns and %s as in `first`;
    PostgreSQL and SQLite (3.35+) both return the updated row."""
    db = connections[DEFAULT_DB_ALIAS]
    key = (model, assignments, where, db.vendor)
    sql = _UPDATES.get(key)
    if sql is None:
        qn = db.ops.quote_name
        columns = ", ".join(qn(f.column) for f in model._meta.concrete_fields)
        table = qn(model._meta.db_table)
        sql = _UPDATES[key] = f"UPDATE {table} SET {assignments} WHERE {where} RETURNING {columns}"
    return _instance(model, _run(db, sql, params, _one), db)


def fetch_one(
    sql: str, params: Sequence[Any], *, using: str = DEFAULT_DB_ALIAS
) -> tuple[Any, ...] | None:
    """The first row of a raw statement on database `using`, or None."""
    return _run(connections[using], sql, params, _one)


def instance(
    model: type[M], row: Sequence[Any] | None, *, using: str = DEFAULT_DB_ALIAS
) -> M | None:
    """The `model` instance of a row (from database `using`) that starts with its concrete
    columns in field order (None for None), converted as the ORM converts them."""
    if row is None:
        return None
    return _instance(model, row, connections[using])


def _instance(model: type[M], row: Sequence[Any] | None, db: BaseDatabaseWrapper) -> M | None:
    if row is None:
        return None
    using = db.alias
    attnames, converting = _reader(model, db)
    values = list(row[: len(attnames)])
    for i, converters, column in converting:
        value = values[i]
        for convert in converters:
            value = convert(value, column, db)
        values[i] = value
    if _plain_init(model):
        # What from_db -> Model.__init__ leaves behind for a full row of a plain model (no
        # __init__, from_db or init signal receivers of its own): the values in the
        # instance's __dict__ under their attnames, and a loaded state, without the generic
        # __init__ and its two signal sends (tests/casino/test_rawsql.py).
        new = model.__new__(model)
        state = new._state = ModelState()
        state.adding, state.db = False, using
        new.__dict__.update(zip(attnames, values, strict=True))
        return new
    return model.from_db(using, attnames, values)


def _plain_init(model: type[Model]) -> bool:
    plain = _PLAIN.get(model)
    if plain is None:
        plain = _PLAIN[model] = (
            model.__init__ is Model.__init__
            and getattr(model.from_db, "__func__", None) is Model.from_db.__func__  # type: ignore[attr-defined]
            and type(model).__call__ is type.__call__
            and not model._meta.abstract
        )
    return plain and not (pre_init.has_listeners(model) or post_init.has_listeners(model))


_PLAIN: dict[type[Model], bool] = {}

_INSERTS: dict[tuple[type[Model], tuple[str, ...], int, str, bool, str], str] = {}


def _insert_sql(
    model: type[Model],
    fields: Sequence[Any],
    rows: int,
    returning: str,
    ignore_conflicts: bool,
    db: BaseDatabaseWrapper,
) -> str:
    key = (model, tuple(f.attname for f in fields), rows, returning, ignore_conflicts, db.vendor)
    sql = _INSERTS.get(key)
    if sql is None:
        qn = db.ops.quote_name
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
        statements.append(_insert_sql(type(group[0]), fields, len(group), "", False, db))
        params += values
    *first, last = statements
    withs = ", ".join(f"i{i} AS ({sql})" for i, sql in enumerate(first))
    _run(db, f"WITH {withs} {last}", params, _rowcount)
    for group in groups:
        for obj in group:
            obj._state.adding, obj._state.db = False, db.alias


def _insert_values(objs: Sequence[Model], db: BaseDatabaseWrapper) -> tuple[list[Any], list[Any]]:
    """The columns to write (all but an unset primary key) and the rows' prepared values."""
    pk_missing = objs[0].pk is None
    fields = [f for f in type(objs[0])._meta.concrete_fields if not (f.primary_key and pk_missing)]
    return fields, [f.get_db_prep_save(f.pre_save(obj, True), db) for obj in objs for f in fields]


def insert_values(
    model: type[Model],
    attnames: Sequence[str],
    rows: Sequence[Sequence[Any]],
    *,
    ignore_conflicts: bool = False,
) -> None:
    """INSERT rows given as values (in `attnames` order, each prepared as `get_db_prep_save`
    prepares it) without model instances, in one statement. For rows whose fields have no
    `pre_save` of their own (no auto_now) and whose keys nothing reads (the primary key is
    left to the database)."""
    if not rows:
        return
    db = connections[DEFAULT_DB_ALIAS]
    key = (model, tuple(attnames))
    fields = _FIELDS_BY_ATTNAME.get(key)
    if fields is None:
        by_attname = {f.attname: f for f in model._meta.concrete_fields}
        fields = _FIELDS_BY_ATTNAME[key] = [by_attname[name] for name in attnames]
    params = [f.get_db_prep_save(v, db) for row in rows for f, v in zip(fields, row, strict=True)]
    _run(db, _insert_sql(model, fields, len(rows), "", ignore_conflicts, db), params, _rowcount)


_FIELDS_BY_ATTNAME: dict[tuple[type[Model], tuple[str, ...]], list[Any]] = {}


def copy_rows(
    table: str,
    columns: Sequence[str],
    rows: Sequence[Sequence[Any]],
    *,
    using: str = DEFAULT_DB_ALIAS,
) -> None:
    """Bulk-load new rows: on PostgreSQL with COPY ... FROM STDIN (psycopg's public copy API,
    the fastest load it has), elsewhere as multi-row INSERTs of 500 rows (datetimes adapted
    as Django adapts them). For rows no model instance needs (the transparency log's
    sequencer: tens of thousands of rows a pass)."""
    db = connections[using]
    names = ", ".join(db.ops.quote_name(c) for c in columns)
    with db.cursor() as cursor:
        if db.vendor == "postgresql":
            statement = f"COPY {db.ops.quote_name(table)} ({names}) FROM STDIN"
            with cursor.cursor.copy(statement) as copy:
                for row in rows:
                    copy.write_row(row)
            return
        one = "(" + ", ".join(["%s"] * len(columns)) + ")"
        adapt = db.ops.adapt_datetimefield_value
        for start in range(0, len(rows), 500):
            chunk = rows[start : start + 500]
            values = [adapt(v) if isinstance(v, datetime) else v for row in chunk for v in row]
            cursor.execute(
                f"INSERT INTO {db.ops.quote_name(table)} ({names}) VALUES "
                + ", ".join([one] * len(chunk)),
                values,
            )


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
    db = connections[DEFAULT_DB_ALIAS]  # once: `connection` is a lookup on every use
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
    sql = _insert_sql(model, fields, len(objs), returning, ignore_conflicts, db)
    if pk_missing and len(objs) == 1 and not ignore_conflicts:
        objs[0].pk = _run(db, sql, params, _returned if returning else _lastrowid)
    else:
        _run(db, sql, params, _rowcount)
    for obj in objs:
        obj._state.adding, obj._state.db = False, db.alias
