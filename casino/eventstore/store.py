"""Append, load and read the event log.

`append` runs inside the caller's transaction: one INSERT per call on PostgreSQL (hashes are
computed in Python, the previous hash comes from a per-thread cache that the INSERT itself
re-checks), a statement prepared once per connection whose rows travel as one JSON parameter.
Optimistic concurrency comes from the unique (stream_id, version).

Gap-free global order on PostgreSQL: a row's position is (its transaction id << 16) + its index
in that transaction, so log order is transaction-id order. `read_after` returns only rows whose
transaction id is below the snapshot's xmin, i.e. from transactions that have all finished: no
transaction still running can later commit a position below what a reader has already passed.
Writers never wait for each other. On SQLite, writers are serialized (BEGIN IMMEDIATE), so the
autoincrement position is already commit order.
"""

from __future__ import annotations

import copy
import json
import re
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from json.encoder import encode_basestring
from typing import Any

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, IntegrityError, connections, transaction
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models.base import ModelState

from casino.eventstore.models import StoredEvent, format_recorded_at
from casino.eventstore.upcasting import UPCASTERS, upcast
from casino.platform import rawsql
from casino.platform.errors import ConflictError
from fairness.canonical import (
    GENESIS,
    body_text,
    canonical_text,
    canonical_text_float_free,
    chained_hash,
)

try:
    import msgspec as _msgspec
except ImportError:  # optional (as in fairness/bundle.py): the standard library parses alone
    _msgspec = None  # type: ignore[assignment]

# Rows to StoredEvent instances, and the SQL fragments that select them: the hot path of
# replay and log reads. Model instances are built without Model.__init__, a page of JSON is
# decoded in one call, and PostgreSQL returns recorded_at as epoch microseconds.

TABLE = "eventstore_storedevent"
COLUMNS = "position, stream_id, version, type, schema_version, data, recorded_at, prev_hash, hash"
# Positions per transaction on PostgreSQL (low bits of the position).
TX_SHIFT = 16


def select_sql(connection: BaseDatabaseWrapper, source: str = TABLE) -> str:
    if connection.vendor != "postgresql":
        return f"SELECT {COLUMNS} FROM {source}"
    # Epoch microseconds: exact, and no per-row timestamptz parsing in Python.
    at = "(extract(epoch FROM recorded_at) * 1000000)::bigint"
    return f"SELECT {COLUMNS.replace('recorded_at', at)} FROM {source}"


def watermark_sql(connection: BaseDatabaseWrapper) -> str:
    if connection.vendor != "postgresql":
        return ""
    return f" AND position < (pg_snapshot_xmin(pg_current_snapshot())::text::bigint << {TX_SHIFT})"


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def recorded_now() -> datetime:
    """The clock an append records its events at (UTC; a test steps it back)."""
    return datetime.now(UTC)


def appended_events(
    alias: str,
    stream_id: str,
    recorded_at: datetime,
    positions: Sequence[int],
    rows: Sequence[Any],
) -> list[StoredEvent]:
    """StoredEvent instances of rows just inserted, from the values written (no reload).

    `rows`: objects with version, type, schema_version, data, prev_hash and hash attributes.
    Built as `build_events` builds loaded ones, without Model.__init__.
    """
    return [
        _stored_event(
            alias,
            position,
            stream_id,
            row.version,
            row.type,
            row.schema_version,
            row.data,
            recorded_at,
            row.prev_hash,
            row.hash,
        )
        for position, row in zip(positions, rows, strict=True)
    ]


def _stored_event(
    alias: str,
    position: int,
    stream_id: str,
    version: int,
    type_: str,
    schema_version: int,
    data: Any,
    recorded_at: datetime,
    prev_hash: str,
    hash_: str,
) -> StoredEvent:
    """A saved StoredEvent as Model.__init__ would set it, without its per-field overhead."""
    state = ModelState()
    state.adding, state.db = False, alias
    event: StoredEvent = StoredEvent.__new__(StoredEvent)
    event.__dict__ = {
        "_state": state,
        "position": position,
        "stream_id": stream_id,
        "version": version,
        "type": type_,
        "schema_version": schema_version,
        "data": data,
        "recorded_at": recorded_at,
        "prev_hash": prev_hash,
        "hash": hash_,
    }
    return event


