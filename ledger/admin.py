"""Read-only admin views of the ledger for staff (receivables, entries, withdrawals)."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from ledger.models import AccountBalance, JournalEntry, Posting, WithdrawalRequest


class ReadOnlyAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    """Money moves only through ledger/services.py: the admin never writes."""

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


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
