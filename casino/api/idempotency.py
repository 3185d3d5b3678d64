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

import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

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

# Seed 1: not the wallet's `hashtextextended(key, 0)` transaction locks on the same key text.
_LOCK_SQL = "SELECT pg_try_advisory_lock(hashtextextended(%s, 1))"
_UNLOCK_SQL = "SELECT pg_advisory_unlock(hashtextextended(%s, 1))"
_in_flight: set[str] = set()  # non-PostgreSQL: keys held by this process
_in_flight_lock = threading.Lock()


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


def _try_lock(scoped: str) -> bool:
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(_LOCK_SQL, [scoped])
            return bool(cursor.fetchone()[0])
    with _in_flight_lock:
        if scoped in _in_flight:
            return False
        _in_flight.add(scoped)
        return True


def _unlock(scoped: str) -> None:
    if connection.vendor == "postgresql":
        try:
            with connection.cursor() as cursor:
                cursor.execute(_UNLOCK_SQL, [scoped])
        except DatabaseError:  # a broken connection has no session left, so no lock either
            logger.warning("could not release the idempotency lock of %s", scoped)
        return
    with _in_flight_lock:
        _in_flight.discard(scoped)


@contextmanager
def _key_lock(scoped: str) -> Iterator[bool]:
    """Hold the key for this request (True), or say another live request holds it (False)."""
    if not _try_lock(scoped):
        yield False
        return
    try:
        yield True
    finally:
        _unlock(scoped)


class _MarkApplied:
    """An execute_wrapper: the first statement of each new transaction first marks the key."""

    def __init__(self, scoped: str) -> None:
        self.scoped = scoped
        self.base = len(connection.atomic_blocks)  # blocks already open (a test's wrapper)
        self.marked: object | None = None
        self.sql = (
            f"UPDATE {IdempotencyRecord._meta.db_table} SET status_code = %s "
            "WHERE key = %s AND status_code = %s"
        )

    def __call__(
        self, execute: Callable[..., Any], sql: str, params: Any, many: bool, context: Any
    ) -> Any:
        blocks = connection.atomic_blocks
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
    IdempotencyRecord.objects.filter(key=scoped).update(status_code=status, response=body)


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
    with _key_lock(scoped) as held:
        if not held:  # another live request holds this key: its answer, or "in progress"
            record = IdempotencyRecord.objects.filter(key=scoped).first()
            if record is None:
                raise _in_progress()
            return (*_replay(record, fingerprint, clean), True)
        try:  # a fresh key (the common case) costs one INSERT, no SELECT
            with transaction.atomic(durable=True):
                IdempotencyRecord.objects.create(
                    key=scoped,
                    operation=operation,
                    fingerprint=fingerprint,
                    status_code=PENDING,
                    response={},
                )
        except IntegrityError:
            record = IdempotencyRecord.objects.get(key=scoped)
            if record.fingerprint != fingerprint:
                raise posting.key_reused_error(clean) from None
            if record.status_code == APPLIED:  # its owner died after a commit: never rerun
                status, body = _interrupted(clean)
                _finish(scoped, status, body)
                return status, body, True
            if record.status_code != PENDING:
                return record.status_code, record.response, True
            # PENDING and unheld: its owner died before any commit; this request takes over.
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
    return status, body, False


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