def build_events(
    connection: BaseDatabaseWrapper, rows: Sequence[Sequence[Any]], upcast_events: bool
) -> list[StoredEvent]:
    """Model instances from selected rows: the hot path of replay and log reads."""
    texts = [row[5] for row in rows]
    if all(isinstance(text, str) for text in texts):
        # One json.loads for the whole page is several times cheaper than one per row.
        datas = json.loads("[" + ",".join(texts) + "]")
    else:
        datas = [json.loads(t) if isinstance(t, str) else t for t in texts]
    alias = connection.alias
    times: dict[Any, datetime] = {}  # one append shares one recorded_at
    events = []
    for (position, stream_id, version, type_, schema_version, _, at, prev, hash_), data in zip(
        rows, datas, strict=True
    ):
        if (recorded_at := times.get(at)) is None:
            recorded_at = times[at] = recorded_at_from_db(at)
        event = _stored_event(
            alias,
            position,
            stream_id,
            version,
            type_,
            schema_version,
            data,
            recorded_at,
            prev,
            hash_,
        )
        if upcast_events and (type_, schema_version) in UPCASTERS:
            # Keep the stored shape: the hash chain is over it, not over the upcast one.
            event._stored = (schema_version, data)  # type: ignore[attr-defined]
            event.schema_version, event.data = upcast(type_, schema_version, copy.deepcopy(data))
        events.append(event)
    return events


class _FloatFound(ValueError):
    """A stored JSON text holds a float (never appended by `append`: see check_json_native)."""


def _refuse_float(text: str) -> Any:
    raise _FloatFound(text)


# msgspec's parser, about twice as fast as the standard library's: for every page it accepts
# it gives the same values (it keeps integers of any size exact and the last of duplicated
# keys; it takes no NaN or Infinity and no escaped lone surrogate, and its float_hook sees every
# float: see fairness/bundle.py). A page it refuses for any reason is parsed again by the
# standard library, which then decides, as before, whether the page holds a float (or raises
# its own error).
_FAST_PAGE = _msgspec.json.Decoder(float_hook=_refuse_float).decode if _msgspec else None
# The two parsers hit Python's recursion limit a few levels apart, so a page with a row that
# might nest that deep (more than twice this many characters and more than this many
# brackets) is left to the standard library alone. Stored rows nest a few levels.
FAST_ROW_LIMIT = 500


def _fast_page_safe(texts: list[str]) -> bool:
    """No row nests deeper than FAST_ROW_LIMIT levels (each level takes two characters)."""
    short = 2 * FAST_ROW_LIMIT
    if not texts or max(map(len, texts)) <= short:
        return True
    return all(t.count("[") + t.count("{") <= FAST_ROW_LIMIT for t in texts if len(t) > short)


def decode_json_page(texts: list[str]) -> tuple[list[Any], bool]:
    """Rows' JSON texts decoded in one call (one page), and whether none holds a float (or
    NaN/Infinity, which the standard library parses as floats); a float-free page's values
    are then exactly what `json.loads` gives each text."""
    page = "[" + ",".join(texts) + "]"
    if _FAST_PAGE is not None and _fast_page_safe(texts):
        try:
            return _FAST_PAGE(page), True
        except Exception:  # whatever msgspec refuses, the standard library parses or refuses
            pass
    try:
        return json.loads(page, parse_float=_refuse_float, parse_constant=_refuse_float), True
    except _FloatFound:
        return json.loads(page), False


def recorded_at_from_db(value: Any) -> datetime:
    """recorded_at as selected: integer epoch microseconds (PostgreSQL) or naive UTC (SQLite)."""
    if isinstance(value, int):
        return _EPOCH + timedelta(microseconds=value)
    at = datetime.fromisoformat(value) if isinstance(value, str) else value
    if not isinstance(at, datetime):
        raise TypeError(f"unexpected recorded_at {value!r}")
    return at.replace(tzinfo=UTC) if at.tzinfo is None else at.astimezone(UTC)


_quote = encode_basestring

UNIQUE_CONSTRAINT = "eventstore_stream_version_uniq"
MAX_EVENTS_PER_TRANSACTION = (1 << TX_SHIFT) - 1
HEAD_CACHE_SIZE = 10_000


# What event data may hold: JSON-native values that hash and store the same everywhere.


