"""Tables: list, staff create, personal tables, sit, leave, duel READY and DEAL (seed 000)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema, extend_schema_field, extend_schema_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from casino.api import commands
from casino.api.commands import HEADER, Claim, RoundOut, command_response, idempotent_response
from casino.api.common import GameApi, JsonBooleanField, table_get
from casino.api.plumbing import request_user
from casino.engine.rules import RULESETS
from casino.models import Table
from casino.platform.errors import ApplicationError
from casino.rounds import selectors
from casino.tables import services as tables
from ledger.apis import AmountField, AmountOutField, staff_permission


@extend_schema_serializer(component_name="Seat")
class SeatOut(serializers.Serializer[Any]):
    position = serializers.IntegerField()
    user_id = serializers.IntegerField()
    ready = serializers.BooleanField()


@extend_schema_serializer(component_name="Table")
class TableOut(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    name = serializers.CharField()
    ruleset = serializers.CharField()
    min_bet = AmountOutField()
    max_bet = AmountOutField()
    stake = AmountOutField(help_text="duel: the fixed stake")
    chip_unit = AmountOutField()
    seats = serializers.IntegerField()
    personal = serializers.SerializerMethodField()
    seated = serializers.SerializerMethodField()
    open_round = serializers.SerializerMethodField()
    lobby_deadline_ms = serializers.SerializerMethodField()

    def get_personal(self, table: Table) -> bool:
        return table.owner_id is not None

    @extend_schema_field(SeatOut(many=True))
    def get_seated(self, table: Table) -> list[dict[str, Any]]:
        return [
            {"position": s.position, "user_id": s.user_id, "ready": s.ready}
            for s in table.seated.all()
        ]

    def get_open_round(self, table: Table) -> str | None:
        return selectors.table_open_round_id(table=table)

    def get_lobby_deadline_ms(self, table: Table) -> int | None:
        return tables.lobby_deadline(table)


def _table_body(table: Table) -> dict[str, Any]:
    return dict(TableOut(Table.objects.prefetch_related("seated").get(pk=table.pk)).data)


class TableListApi(GameApi):
    """The open shared tables and your personal ones (`ruleset` filters): limits, seats, the
    round open now and a duel lobby's deadline."""

    @extend_schema_serializer(component_name="TableListFilter")
    class FilterSerializer(serializers.Serializer[Any]):
        ruleset = serializers.ChoiceField(choices=list(RULESETS), required=False)

    @extend_schema(
        operation_id="tables_list", parameters=[FilterSerializer], responses=TableOut(many=True)
    )
    def get(self, request: Request) -> Response:
        filters = self.FilterSerializer(data=request.query_params)
        filters.is_valid(raise_exception=True)
        found = selectors.tables_list(
            user=request_user(request), ruleset=filters.validated_data.get("ruleset")
        )
        return Response(TableOut(found, many=True).data)


class TableDetailApi(GameApi):
    """One table. Another player's personal table is no table to you (404); staff see all."""

    @extend_schema(operation_id="tables_detail", responses=TableOut)
    def get(self, request: Request, table_id: int) -> Response:
        table = table_get(table_id)
        if table.owner_id not in (None, request.user.pk) and not request.user.is_staff:
            raise ApplicationError("No such table.", code="not_found", status_code=404)
        return Response(_table_body(table))


class TableCreateApi(GameApi):
    """Staff: a table with a rule set, limits (or a fixed duel stake), seats and chip unit."""

    permission_classes = [staff_permission("casino.add_table")]  # managers (and superusers)

    @extend_schema_serializer(component_name="TableCreateInput")
    class InputSerializer(serializers.Serializer[Any]):
        name = serializers.CharField(max_length=80)
        ruleset = serializers.ChoiceField(choices=list(RULESETS))
        min_bet = AmountField(required=False)
        max_bet = AmountField(required=False)
        stake = AmountField(required=False, help_text="duel: the fixed stake")
        seats = serializers.IntegerField(min_value=1, max_value=8, required=False)
        chip_unit = AmountField(required=False)

    @extend_schema(
        operation_id="tables_create",
        parameters=[HEADER],
        request=InputSerializer,
        responses={201: TableOut},
    )
    def post(self, request: Request) -> Response:
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        d = dict(data.validated_data)
        rules = RULESETS[d["ruleset"]]

        def create() -> tuple[int, dict[str, Any]]:
            table = tables.table_create(
                name=d["name"],
                ruleset=d["ruleset"],
                min_bet=d.get("min_bet", rules.default_min_bet),
                max_bet=d.get("max_bet", rules.default_max_bet),
                stake=d.get("stake", 0),
                seats=d.get("seats"),
                chip_unit=d.get("chip_unit"),
            )
            return 201, _table_body(table)

        def perform(claim: Claim) -> tuple[int, dict[str, Any]]:
            return claim.run(create)  # the key, the table and the answer: one transaction

        return idempotent_response(request, operation="tables_create", payload=d, perform=perform)


