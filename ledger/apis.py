"""Wallet API: one APIView per operation; views parse, call one service, serialize.

Money-moving requests need an `Idempotency-Key` header (see ledger/idempotency.py).
Amounts are decimal strings in and out (6 places out); see ledger/money.py.
"""

from __future__ import annotations

import re
from typing import Any

from django.contrib.auth import get_user_model
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_field,
    extend_schema_serializer,
)
from rest_framework import serializers
from rest_framework.pagination import LimitOffsetPagination
from rest_framework.permissions import BasePermission, IsAdminUser, IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from casino.platform.errors import ApplicationError
from casino.platform.schema import ApiError, paginated
from ledger import selectors, services
from ledger.destinations import ADDRESS_MAX, NETWORKS, destination_clean
from ledger.idempotency import idempotent_request
from ledger.models import JournalEntry, WithdrawalRequest, WithdrawalStatus
from ledger.money import CURRENCY, format_amount, parse_amount

IDEMPOTENCY_HEADER = OpenApiParameter(
    "Idempotency-Key",
    OpenApiTypes.STR,
    OpenApiParameter.HEADER,
    required=True,
    description="Unique per money-moving request (1-100 chars A-Z a-z 0-9 . _ : -). "
    "Same key + same body replays the first response; another body gives 422.",
)


@extend_schema_field(
    {"type": "string", "pattern": r"^(0|[1-9][0-9]*)(\.[0-9]{1,6})?$", "example": "12.5"}
)
class AmountField(serializers.Field[int, Any, str, Any]):
    """A USDC amount as a decimal string; parsed strictly by ledger.money (400 on anything else)."""

    def amount_name(self) -> str:
        """The field a refusal names (`details.field`)."""
        return self.field_name or "amount"

    def validate_empty_values(self, data: Any) -> tuple[bool, Any]:
        if data is None:  # JSON null is a bare value too: same clear error as a number
            parse_amount(data, field=self.amount_name())
        return super().validate_empty_values(data)

    def to_internal_value(self, data: Any) -> int:
        return parse_amount(data, field=self.amount_name())

    def to_representation(self, value: int) -> str:
        return format_amount(value)


@extend_schema_field({"type": "string", "example": "12.500000"})
class AmountOutField(serializers.Field[int, Any, str, Any]):
    def to_representation(self, value: int) -> str:
        return format_amount(value)


class PostingOut(serializers.Serializer[Any]):
    account_type = serializers.CharField(source="account.type")
    amount = AmountOutField()


