"""The player's game commands, each defined once, and the one way to run one for a user.

REST (the round actions' endpoints, `ACTION_APIS`, and `casino.api.tables.TableDealApi`) and
the table WebSocket (`casino.live.consumers`) both call `deal` and `act`, so a command is the
same whichever way it arrives: one DRF input serializer (the only validation, and the request
body of the OpenAPI schema), the same checks in the same order, the same engine command and
service (`casino.tables.services.table_deal`, `casino.rounds.services.round_command`), and the
same Idempotency-Key record (operation and payload), so a key is shared between the two. A
command's answer is the round as its sender sees it now (`own_round_body`), built once.

The money rate limit is not taken here: a REST view has DRF take it (`throttle_scope`) before
the view runs, and the WebSocket calls `casino.platform.throttles.throttle_command`; both
count in one window per user.

**The Idempotency-Key**, on the ledger's records (`ledger.idempotency`). The key's record is
written inside the transaction that does the work, so the command and its key commit or roll
back together. For a round command (and DEAL) that is the round service's own transaction: a
`Claim` is its `services.CommandHook`.

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
from dataclasses import dataclass
from typing import Any

import orjson
from django.contrib.auth.models import AbstractBaseUser
from django.core.serializers.json import DjangoJSONEncoder
from django.db import connection, transaction
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    extend_schema,
    extend_schema_serializer,
    extend_schema_view,
)
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response

from casino.api.common import ROUND_ID_RE, GameApi, JsonBooleanField, round_get, round_played
from casino.api.plumbing import request_user
from casino.api.roundview import RoundViewField
from casino.engine.commands import (
    Command,
    DeclineInsurance,
    Double,
    Hit,
    Split,
    Stand,
    TakeEvenMoney,
    TakeInsurance,
)
from casino.engine.rules import BANKED, RULESETS
from casino.engine.views import Viewer, view
from casino.models import Table
from casino.platform import rawsql
from casino.platform.errors import ApplicationError, ConflictError, NotYours, error_body
from casino.rounds import services
from casino.rounds.publish import round_view_out, usdc_any
from casino.rounds.services import HookExit, RoundResult
from casino.tables import services as tables
from ledger.apis import AmountField
from ledger.idempotency import fingerprint, idempotency_key_clean, key_reused_error
from ledger.models import IdempotencyRecord
from ledger.money import parse_amount, usdc

# ---- the Idempotency-Key record ----

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


# ---- a command's answer, and the commands ----


class RoundOut(serializers.Serializer[Any]):
    """A round as you may see it."""

    round_id = serializers.CharField()
    version = serializers.IntegerField(help_text="last event version folded into this view")
    status = serializers.CharField(help_text="open, settled or voided")
    view = RoundViewField(help_text="your view of the round; amounts in USDC strings")


def round_body(*, round_id: str, version: int, status: str, view: dict[str, Any]) -> dict[str, Any]:
    """`RoundOut(...).data`, built directly: the same keys, order and values (CharField is
    `str`, IntegerField `int`, the view through `round_view_out`, as RoundViewField gives
    it), without a serializer instance per answer (tests/api:
    `test_round_body_is_what_the_serializer_gives`). `view` is the engine's."""
    return {
        "round_id": str(round_id),
        "version": int(version),
        "status": str(status),
        "view": round_view_out(view),
    }


def own_round_body(result: RoundResult, player_id: str) -> dict[str, Any]:
    """A command's answer: the round as the player who sent it sees it now."""
    return round_body(
        round_id=result.round.id,
        version=result.round.version,
        status=result.round.status,
        view=view(result.state, Viewer("player", player_id)),
    )


Outcome = tuple[int, dict[str, Any], bool]  # (HTTP status, JSON body, replayed)

# The input serializers. Their component names are the OpenAPI schema's; they carry no
# docstring, which drf-spectacular would publish as the component's description.


@extend_schema_serializer(component_name="_ActionInput")
class NoInput(serializers.Serializer[Any]):
    pass


@extend_schema_serializer(component_name="HitInput")
class HitInput(serializers.Serializer[Any]):
    confirm = JsonBooleanField(default=False)


@extend_schema_serializer(component_name="InsuranceInput")
class InsuranceInput(serializers.Serializer[Any]):
    take = JsonBooleanField()
    box = serializers.IntegerField(min_value=0, max_value=2, default=0)
    amount = AmountField(
        required=False,
        help_text='USDC as a decimal string with at most 6 places ("0.5"); default: half the bet',
    )


@extend_schema_serializer(component_name="EvenMoneyInput")
class EvenMoneyInput(serializers.Serializer[Any]):
    take = JsonBooleanField()
    box = serializers.IntegerField(min_value=0, max_value=2, default=0)


