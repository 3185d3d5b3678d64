"""Rounds: the caller's view of a round, and every player action (one APIView each).

Each action goes through `casino.rounds.services.round_command` (the one command path), carries an
Idempotency-Key (recorded inside the command's own transaction), and answers with the caller's
own view of the round.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema, extend_schema_serializer
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response

from casino.api import fastinput
from casino.api.common import (
    ROUND_ID_RE,
    GameApi,
    JsonBooleanField,
    RoundOut,
    own_round_body,
    round_body,
    round_for_player,
    user_pk,
)
from casino.api.idempotency import HEADER, Claim, idempotent_response
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
from casino.rounds import selectors, services
from ledger.apis import AmountField


class RoundStateApi(GameApi):
    """The caller's own view of a round (staff: the staff view, hole card still hidden)."""

    @extend_schema(operation_id="rounds_state", responses=RoundOut)
    def get(self, request: Request, round_id: str) -> Response:
        found = round_for_player(request, round_id, staff_may_read=True)
        return Response(
            round_body(
                round_id=found.id,
                version=found.version,
                status=found.status,
                view=selectors.round_view_for(user=request.user, round_id=found.id),
            )
        )


class _ActionApi(GameApi):
    """Shared POST: parse, build one engine command, run it once per Idempotency-Key."""

    operation = ""

    @extend_schema_serializer(component_name="_ActionInput")
    class InputSerializer(serializers.Serializer[Any]):
        pass

    FAST: fastinput.Spec | None = fastinput.Spec(InputSerializer, {})

    def build(self, player_id: str, data: dict[str, Any]) -> Command:
        raise NotImplementedError

    def act(self, request: Request, round_id: str) -> Response:
        if not ROUND_ID_RE.fullmatch(round_id):
            round_for_player(request, round_id)  # 404 (a malformed id is no round)
        body = request.data if request.data is not None else {}
        values = fastinput.validated(self.FAST, self.InputSerializer, body)
        if values is None:
            data = self.InputSerializer(data=body)
            if not data.is_valid():
                round_for_player(request, round_id)  # a stranger's round: 403/404 before 400
                raise ValidationError(data.errors)
            values = dict(data.validated_data)
        pk = user_pk(request)
        player_id = str(pk)
        command = self.build(player_id, values)

        def answer(result: services.RoundResult) -> tuple[int, dict[str, Any]]:
            return 200, own_round_body(result, player_id)

        def perform(claim: Claim) -> tuple[int, dict[str, Any]]:
            # The key's record is the first write of the command's transaction, its answer
            # the last: they commit (or roll back) with the command. The service locks the
            # round only if the caller plays in it (else 403/404, and the key stays free).
            return answer(
                services.round_command(
                    round_id=round_id, command=command, hook=claim, participant=pk
                )
            )

        return idempotent_response(
            request,
            operation=f"rounds_{self.operation}",
            payload={"round": round_id, **values},
            perform=perform,
            respond=answer,
        )


class HitApi(_ActionApi):
    """Draw a card. With the safety net on, a risky hit (soft 20, hard 17 or more) needs
    `confirm: true`."""

    operation = "hit"

    @extend_schema_serializer(component_name="HitInput")
    class InputSerializer(serializers.Serializer[Any]):
        confirm = JsonBooleanField(default=False)

    FAST = fastinput.Spec(InputSerializer, {"confirm": (fastinput.boolean, False)})

    def build(self, player_id: str, data: dict[str, Any]) -> Command:
        return Hit(player_id, confirm=data["confirm"])

    @extend_schema(
        operation_id="rounds_hit", parameters=[HEADER], request=InputSerializer, responses=RoundOut
    )
    def post(self, request: Request, round_id: str) -> Response:
        return self.act(request, round_id)


class StandApi(_ActionApi):
    operation = "stand"

    def build(self, player_id: str, data: dict[str, Any]) -> Command:
        return Stand(player_id)

    @extend_schema(
        operation_id="rounds_stand", parameters=[HEADER], request=None, responses=RoundOut
    )
    def post(self, request: Request, round_id: str) -> Response:
        return self.act(request, round_id)


class DoubleApi(_ActionApi):
    operation = "double"

    def build(self, player_id: str, data: dict[str, Any]) -> Command:
        return Double(player_id)

    @extend_schema(
        operation_id="rounds_double", parameters=[HEADER], request=None, responses=RoundOut
    )
    def post(self, request: Request, round_id: str) -> Response:
        return self.act(request, round_id)


class SplitApi(_ActionApi):
    operation = "split"

    def build(self, player_id: str, data: dict[str, Any]) -> Command:
        return Split(player_id)

    @extend_schema(
        operation_id="rounds_split", parameters=[HEADER], request=None, responses=RoundOut
    )
    def post(self, request: Request, round_id: str) -> Response:
        return self.act(request, round_id)


class InsuranceApi(_ActionApi):
    """Take or decline insurance on a box. `amount`: duel_classic allows up to half the bet."""

    operation = "insurance"

    @extend_schema_serializer(component_name="InsuranceInput")
    class InputSerializer(serializers.Serializer[Any]):
        take = JsonBooleanField()
        box = serializers.IntegerField(min_value=0, max_value=2, default=0)
        amount = AmountField(
            required=False,
            help_text='USDC as a decimal string with at most 6 places ("0.5"); default: half '
            "the bet",
        )

    FAST = fastinput.Spec(
        InputSerializer,
        {"take": (fastinput.boolean, fastinput.REQUIRED), "box": (fastinput.integer(0, 2), 0)},
        slow_keys=("amount",),
    )

    def build(self, player_id: str, data: dict[str, Any]) -> Command:
        if not data["take"]:
            return DeclineInsurance(player_id, data["box"])
        return TakeInsurance(player_id, data["box"], data.get("amount"))

    @extend_schema(
        operation_id="rounds_insurance",
        parameters=[HEADER],
        request=InputSerializer,
        responses=RoundOut,
    )
    def post(self, request: Request, round_id: str) -> Response:
        return self.act(request, round_id)


class EvenMoneyApi(_ActionApi):
    """Your blackjack against a dealer's ace: take (or decline) even money, paid 1:1 at once."""

    operation = "even_money"

    @extend_schema_serializer(component_name="EvenMoneyInput")
    class InputSerializer(serializers.Serializer[Any]):
        take = JsonBooleanField()
        box = serializers.IntegerField(min_value=0, max_value=2, default=0)

    FAST = fastinput.Spec(
        InputSerializer,
        {"take": (fastinput.boolean, fastinput.REQUIRED), "box": (fastinput.integer(0, 2), 0)},
    )

    def build(self, player_id: str, data: dict[str, Any]) -> Command:
        if not data["take"]:
            return DeclineInsurance(player_id, data["box"])
        return TakeEvenMoney(player_id, data["box"])

    @extend_schema(
        operation_id="rounds_even_money",
        parameters=[HEADER],
        request=InputSerializer,
        responses=RoundOut,
    )
    def post(self, request: Request, round_id: str) -> Response:
        return self.act(request, round_id)
