"""Idempotency-Key for game POSTs, on the ledger's records (`ledger.idempotency`).

The key's record is written inside the transaction that does the work, so the command and its
key commit or roll back together. For a round command (and DEAL) that is the round service's
own transaction: a `Claim` is its `services.CommandHook`.

- **First write.** The record (key, operation, fingerprint of the body) is inserted as the
  first statement of the transaction (`INSERT ... ON CONFLICT (key) DO NOTHING RETURNING`).
- **Last write.** Before the commit, the answer (status and JSON) is stored in it.
- **Same key, same body, later:** the stored answer again (`Idempotent-Replayed: true`),
  nothing runs; **another body:** 422 `idempotency_key_reused`.
- **A concurrent duplicate** waits on the key's unique index until the first transaction
  ends: after a commit it replays the stored answer; after a rollback it runs, once.
- **A crash anywhere** (the process killed, the connection lost) rolls the command and its key
  back together: nothing happened, and a retry runs the command once.
- **Refusals.** A 409 (the state did not allow it now) or a 5xx (a malfunction) stores
  nothing and frees the key: retry it. Other refusals (400, 403, 404) are stored and replayed:
  when the command's transaction rolled back, in one statement of their own.
- **A refusal that depends on the balance** (`insufficient_funds`) is a 409 whichever check
  made it: DEAL's own check (before the bet) or the ledger's posting, which refuses when
  another command spent the money in between or a DOUBLE, SPLIT or insurance is not covered
  (a 409 there too). Never stored: the same key retried after a top-up runs.
- **An expired deadline, then a refusal:** the deadline's events commit (the round service
  keeps them) and the key's record follows the refusal in that same transaction: deleted
  for a 409, the stored error otherwise.

Table POSTs run their work in one transaction with the claim too (create, personal, sit,
leave). READY may start a round in a transaction of its own, so it runs first and stores its
answer after (`store_alone`): it only sets a flag, so a retry after a crash sets it again.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import orjson
from django.core.serializers.json import DjangoJSONEncoder
from django.db import connection, transaction
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response

from casino.platform import rawsql
from casino.platform.errors import ApplicationError, ConflictError, NotYours, error_body
from casino.rounds.publish import usdc_any
from casino.rounds.services import HookExit, RoundResult
from ledger.idempotency import fingerprint, idempotency_key_clean, key_reused_error
from ledger.models import IdempotencyRecord

HEADER = OpenApiParameter(
    "Idempotency-Key",
    OpenApiTypes.STR,
    OpenApiParameter.HEADER,
    required=True,
    description="Unique per request (1-100 chars A-Z a-z 0-9 . _ : -). The same key with the "
    "same body replays the first response; with another body it is a 422. A duplicate sent "
    "while the first still runs waits for it, then replays its response.",
)

Answer = tuple[int, dict[str, Any]]
Respond = Callable[[RoundResult], Answer]

_TABLE = IdempotencyRecord._meta.db_table
_UNANSWERED = 0  # the status of a record whose answer is not stored yet (never committed so)
_CLAIM_SQL = (
    f"INSERT INTO {_TABLE} (key, operation, fingerprint, status_code, response, created_at) "
    "VALUES (%s, %s, %s, %s, %s{json}, %s) ON CONFLICT (key) DO NOTHING RETURNING id"
)
_FIND_SQL = f"SELECT fingerprint, status_code, response FROM {_TABLE} WHERE key = %s"
_STORE_SQL = f"UPDATE {_TABLE} SET status_code = %s, response = %s{{json}} WHERE id = %s"
_FORGET_SQL = f"DELETE FROM {_TABLE} WHERE id = %s"


_SQL: dict[tuple[str, str], str] = {}


def _sql(template: str) -> str:
    """PostgreSQL stores the JSON text as jsonb; SQLite as text (each built once)."""
    vendor = connection.vendor
    found = _SQL.get((template, vendor))
    if found is None:
        found = _SQL[template, vendor] = template.format(
            json="::jsonb" if vendor == "postgresql" else ""
        )
    return found


class Replay(HookExit):
    """The key is answered already: leave the transaction (rolled back) and send this."""

    def __init__(self, status: int, body: dict[str, Any]) -> None:
        super().__init__(status)
        self.status, self.body = status, body


_ORJSON_OPTIONS = orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS
_django_default = DjangoJSONEncoder().default


def _json(value: dict[str, Any]) -> str:
    """The answer's JSON for its record: orjson (several times faster than the standard
    library's encoder for a round's view), with Django's encoder for what JSON has no type
    for (datetimes, decimals, UUIDs, lazy strings: the same text as before). The column is
    jsonb on PostgreSQL and the replay parses the text on SQLite, so only the values count,
    not the spacing. Whatever orjson refuses (an integer beyond 64 bits) takes the standard
    library's path."""
    try:
        return orjson.dumps(value, default=_django_default, option=_ORJSON_OPTIONS).decode()
    except TypeError:
        return json.dumps(value, cls=DjangoJSONEncoder)