def check_json_native(value: Any, event_type: str) -> None:
    """Only str/int/bool/None/list/dict: floats would not hash the same in every language.

    Plain values are checked inline (this runs on every appended event); anything else,
    subclasses included, goes through `_check_value`, which says what is wrong.
    """
    kind = type(value)
    if kind is dict:
        for key in value:
            if type(key) is not str or not key.isascii() or "\x00" in key:
                _check_key(key, event_type)
        items = value.values()
    elif kind is list:
        items = value
    else:
        _check_value(value, event_type)
        return
    for item in items:
        kind = type(item)
        if kind is int or kind is bool or item is None:
            continue
        if kind is str and item.isascii() and "\x00" not in item:
            continue
        check_json_native(item, event_type)


def _check_key(key: Any, event_type: str) -> None:
    if not isinstance(key, str):
        raise TypeError(f"{event_type}: JSON object keys must be strings")
    _check_value(key, event_type)


def _check_value(value: Any, event_type: str) -> None:
    if value is None or isinstance(value, bool | int):
        return
    if isinstance(value, str):
        if "\x00" in value:
            raise ValueError(f"{event_type}: NUL characters cannot be stored (PostgreSQL)")
        if not value.isascii():
            try:
                value.encode("utf-8")
            except UnicodeEncodeError as exc:
                raise ValueError(f"{event_type}: strings must be valid UTF-8") from exc
        return
    if isinstance(value, dict):
        for key, item in value.items():
            _check_key(key, event_type)
            check_json_native(item, event_type)
        return
    if isinstance(value, list):
        for item in value:
            check_json_native(item, event_type)
        return
    raise TypeError(f"{event_type}: {type(value).__name__} is not allowed in event data")


@dataclass(frozen=True, slots=True)
class NewEvent:
    """An event to append: its type, JSON-native data (money as int micro-USDC), schema version."""

    type: str
    data: dict[str, Any] = field(default_factory=dict)
    schema_version: int = 1


class ConcurrencyError(ConflictError):
    """The stream is not at the expected version (another writer won). Retry the command."""

    def __init__(self, stream_id: str, expected_version: int, reason: str) -> None:
        super().__init__(
            f"Round {stream_id} changed concurrently ({reason}); retry.",
            code="version_conflict",
            extra={"stream_id": stream_id, "expected_version": expected_version},
        )
        self.stream_id = stream_id
        self.expected_version = expected_version


class _Heads(threading.local):
    """Per-thread cache of each stream's last (version, hash), re-checked by every INSERT."""

    def __init__(self) -> None:
        self.by_stream: dict[tuple[str, str], tuple[int, str]] = {}

    def get(self, alias: str, stream_id: str, version: int) -> str | None:
        head = self.by_stream.get((alias, stream_id))
        return head[1] if head is not None and head[0] == version else None

    def put(self, alias: str, stream_id: str, version: int, hash_: str) -> None:
        if len(self.by_stream) >= HEAD_CACHE_SIZE:
            self.by_stream.pop(next(iter(self.by_stream)))
        self.by_stream[(alias, stream_id)] = (version, hash_)

    def drop(self, alias: str, stream_id: str) -> None:
        self.by_stream.pop((alias, stream_id), None)


_heads = _Heads()


