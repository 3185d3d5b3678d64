"""A round as the caller may see it (`GET /api/rounds/<id>/`).

The player's actions on a round are commands: their endpoints are `casino.api.commands`'s
`ACTION_APIS`, beside their input, their checks and their run.
"""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from casino.api.commands import RoundOut, round_body
from casino.api.common import GameApi, round_for_player
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