class BetAmountField(AmountField):
    """One box's bet: an amount, or 0 for a box left empty (the engine's PlaceBet). A refusal
    names `bets`, the field the client sent (the list's item has no name of its own), a null
    box too."""

    def amount_name(self) -> str:
        return "bets"

    def to_internal_value(self, data: Any) -> int:
        return parse_amount(data, field=self.amount_name(), allow_zero=True)


@extend_schema_serializer(component_name="TableDealInput")
class DealInput(serializers.Serializer[Any]):
    mode = serializers.ChoiceField(choices=["bet", "rebet", "double"], default="bet")
    bets = serializers.ListField(
        child=BetAmountField(),
        required=False,
        max_length=3,
        help_text="one amount per box, USDC as a decimal string with at most 6 places "
        '("1", "1.5", "0.000001"); "0" leaves a box empty',
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if attrs["mode"] == "bet" and not any(attrs.get("bets") or []):
            raise serializers.ValidationError({"bets": "DEAL needs at least one bet."})
        return attrs


@dataclass(frozen=True)
class PlayerCommand:
    """One command a player sends: its name (the WebSocket frame's `type`), the operation its
    Idempotency-Key record is filed under, its input serializer, and (a round action) how its
    validated input becomes the engine command. DEAL's engine command, the bet, is built by
    `casino.tables.services.table_deal`, which may open the round first."""

    name: str
    operation: str
    serializer: type[serializers.Serializer[Any]]
    build: Callable[[str, dict[str, Any]], Command] | None = None
    about: str = ""  # what its REST endpoint does, in the OpenAPI schema


def _insurance(player_id: str, data: dict[str, Any]) -> Command:
    if not data["take"]:
        return DeclineInsurance(player_id, data["box"])
    return TakeInsurance(player_id, data["box"], data.get("amount"))


def _even_money(player_id: str, data: dict[str, Any]) -> Command:
    if not data["take"]:
        return DeclineInsurance(player_id, data["box"])
    return TakeEvenMoney(player_id, data["box"])


DEAL = PlayerCommand("deal", "tables_deal", DealInput)
ROUND_ACTIONS: dict[str, PlayerCommand] = {
    c.name: c
    for c in (
        PlayerCommand(
            "hit",
            "rounds_hit",
            HitInput,
            lambda p, d: Hit(p, confirm=d["confirm"]),
            "Draw a card. With the safety net on, a risky hit (soft 20, hard 17 or more) needs "
            "`confirm: true`.",
        ),
        PlayerCommand(
            "stand", "rounds_stand", NoInput, lambda p, d: Stand(p), "Take no more cards."
        ),
        PlayerCommand(
            "double",
            "rounds_double",
            NoInput,
            lambda p, d: Double(p),
            "Double the bet on the hand in play and take exactly one more card.",
        ),
        PlayerCommand(
            "split",
            "rounds_split",
            NoInput,
            lambda p, d: Split(p),
            "Split the pair in play into two hands, the new one with a bet equal to the first.",
        ),
        PlayerCommand(
            "insurance",
            "rounds_insurance",
            InsuranceInput,
            _insurance,
            "Take or decline insurance on a box. `amount`: duel_classic allows up to half the bet.",
        ),
        PlayerCommand(
            "even_money",
            "rounds_even_money",
            EvenMoneyInput,
            _even_money,
            "Your blackjack against a dealer's ace: take (or decline) even money, paid 1:1 at "
            "once.",
        ),
    )
}
COMMANDS: dict[str, PlayerCommand] = {DEAL.name: DEAL, **ROUND_ACTIONS}


def act(
    *,
    user: AbstractBaseUser,
    name: str,
    round_id: str,
    body: Any,
    key: str | None,
    at_table: int | None = None,
) -> Outcome:
    """Run the round action `name` for `user`, once per Idempotency-Key `key`.

    A malformed round id is no round (404). `at_table`: the table the caller plays at (the
    WebSocket's); the round must be there (`wrong_table`), checked with the seat before the
    body. Otherwise a body that does not validate is answered with the seat check's 403/404
    first, then the 400, so a stranger learns nothing about the round from its validation;
    a valid command has its seat checked by the round service, in the statement that locks
    the round.
    """
    command = ROUND_ACTIONS[name]
    assert command.build is not None
    if not ROUND_ID_RE.fullmatch(round_id):
        round_get(round_id)  # 404: a malformed id is no round
    pk = int(user.pk)
    if at_table is not None and round_played(pk, round_id).table_id != at_table:
        raise ApplicationError("That round is at another table.", code="wrong_table")
    data = command.serializer(data={} if body is None else body)
    if not data.is_valid():
        if at_table is None:
            round_played(pk, round_id)  # a stranger's round: 403/404 before 400
        raise ValidationError(data.errors)
    values = dict(data.validated_data)
    player_id = str(pk)
    engine_command = command.build(player_id, values)

    def answer(result: services.RoundResult) -> tuple[int, dict[str, Any]]:
        return 200, own_round_body(result, player_id)

    def perform(claim: Claim) -> tuple[int, dict[str, Any]]:
        # The key's record is the first write of the command's transaction, its answer the
        # last: they commit (or roll back) with the command. The service locks the round
        # only if the caller plays in it (else 403/404, and the key stays free).
        return claim.answer(
            services.round_command(
                round_id=round_id, command=engine_command, hook=claim, participant=pk
            )
        )

    return idempotent_command(
        user_id=pk,
        key=key,
        operation=command.operation,
        payload={"round": round_id, **values},
        perform=perform,
        respond=answer,
    )


def _action_api(command: PlayerCommand) -> type[GameApi]:
    """The REST endpoint of a round action: `POST /api/rounds/<id>/<action>/` runs it by `act`
    for the request's caller, with the request's body and Idempotency-Key."""

    @extend_schema_view(
        post=extend_schema(
            operation_id=command.operation,
            description=command.about,
            parameters=[HEADER],
            request=None if command.serializer is NoInput else command.serializer,
            responses=RoundOut,
        )
    )
    class ActionApi(GameApi):
        def post(self, request: Request, round_id: str) -> Response:
            return command_response(
                *act(
                    user=request_user(request),
                    name=command.name,
                    round_id=round_id,
                    body=request.data,
                    key=request.headers.get("Idempotency-Key"),
                )
            )

    ActionApi.__name__ = ActionApi.__qualname__ = command.name.title().replace("_", "") + "Api"
    return ActionApi


ACTION_APIS: dict[str, type[GameApi]] = {
    name: _action_api(command) for name, command in ROUND_ACTIONS.items()
}


def deal(*, user: AbstractBaseUser, table_id: int, body: Any, key: str | None) -> Outcome:
    """Place `user`'s bet at the table and deal (DEAL), once per Idempotency-Key `key`.

    No such table: 404, before the body is looked at. The bet is checked against the
    table's limits (`deal_limits`) inside the command's transaction, before the balance.
    """
    found = tables.table_and_open_round(table_id)
    if found is None:
        raise ApplicationError("No such table.", code="not_found", status_code=404)
    table, open_round_id = found
    data = DEAL.serializer(data=body)
    data.is_valid(raise_exception=True)
    mode = data.validated_data["mode"]
    bets = list(data.validated_data.get("bets") or [])
    player_id = str(user.pk)

    def answer(result: services.RoundResult) -> tuple[int, dict[str, Any]]:
        return 200, own_round_body(result, player_id)

    def perform(claim: Claim) -> tuple[int, dict[str, Any]]:
        deal_limits(table=table, user=user, mode=mode, bets=bets)  # before the balance
        return claim.answer(
            tables.table_deal(
                table=table,
                user=user,
                mode=mode,
                bets=bets,
                hook=claim,
                open_round_id=open_round_id,
            )
        )

    return idempotent_command(
        user_id=int(player_id),
        key=key,
        operation=DEAL.operation,
        payload={"table": table_id, "mode": mode, "bets": bets},
        perform=perform,
        respond=answer,
    )


def deal_limits(*, table: Table, user: Any, mode: str, bets: list[int]) -> None:
    """The bet against the table's limits, before anything looks at the balance.

    The engine checks them when it places the bet, but DEAL's balance check runs first, so a
    bet above the maximum from a player short of funds was refused for the funds. Here, in
    the engine's order and words: the number of boxes, then per box the chip unit, the
    minimum and the maximum (0 is an empty box). A duel (a fixed stake) and another player's
    personal table are left to `table_deal`, which refuses them before any of this.
    """
    rules = RULESETS[table.ruleset]
    if rules.kind != BANKED or table.owner_id not in (None, user.pk):
        return
    amounts = bets if mode == "bet" else tables.bets_resolve(user=user, mode=mode, bets=bets)
    if len(amounts) > rules.max_boxes:
        raise ApplicationError(
            f"{table.ruleset} has at most {rules.max_boxes} betting "
            f"{'box' if rules.max_boxes == 1 else 'boxes'}.",
            code="too_many_boxes",
        )
    for amount in amounts:
        if amount < 0 or amount % table.chip_unit:
            raise ApplicationError(
                f"bets are multiples of {usdc(table.chip_unit)}",
                code="invalid_amount",
            )
        if 0 < amount < table.min_bet:
            raise ApplicationError(
                f"the table minimum is {usdc(table.min_bet)}",
                code="bet_below_minimum",
            )
        if amount > table.max_bet:
            raise ApplicationError(
                f"the table maximum is {usdc(table.max_bet)}",
                code="bet_above_maximum",
            )
