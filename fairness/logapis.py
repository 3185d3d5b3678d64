"""The transparency log's public API, mounted under /api/log/ (docs/fairness.md,
"Transparency log"): the signed checkpoint as text, proofs and leaves as JSON, and the
witnesses' cosignatures. Errors have the API's one shape.
"""

from __future__ import annotations

import base64
from typing import Any

from django.http import HttpResponse
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from casino.platform.errors import ApplicationError
from casino.platform.schema import ApiError
from fairness import transparency
from fairness.models import LogCheckpoint


def _int(request: Request, name: str) -> int:
    raw = request.query_params.get(name)
    if raw is None or not raw.isdigit() or len(raw) > 18:
        raise ApplicationError(
            f"{name} must be a non-negative integer.",
            code=f"invalid_{name}",
            extra={name: raw},
        )
    return int(raw)


def _text(body: str) -> HttpResponse:
    response = HttpResponse(body, content_type="text/plain; charset=utf-8")
    response["Cache-Control"] = "no-cache"
    return response


class _Public(APIView):
    permission_classes = [AllowAny]
    authentication_classes: list[Any] = []


class LogCheckpointApi(_Public):
    """The latest signed checkpoint (C2SP tlog-checkpoint in a signed note), with the
    witnesses' cosignatures."""

    @extend_schema(
        operation_id="log_checkpoint",
        responses={(200, "text/plain"): str, 404: OpenApiResponse(ApiError)},
    )
    def get(self, request: Request) -> HttpResponse:
        checkpoint = transparency.latest_checkpoint()
        if checkpoint is None:
            raise ApplicationError(
                "The log has no checkpoint yet: the sequencer has not run.",
                code="no_checkpoint",
                status_code=404,
            )
        return _text(transparency.checkpoint_text(checkpoint))


class LogCheckpointsApi(_Public):
    """A past checkpoint, the one the log signed at `size`."""

    @extend_schema(
        operation_id="log_checkpoint_at",
        parameters=[OpenApiParameter("size", int, required=True)],
        responses={(200, "text/plain"): str, 404: OpenApiResponse(ApiError)},
    )
    def get(self, request: Request) -> HttpResponse:
        size = _int(request, "size")
        checkpoint = LogCheckpoint.objects.filter(size=size).first()
        if checkpoint is None:
            raise ApplicationError(
                f"The log signed no checkpoint at size {size}.",
                code="not_found",
                status_code=404,
                extra={"size": size},
            )
        return _text(transparency.checkpoint_text(checkpoint))


class LogVkeyApi(_Public):
    """The checkpoints' current verifier key in the signed-note vkey format; `?all=1` lists
    every key the log ever signed with, one per line."""

    @extend_schema(operation_id="log_vkey", responses={(200, "text/plain"): str})
    def get(self, request: Request) -> HttpResponse:
        if request.query_params.get("all") == "1":
            return _text("".join(f"{v.vkey}\n" for v in transparency.verifiers()))
        return _text(transparency.signer().vkey + "\n")


class ProofSerializer(serializers.Serializer[Any]):
    proof = serializers.ListField(child=serializers.CharField(), help_text="base64 hashes")


class LogInclusionApi(_Public):
    """The inclusion proof of leaf `index` in the tree of `size` leaves (RFC 9162 2.1.3)."""

    @extend_schema(
        operation_id="log_inclusion_proof",
        parameters=[OpenApiParameter("index", int, required=True), OpenApiParameter("size", int)],
        responses={200: ProofSerializer, 400: OpenApiResponse(ApiError)},
    )
    def get(self, request: Request) -> Response:
        index, size = _int(request, "index"), _int(request, "size")
        proof = transparency.inclusion(index, size)
        return Response({"index": index, "size": size, "proof": proof})


class LogConsistencyApi(_Public):
    """The consistency proof between the trees of `from` and `to` leaves (RFC 9162 2.1.4)."""

    @extend_schema(
        operation_id="log_consistency_proof",
        parameters=[OpenApiParameter("from", int, required=True), OpenApiParameter("to", int)],
        responses={200: ProofSerializer, 400: OpenApiResponse(ApiError)},
    )
    def get(self, request: Request) -> Response:
        size1, size2 = _int(request, "from"), _int(request, "to")
        proof = transparency.consistency(size1, size2)
        return Response({"from": size1, "to": size2, "proof": proof})


class LeafSerializer(serializers.Serializer[Any]):
    index = serializers.IntegerField()
    # a field named as Serializer.data (the output's key is "data"): mypy sees the property
    data = serializers.CharField(help_text="the leaf's bytes, base64")  # type: ignore[assignment]
    kind = serializers.CharField(help_text="round_opened, round_receipt or journal_entry")


class LeavesSerializer(serializers.Serializer[Any]):
    start = serializers.IntegerField()
    end = serializers.IntegerField()
    leaves = LeafSerializer(many=True)


class CosignedSerializer(serializers.Serializer[Any]):
    size = serializers.IntegerField()
    witness = serializers.CharField()
    stored = serializers.BooleanField(help_text="false: this cosignature was already kept")


class LogLeavesApi(_Public):
    """Leaves start <= i < end (at most 1,000): each one's bytes in base64, and its kind."""

    @extend_schema(
        operation_id="log_leaves",
        parameters=[OpenApiParameter("start", int, required=True), OpenApiParameter("end", int)],
        responses={200: LeavesSerializer, 400: OpenApiResponse(ApiError)},
    )
    def get(self, request: Request) -> Response:
        start, end = _int(request, "start"), _int(request, "end")
        rows = transparency.leaves(start, end)
        leaves = [
            {
                "index": row.index,
                "data": base64.b64encode(row.data.encode("utf-8")).decode("ascii"),
                "kind": row.kind,
            }
            for row in rows
        ]
        return Response({"start": start, "end": end, "leaves": leaves})


class LogCosignaturesApi(_Public):
    """A witness posts its cosignature of a checkpoint: {"size": N, "line": "— name sig"}.
    The line is its credential: it must verify under a registered witness's key."""

    class InputSerializer(serializers.Serializer[Any]):
        size = serializers.IntegerField(min_value=0, max_value=2**62)
        line = serializers.CharField(max_length=1000, trim_whitespace=False)

    @extend_schema(
        operation_id="log_cosign",
        request=InputSerializer,
        responses={
            201: CosignedSerializer,
            200: CosignedSerializer,
            403: OpenApiResponse(ApiError, description="unknown_witness or bad_cosignature"),
            404: OpenApiResponse(ApiError, description="not_found: no checkpoint at that size"),
        },
    )
    def post(self, request: Request) -> Response:
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        cosignature, created = transparency.cosignature_add(**serializer.validated_data)
        body = {"size": cosignature.size, "witness": cosignature.witness.name, "stored": created}
        return Response(body, status=201 if created else 200)
