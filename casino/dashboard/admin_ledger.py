"""Read-only admin views of the ledger for staff (receivables, entries, withdrawals)."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from casino.dashboard.filters import SpentEscrowFilter
from casino.dashboard.readonly import ReadOnlyAdmin
from ledger.models import AccountBalance, JournalEntry, Posting, WithdrawalRequest
from ledger.money import usdc


@admin.register(AccountBalance)
class AccountBalanceAdmin(ReadOnlyAdmin):
    list_display = ("account", "account_type", "balance_usdc", "state")
    list_filter = (SpentEscrowFilter, "account_type", "state")
    search_fields = ("account__key", "account__owner__username")
    # The record's own page: the owner by name, the balance in USDC (not micro-USDC).
    fields = readonly_fields = ("account", "owner", "account_type", "balance_usdc", "state")

    @admin.display(description="owner")
    def owner(self, obj: AccountBalance) -> Any:
        return obj.account.owner or "-"

    @admin.display(description="balance", ordering="balance")
    def balance_usdc(self, obj: AccountBalance) -> str:
        return usdc(obj.balance)


class PostingInline(admin.TabularInline):  # type: ignore[type-arg]
    model = Posting
    extra = 0
    can_delete = False
    fields = readonly_fields = ("account", "amount_usdc")

    @admin.display(description="amount")
    def amount_usdc(self, obj: Posting) -> str:
        return usdc(obj.amount)

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(JournalEntry)
class JournalEntryAdmin(ReadOnlyAdmin):
    list_display = ("id", "kind", "reference", "created_at")
    list_filter = ("kind",)
    search_fields = ("reference", "idempotency_key")
    inlines = [PostingInline]


@admin.register(WithdrawalRequest)
class WithdrawalRequestAdmin(ReadOnlyAdmin):
    list_display = (
        "reference",
        "player",
        "amount",
        "network",
        "address",
        "status",
        "created_at",
        "resolved_by",
        "resolved_at",
    )
    list_filter = ("status", "network")
    list_select_related = ("user", "resolved_by")
    search_fields = ("user__username", "address")
    # The record's page: the list's fields and the two journal entries.
    fields = readonly_fields = (
        *list_display[:7],
        "request_entry",
        "resolution_entry",
        *list_display[7:],
    )

    @admin.display(description="reference", ordering="pk")
    def reference(self, obj: WithdrawalRequest) -> str:
        return obj.reference

    @admin.display(description="player", ordering="user__username")
    def player(self, obj: WithdrawalRequest) -> str:
        return obj.user.get_username()

    @admin.display(description="amount", ordering="amount_micro")
    def amount(self, obj: WithdrawalRequest) -> str:
        return usdc(obj.amount_micro)


@admin.register(Posting)
class PostingAdmin(ReadOnlyAdmin):
    list_display = ("id", "entry", "account", "amount_usdc")
    search_fields = ("account__key", "entry__reference")
    list_select_related = ("entry", "account")
    fields = readonly_fields = ("entry", "account", "amount_usdc")

    @admin.display(description="amount", ordering="amount")
    def amount_usdc(self, obj: Posting) -> str:
        return usdc(obj.amount)
