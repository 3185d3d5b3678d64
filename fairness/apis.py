"""Fairness API: published keys, client seeds, next commitment, round proofs.

One APIView per operation (the client seed's GET and PUT share a URL, so one class);
views parse, call one service or selector, serialize.
"""

from __future__ import annotations

import json
import re
from typing import Any

from django.conf import settings
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_serializer,
)
from rest_framework import serializers
from rest_framework.permissions import AllowAny, IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from casino.platform.errors import ApplicationError
from casino.platform.schema import ApiError
from fairness import beaconsource, selectors, services, transparency

ID_RE = re.compile(r"[A-Za-z0-9_.:-]{1,64}")


def _identifier(value: Any, *, field: str) -> str:
    if not isinstance(value, str) or not ID_RE.fullmatch(value):
        raise ApplicationError(
            f"{field} must be 1 to 64 characters of A-Z a-z 0-9 _ . : -",
            code=f"invalid_{field}",
            extra={field: value},
        )
    return value


class StrictCharField(serializers.CharField):
    """A JSON string only: numbers and booleans are refused instead of coerced."""

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


@extend_schema_serializer(component_name="FairnessKey")
class SigningKeySerializer(serializers.Serializer[Any]):
    key_id = serializers.CharField(help_text="first 16 hex of sha256(raw public key)")
    public_key = serializers.CharField(help_text="raw Ed25519 public key, 64 hex")
    algorithm = serializers.CharField()
    current = serializers.BooleanField()
    created_at = serializers.DateTimeField(allow_null=True)


class KeysApi(APIView):
    """Receipt-signing public keys. Rotation keeps old keys listed: old receipts still verify."""

    permission_classes = [AllowAny]
    authentication_classes: list[Any] = []

    @extend_schema_serializer(component_name="FairnessKeys")
    class OutputSerializer(serializers.Serializer[Any]):
        keys = SigningKeySerializer(many=True)

    @extend_schema(operation_id="fairness_keys", responses=OutputSerializer)
    def get(self, request: Request) -> Response:
        return Response(self.OutputSerializer({"keys": selectors.signing_keys()}).data)


class BeaconApi(APIView):
    """The public randomness shared tables mix into the shoe (fairness-v2): which beacon, its
    key and timing. `beacon` is "off" when the server deals shared tables without one."""

    permission_classes = [AllowAny]
    authentication_classes: list[Any] = []

    @extend_schema_serializer(component_name="FairnessBeacon")
    class OutputSerializer(serializers.Serializer[Any]):
        beacon = serializers.CharField(help_text="quicknet, local or off")
        name = serializers.CharField(required=False, help_text="the material element's prefix")
        chain_hash = serializers.CharField(required=False)
        public_key = serializers.CharField(required=False, help_text="hex, 96-byte G2 point")
        genesis_time = serializers.IntegerField(required=False, help_text="Unix s of round 1")
        period = serializers.IntegerField(required=False, help_text="seconds")
        independent = serializers.BooleanField(
            required=False, help_text="false: operator-run, the operator can know rounds early"
        )
        description = serializers.CharField(required=False)
        margin_s = serializers.IntegerField(required=False, help_text="round after lock + this")
        wait_s = serializers.IntegerField(required=False, help_text="void after round time + this")

    @extend_schema(operation_id="fairness_beacon", responses=OutputSerializer)
    def get(self, request: Request) -> Response:
        info = beaconsource.public_info()
        return Response(self.OutputSerializer({"beacon": settings.BEACON, **info}).data)


class ClientSeedApi(APIView):
    """The player's client seed: read it, or change it between rounds."""

    permission_classes = [IsAuthenticated]

    class InputSerializer(serializers.Serializer[Any]):
        client_seed = StrictCharField(
            max_length=200, trim_whitespace=False, help_text="1-64 of A-Z a-z 0-9 _ . -"
        )

    @extend_schema_serializer(component_name="ClientSeed")
    class OutputSerializer(serializers.Serializer[Any]):
        client_seed = serializers.CharField()

    @extend_schema(operation_id="fairness_client_seed_get", responses=OutputSerializer)
    def get(self, request: Request) -> Response:
        seed = services.client_seed_get(user=request.user)
        return Response(self.OutputSerializer({"client_seed": seed}).data)

    @extend_schema(
        operation_id="fairness_client_seed_set",
        request=InputSerializer,
        responses={
            200: OutputSerializer,
            409: OpenApiResponse(
                ApiError, description="round_in_progress: change it between rounds"
            ),
        },
    )
    def put(self, request: Request) -> Response:
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        row = services.client_seed_set(
            user=request.user, seed=serializer.validated_data["client_seed"]
        )
        return Response(self.OutputSerializer({"client_seed": row.seed}).data)