def append(
    *,
    stream_id: str,
    expected_version: int,
    events: Sequence[NewEvent],
    using: str = DEFAULT_DB_ALIAS,
    head_hash: str | None = None,
    not_before: datetime | None = None,
) -> list[StoredEvent]:
    """Append `events` after `expected_version` (0 = new stream) inside the caller's transaction.

    Raises ConcurrencyError (HTTP 409) if the stream is not at `expected_version`; the caller's
    transaction is then marked for rollback and the whole command should be retried.
    `head_hash`: the hash of the stream's event at `expected_version` as the caller read it
    (the round service has just loaded the stream); like this thread's cached head, the
    INSERT re-checks it, and a wrong one costs a read of the real head, never a wrong chain.
    `not_before`: the recorded_at of the stream's event at `expected_version`, as the caller
    read it: the new events are recorded no earlier, so a stream's times never run backwards
    when the machine's clock steps back.
    """
    connection = connections[using]
    if not connection.in_atomic_block:
        raise transaction.TransactionManagementError(
            "append() must run inside the caller's transaction.atomic() block"
        )
    _check_arguments(stream_id, expected_version, events)
    if not events:
        return []
    prev_hash = (
        GENESIS
        if expected_version == 0
        else head_hash or _heads.get(using, stream_id, expected_version)
    )
    from_cache = prev_hash is not None and expected_version > 0
    if prev_hash is None:
        prev_hash = _fetch_hash(connection, stream_id, expected_version)
    recorded_at = recorded_now()
    if not_before is not None and recorded_at < not_before:
        recorded_at = not_before
    # format_recorded_at's text (YYYY-MM-DDTHH:MM:SS.ffffffZ) for a UTC datetime, cheaper.
    at_text = recorded_at.isoformat(timespec="microseconds")[:-6] + "Z"
    rows = _chain(stream_id, expected_version, events, prev_hash, at_text)
    stored = _insert(connection, stream_id, expected_version, rows, recorded_at, at_text)
    if stored is None and from_cache:
        # The cached head was stale (e.g. its transaction rolled back): read the real one.
        _heads.drop(using, stream_id)
        prev_hash = _fetch_hash(connection, stream_id, expected_version)
        rows = _chain(stream_id, expected_version, events, prev_hash, at_text)
        stored = _insert(connection, stream_id, expected_version, rows, recorded_at, at_text)
    if stored is None:
        transaction.set_rollback(True, using=using)
        raise ConcurrencyError(stream_id, expected_version, "its head moved")
    last = stored[-1]
    _heads.put(using, stream_id, last.version, last.hash)
    return stored


def load(
    stream_id: str, *, upcast_events: bool = True, using: str = DEFAULT_DB_ALIAS
) -> list[StoredEvent]:
    """Every event of one stream in version order, upcast to current schema versions."""
    connection = connections[using]
    events = rawsql.query(
        f"{select_sql(connection)} WHERE stream_id = %s ORDER BY version",
        [stream_id],
        lambda cursor: build_events(connection, cursor.fetchall(), upcast_events),
        using=using,
    )
    if events:
        _heads.put(using, stream_id, events[-1].version, events[-1].hash)
    return events


def load_many(
    stream_ids: Iterable[str], *, upcast_events: bool = True, using: str = DEFAULT_DB_ALIAS
) -> dict[str, list[StoredEvent]]:
    """Several streams in one query: {stream_id: events in version order} ([] if none)."""
    streams: dict[str, list[StoredEvent]] = {str(stream_id): [] for stream_id in stream_ids}
    if not streams:
        return streams
    connection = connections[using]
    ids = list(streams)
    with connection.cursor() as cursor:
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            marks = ", ".join(["%s"] * len(chunk))
            where = f"WHERE stream_id IN ({marks}) ORDER BY stream_id, version"
            cursor.execute(f"{select_sql(connection)} {where}", chunk)
            for event in build_events(connection, cursor.fetchall(), upcast_events):
                streams[event.stream_id].append(event)
    return streams


@dataclass(slots=True)
class BundleRead:
    """Streams read straight into the verifier's shape (see `load_bundle_events`)."""

    # {stream_id: [{"stream", "version", "type", "schema_version", "data", "recorded_at",
    #   "prev_hash", "hash"}]}: the hashed body exactly as stored, in version order.
    events: dict[str, list[dict[str, Any]]]
    # {stream_id: [each event's data upcast to the current schema version]} (the engine's input;
    # the same objects as the stored data where no upcaster applies).
    current: dict[str, list[dict[str, Any]]]
    # No stored data holds a float (so canonical JSON may take its float-free path).
    float_free: bool


_SQLITE_AT = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{6}", re.ASCII)


def _recorded_at_text(value: Any) -> str:
    """recorded_at as the hash contract writes it (YYYY-MM-DDTHH:MM:SS.ffffffZ).

    SQLite's stored text of a naive UTC datetime with microseconds is rewritten as is (the same
    characters parsing and formatting would give); anything else is parsed and formatted.
    """
    if isinstance(value, str) and _SQLITE_AT.fullmatch(value):
        return f"{value[:10]}T{value[11:]}Z"
    return format_recorded_at(recorded_at_from_db(value))


