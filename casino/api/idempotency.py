"""Idempotency-Key for game POSTs, on the ledger's records (`ledger.idempotency`).

The wallet runs its work inside the idempotency transaction; a round command cannot (the round
service opens its own durable transactions), so here the key is reserved first, the command
runs, and the response is stored:

- same key, same body: the stored response again, nothing runs (`Idempotent-Replayed: true`);
- same key, other body: 422 `idempotency_key_reused`;
- a 409 (the state did not allow it now) or a 5xx frees the key: nothing changed, retry it.

The crash window (a request that dies between reserving its key and storing its response):

- **Who is in flight.** The request holding a key holds a lock on it for as long as it runs:
  on PostgreSQL a session advisory lock (`pg_try_advisory_lock`), which PostgreSQL releases
  by itself when the process dies and its connection closes; elsewhere (the embedded default,
  one server process) an in-process registry. The lock is taken before the reservation.
- **A duplicate while the first runs:** 409 `idempotency_in_progress`; nothing runs. Retry
  it: once the first has finished, the same key replays its stored response.
- **Did the dead request change anything?** Each transaction the command opens first marks
  the reservation `APPLIED`, inside that transaction (a Django `execute_wrapper` on the
  connection). A crash before a commit rolls the mark back with the rest: nothing happened.
- **A retry after the first died** (the key is reserved, nobody holds its lock):
  - still `PENDING` (no transaction of the first committed): the retry takes the key over
    and runs the command, once;
  - `APPLIED` (a transaction committed, the response was lost): the command is not run
    again; the key answers 409 `idempotency_interrupted` from then on, and the caller reads
    the round's state (`GET /api/rounds/<id>/`) to see what it did.

So a key is never stuck: it is completed (a stored response) or retryable.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from typing import Any

from django.core.serializers.json import DjangoJSONEncoder
from django.db import DatabaseError, IntegrityError, connection, transaction
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter
from rest_framework.request import Request
from rest_framework.response import Response

from casino.errors import ApplicationError, ConflictError, error_body
from ledger import posting
from ledger.idempotency import idempotency_key_clean
from ledger.models import IdempotencyRecord

logger = logging.getLogger(__name__)

PENDING = 0  # reserved; no transaction of the command has committed
APPLIED = 1  # a transaction of the command committed; the response is not stored yet
HEADER = OpenApiParameter(
    "Idempotency-Key",
    OpenApiTypes.STR,
    OpenApiParameter.HEADER,
    required=True,
    description="Unique per request (1-100 chars A-Z a-z 0-9 . _ : -). The same key with the "
    "same body replays the first response; with another body it is a 422; while the first is "
    "still running it is a 409 `idempotency_in_progress`.",
)

Perform = Callable[[], tuple[int, dict[str, Any]]]

_TABLE = IdempotencyRecord._meta.db_table
# PostgreSQL: the reservation takes the key's session advisory lock in the same statement
# (seed 1: not the wallet's `hashtextextended(key, 0)` transaction locks on the same text).
# No row: another live session holds the key. A unique violation: the lock was taken first
# (the WHERE runs before the insert), and a session lock outlives the rolled-back statement.
_RESERVE_SQL = (
    f"INSERT INTO {_TABLE} (key, operation, fingerprint, status_code, response, created_at) "
    "SELECT %s, %s, %s, %s, '{}'::jsonb, now() WHERE pg_try_advisory_lock(hashtextextended(%s, 1))"
)
_UNLOCK_SQL = "SELECT pg_advisory_unlock(hashtextextended(%s, 1))"
# The response is stored and the lock released in one statement.
_FINISH_SQL = (
    f"UPDATE {_TABLE} SET status_code = %s, response = %s::jsonb WHERE key = %s "
    "RETURNING pg_advisory_unlock(hashtextextended(key, 1))"
)
_in_flight: set[str] = set()  # other databases: keys held by this process
_in_flight_lock = threading.Lock()

FREE, BUSY, TAKEN = "free", "busy", "taken"  # what a reservation found


def _in_progress() -> ConflictError:
    return ConflictError(
        "A request with this Idempotency-Key is still running; retry it shortly.",
        code="idempotency_in_progress",
    )


def _interrupted(key: str) -> tuple[int, dict[str, Any]]:
    error = ConflictError(
        "The first request with this Idempotency-Key was interrupted after it changed the "
        "round; it ran once and is not run again. Read the round's state to see what it did.",
        code="idempotency_interrupted",
        extra={"idempotency_key": key},
    )
    return error.status_code, error_body(error.code, error.message, error.extra)


def _reserve(scoped: str, operation: str, fingerprint: str) -> str:
    """Reserve the key and hold it: FREE (new key), TAKEN (an old reservation; held), BUSY."""
    if connection.vendor == "postgresql":
        try:
            with transaction.atomic(durable=True), connection.cursor() as cursor:
                cursor.execute(_RESERVE_SQL, [scoped, operation, fingerprint, PENDING, scoped])
                return FREE if cursor.rowcount == 1 else BUSY
        except IntegrityError:
            return TAKEN
    with _in_flight_lock:
        if scoped in _in_flight:
            return BUSY
        _in_flight.add(scoped)
    try:
        with transaction.atomic(durable=True):
            IdempotencyRecord.objects.create(
                key=scoped,
                operation=operation,
                fingerprint=fingerprint,
                status_code=PENDING,
                response={},
            )
        return FREE
    except IntegrityError:
        return TAKEN
    except BaseException:
        _release(scoped)
        raise


def _release(scoped: str) -> None:
    """Let go of the key (the response, if any, is already stored)."""
    if connection.vendor == "postgresql":
        try:
            with connection.cursor() as cursor:
                cursor.execute(_UNLOCK_SQL, [scoped])
        except DatabaseError:  # a broken connection has no session left, so no lock either
            logger.warning("could not release the idempotency lock of %s", scoped)
        return
    with _in_flight_lock:
        _in_flight.discard(scoped)


class _MarkApplied:
    """An execute_wrapper: the first statement of each new transaction first marks the key."""

    def __init__(self, scoped: str) -> None:
        self.scoped = scoped
        self.base = len(connection.atomic_blocks)  # blocks already open (a test's wrapper)
        self.marked: object | None = None
        self.sql = f"UPDATE {_TABLE} SET status_code = %s WHERE key = %s AND status_code = %s"

    def __call__(
        self, execute: Callable[..., Any], sql: str, params: Any, many: bool, context: Any
    ) -> Any:
        blocks = connection.atomic_blocks
        if sql.startswith("SAVEPOINT"):  # a nested block opens: mark inside it, next statement
            return execute(sql, params, many, context)
        if len(blocks) > self.base and blocks[self.base] is not self.marked:
            self.marked = blocks[self.base]
            execute(self.sql, [APPLIED, self.scoped, PENDING], False, context)
        return execute(sql, params, many, context)


def _replay(record: IdempotencyRecord, fingerprint: str, key: str) -> tuple[int, dict[str, Any]]:
    if record.fingerprint != fingerprint:
        raise posting.key_reused_error(key)
    if record.status_code in (PENDING, APPLIED):
        raise _in_progress()
    return record.status_code, record.response


def _finish(scoped: str, status: int, body: dict[str, Any]) -> None:
    """Store the response; on PostgreSQL this also releases the key's lock."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(_FINISH_SQL, [status, json.dumps(body, cls=DjangoJSONEncoder), scoped])
        return
    IdempotencyRecord.objects.filter(key=scoped).update(status_code=status, response=body)
    _release(scoped)