BALANCE_CODES = frozenset({"insufficient_funds"})


def balance_refusal(error: ApplicationError) -> ConflictError:
    """A refusal for lack of funds as the API answers it: a 409 with `needed` and `available`
    as 6-place USDC strings, from DEAL's check (which gives them in micro-USDC) or the
    ledger's posting (`needed` and `balance` as decimal strings)."""
    extra = error.extra
    return ConflictError(
        "Insufficient funds for this bet.",
        code="insufficient_funds",
        extra={
            "needed": usdc_any(extra.get("needed")),
            "available": usdc_any(extra.get("available", extra.get("balance"))),
        },
    )


def _interrupted(key: str) -> Answer:
    error = ConflictError(
        "The first request with this Idempotency-Key was interrupted after it changed the "
        "round; it ran once and is not run again. Read the round's state to see what it did.",
        code="idempotency_interrupted",
        extra={"idempotency_key": key},
    )
    return error.status_code, error_body(error.code, error.message, error.extra)


class Claim:
    """One request's Idempotency-Key: a `services.CommandHook` for the command's transaction."""

    def __init__(
        self, *, scoped: str, key: str, operation: str, fingerprint: str, respond: Respond | None
    ) -> None:
        self.scoped, self.key = scoped, key
        self.operation, self.fingerprint = operation, fingerprint
        self.respond = respond
        self.record_id: int | None = None
        self.stored = False  # the answer (or the refusal's fate) is written in the transaction
        self.reused: ApplicationError | None = None
        self._answered: tuple[RoundResult, Answer] | None = None  # what `commit` stored

    def _replay(self, found: tuple[Any, ...]) -> Replay:
        stored_fingerprint, status, response = found
        if stored_fingerprint != self.fingerprint:
            self.reused = key_reused_error(self.key)
            raise self.reused
        if isinstance(response, str):  # SQLite hands the JSON back as text
            response = json.loads(response)
        if status < 100:  # left unanswered by the release before this one (reserve, then run)
            return Replay(*_interrupted(self.key))
        return Replay(status, response)

    def lookup(self) -> None:
        """Outside a transaction: raise `Replay` (or the 422) if the key is answered already."""
        found = rawsql.fetch_one(_FIND_SQL, [self.scoped])
        if found is not None:
            raise self._replay(found)

    # services.CommandHook -------------------------------------------------------------------

    def begin(self) -> None:
        """Insert the key's record, or wait for the transaction holding it and replay."""
        self.record_id, self.stored = None, False
        created = connection.ops.adapt_datetimefield_value(timezone.now())
        params: list[Any] = [
            self.scoped,
            self.operation,
            self.fingerprint,
            _UNANSWERED,
            "{}",
            created,
        ]
        row = rawsql.fetch_one(_sql(_CLAIM_SQL), params)
        if row is not None:
            self.record_id = int(row[0])
            return
        found = rawsql.fetch_one(_FIND_SQL, [self.scoped])  # committed: the insert waited for it
        if found is None:  # pruned between the two statements: a retry claims it afresh
            raise ConflictError(
                "A request with this Idempotency-Key just finished; retry it.",
                code="idempotency_conflict",
            )
        raise self._replay(found)

    def commit(self, result: RoundResult) -> None:
        assert self.respond is not None
        answer = self.respond(result)
        self._answered = (result, answer)
        self.store(*answer)

    def refuse(self, error: ApplicationError) -> None:
        assert self.record_id is not None
        if (
            error.status_code == 409 or error.status_code >= 500 or error.code in BALANCE_CODES
        ):  # frees the key
            rawsql.execute(_FORGET_SQL, [self.record_id])
            self.stored = True
            return
        self.store(error.status_code, error_body(error.code, error.message, error.extra))

    # ----------------------------------------------------------------------------------------

    def answer(self, result: RoundResult) -> Answer:
        """The answer to the command's `result`: the one `commit` stored with it (built once),
        else (a result `commit` never saw) built now."""
        if self._answered is not None and self._answered[0] is result:
            return self._answered[1]
        assert self.respond is not None
        return self.respond(result)

    def store(self, status: int, body: dict[str, Any]) -> None:
        """Inside the transaction that began with `begin`: the answer commits with the work."""
        assert self.record_id is not None, "store() needs begin() first, in this transaction"
        # With the command's queued writes (its round's UPDATE): one statement on PostgreSQL.
        rawsql.execute_with_queued(_sql(_STORE_SQL), [status, _json(body), self.record_id])
        self.stored = True

    def store_alone(self, status: int, body: dict[str, Any]) -> tuple[int, dict[str, Any], bool]:
        """The answer in a statement of its own; a concurrent duplicate's stored answer wins."""
        created = connection.ops.adapt_datetimefield_value(timezone.now())
        params: list[Any] = [
            self.scoped,
            self.operation,
            self.fingerprint,
            status,
            _json(body),
            created,
        ]
        with transaction.atomic(durable=True), connection.cursor() as cursor:
            cursor.execute(_sql(_CLAIM_SQL), params)
            if cursor.fetchone() is not None:
                return status, body, False
            cursor.execute(_FIND_SQL, [self.scoped])
            found = cursor.fetchone()
        if found is None:
            return status, body, False
        replay = self._replay(found)
        return replay.status, replay.body, True

    def run(self, work: Callable[[], Answer]) -> Answer:
        """`work()` in one durable transaction that begins with the key and ends with the answer.

        `work` may open atomic blocks of its own (savepoints), not durable transactions.
        """
        with transaction.atomic(durable=True):
            self.begin()
            status, body = work()
            self.store(status, body)
        return status, body


