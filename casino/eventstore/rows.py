"""Rows to StoredEvent instances, and the SQL fragments that select them.

The hot path of replay and log reads: model instances are built without Model.__init__, a page
of JSON is decoded in one call, and PostgreSQL returns recorded_at as epoch microseconds.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models.base import ModelState

from casino.eventstore.models import StoredEvent
from casino.eventstore.upcasting import UPCASTERS, upcast

try:
    import msgspec as _msgspec
except ImportError:  # optional (as in fairness/bundle.py): the standard library parses alone
    _msgspec = None  # type: ignore[assignment]

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
