"""The staff dashboard's admin: every model's admin page is registered from here.

This module holds the dashboard's own pages: ledger views (accounts, receivables, pending
withdrawals), review rows and player profiles. The game's (rounds, tables, the event log),
the fairness records' and the ledger's records' pages are in `admin_game`, `admin_fairness`
and `admin_ledger`; the immutable ones all stand on `readonly.ReadOnlyAdmin`.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.db import transaction
from django.db.models import QuerySet
from django.http import HttpRequest
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.html import format_html

from casino.dashboard import admin_fairness, admin_game, admin_ledger  # noqa: F401  (register)
from casino.dashboard.filters import SpentEscrowFilter
from casino.dashboard.models import (
    LedgerAccount,
    PendingWithdrawal,
    PlayerProfile,
    Receivable,
    RoundReview,
)
from casino.dashboard.readonly import ReadOnlyAdmin
from casino.dashboard.templatetags.usdc import short_id as short_id_html
from casino.platform.errors import ApplicationError
from ledger.models import AccountBalance, AccountType, WithdrawalRequest, WithdrawalStatus
from ledger.money import usdc
from ledger.services import (
    withdrawal_cancel_post,
    withdrawal_complete_post,
    withdrawal_requester_ids,
)

RESOLVE_WITHDRAWAL = "dashboard.resolve_withdrawal"


@admin.register(LedgerAccount)
class LedgerAccountAdmin(ReadOnlyAdmin):
    list_display = ("key", "type", "owner", "balance", "escrow_state", "created_at")
    list_filter = (SpentEscrowFilter, "type")
    search_fields = ("key", "owner__username")
    list_select_related = ("balance_row", "owner")
    fields = readonly_fields = (
        "key",
        "type",
        "owner",
        "round_ref",
        "currency",
        "balance",
        "escrow_state",
        "created_at",
    )

    @admin.display(description="balance", ordering="balance_row__balance")
    def balance(self, obj: LedgerAccount) -> str:
        row = getattr(obj, "balance_row", None)
        return usdc(row.balance) if row is not None else "—"

    @admin.display(description="escrow")
    def escrow_state(self, obj: LedgerAccount) -> str:
        row = getattr(obj, "balance_row", None)
        return row.state if row is not None and obj.type == AccountType.ROUND_ESCROW else ""


@admin.register(Receivable)
class ReceivableAdmin(ReadOnlyAdmin):
    """Receivables left by voids: the player owes the house (balance below zero)."""

    list_display = ("account", "owner", "owed")
    search_fields = ("account__key", "account__owner__username")
    fields = readonly_fields = ("account", "owner", "owed")

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

    @admin.display(description="owed", ordering="balance")
    def owed(self, obj: Receivable) -> str:
        return usdc(-obj.balance)


def completion_blockers(withdrawal: WithdrawalRequest, user: Any) -> list[str]:
    """Why `user` may not complete this withdrawal now (nothing: they may)."""
    problems = []
    if not withdrawal.network or not withdrawal.address:
        problems.append(
            "No destination recorded (requested before destinations were): cancel it, and the "
            "player requests again with a network and an address."
        )
    if user.pk in withdrawal_requester_ids(withdrawal):
        problems.append(
            "Four eyes: you requested this withdrawal, so you cannot approve it. Another "
            "staff member must complete it."
        )
    return problems


@admin.register(PendingWithdrawal)
class PendingWithdrawalAdmin(ReadOnlyAdmin):
    """Pending withdrawals. *Complete* (funds sent) asks for a confirmation on its own page,
    and refuses the requester (four eyes) and a withdrawal without a destination; *Cancel*
    gives the funds back at once."""

    list_display = ("reference", "player", "amount", "network", "address_shown", "created_at")
    fields = readonly_fields = ("reference", "player", "amount", "network", "address", "created_at")
    list_select_related = ("user",)
    search_fields = ("user__username", "address")
    list_filter = ("network",)
    actions = ("complete", "cancel")

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        return super().get_queryset(request).filter(status=WithdrawalStatus.PENDING)

    @admin.display(description="reference", ordering="pk")
    def reference(self, obj: PendingWithdrawal) -> str:
        return obj.reference

    @admin.display(description="player", ordering="user__username")
    def player(self, obj: PendingWithdrawal) -> str:
        return obj.user.get_username()

    @admin.display(description="amount", ordering="amount_micro")
    def amount(self, obj: PendingWithdrawal) -> str:
        return usdc(obj.amount_micro)

    @admin.display(description="address")
    def address_shown(self, obj: PendingWithdrawal) -> str:
        return format_html("<code>{}</code>", obj.address) if obj.address else "— (none)"

    def has_resolve_permission(self, request: HttpRequest) -> bool:
        return request.user.has_perm(RESOLVE_WITHDRAWAL)

    def _resolve(
        self, request: HttpRequest, withdrawals: list[WithdrawalRequest], complete: bool
    ) -> None:
        service = withdrawal_complete_post if complete else withdrawal_cancel_post
        verb = "complete" if complete else "cancel"
        past = "completed" if complete else "cancelled"
        done = []
        for withdrawal in withdrawals:
            try:
                with transaction.atomic(durable=True):
                    service(
                        withdrawal_id=withdrawal.pk,
                        staff=request.user,
                        idempotency_key=f"staff:withdrawal:{withdrawal.pk}:{verb}",
                    )
                done.append(withdrawal.reference)
            except ApplicationError as error:
                self.message_user(
                    request,
                    f"Not {past} ({withdrawal.reference}): {error.message}",
                    messages.ERROR,
                )
        if done:
            self.message_user(
                request,
                f"{past.capitalize()} {len(done)} withdrawal(s): {', '.join(done)}.",
                messages.SUCCESS,
            )

    def _not_pending(self, request: HttpRequest, queryset: QuerySet[Any], past: str) -> None:
        """Say which selected withdrawals left the pending list meanwhile (another tab or
        another manager resolved them): the action's queryset holds pending ones only."""
        selected = request.POST.getlist(helpers.ACTION_CHECKBOX_NAME)
        pending = {str(pk) for pk in queryset.values_list("pk", flat=True)}
        gone = WithdrawalRequest.objects.filter(pk__in=[p for p in selected if p.isdigit()])
        for withdrawal in gone.exclude(pk__in=pending).order_by("pk"):
            self.message_user(
                request,
                f"Not {past} ({withdrawal.reference}): this withdrawal is already "
                f"{withdrawal.status}.",
                messages.ERROR,
            )

    @admin.action(
        description="Complete selected withdrawals (funds sent): asks to confirm",
        permissions=["resolve"],
    )
    def complete(self, request: HttpRequest, queryset: QuerySet[Any]) -> TemplateResponse | None:
        """First the confirmation page; its POST (`post=yes` with `confirm` ticked) completes."""
        self._not_pending(request, queryset, "completed")
        rows = [
            (w, completion_blockers(w, request.user))
            for w in queryset.select_related("user").order_by("pk")
        ]
        # Not a blocker (collecting a debt is a staff decision), but said before paying out.
        owed = dict(
            AccountBalance.objects.filter(
                account_type=AccountType.RECEIVABLE,
                balance__lt=0,
                account__owner_id__in={w.user_id for w, _ in rows},
            ).values_list("account__owner_id", "balance")
        )
        for withdrawal, _ in rows:
            withdrawal.owed_micro = -owed.get(withdrawal.user_id, 0)
        error = ""
        if request.POST.get("post") == "yes":
            if request.POST.get("confirm"):
                for withdrawal, problems in rows:
                    for problem in problems:
                        self.message_user(
                            request,
                            f"Not completed ({withdrawal.reference}): {problem}",
                            messages.ERROR,
                        )
                self._resolve(request, [w for w, problems in rows if not problems], True)
                return None
            error = "Not completed: tick the confirmation that the funds were sent."
        context = {
            **self.admin_site.each_context(request),
            "title": "Complete withdrawals: confirm",
            "opts": self.model._meta,
            "rows": rows,
            "completable": sum(1 for _, problems in rows if not problems),
            "error": error,
            "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
        }
        return TemplateResponse(
            request,
            "admin/casino/withdrawal_confirm.html",
            context,
            status=400 if error else 200,
        )

    @admin.action(description="Cancel selected withdrawals (refund)", permissions=["resolve"])
    def cancel(self, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        self._not_pending(request, queryset, "cancelled")
        self._resolve(request, list(queryset.order_by("pk")), complete=False)


@admin.register(RoundReview)
class RoundReviewAdmin(ReadOnlyAdmin):
    list_display = (
        "round",
        "pending",
        "reasons_text",
        "flagged_at",
        "resolution",
        "reviewed_by",
        "reviewed_at",
        "notes",
    )
    list_display_links = ("flagged_at",)  # the round cell links to the round's review page
    list_filter = ("pending", "resolution")
    search_fields = ("round_id",)
    fields = readonly_fields = list_display

    @admin.display(description="round", ordering="round_id")
    def round(self, obj: RoundReview) -> str:
        return format_html(
            '<a href="{}">{}</a>',
            reverse("admin:round_review", args=[obj.round_id]),
            short_id_html(obj.round_id),
        )

    @admin.display(description="reasons")
    def reasons_text(self, obj: RoundReview) -> str:
        return ", ".join(obj.reasons)


@admin.register(PlayerProfile)
class PlayerProfileAdmin(ReadOnlyAdmin):
    list_display = ("username", "display_name", "opt_out")
    list_select_related = ("user",)
    search_fields = ("user__username", "display_name")

    @admin.display(description="player", ordering="user__username")
    def username(self, obj: PlayerProfile) -> str:
        return obj.user.get_username()