class CommitmentApi(APIView):
    """The commitment the table's next round opens with (s_{k-1}, public before the round)."""

    permission_classes = [AllowAny]
    authentication_classes: list[Any] = []

    @extend_schema_serializer(component_name="FairnessCommitment")
    class OutputSerializer(serializers.Serializer[Any]):
        table_id = serializers.CharField()
        chain_id = serializers.CharField()
        nonce = serializers.IntegerField(help_text="k: the next round's position on the chain")
        commitment = serializers.CharField(help_text="s_{k-1}: its seed must hash to this")
        terminal = serializers.CharField(help_text="s_0 of the chain, published at creation")
        chain_length = serializers.IntegerField()

    @extend_schema(
        operation_id="fairness_commitment",
        parameters=[OpenApiParameter("table", str, required=True)],
        responses={
            200: OutputSerializer,
            404: OpenApiResponse(
                ApiError, description="unknown_table: no such table (each has a chain from birth)"
            ),
            409: OpenApiResponse(ApiError, description="round_in_progress: published when it ends"),
        },
    )
    def get(self, request: Request) -> Response:
        table_id = _identifier(request.query_params.get("table"), field="table")
        commitment = services.next_commitment(table_id=table_id)
        if commitment is None:  # every table has a seed chain from its creation: none, no table
            raise ApplicationError(
                f"Unknown table {table_id}: every table open to rounds has a seed chain.",
                code="unknown_table",
                status_code=404,
                extra={"table": table_id},
            )
        return Response(self.OutputSerializer(commitment).data)


class RoundProofApi(APIView):
    """A round's public proof once it ended: signed receipt and the verifier's bundle line."""

    permission_classes = [AllowAny]
    authentication_classes: list[Any] = []

    @extend_schema_serializer(component_name="FairnessRoundProof")
    class OutputSerializer(serializers.Serializer[Any]):
        round_id = serializers.CharField()
        receipt = serializers.DictField()
        signature = serializers.CharField()
        key_id = serializers.CharField()
        public_key = serializers.CharField()
        bundle = serializers.DictField(help_text="one line of the JSON Lines bundle format")
        log = serializers.DictField(
            help_text="the round's leaves in the transparency log once sequenced: round_opened "
            "(index or null), round_receipt (indices), pending (leaves not yet sequenced), "
            "max_merge_delay_s (the longest a leaf waits to be sequenced)"
        )

    @extend_schema(
        operation_id="fairness_round_proof",
        responses={
            200: OutputSerializer,
            409: OpenApiResponse(ApiError, description="proof_not_ready: the round has not ended"),
        },
    )
    def get(self, request: Request, round_id: str) -> Response:
        proof = selectors.round_proof_get(round_id=_identifier(round_id, field="round_id"))
        bundle = json.loads(proof.bundle_line)
        data = {
            "round_id": proof.round_id,
            "receipt": bundle["receipt"],
            "signature": proof.signature,
            "key_id": proof.key_id,
            "public_key": bundle["public_key"],
            "bundle": bundle,
            "log": transparency.round_leaves(proof.round_id),
        }
        return Response(self.OutputSerializer(data).data)


class SeedChainApi(APIView):
    """A seed chain's public facts and terminal, for every chain, forever (a bundle's chain
    lines can be checked against them)."""

    permission_classes = [AllowAny]
    authentication_classes: list[Any] = []

    @extend_schema_serializer(component_name="FairnessSeedChain")
    class OutputSerializer(serializers.Serializer[Any]):
        chain_id = serializers.CharField()
        table_id = serializers.CharField()
        terminal = serializers.CharField(help_text="s_0, published at creation, never changed")
        length = serializers.IntegerField(help_text="N: the chain's rounds are nonces 1..N")
        created_at = serializers.CharField(help_text="YYYY-MM-DDTHH:MM:SS.ffffffZ (UTC)")
        status = serializers.CharField(help_text="ready, active or exhausted")

    @extend_schema(
        operation_id="fairness_seed_chain",
        responses={
            200: OutputSerializer,
            404: OpenApiResponse(ApiError, description="unknown_chain: no such seed chain"),
        },
    )
    def get(self, request: Request, chain_id: str) -> Response:
        chain = selectors.seed_chain_get(chain_id=_identifier(chain_id, field="chain_id"))
        return Response(self.OutputSerializer(chain).data)
