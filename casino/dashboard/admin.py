"""Dashboard admin pages: ledger views (accounts, receivables, pending withdrawals), review
rows and player profiles. The immutable records' own read-only admins live with their apps
(`casino/admin.py`, `ledger/admin.py`, `fairness/admin.py`), all on `casino.admin.ReadOnlyAdmin`.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.db import transaction
from django.db.models import QuerySet
from django.http import HttpRequest

from casino.admin import ReadOnlyAdmin
from casino.dashboard.models import (
    LedgerAccount,
    PendingWithdrawal,
    PlayerProfile,
    Receivable,
    RoundReview,
)
from casino.errors import ApplicationError
from ledger.models import WithdrawalStatus
from ledger.money import format_amount
from ledger.services import withdrawal_cancel_post, withdrawal_complete_post

RESOLVE_WITHDRAWAL = "dashboard.resolve_withdrawal"


@admin.register(LedgerAccount)
class LedgerAccountAdmin(ReadOnlyAdmin):
    list_display = ("key", "type", "owner", "balance", "created_at")
    list_filter = ("type",)
    search_fields = ("key", "owner__username")
    list_select_related = ("balance_row", "owner")

    @admin.display(description="balance (USDC)")
    def balance(self, obj: LedgerAccount) -> str:
        row = getattr(obj, "balance_row", None)
        return format_amount(row.balance) if row is not None else "—"


@admin.register(Receivable)
class ReceivableAdmin(ReadOnlyAdmin):
    """Receivables left by voids: the player owes the house (balance below zero)."""

    list_display = ("account", "owner", "owed")
    search_fields = ("account__key", "account__owner__username")

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        return (
            super()
            .get_queryset(request)
            .filter(account_type="receivable", balance__lt=0)
            .select_related("account__owner")
        )

    @admin.display(description="player")
    def owner(self, obj: Receivable) -> Any:
        return obj.account.owner

    @admin.display(description="owed (USDC)", ordering="balance")
    def owed(self, obj: Receivable) -> str:
        return format_amount(-obj.balance)


@admin.register(PendingWithdrawal)
class PendingWithdrawalAdmin(ReadOnlyAdmin):
    list_display = ("id", "user", "amount", "created_at")
    search_fields = ("user__username",)
    actions = ("complete", "cancel")

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        return super().get_queryset(request).filter(status=WithdrawalStatus.PENDING)

    @admin.display(description="amount (USDC)", ordering="amount_micro")
    def amount(self, obj: PendingWithdrawal) -> str:
        return format_amount(obj.amount_micro)

    def has_resolve_permission(self, request: HttpRequest) -> bool:
        return request.user.has_perm(RESOLVE_WITHDRAWAL)

    def _resolve(self, request: HttpRequest, queryset: QuerySet[Any], complete: bool) -> None:
        service = withdrawal_complete_post if complete else withdrawal_cancel_post
        verb = "complete" if complete else "cancel"
        done = 0
        for withdrawal in queryset:
            try:
                with transaction.atomic(durable=True):
                    service(
                        withdrawal_id=withdrawal.pk,
                        staff=request.user,
                        idempotency_key=f"staff:withdrawal:{withdrawal.pk}:{verb}",
                    )
                done += 1
            except ApplicationError as error:
                self.message_user(request, f"#{withdrawal.pk}: {error.message}", messages.ERROR)
        self.message_user(request, f"{verb.title()}d {done} withdrawal(s).", messages.SUCCESS)

    @admin.action(description="Complete selected withdrawals (funds sent)", permissions=["resolve"])
    def complete(self, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        self._resolve(request, queryset, complete=True)

    @admin.action(description="Cancel selected withdrawals (refund)", permissions=["resolve"])
    def cancel(self, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        self._resolve(request, queryset, complete=False)


@admin.register(RoundReview)
class RoundReviewAdmin(ReadOnlyAdmin):
    list_display = ("round_id", "pending", "reasons", "flagged_at", "reviewed_by", "reviewed_at")
    list_filter = ("pending",)
    search_fields = ("round_id",)


@admin.register(PlayerProfile)
class PlayerProfileAdmin(ReadOnlyAdmin):
    list_display = ("user", "display_name", "opt_out")
    search_fields = ("user__username", "display_name")
