"""Dashboard API: the auditor's streamed export, public stats and the player's stats profile.

One APIView per operation; views parse, call one selector or service, serialize.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from django.http import StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.permissions import AllowAny, BasePermission, IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from casino.api.common import JsonBooleanField
from casino.dashboard import stats
from casino.dashboard.models import PlayerProfile
from casino.models import Round, RoundStatus
from casino.platform.errors import ApplicationError
from casino.rounds.audit import export_lines
from ledger.apis import AmountOutField

EXPORT_PERMISSION = "dashboard.export_rounds"
MAX_EXPORT_DAYS = 366


class CanExport(BasePermission):
    """Auditors only: the `dashboard.export_rounds` permission (the auditor group's)."""

    def has_permission(self, request: Request, view: Any) -> bool:
        return bool(request.user and request.user.has_perm(EXPORT_PERMISSION))


def _day(value: str | None, field: str) -> date:
    if not value:
        raise ApplicationError(f"{field} is required (YYYY-MM-DD).", code=f"invalid_{field}")
    try:
        return date.fromisoformat(value)
    except ValueError as exc:
        raise ApplicationError(f"{field} must be YYYY-MM-DD.", code=f"invalid_{field}") from exc


def export_round_ids(*, since: date, until: date) -> list[str]:
    """Finished rounds opened from `since` 00:00 UTC to the end of `until`, in opening order."""
    start = datetime.combine(since, time.min, tzinfo=UTC)
    end = datetime.combine(until + timedelta(days=1), time.min, tzinfo=UTC)
    rows = (
        Round.objects.exclude(status=RoundStatus.OPEN)
        .filter(opened_at__gte=start, opened_at__lt=end)
        .order_by("opened_at", "id")
    )
    return list(rows.values_list("id", flat=True))


class AuditExportApi(APIView):
    """Stream the `export_rounds` bundle (JSON Lines for `python -m fairness.verify`)."""

    permission_classes = [IsAuthenticated, CanExport]

    @extend_schema(
        operation_id="audit_export",
        parameters=[
            OpenApiParameter("since", OpenApiTypes.DATE, required=True),
            OpenApiParameter("until", OpenApiTypes.DATE, required=True),
        ],
        responses={
            (200, "application/x-ndjson"): OpenApiResponse(
                OpenApiTypes.STR, description="JSON Lines bundle"
            )
        },
    )
    def get(self, request: Request) -> StreamingHttpResponse:
        since = _day(request.query_params.get("since"), "since")
        until = _day(request.query_params.get("until"), "until")
        if until < since or (until - since).days > MAX_EXPORT_DAYS:
            raise ApplicationError(
                f"until must be on or after since, at most {MAX_EXPORT_DAYS} days later.",
                code="invalid_range",
            )
        lines = (line + "\n" for line in export_lines(export_round_ids(since=since, until=until)))
        response = StreamingHttpResponse(lines, content_type="application/x-ndjson")
        response["Content-Disposition"] = f'attachment; filename="rounds-{since}-{until}.jsonl"'
        return response


class LeaderboardApi(APIView):
    """The players ranked by what they won over the period (`day`, `week` or `all`): their
    public name, rounds, handle (staked) and net, in USDC. Opted-out players never appear."""

    permission_classes = [AllowAny]

    class OutputSerializer(serializers.Serializer[Any]):
        player = serializers.CharField()
        rounds = serializers.IntegerField()
        handle = AmountOutField(help_text="USDC staked")
        net = AmountOutField(help_text="USDC won (negative: lost)")

    @extend_schema(
        operation_id="stats_leaderboard",
        parameters=[OpenApiParameter("period", str, enum=list(stats.PERIODS), default="all")],
        responses=OutputSerializer(many=True),
    )
    def get(self, request: Request) -> Response:
        period = request.query_params.get("period", "all")
        if period not in stats.PERIODS:
            raise ApplicationError("period is day, week or all.", code="invalid_period")
        rows = stats.leaderboard(period=period)
        return Response(self.OutputSerializer(rows, many=True).data)


class BiggestWinsApi(APIView):
    """The biggest single-round wins: who, which round (its proof is public), the rule set,
    the net won in USDC and when the round finished."""

    permission_classes = [AllowAny]

    class OutputSerializer(serializers.Serializer[Any]):
        player = serializers.CharField()
        round_id = serializers.CharField()
        ruleset = serializers.CharField()
        net = AmountOutField(help_text="USDC won in the round")
        finished_at = serializers.CharField()

    @extend_schema(operation_id="stats_biggest_wins", responses=OutputSerializer(many=True))
    def get(self, request: Request) -> Response:
        return Response(self.OutputSerializer(stats.biggest_wins(), many=True).data)


class TableStatsApi(APIView):
    """Per table: finished rounds, handle (staked), the players' net in USDC, winning hands,
    the last round's time and the rounds open now."""

    permission_classes = [AllowAny]

    class OutputSerializer(serializers.Serializer[Any]):
        table_id = serializers.IntegerField()
        ruleset = serializers.CharField()
        rounds = serializers.IntegerField()
        handle = AmountOutField(help_text="USDC staked")
        players_net = AmountOutField(help_text="USDC the players won (negative: lost)")
        winning_hands = serializers.IntegerField()
        last_round_at = serializers.CharField(allow_null=True)
        open_rounds = serializers.IntegerField()

    @extend_schema(operation_id="stats_tables", responses=OutputSerializer(many=True))
    def get(self, request: Request) -> Response:
        return Response(self.OutputSerializer(stats.table_stats(), many=True).data)


class StatsProfileApi(APIView):
    """The caller's public name on stats pages, and whether they appear at all."""

    permission_classes = [IsAuthenticated]

    class InputSerializer(serializers.Serializer[Any]):
        display_name = serializers.CharField(
            max_length=40,
            allow_blank=True,
            required=False,
            help_text='1 to 40 letters, digits, spaces and _ . - \' ("" clears it); one '
            "player per name",
        )
        opt_out = JsonBooleanField(required=False)

    class OutputSerializer(serializers.Serializer[Any]):
        display_name = serializers.CharField()
        opt_out = serializers.BooleanField()

    @extend_schema(operation_id="stats_profile_get", responses=OutputSerializer)
    def get(self, request: Request) -> Response:
        user_id = int(request.user.pk or 0)
        profile = PlayerProfile.objects.filter(user_id=user_id).first()
        data = profile or PlayerProfile(user_id=user_id)
        return Response(self.OutputSerializer(data).data)

    @extend_schema(
        operation_id="stats_profile_update", request=InputSerializer, responses=OutputSerializer
    )
    def put(self, request: Request) -> Response:
        form = self.InputSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        profile = stats.profile_update(user_id=int(request.user.pk or 0), **form.validated_data)
        return Response(self.OutputSerializer(profile).data)
