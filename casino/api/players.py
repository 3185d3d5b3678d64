"""The player's own things: preferences (seed 000 Options) and game recall (own rounds)."""

from __future__ import annotations

import base64
import binascii
import json
from datetime import datetime
from typing import Any

from drf_spectacular.utils import extend_schema, extend_schema_serializer, inline_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.utils.urls import replace_query_param

from casino.api.common import GameApi, JsonBooleanField, round_for_player
from casino.api.plumbing import request_user
from casino.api.roundview import RoundViewField
from casino.engine.evolve import RoundState
from casino.engine.views import view
from casino.models import Round, RoundStatus
from casino.players import preferences
from casino.rounds import selectors
from casino.rounds.projections import player_money
from casino.rounds.stream import round_state_for
from fairness.models import RoundProof
from ledger.apis import AmountOutField
from ledger.money import usdc


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
    outcome = serializers.CharField(
        help_text='your result in words: "won 15.00 USDC with blackjack", "lost", "push", '
        '"voided: <reason>", or "in play"'
    )
    net = AmountOutField(
        allow_null=True, help_text="your net result (returned minus staked); null while in play"
    )
    view = RoundViewField(help_text="your view of the round (everything once it ended)")
    proof = serializers.DictField(allow_null=True, help_text="receipt, signature, key id")
    proof_url = serializers.CharField()
    verify_url = serializers.CharField()


def player_net(state: RoundState, player_id: str) -> int | None:
    """The player's net result in micro-USDC (a void's is 0), or None while in play."""
    if state.voided is None and state.settlement is None:
        return None
    stakes, returns = player_money(state)
    return returns.get(player_id, 0) - stakes.get(player_id, 0)


def outcome_words(state: RoundState, player_id: str) -> str:
    """The player's result in words, from their net: "won 15.00 USDC with blackjack" (any of
    their hands a blackjack), "won 1.00 USDC", "lost", "push", "voided: <reason>", "in play"."""
    if state.voided is not None:
        return f"voided: {state.voided.reason}"
    net = player_net(state, player_id)
    if net is None or state.settlement is None:
        return "in play"
    if net < 0:
        return "lost"
    if net == 0:
        return "push"
    blackjack = any(
        h.player_id == player_id and h.outcome == "blackjack" for h in state.settlement.hands
    )
    return f"won {usdc(net)}" + (" with blackjack" if blackjack else "")


def _recall(round_: Round, user: Any, proofs: dict[str, RoundProof]) -> dict[str, Any]:
    state = round_state_for(round_id=round_.id)
    proof = proofs.get(round_.id)
    player_id = str(user.pk)
    body = {
        "id": round_.id,
        "table_id": round_.table_id,
        "ruleset": round_.ruleset,
        "status": round_.status,
        "phase": round_.phase,
        "version": round_.version,
        "opened_at": round_.opened_at,
        "finished_at": round_.finished_at,
        "outcome": outcome_words(state, player_id),
        "net": player_net(state, player_id),
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


def _cursor_encode(round_: Round) -> str:
    raw = json.dumps([round_.opened_at.isoformat(), round_.id], separators=(",", ":"))
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def _cursor_decode(text: str) -> tuple[datetime, str]:
    """The (opened_at, id) a cursor names, or a 400 `invalid_input` on anything else."""
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
        opened_at, round_id = json.loads(raw)
        if not isinstance(opened_at, str) or not isinstance(round_id, str):
            raise ValueError(text)
        when = datetime.fromisoformat(opened_at)
    except (binascii.Error, ValueError, TypeError, UnicodeDecodeError) as exc:
        raise serializers.ValidationError({"cursor": ["Invalid cursor."]}) from exc
    if when.tzinfo is None:
        raise serializers.ValidationError({"cursor": ["Invalid cursor."]})
    return when, round_id


class RecallListApi(GameApi):
    """Game recall: your rounds, newest first, a page at a time (`limit`, default 10, at most
    50) with full detail and the proof; `next` is the link to the following page (null at
    the end). The cursor is a keyset (opened_at, round id): rounds played meanwhile never
    make a later page repeat or skip one."""

    @extend_schema_serializer(component_name="RecallListFilter")
    class FilterSerializer(serializers.Serializer[Any]):
        limit = serializers.IntegerField(min_value=1, max_value=50, default=10)
        status = serializers.ChoiceField(choices=RoundStatus.values, required=False)
        cursor = serializers.CharField(required=False, max_length=200)

    @extend_schema(
        operation_id="recall_list",
        parameters=[FilterSerializer],
        responses=inline_serializer(
            "RecallPage",
            {"next": serializers.URLField(allow_null=True), "results": RecallOut(many=True)},
        ),
    )
    def get(self, request: Request) -> Response:
        filters = self.FilterSerializer(data=request.query_params)
        filters.is_valid(raise_exception=True)
        cursor = filters.validated_data.get("cursor")
        rounds, more = selectors.player_rounds_page(
            user=request_user(request),
            limit=filters.validated_data["limit"],
            status=filters.validated_data.get("status"),
            after=_cursor_decode(cursor) if cursor else None,
        )
        proofs = {
            p.round_id: p for p in RoundProof.objects.filter(round_id__in=[r.id for r in rounds])
        }
        following = None
        if more:
            following = replace_query_param(
                request.build_absolute_uri(), "cursor", _cursor_encode(rounds[-1])
            )
        return Response(
            {"next": following, "results": [_recall(r, request.user, proofs) for r in rounds]}
        )


class RecallCurrentApi(GameApi):
    """Resume: your rounds still in play (after a reconnect or a server restart)."""

    @extend_schema(operation_id="recall_current", responses=RecallOut(many=True))
    def get(self, request: Request) -> Response:
        rounds = selectors.player_rounds(
            user=request_user(request), limit=10, status=RoundStatus.OPEN
        )
        return Response([_recall(r, request.user, {}) for r in rounds])


class RecallDetailApi(GameApi):
    """One of your rounds, as game recall shows it: your full view, the outcome in words, your
    net, the proof and the links to verify it."""

    @extend_schema(operation_id="recall_detail", responses=RecallOut)
    def get(self, request: Request, round_id: str) -> Response:
        found = round_for_player(request, round_id)
        proofs = {p.round_id: p for p in RoundProof.objects.filter(round_id=found.id)}
        return Response(_recall(found, request.user, proofs))
