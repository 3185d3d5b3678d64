"""Rounds: the caller's view of a round, and every player action (one APIView each).

Each action is a command of `casino.api.commands` (its input, its checks, one run per
Idempotency-Key inside the command's own transaction, through
`casino.rounds.services.round_command`), the same path the table WebSocket takes; the view
parses the request and answers with the caller's own view of the round.
"""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from casino.api import commands
from casino.api.commands import HEADER, RoundOut, command_response, round_body
from casino.api.common import GameApi, round_for_player
from casino.api.plumbing import request_user
from casino.rounds import selectors


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

    command = ""  # its name in commands.ROUND_ACTIONS

    def act(self, request: Request, round_id: str) -> Response:
        return command_response(
            *commands.act(
                user=request_user(request),
                name=self.command,
                round_id=round_id,
                body=request.data,
                key=request.headers.get("Idempotency-Key"),
            )
        )


class HitApi(_ActionApi):
    """Draw a card. With the safety net on, a risky hit (soft 20, hard 17 or more) needs
    `confirm: true`."""

    command = "hit"

    @extend_schema(
        operation_id="rounds_hit",
        parameters=[HEADER],
        request=commands.HitInput,
        responses=RoundOut,
    )
    def post(self, request: Request, round_id: str) -> Response:
        return self.act(request, round_id)


class StandApi(_ActionApi):
    command = "stand"

    @extend_schema(
        operation_id="rounds_stand", parameters=[HEADER], request=None, responses=RoundOut
    )
    def post(self, request: Request, round_id: str) -> Response:
        return self.act(request, round_id)


class DoubleApi(_ActionApi):
    command = "double"

    @extend_schema(
        operation_id="rounds_double", parameters=[HEADER], request=None, responses=RoundOut
    )
    def post(self, request: Request, round_id: str) -> Response:
        return self.act(request, round_id)


class SplitApi(_ActionApi):
    command = "split"

    @extend_schema(
        operation_id="rounds_split", parameters=[HEADER], request=None, responses=RoundOut
    )
    def post(self, request: Request, round_id: str) -> Response:
        return self.act(request, round_id)


class InsuranceApi(_ActionApi):
    """Take or decline insurance on a box. `amount`: duel_classic allows up to half the bet."""

    command = "insurance"

    @extend_schema(
        operation_id="rounds_insurance",
        parameters=[HEADER],
        request=commands.InsuranceInput,
        responses=RoundOut,
    )
    def post(self, request: Request, round_id: str) -> Response:
        return self.act(request, round_id)


class EvenMoneyApi(_ActionApi):
    """Your blackjack against a dealer's ace: take (or decline) even money, paid 1:1 at once."""

    command = "even_money"

    @extend_schema(
        operation_id="rounds_even_money",
        parameters=[HEADER],
        request=commands.EvenMoneyInput,
        responses=RoundOut,
    )
    def post(self, request: Request, round_id: str) -> Response:
        return self.act(request, round_id)