def load_bundle_events(stream_ids: Iterable[str], *, using: str = DEFAULT_DB_ALIAS) -> BundleRead:
    """Several streams in one query per 500, as plain dicts in the shape a verifier reads.

    No model instances: each page's JSON is decoded in one call, recorded_at is formatted once
    per append as the hash contract writes it, and upcast data is kept apart from the stored
    (hashed) data. On PostgreSQL the jsonb column is selected as text, so both databases decode
    the same way and a float (which `append` never writes) is noticed.
    """
    ids = list(dict.fromkeys(str(stream_id) for stream_id in stream_ids))
    events: dict[str, list[dict[str, Any]]] = {stream_id: [] for stream_id in ids}
    current: dict[str, list[dict[str, Any]]] = {stream_id: [] for stream_id in ids}
    float_free = True
    if not ids:
        return BundleRead(events, current, float_free)
    connection = connections[using]
    if connection.vendor == "postgresql":
        columns = (
            "stream_id, version, type, schema_version, data::text, "
            "(extract(epoch FROM recorded_at) * 1000000)::bigint, prev_hash, hash"
        )
    else:
        # recorded_at as its stored text (an expression has no declared type, so the driver
        # does not parse it into a datetime per row): parsed once per append below.
        columns = (
            "stream_id, version, type, schema_version, data, CAST(recorded_at AS TEXT), "
            "prev_hash, hash"
        )
    times: dict[Any, str] = {}
    with connection.cursor() as cursor:
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            marks = ", ".join(["%s"] * len(chunk))
            cursor.execute(
                f"SELECT {columns} FROM {TABLE} WHERE stream_id IN ({marks}) "
                "ORDER BY stream_id, version",
                chunk,
            )
            rows = cursor.fetchall()
            texts = [row[4] for row in rows]
            if not all(isinstance(text, str) for text in texts):  # a driver that decodes JSON
                texts = [t if isinstance(t, str) else json.dumps(t) for t in texts]
            datas, page_float_free = decode_json_page(texts)
            float_free = float_free and page_float_free
            # Rows come stream by stream: each stream's two lists are looked up once.
            stream = None
            out: list[dict[str, Any]] = []
            upcast_out: list[dict[str, Any]] = []
            for (stream_id, version, type_, schema_version, _, at, prev, hash_), data in zip(
                rows, datas, strict=True
            ):
                if stream_id != stream:
                    stream, out, upcast_out = stream_id, events[stream_id], current[stream_id]
                if (text := times.get(at)) is None:
                    text = times[at] = _recorded_at_text(at)
                out.append(
                    {
                        "stream": stream_id,
                        "version": version,
                        "type": type_,
                        "schema_version": schema_version,
                        "data": data,
                        "recorded_at": text,
                        "prev_hash": prev,
                        "hash": hash_,
                    }
                )
                if UPCASTERS and (type_, schema_version) in UPCASTERS:
                    data = upcast(type_, schema_version, copy.deepcopy(data))[1]
                upcast_out.append(data)
    return BundleRead(events, current, float_free)


def read_after(
    position: int, limit: int = 1000, *, using: str = DEFAULT_DB_ALIAS
) -> list[StoredEvent]:
    """Up to `limit` events with a position above `position`, in log order, never skipping one.

    Pass the position of the last event you processed as the next cursor. On PostgreSQL only
    events of transactions older than every running one are returned (see the module doc).
    """
    connection = connections[using]
    page = f"SELECT * FROM {TABLE} WHERE position > %s ORDER BY position LIMIT %s"
    if connection.vendor == "postgresql":
        # Cut the page at the watermark outside the ordered index scan: the planner cannot
        # estimate "position < f()" and would otherwise sort the whole tail of the log.
        source = f"({page}) page"
        where = f"WHERE true{watermark_sql(connection)} ORDER BY position"
        sql = f"{select_sql(connection, source)} {where}"
    else:
        sql = page
    with connection.cursor() as cursor:
        cursor.execute(sql, [position, limit])
        return build_events(connection, cursor.fetchall(), True)


def last_position(*, using: str = DEFAULT_DB_ALIAS) -> int:
    """The highest position `read_after` can return now (0 when the log is empty)."""
    connection = connections[using]
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT max(position) FROM {TABLE} WHERE position > 0{watermark_sql(connection)}"
        )
        row = cursor.fetchone()
    return int(row[0]) if row and row[0] is not None else 0


