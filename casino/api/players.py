"""The player's own things: preferences (seed 000 Options) and game recall (own rounds)."""

from __future__ import annotations

import json
from typing import Any

from drf_spectacular.utils import extend_schema, extend_schema_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from casino import preferences, selectors
from casino.api.common import GameApi, JsonBooleanField, request_user, round_for_player
from casino.engine.views import view
from casino.models import Round, RoundStatus
from casino.services import round_state_for
from fairness.models import RoundProof
from ledger.apis import AmountOutField


class PreferencesApi(GameApi):
    """Read or change your options. Insurance offer and safety net apply from your next round."""

    @extend_schema_serializer(component_name="Preferences")
    class OutputSerializer(serializers.Serializer[Any]):
        offer_insurance = serializers.BooleanField()
        safety_net = serializers.BooleanField()
        animation = serializers.BooleanField()
        audio = serializers.BooleanField()
        left_handed = serializers.BooleanField()
        felt = serializers.CharField()
        last_bet = serializers.ListField(child=AmountOutField())

    @extend_schema_serializer(component_name="PreferencesInput")
    class InputSerializer(serializers.Serializer[Any]):
        offer_insurance = JsonBooleanField(required=False)
        safety_net = JsonBooleanField(required=False)
        animation = JsonBooleanField(required=False)
        audio = JsonBooleanField(required=False)
        left_handed = JsonBooleanField(required=False)
        felt = serializers.ChoiceField(choices=list(preferences.FELTS), required=False)

    @extend_schema(operation_id="preferences_get", responses=OutputSerializer)
    def get(self, request: Request) -> Response:
        return Response(
            self.OutputSerializer(preferences.preferences_get(user=request_user(request))).data
        )

    @extend_schema(
        operation_id="preferences_update", request=InputSerializer, responses=OutputSerializer
    )
    def patch(self, request: Request) -> Response:
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        prefs = preferences.preferences_update(
            user=request_user(request), changes=dict(data.validated_data)
        )
        return Response(self.OutputSerializer(prefs).data)


@extend_schema_serializer(component_name="RecalledRound")
class RecallOut(serializers.Serializer[Any]):
    round_id = serializers.CharField(source="id")
    table_id = serializers.IntegerField()
    ruleset = serializers.CharField()
    status = serializers.CharField()
    phase = serializers.CharField()
    version = serializers.IntegerField()
    opened_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)
    outcome = serializers.CharField()
    view = serializers.DictField(help_text="your view of the round (everything once it ended)")
    proof = serializers.DictField(allow_null=True, help_text="receipt, signature, key id")
    proof_url = serializers.CharField()
    verify_url = serializers.CharField()


def _recall(round_: Round, user: Any, proofs: dict[str, RoundProof]) -> dict[str, Any]:
    state = round_state_for(round_id=round_.id)
    proof = proofs.get(round_.id)
    body = {
        "id": round_.id,
        "table_id": round_.table_id,
        "ruleset": round_.ruleset,
        "status": round_.status,
        "phase": round_.phase,
        "version": round_.version,
        "opened_at": round_.opened_at,
        "finished_at": round_.finished_at,
        "outcome": round_.outcome,
        "view": view(state, selectors.viewer_for(user, state)),
        "proof": (
            {
                "receipt": proof.receipt,
                "signature": proof.signature,
                "key_id": proof.key_id,
                "bundle": json.loads(proof.bundle_line),
            }
            if proof is not None
            else None
        ),
        "proof_url": f"/api/fairness/rounds/{round_.id}",
        "verify_url": f"/fairness/verify/?round={round_.id}",
    }
    return dict(RecallOut(body).data)


class RecallListApi(GameApi):
    """Game recall: your last rounds (default 10, at most 50) with full detail and the proof."""

    @extend_schema_serializer(component_name="RecallListFilter")
    class FilterSerializer(serializers.Serializer[Any]):
        limit = serializers.IntegerField(min_value=1, max_value=50, default=10)
        status = serializers.ChoiceField(choices=RoundStatus.values, required=False)

    @extend_schema(
        operation_id="recall_list", parameters=[FilterSerializer], responses=RecallOut(many=True)
    )
    def get(self, request: Request) -> Response:
        filters = self.FilterSerializer(data=request.query_params)
        filters.is_valid(raise_exception=True)
        rounds = selectors.player_rounds(
            user=request_user(request),
            limit=filters.validated_data["limit"],
            status=filters.validated_data.get("status"),
        )
        proofs = {
            p.round_id: p for p in RoundProof.objects.filter(round_id__in=[r.id for r in rounds])
        }
        return Response([_recall(r, request.user, proofs) for r in rounds])


class RecallCurrentApi(GameApi):
    """Resume: your rounds still in play (after a reconnect or a server restart)."""

    @extend_schema(operation_id="recall_current", responses=RecallOut(many=True))
    def get(self, request: Request) -> Response:
        rounds = selectors.player_rounds(
            user=request_user(request), limit=10, status=RoundStatus.OPEN
        )
        return Response([_recall(r, request.user, {}) for r in rounds])


class RecallDetailApi(GameApi):
    @extend_schema(operation_id="recall_detail", responses=RecallOut)
    def get(self, request: Request, round_id: str) -> Response:
        found = round_for_player(request, round_id)
        proofs = {p.round_id: p for p in RoundProof.objects.filter(round_id=found.id)}
        return Response(_recall(found, request.user, proofs))