Perform = Callable[[Claim], Answer]


def idempotent_command(
    *,
    user_id: int,
    key: str | None,
    operation: str,
    payload: dict[str, Any],
    perform: Perform,
    respond: Respond | None = None,
) -> tuple[int, dict[str, Any], bool]:
    """Run `perform(claim)` at most once per (user, key). Returns (status, body, replayed).

    `perform` passes the claim to the round service as its hook (with `respond`, which turns
    the command's result into the answer), or runs its work in `claim.run`, or (READY) calls
    `claim.lookup()` first and lets the answer be stored after.
    """
    clean = idempotency_key_clean(key)
    claim = Claim(
        scoped=f"{user_id}:{clean}",
        key=clean,
        operation=operation,
        fingerprint=fingerprint({"operation": operation, "payload": payload}),
        respond=respond,
    )
    try:
        status, body = perform(claim)
    except Replay as replay:
        return replay.status, replay.body, True
    except ApplicationError as exc:
        if exc.code in BALANCE_CODES:  # the key is free: rolled back, or deleted by `refuse`
            raise balance_refusal(exc) from exc
        if (
            exc is claim.reused
            or exc.status_code == 409
            or exc.status_code >= 500
            or isinstance(exc, NotYours)
        ):
            raise  # the key is free (rolled back, or deleted by `refuse`), or not this body's
        refusal = error_body(exc.code, exc.message, exc.extra)
        if claim.stored:  # stored in the command's committed transaction (`refuse`)
            return exc.status_code, refusal, False
        return claim.store_alone(exc.status_code, refusal)
    if not claim.stored:  # work that ran before its answer could be stored (READY)
        return claim.store_alone(status, body)
    return status, body, False


_NATIVE = orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS
_NATIVE |= orjson.OPT_PASSTHROUGH_SUBCLASS


class NativeJSONResponse(Response):
    """A Response whose data holds no float (an answer: round views, tables, wallets in
    integer micro-USDC and strings). Where DRF's JSONRenderer was chosen, compact and without
    indent, orjson writes it: the same bytes as `json.dumps(..., separators=(",", ":"),
    ensure_ascii=False)` with U+2028/U+2029 escaped, as that renderer writes them (test).
    Anything orjson would write differently (datetimes, str subclasses, dataclasses: DRF's
    encoder formats them) or refuses goes to the renderer."""

    @property
    def rendered_content(self) -> Any:
        renderer = getattr(self, "accepted_renderer", None)
        context = getattr(self, "renderer_context", None)
        if (
            type(renderer) is JSONRenderer
            and self.data is not None
            and self.content_type is None
            and renderer.compact
            and not renderer.ensure_ascii
            and context is not None
            and renderer.get_indent(getattr(self, "accepted_media_type", ""), context) is None
        ):
            try:
                ret = orjson.dumps(self.data, option=_NATIVE)
            except TypeError:  # a value for DRF's encoder
                pass
            else:
                context["response"] = self
                self["Content-Type"] = renderer.media_type  # the renderer has no charset
                return ret.replace(b"\xe2\x80\xa8", b"\\u2028").replace(b"\xe2\x80\xa9", b"\\u2029")
        return Response.rendered_content.fget(self)  # type: ignore[attr-defined]


def idempotent_response(
    request: Request,
    *,
    operation: str,
    payload: dict[str, Any],
    perform: Perform,
    respond: Respond | None = None,
) -> Response:
    """The view side: run once per Idempotency-Key header and answer with the stored JSON."""
    pk = request.user.pk
    assert pk is not None  # the views require an authenticated user
    return command_response(
        *idempotent_command(
            user_id=int(pk),
            key=request.headers.get("Idempotency-Key"),
            operation=operation,
            payload=payload,
            perform=perform,
            respond=respond,
        )
    )


def command_response(status: int, body: dict[str, Any], replayed: bool) -> Response:
    """An idempotent command's answer as a view sends it: a replay says so in a header."""
    response = NativeJSONResponse(body, status=status)
    if replayed:
        response["Idempotent-Replayed"] = "true"
    return response