def _check_arguments(stream_id: str, expected_version: int, events: Sequence[NewEvent]) -> None:
    if not isinstance(stream_id, str) or not 0 < len(stream_id) <= 64:
        raise ValueError("stream_id must be a non-empty string of at most 64 characters")
    if not isinstance(expected_version, int) or expected_version < 0:
        raise ValueError("expected_version must be an int >= 0")
    if len(events) > MAX_EVENTS_PER_TRANSACTION:
        raise ValueError(f"at most {MAX_EVENTS_PER_TRANSACTION} events per append")
    for event in events:
        if not isinstance(event, NewEvent) or not isinstance(event.data, dict):
            raise TypeError("events must be NewEvent(type, data: dict, schema_version)")
        check_json_native(event.data, event.type)


@dataclass(slots=True)
class _Row:
    version: int
    type: str
    schema_version: int
    data: dict[str, Any]
    data_text: str  # canonical JSON of data (jsonb keeps no key order, so any order stores alike)
    prev_hash: str
    hash: str


def _chain(
    stream_id: str,
    expected_version: int,
    events: Iterable[NewEvent],
    prev_hash: str,
    at_text: str,
) -> list[_Row]:
    """Each event's row and hash (fairness.canonical: sha256 of prev_hash + canonical body)."""
    rows = []
    fast = type(stream_id) is str and type(at_text) is str
    head = f',"recorded_at":{_quote(at_text)},"schema_version":' if fast else ""
    tail = f',"stream":{_quote(stream_id)},"type":' if fast else ""
    for version, event in enumerate(events, start=expected_version + 1):
        type_, schema_version, data = event.type, event.schema_version, event.data
        # Event data holds no float (the engine's events have no float field, tests/eventstore/
        # test_float_free.py), so orjson writes the canonical text (about 10x faster).
        data_text = canonical_text_float_free(data)
        if fast and type(type_) is str and type(schema_version) is int:
            # body_text's fast path, around the data text computed once for the row too.
            body = (
                f'{{"data":{data_text}{head}{schema_version}{tail}{_quote(type_)},'
                f'"version":{version}}}'
            )
        else:
            body = body_text(stream_id, version, type_, schema_version, data, at_text)
        hash_ = chained_hash(prev_hash, body)
        rows.append(_Row(version, type_, schema_version, data, data_text, prev_hash, hash_))
        prev_hash = hash_
    return rows


def _fetch_hash(connection: BaseDatabaseWrapper, stream_id: str, version: int) -> str:
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT hash FROM {TABLE} WHERE stream_id = %s AND version = %s", [stream_id, version]
        )
        row = cursor.fetchone()
    if row is None:
        transaction.set_rollback(True, using=connection.alias)
        raise ConcurrencyError(stream_id, version, f"it has no version {version}")
    return str(row[0])


# One statement per append. The rows come as one JSON array of
# [version, type, schema_version, data, prev_hash, hash] (one text parameter: no per-element
# array quoting in Python); positions follow the transaction's own last one (see module doc).
_PG_INSERT_ROWS = f"""
INSERT INTO {TABLE} ({COLUMNS})
SELECT base.start + e.n, %s, (e.r->>0)::int, e.r->>1, (e.r->>2)::int, e.r->3, %s::timestamptz,
       e.r->>4, e.r->>5
FROM (
    SELECT coalesce(
        (SELECT max(position) FROM {TABLE} WHERE position > x.lo AND position < x.hi), x.lo
    ) AS start
    FROM (
        SELECT pg_current_xact_id()::text::bigint << {TX_SHIFT} AS lo,
               (pg_current_xact_id()::text::bigint + 1) << {TX_SHIFT} AS hi
    ) x
) base,
jsonb_array_elements(%s::jsonb) WITH ORDINALITY AS e(r, n)
"""
# A new stream: the unique (stream_id, version) refuses a second version 1.
_PG_INSERT_NEW = f"{_PG_INSERT_ROWS}RETURNING position"
# After a head: only if the head is the one the hashes were chained to (else no row: it moved).
# Two statements, not one with "expected = 0 OR EXISTS": each keeps one plan shape, so
# PostgreSQL settles on its generic plan instead of planning the prepared statement anew.
_PG_INSERT_NEXT = f"""{_PG_INSERT_ROWS}WHERE EXISTS (
    SELECT 1 FROM {TABLE} WHERE stream_id = %s AND version = %s AND hash = %s
)
RETURNING position"""


