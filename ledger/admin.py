"""Read-only admin views of the ledger for staff (receivables, entries, withdrawals)."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from casino.admin import ReadOnlyAdmin
from ledger.models import AccountBalance, JournalEntry, Posting, WithdrawalRequest


@admin.register(AccountBalance)
class AccountBalanceAdmin(ReadOnlyAdmin):
    list_display = ("account", "account_type", "balance", "state")
    list_filter = ("account_type", "state")
    search_fields = ("account__key", "account__owner__username")


class PostingInline(admin.TabularInline):  # type: ignore[type-arg]
    model = Posting
    extra = 0
    can_delete = False
    readonly_fields = ("account", "amount")

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
    list_display = ("id", "user", "amount_micro", "status", "created_at", "resolved_at")
    list_filter = ("status",)


@admin.register(Posting)
class PostingAdmin(ReadOnlyAdmin):
    list_display = ("id", "entry", "account", "amount")
    search_fields = ("account__key", "entry__reference")
    list_select_related = ("entry", "account")