class TablePersonalApi(GameApi):
    """classic / atlantic_city: your personal table, created on demand, with you seated."""

    @extend_schema_serializer(component_name="TablePersonalInput")
    class InputSerializer(serializers.Serializer[Any]):
        ruleset = serializers.ChoiceField(choices=list(tables.PERSONAL_RULESETS))

    @extend_schema(
        operation_id="tables_personal",
        parameters=[HEADER],
        request=InputSerializer,
        responses=TableOut,
    )
    def post(self, request: Request) -> Response:
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        ruleset = data.validated_data["ruleset"]

        def perform(claim: Claim) -> tuple[int, dict[str, Any]]:
            return claim.run(
                lambda: (
                    200,
                    _table_body(tables.table_personal(user=request_user(request), ruleset=ruleset)),
                )
            )

        return idempotent_response(
            request, operation="tables_personal", payload={"ruleset": ruleset}, perform=perform
        )


class TableSitApi(GameApi):
    """Sit at the table's lowest free seat; already seated, you keep your seat."""

    @extend_schema(operation_id="tables_sit", parameters=[HEADER], request=None, responses=TableOut)
    def post(self, request: Request, table_id: int) -> Response:
        table = table_get(table_id)

        def sit() -> tuple[int, dict[str, Any]]:
            tables.seat_take(table=table, user=request_user(request))
            return 200, _table_body(table)

        def perform(claim: Claim) -> tuple[int, dict[str, Any]]:
            return claim.run(sit)

        return idempotent_response(
            request, operation="tables_sit", payload={"table": table_id}, perform=perform
        )


class TableLeaveApi(GameApi):
    """Stand up from the table. A hand of yours still in play is finished by its timers."""

    @extend_schema(
        operation_id="tables_leave", parameters=[HEADER], request=None, responses=TableOut
    )
    def post(self, request: Request, table_id: int) -> Response:
        table = table_get(table_id)
        if table.owner_id not in (None, request.user.pk):  # as sitting there: not yours
            raise ApplicationError(
                "This is another player's personal table.",
                code="permission_denied",
                status_code=403,
            )

        def leave() -> tuple[int, dict[str, Any]]:
            tables.seat_leave(table=table, user=request_user(request))
            return 200, _table_body(table)

        def perform(claim: Claim) -> tuple[int, dict[str, Any]]:
            return claim.run(leave)

        return idempotent_response(
            request, operation="tables_leave", payload={"table": table_id}, perform=perform
        )


class TableReadyApi(GameApi):
    """duel: READY (or not). Starts the round when every seat is ready (else the lobby timer)."""

    @extend_schema_serializer(component_name="TableReadyInput")
    class InputSerializer(serializers.Serializer[Any]):
        ready = JsonBooleanField(default=True)

    @extend_schema(
        operation_id="tables_ready",
        parameters=[HEADER],
        request=InputSerializer,
        responses=TableOut,
    )
    def post(self, request: Request, table_id: int) -> Response:
        table = table_get(table_id)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        ready = data.validated_data["ready"]

        def perform(claim: Claim) -> tuple[int, dict[str, Any]]:
            # READY may open the duel in a transaction of its own: it runs first and its
            # answer is stored after (it sets a flag: a retry after a crash sets it again).
            claim.lookup()
            tables.seat_ready(table=table, user=request_user(request), ready=ready)
            return 200, _table_body(table)

        return idempotent_response(
            request,
            operation="tables_ready",
            payload={"table": table_id, "ready": ready},
            perform=perform,
        )


class TableDealApi(GameApi):
    """Place your bet and deal: the bets you give (`mode: bet`), the same bets as your last
    round (`rebet`), or twice them (`double`).

    Opens the table's next round when none is open, then places your bet; the answer is your
    view of the round (the cards are dealt once every seated player has bet).
    """

    @extend_schema(
        operation_id="tables_deal",
        parameters=[HEADER],
        request=commands.DealInput,
        responses=RoundOut,
    )
    def post(self, request: Request, table_id: int) -> Response:
        return command_response(
            *commands.deal(
                user=request_user(request),
                table_id=table_id,
                body=request.data,
                key=request.headers.get("Idempotency-Key"),
            )
        )