def _free(scoped: str) -> None:
    """Forget the reservation: the command changed nothing (or only what it undid itself)."""
    IdempotencyRecord.objects.filter(key=scoped, status_code__in=(PENDING, APPLIED)).delete()


def _abandon(scoped: str, key: str) -> None:
    """An unexpected failure: free the key if nothing committed, else answer `interrupted`."""
    try:
        if not IdempotencyRecord.objects.filter(key=scoped, status_code=PENDING).delete()[0]:
            status, body = _interrupted(key)
            IdempotencyRecord.objects.filter(key=scoped, status_code=APPLIED).update(
                status_code=status, response=body
            )
    except DatabaseError:  # the database is gone: a retry finds the key unheld and decides
        logger.warning("could not release the idempotency key %s", scoped)


def idempotent_command(
    *, user_id: int, key: str | None, operation: str, payload: dict[str, Any], perform: Perform
) -> tuple[int, dict[str, Any], bool]:
    """Run `perform()` at most once per (user, key). Returns (status, body, replayed)."""
    clean = idempotency_key_clean(key)
    scoped = f"{user_id}:{clean}"
    fingerprint = posting.fingerprint({"operation": operation, "payload": payload})
    found = _reserve(scoped, operation, fingerprint)
    if found == BUSY:  # another live request holds this key: its answer, or "in progress"
        record = IdempotencyRecord.objects.filter(key=scoped).first()
        if record is None:
            raise _in_progress()
        return (*_replay(record, fingerprint, clean), True)
    finished = False
    try:
        if found == TAKEN:  # reserved before; we hold it now, so that request is over
            record = IdempotencyRecord.objects.get(key=scoped)
            if record.fingerprint != fingerprint:
                raise posting.key_reused_error(clean)
            if record.status_code == APPLIED:  # its owner died after a commit: never rerun
                status, body = _interrupted(clean)
                _finish(scoped, status, body)
                finished = True
                return status, body, True
            if record.status_code != PENDING:
                return record.status_code, record.response, True
            # PENDING: its owner died before any commit; this request takes over.
        try:
            with connection.execute_wrapper(_MarkApplied(scoped)):
                status, body = perform()
        except ApplicationError as exc:
            if exc.status_code == 409 or exc.status_code >= 500:
                _free(scoped)
                raise
            status, body = exc.status_code, error_body(exc.code, exc.message, exc.extra)
        except BaseException:
            _abandon(scoped, clean)
            raise
        _finish(scoped, status, body)
        finished = True
        return status, body, False
    finally:
        if not finished:
            _release(scoped)


def idempotent_response(
    request: Request, *, operation: str, payload: dict[str, Any], perform: Perform
) -> Response:
    """The view side: run once per Idempotency-Key header and answer with the stored JSON."""
    pk = request.user.pk
    assert pk is not None  # the views require an authenticated user
    status, body, replayed = idempotent_command(
        user_id=int(pk),
        key=request.headers.get("Idempotency-Key"),
        operation=operation,
        payload=payload,
        perform=perform,
    )
    response = Response(body, status=status)
    if replayed:
        response["Idempotent-Replayed"] = "true"
    return response
