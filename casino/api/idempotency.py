"""Idempotency-Key for game POSTs, on the ledger's records (`ledger.idempotency`).

The wallet runs its work inside the idempotency transaction; a round command cannot (the round
service opens its own durable transaction), so here the key is reserved first, the command
runs, and the response is stored:

- same key, same body: the stored response again, nothing runs (`Idempotent-Replayed: true`);
- same key, other body: 422 `idempotency_key_reused`;
- a duplicate while the first is still running: 409 `idempotency_conflict`;
- a 409 (the state did not allow it now) or a 5xx frees the key: nothing changed, retry it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.db import IntegrityError, transaction
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter
from rest_framework.request import Request
from rest_framework.response import Response

from casino.errors import ApplicationError, ConflictError, error_body
from ledger import posting
from ledger.idempotency import idempotency_key_clean
from ledger.models import IdempotencyRecord

PENDING = 0
HEADER = OpenApiParameter(
    "Idempotency-Key",
    OpenApiTypes.STR,
    OpenApiParameter.HEADER,
    required=True,
    description="Unique per request (1-100 chars A-Z a-z 0-9 . _ : -). The same key with the "
    "same body replays the first response; with another body it is a 422.",
)

Perform = Callable[[], tuple[int, dict[str, Any]]]


def _replay(record: IdempotencyRecord, fingerprint: str, key: str) -> tuple[int, dict[str, Any]]:
    if record.fingerprint != fingerprint:
        raise posting.key_reused_error(key)
    if record.status_code == PENDING:
        raise ConflictError(
            "A request with this Idempotency-Key is still running; retry it shortly.",
            code="idempotency_conflict",
        )
    return record.status_code, record.response


def idempotent_command(
    *, user_id: int, key: str | None, operation: str, payload: dict[str, Any], perform: Perform
) -> tuple[int, dict[str, Any], bool]:
    """Run `perform()` at most once per (user, key). Returns (status, body, replayed)."""
    clean = idempotency_key_clean(key)
    scoped = f"{user_id}:{clean}"
    fingerprint = posting.fingerprint({"operation": operation, "payload": payload})
    try:  # reserve first: a fresh key (the common case) costs one INSERT, no SELECT
        with transaction.atomic(durable=True):
            IdempotencyRecord.objects.create(
                key=scoped,
                operation=operation,
                fingerprint=fingerprint,
                status_code=PENDING,
                response={},
            )
    except IntegrityError:
        record = IdempotencyRecord.objects.filter(key=scoped).first()
        if record is None:
            raise ConflictError(
                "A concurrent request used this Idempotency-Key; retry it.",
                code="idempotency_conflict",
            ) from None
        return (*_replay(record, fingerprint, clean), True)
    try:
        status, body = perform()
    except ApplicationError as exc:
        if exc.status_code == 409 or exc.status_code >= 500:
            IdempotencyRecord.objects.filter(key=scoped, status_code=PENDING).delete()
            raise
        status, body = exc.status_code, error_body(exc.code, exc.message, exc.extra)
    except BaseException:
        IdempotencyRecord.objects.filter(key=scoped, status_code=PENDING).delete()
        raise
    IdempotencyRecord.objects.filter(key=scoped).update(status_code=status, response=body)
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
