"""Idempotent money-moving requests: one stored response per (user, Idempotency-Key).

The rule every idempotency key of the project follows lives here: a key's form
(`idempotency_key_clean`), the fingerprint of what it asked for (`fingerprint`), and the 422
for a key used again with another body (`key_reused_error`). The wallet's requests
(`idempotent_request`), the game's commands (`casino.api.commands`) and the journal's
entry keys (`ledger.posting`) all apply it.

- Same key, same body: the stored response again (status and JSON), nothing moves.
- Same key, different body (or another operation): 422 `idempotency_key_reused`.
- Concurrent duplicates: a PostgreSQL advisory lock on the key serializes them (SQLite
  serializes all writers already), so the second sees the first's stored response. If a
  duplicate still collides on a unique key, it gets 409 `idempotency_conflict`.
- Retention: records are kept `settings.IDEMPOTENCY_RETENTION_DAYS` (30) days, then pruned by
  `manage.py prune_idempotency`. The key stays reserved forever in the journal entry's unique
  `idempotency_key`, so a very late retry can never move money twice.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Mapping
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from casino.platform.errors import ApplicationError, ConflictError
from fairness.canonical import canonical_json_float_free
from ledger.models import IdempotencyRecord

_KEY = re.compile(r"[A-Za-z0-9._:\-]{1,100}")

Perform = Callable[[str, str], tuple[int, dict[str, Any]]]


def fingerprint(payload: Mapping[str, Any]) -> str:
    """sha256 of the canonical JSON of what a request asked for (sorted keys, no spaces,
    UTF-8: `json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)`,
    written by orjson: the same bytes for every payload without a float)."""
    return hashlib.sha256(canonical_json_float_free(payload)).hexdigest()


def key_reused_error(idempotency_key: str) -> ApplicationError:
    return ApplicationError(
        "This Idempotency-Key was already used for a different request.",
        code="idempotency_key_reused",
        status_code=422,
        extra={"idempotency_key": idempotency_key},
    )


def idempotency_key_clean(raw: str | None) -> str:
    """Validate an Idempotency-Key header value (1-100 of A-Z a-z 0-9 . _ : -)."""
    if not raw:
        raise ApplicationError(
            "This request moves money and needs an Idempotency-Key header.",
            code="idempotency_key_required",
        )
    if not _KEY.fullmatch(raw):
        raise ApplicationError(
            "The Idempotency-Key must be 1-100 characters of A-Z a-z 0-9 . _ : -",
            code="idempotency_key_invalid",
        )
    return raw


def idempotent_request(
    *, user_id: int, key: str | None, operation: str, payload: dict[str, Any], perform: Perform
) -> tuple[int, dict[str, Any], bool]:
    """Run `perform(entry_key, fingerprint)` once per key in one durable transaction.

    `payload` is the parsed request (amounts as int micro-USDC, so "12.5" and "12.500000"
    are the same body). Returns (status, body, replayed).
    """
    scoped = f"{user_id}:{idempotency_key_clean(key)}"
    request_fingerprint = fingerprint({"operation": operation, "payload": payload})
    try:
        with transaction.atomic(durable=True):
            if connection.vendor == "postgresql":
                with connection.cursor() as cursor:
                    cursor.execute(
                        "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", [scoped]
                    )
            record = IdempotencyRecord.objects.filter(key=scoped).first()
            if record is not None:
                if record.fingerprint != request_fingerprint:
                    raise key_reused_error(key or "")
                return record.status_code, record.response, True
            status, body = perform(f"request:{scoped}", request_fingerprint)
            IdempotencyRecord.objects.create(
                key=scoped,
                operation=operation,
                fingerprint=request_fingerprint,
                status_code=status,
                response=body,
            )
    except IntegrityError as exc:
        raise ConflictError(
            "A concurrent request with this Idempotency-Key is in progress; retry it.",
            code="idempotency_conflict",
        ) from exc
    return status, body, False


def idempotency_records_prune(*, older_than_days: int | None = None) -> int:
    """Delete stored responses older than the retention period; returns how many."""
    days = settings.IDEMPOTENCY_RETENTION_DAYS if older_than_days is None else older_than_days
    cutoff = timezone.now() - timedelta(days=days)
    with transaction.atomic(durable=True):
        deleted, _ = IdempotencyRecord.objects.filter(created_at__lt=cutoff).delete()
    return deleted
