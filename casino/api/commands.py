"""The player's game commands, each defined once, and the one way to run one for a user.

REST (`casino.api.rounds`, `casino.api.tables.TableDealApi`) and the table WebSocket
(`casino.live.consumers`) both call `deal` and `act`, so a command is the same whichever way
it arrives: one DRF input serializer (the only validation, and the request body of the
OpenAPI schema), the same checks in the same order, the same engine command and service
(`casino.tables.services.table_deal`, `casino.rounds.services.round_command`), and the same
Idempotency-Key record (operation and payload), so a key is shared between the two.

The money rate limit is not taken here: a REST view has DRF take it (`throttle_scope`) before
the view runs, and the WebSocket calls `casino.platform.throttles.throttle_command`; both
count in one window per user.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from drf_spectacular.utils import extend_schema_serializer
from rest_framework import serializers
from rest_framework.exceptions import ValidationError

from casino.api.common import (
    ROUND_ID_RE,
    JsonBooleanField,
    own_round_body,
    round_get,
    round_played,
)
from casino.api.idempotency import Claim, idempotent_command
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
from casino.models import Table
from casino.platform.errors import ApplicationError
from casino.rounds import services
from casino.tables import services as tables
from ledger.apis import AmountField
from ledger.money import CURRENCY, format_amount, parse_amount

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
    """One box's bet: an amount, or 0 for a box left empty (the engine's PlaceBet)."""

    def to_internal_value(self, data: Any) -> int:
        return parse_amount(data, field=self.field_name or "amount", allow_zero=True)


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
        PlayerCommand("hit", "rounds_hit", HitInput, lambda p, d: Hit(p, confirm=d["confirm"])),
        PlayerCommand("stand", "rounds_stand", NoInput, lambda p, d: Stand(p)),
        PlayerCommand("double", "rounds_double", NoInput, lambda p, d: Double(p)),
        PlayerCommand("split", "rounds_split", NoInput, lambda p, d: Split(p)),
        PlayerCommand("insurance", "rounds_insurance", InsuranceInput, _insurance),
        PlayerCommand("even_money", "rounds_even_money", EvenMoneyInput, _even_money),
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
            f"{table.ruleset} has at most {rules.max_boxes} betting boxes.", code="too_many_boxes"
        )
    for amount in amounts:
        if amount < 0 or amount % table.chip_unit:
            raise ApplicationError(
                f"bets are multiples of {format_amount(table.chip_unit)} {CURRENCY}",
                code="invalid_amount",
            )
        if 0 < amount < table.min_bet:
            raise ApplicationError(
                f"the table minimum is {format_amount(table.min_bet)} {CURRENCY}",
                code="bet_below_minimum",
            )
        if amount > table.max_bet:
            raise ApplicationError(
                f"the table maximum is {format_amount(table.max_bet)} {CURRENCY}",
                code="bet_above_maximum",
            )