def _insert(
    connection: BaseDatabaseWrapper,
    stream_id: str,
    expected_version: int,
    rows: list[_Row],
    recorded_at: datetime,
    at_text: str,
) -> list[StoredEvent] | None:
    """Insert the rows if the stream's head is (expected_version, rows[0].prev_hash), else None."""
    positions: list[int] | None
    try:
        if connection.vendor == "postgresql":
            positions = _insert_postgres(connection, stream_id, expected_version, rows, at_text)
        else:
            with connection.cursor() as cursor:
                positions = _insert_sqlite(
                    connection, cursor, stream_id, expected_version, rows, recorded_at
                )
    except IntegrityError as exc:
        if not _is_version_conflict(exc):
            raise
        transaction.set_rollback(True, using=connection.alias)
        raise ConcurrencyError(stream_id, expected_version, "the version is taken") from exc
    if not positions:
        return None
    return appended_events(connection.alias, stream_id, recorded_at, sorted(positions), rows)


def _insert_postgres(
    connection: BaseDatabaseWrapper,
    stream_id: str,
    expected_version: int,
    rows: list[_Row],
    at_text: str,
) -> list[int]:
    items = []
    for r in rows:
        if type(r.type) is str and type(r.schema_version) is int:
            items.append(
                f"[{r.version},{_quote(r.type)},{r.schema_version},{r.data_text},"
                f'{_quote(r.prev_hash)},"{r.hash}"]'
            )
        else:
            items.append(
                canonical_text([r.version, r.type, r.schema_version, r.data, r.prev_hash, r.hash])
            )
    params: list[Any] = [stream_id, at_text, f"[{','.join(items)}]"]
    if expected_version == 0:
        sql = _PG_INSERT_NEW
    else:
        params += [stream_id, expected_version, rows[0].prev_hash]
        sql = _PG_INSERT_NEXT
    # The parameters bound by the server (Django's psycopg cursor would quote them into the
    # text in Python), the statement prepared on its first run on a connection
    # (EVENTSTORE_PREPARED_APPEND, on by default: planning it was most of the server's time
    # for an append; a PgBouncer in transaction mode needs 1.21+ for this).
    return rawsql.query(
        sql,
        params,
        _positions,
        using=connection.alias,
        prepare=getattr(settings, "EVENTSTORE_PREPARED_APPEND", True),
    )


def _positions(cursor: Any) -> list[int]:
    return [p for (p,) in cursor.fetchall()]


def _insert_sqlite(
    connection: BaseDatabaseWrapper,
    cursor: Any,
    stream_id: str,
    expected_version: int,
    rows: list[_Row],
    recorded_at: datetime,
) -> list[int] | None:
    if expected_version > 0:
        cursor.execute(
            f"SELECT 1 FROM {TABLE} WHERE stream_id = %s AND version = %s AND hash = %s",
            [stream_id, expected_version, rows[0].prev_hash],
        )
        if cursor.fetchone() is None:
            return None
    at = connection.ops.adapt_datetimefield_value(recorded_at)
    values = ", ".join(["(%s, %s, %s, %s, %s, %s, %s, %s)"] * len(rows))
    params: list[Any] = []
    for r in rows:
        # The data as given (key order kept, as the JSONField would store it).
        text = json.dumps(r.data, ensure_ascii=False, separators=(",", ":"))
        params += [stream_id, r.version, r.type, r.schema_version, text, at, r.prev_hash]
        params.append(r.hash)
    cursor.execute(
        f"INSERT INTO {TABLE} ({COLUMNS.removeprefix('position, ')}) VALUES {values}"
        " RETURNING position",
        params,
    )
    return [int(p) for (p,) in cursor.fetchall()]


def _is_version_conflict(exc: IntegrityError) -> bool:
    diag = getattr(exc.__cause__, "diag", None)
    if diag is not None:
        return getattr(diag, "constraint_name", None) == UNIQUE_CONSTRAINT
    return f"{TABLE}.stream_id, {TABLE}.version" in str(exc)