class EntryOut(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    kind = serializers.CharField()
    reference = serializers.CharField()
    created_at = serializers.DateTimeField()
    postings = serializers.SerializerMethodField()

    @extend_schema_field(PostingOut(many=True))
    def get_postings(self, entry: JournalEntry) -> list[dict[str, Any]]:
        own = getattr(entry, "own_postings", None)
        rows = own if own is not None else entry.postings.select_related("account").order_by("id")
        return list(PostingOut(rows, many=True).data)


class WithdrawalOut(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    reference = serializers.CharField()
    user_id = serializers.IntegerField()
    amount = AmountOutField(source="amount_micro")
    network = serializers.CharField()
    address = serializers.CharField()
    status = serializers.CharField()
    created_at = serializers.DateTimeField()
    resolved_at = serializers.DateTimeField(allow_null=True)
    request_entry_id = serializers.IntegerField()
    resolution_entry_id = serializers.IntegerField(allow_null=True)


def staff_permission(perm: str) -> type[BasePermission]:
    """Staff who hold `perm`: a staff role's permission (casino/dashboard/roles.py), or any
    superuser. Plain `IsAdminUser` let every role (even the read-only auditor) move money."""

    class HasStaffPermission(BasePermission):
        def has_permission(self, request: Request, view: Any) -> bool:
            user = request.user
            return bool(user and user.is_authenticated and user.is_staff and user.has_perm(perm))

    return HasStaffPermission


# No role holds it: minting money is for superusers only.
DEPOSIT_PERMISSION = "ledger.add_journalentry"
RESOLVE_WITHDRAWAL_PERMISSION = "dashboard.resolve_withdrawal"  # managers


def _user_id(request: Request) -> int:
    pk = request.user.pk
    assert pk is not None  # the views require an authenticated user
    return int(pk)


def _idempotent_response(
    request: Request, *, operation: str, payload: dict[str, Any], perform: Any
) -> Response:
    status, body, replayed = idempotent_request(
        user_id=_user_id(request),
        key=request.headers.get("Idempotency-Key"),
        operation=operation,
        payload=payload,
        perform=perform,
    )
    response = Response(body, status=status)
    if replayed:
        response["Idempotent-Replayed"] = "true"
    return response


_COUNT = re.compile(r"[0-9]{1,9}")


class Pages(LimitOffsetPagination):
    """`limit` (default 50, at most 200) and `offset`, as DRF's LimitOffsetPagination takes
    them, but strict: a value that is not a whole number, or a `limit` of 0, is a 400
    `invalid_input` naming the parameter. DRF's class answers the default page instead, so a
    client's typo went unnoticed. A `limit` above the maximum gets the maximum."""

    max_limit = 200

    def get_limit(self, request: Request) -> int | None:
        value = _count(request, self.limit_query_param, minimum=1)
        if value is None:
            return self.default_limit
        return min(value, self.max_limit)

    def get_offset(self, request: Request) -> int:
        return _count(request, self.offset_query_param, minimum=0) or 0


PAGE_PARAMETERS = [
    OpenApiParameter("limit", OpenApiTypes.INT, description="rows a page, 1 to 200 (default 50)"),
    OpenApiParameter("offset", OpenApiTypes.INT, description="rows to skip (default 0)"),
]


def _count(request: Request, name: str, *, minimum: int) -> int | None:
    raw = request.query_params.get(name)
    if raw is None:
        return None
    if not _COUNT.fullmatch(raw) or int(raw) < minimum:
        raise serializers.ValidationError(
            {name: [f"Must be a whole number of at least {minimum}."]}
        )
    return int(raw)


class WalletBalanceApi(APIView):
    """Your balances in USDC: available (to bet or withdraw), pending withdrawal, and
    receivable (what you owe after a voided round took back winnings you had spent)."""

    permission_classes = [IsAuthenticated]

    @extend_schema_serializer(component_name="WalletBalance")
    class OutputSerializer(serializers.Serializer[Any]):
        currency = serializers.CharField()
        available = AmountOutField()
        pending_withdrawal = AmountOutField()
        receivable = AmountOutField()

    @extend_schema(operation_id="wallet_balance", responses=OutputSerializer)
    def get(self, request: Request) -> Response:
        balances = selectors.wallet_balances(user_id=_user_id(request))
        data = {
            "currency": CURRENCY,
            "available": balances["player_available"],
            "pending_withdrawal": balances["pending_withdrawal"],
            "receivable": balances["receivable"],
        }
        return Response(self.OutputSerializer(data).data)


class WalletEntryListApi(APIView):
    """Your journal entries, newest first, each with your own postings only (`limit`,
    `offset`)."""

    permission_classes = [IsAuthenticated]

    @extend_schema(
        operation_id="wallet_entries",
        parameters=PAGE_PARAMETERS,
        responses=paginated(EntryOut, "PaginatedEntries"),
    )
    def get(self, request: Request) -> Response:
        paginator = Pages()
        page = paginator.paginate_queryset(
            selectors.wallet_entries(user_id=_user_id(request)), request, view=self
        )
        return paginator.get_paginated_response(EntryOut(page, many=True).data)


class AmountInput(serializers.Serializer[Any]):
    amount = AmountField()


class WithdrawalInput(AmountInput):
    # The destination (ledger/destinations.py): required for every new request (requests made
    # before it was keep theirs without one; staff complete only with one).
    network = serializers.ChoiceField(choices=list(NETWORKS))
    address = serializers.CharField(max_length=ADDRESS_MAX)


class WithdrawalRequestApi(APIView):
    """Ask to withdraw: the amount moves from available to pending until staff complete the
    withdrawal to its destination (`network`, `address`) or cancel it."""

    throttle_scope = "money"  # settings.THROTTLE_RATES
    permission_classes = [IsAuthenticated]

    @extend_schema(
        operation_id="wallet_withdrawal_request",
        parameters=[IDEMPOTENCY_HEADER],
        request=WithdrawalInput,
        responses={
            201: WithdrawalOut,
            400: OpenApiResponse(
                ApiError,
                description="invalid_input (amount, network or address missing), an amount_* "
                "code, network_unknown, destination_invalid",
            ),
            409: OpenApiResponse(
                ApiError, description="insufficient_funds: the available balance is short"
            ),
        },
    )
    def post(self, request: Request) -> Response:
        data = WithdrawalInput(data=request.data)
        data.is_valid(raise_exception=True)
        amount = data.validated_data["amount"]
        network, address = destination_clean(
            data.validated_data["network"], data.validated_data["address"]
        )
        destination = {"network": network, "address": address}

        def perform(key: str, fingerprint: str) -> tuple[int, dict[str, Any]]:
            withdrawal = services.withdrawal_request_post(
                user=request.user,
                amount_micro=amount,
                idempotency_key=key,
                entry_fingerprint=fingerprint,
                **destination,
            )
            return 201, dict(WithdrawalOut(withdrawal).data)

        return _idempotent_response(
            request,
            operation="withdrawal_request",
            payload={"amount": amount, **destination},
            perform=perform,
        )


class FaucetApi(APIView):
    throttle_scope = "money"  # settings.THROTTLE_RATES
    permission_classes = [IsAuthenticated]

    @extend_schema(
        operation_id="wallet_faucet",
        description="Demo mode only (settings.DEMO_MODE): credit your own wallet.",
        parameters=[IDEMPOTENCY_HEADER],
        request=AmountInput,
        responses={201: EntryOut},
    )
    def post(self, request: Request) -> Response:
        data = AmountInput(data=request.data)
        data.is_valid(raise_exception=True)
        amount = data.validated_data["amount"]

        def perform(key: str, fingerprint: str) -> tuple[int, dict[str, Any]]:
            entry = services.wallet_faucet_post(
                user=request.user,
                amount_micro=amount,
                idempotency_key=key,
                entry_fingerprint=fingerprint,
            )
            entry.own_postings = list(  # type: ignore[attr-defined]
                entry.postings.filter(account__owner_id=request.user.pk).select_related("account")
            )
            return 201, dict(EntryOut(entry).data)

        return _idempotent_response(
            request, operation="faucet", payload={"amount": amount}, perform=perform
        )


class StaffDepositApi(APIView):
    throttle_scope = "money"  # settings.THROTTLE_RATES
    permission_classes = [staff_permission(DEPOSIT_PERMISSION)]

    class InputSerializer(serializers.Serializer[Any]):
        user_id = serializers.IntegerField(min_value=1)
        amount = AmountField()

    @extend_schema(
        operation_id="staff_deposit",
        description="Staff credit a player's wallet (off-chain; no blockchain integration).",
        parameters=[IDEMPOTENCY_HEADER],
        request=InputSerializer,
        responses={
            201: EntryOut,
            404: OpenApiResponse(ApiError, description="user_not_found: no such user"),
        },
    )
    def post(self, request: Request) -> Response:
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        user_id, amount = data.validated_data["user_id"], data.validated_data["amount"]
        if not get_user_model().objects.filter(pk=user_id).exists():
            raise ApplicationError("No such user.", code="user_not_found", status_code=404)

        def perform(key: str, fingerprint: str) -> tuple[int, dict[str, Any]]:
            entry = services.wallet_deposit_post(
                user=user_id,
                amount_micro=amount,
                idempotency_key=key,
                source="staff",
                created_by=request.user,
                entry_fingerprint=fingerprint,
            )
            return 201, dict(EntryOut(entry).data)

        return _idempotent_response(
            request,
            operation="staff_deposit",
            payload={"user_id": user_id, "amount": amount},
            perform=perform,
        )


class _StaffWithdrawalResolveApi(APIView):
    throttle_scope = "money"  # settings.THROTTLE_RATES
    permission_classes = [staff_permission(RESOLVE_WITHDRAWAL_PERMISSION)]
    operation = ""

    def resolve(self, *, withdrawal_id: int, staff: Any, key: str) -> WithdrawalRequest:
        raise NotImplementedError

    def post(self, request: Request, withdrawal_id: int) -> Response:
        def perform(key: str, fingerprint: str) -> tuple[int, dict[str, Any]]:
            withdrawal = self.resolve(withdrawal_id=withdrawal_id, staff=request.user, key=key)
            return 200, dict(WithdrawalOut(withdrawal).data)

        return _idempotent_response(
            request,
            operation=self.operation,
            payload={"withdrawal_id": withdrawal_id},
            perform=perform,
        )


class StaffWithdrawalCompleteApi(_StaffWithdrawalResolveApi):
    """Staff: the withdrawal was paid out to its destination (pending -> external). Whoever
    requested it cannot complete it (403 `four_eyes`)."""

    operation = "withdrawal_complete"

    def resolve(self, *, withdrawal_id: int, staff: Any, key: str) -> WithdrawalRequest:
        return services.withdrawal_complete_post(
            withdrawal_id=withdrawal_id, staff=staff, idempotency_key=key
        )

    @extend_schema(
        operation_id="staff_withdrawal_complete",
        parameters=[IDEMPOTENCY_HEADER],
        request=None,
        responses={200: WithdrawalOut},
    )
    def post(self, request: Request, withdrawal_id: int) -> Response:
        return super().post(request, withdrawal_id)


class StaffWithdrawalCancelApi(_StaffWithdrawalResolveApi):
    """Staff: cancel a pending withdrawal; the amount returns to the player's available
    balance."""

    operation = "withdrawal_cancel"

    def resolve(self, *, withdrawal_id: int, staff: Any, key: str) -> WithdrawalRequest:
        return services.withdrawal_cancel_post(
            withdrawal_id=withdrawal_id, staff=staff, idempotency_key=key
        )

    @extend_schema(
        operation_id="staff_withdrawal_cancel",
        parameters=[IDEMPOTENCY_HEADER],
        request=None,
        responses={200: WithdrawalOut},
    )
    def post(self, request: Request, withdrawal_id: int) -> Response:
        return super().post(request, withdrawal_id)


class StaffWithdrawalListApi(APIView):
    """Staff: withdrawal requests (`status`: pending, completed or cancelled), to act on."""

    permission_classes = [IsAdminUser]

    @extend_schema(
        operation_id="staff_withdrawal_list",
        parameters=[
            OpenApiParameter("status", OpenApiTypes.STR, enum=list(WithdrawalStatus.values)),
            *PAGE_PARAMETERS,
        ],
        responses=paginated(WithdrawalOut, "PaginatedWithdrawals"),
    )
    def get(self, request: Request) -> Response:
        status = request.query_params.get("status")
        if status is not None and status not in WithdrawalStatus.values:
            raise serializers.ValidationError(
                {"status": [f"Must be one of {', '.join(WithdrawalStatus.values)}."]}
            )
        paginator = Pages()
        rows = selectors.withdrawal_list(status=status)
        page = paginator.paginate_queryset(rows, request, view=self)
        return paginator.get_paginated_response(WithdrawalOut(page, many=True).data)


class StaffReceivableListApi(APIView):
    """Staff: the players who owe the house after voids, and how much."""

    permission_classes = [IsAdminUser]

    @extend_schema_serializer(component_name="Receivable")
    class OutputSerializer(serializers.Serializer[Any]):
        user_id = serializers.IntegerField(source="account.owner_id")
        username = serializers.CharField(source="account.owner.username")
        owed = serializers.SerializerMethodField()

        def get_owed(self, row: Any) -> str:
            return format_amount(-row.balance)

    @extend_schema(
        operation_id="staff_receivable_list",
        parameters=PAGE_PARAMETERS,
        responses=paginated(OutputSerializer, "PaginatedReceivables"),
    )
    def get(self, request: Request) -> Response:
        paginator = Pages()
        page = paginator.paginate_queryset(selectors.receivable_list(), request, view=self)
        return paginator.get_paginated_response(self.OutputSerializer(page, many=True).data)
