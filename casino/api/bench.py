"""Anchor endpoints for `bench/api.py`, mounted only with BENCH_ENDPOINTS=1 (never in prod).

They measure the floor the game endpoints stand on, on the same server and settings:
a bare DRF endpoint, a bare lock + update + insert transaction, a bare group fan-out.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.db import transaction
from drf_spectacular.utils import extend_schema
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from casino.models import Table
from ledger.models import IdempotencyRecord

FANOUT_GROUP = "bench.fanout"


class BenchPingApi(APIView):
    permission_classes = [AllowAny]
    authentication_classes: list[Any] = []

    @extend_schema(exclude=True)
    def get(self, request: Request) -> Response:
        return Response({"ok": True})


class BenchTransactionApi(APIView):
    """Lock one row, update it and insert one row, in one transaction."""

    permission_classes = [AllowAny]
    authentication_classes: list[Any] = []

    @extend_schema(exclude=True)
    def post(self, request: Request) -> Response:
        with transaction.atomic(durable=True):
            table = Table.objects.select_for_update().get(name="bench anchor")
            Table.objects.filter(pk=table.pk).update(version=table.version + 1)
            IdempotencyRecord.objects.create(
                key=f"bench:{uuid.uuid4().hex}",
                operation="bench",
                fingerprint="-",
                status_code=200,
                response={},
            )
        return Response({"ok": True})


class BenchFanoutApi(APIView):
    """Send one timestamped message to every socket in the bench group."""

    permission_classes = [AllowAny]
    authentication_classes: list[Any] = []

    @extend_schema(exclude=True)
    def post(self, request: Request) -> Response:
        layer = get_channel_layer()
        assert layer is not None
        sent = time.time()
        async_to_sync(layer.group_send)(FANOUT_GROUP, {"type": "bench.message", "sent": sent})
        return Response({"sent": sent})
