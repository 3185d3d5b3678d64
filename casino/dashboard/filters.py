"""List filters shared by the dashboard's and the ledger's admin pages."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import Q, QuerySet
from django.http import HttpRequest

from ledger.models import AccountBalance, AccountType, EscrowState


class SpentEscrowFilter(admin.SimpleListFilter):
    """Round escrows with nothing left in them once their round finished are hidden unless
    asked for (`?spent_escrow=show`): every round leaves one, and they would bury the accounts
    that hold money. Works on accounts and on their balance rows."""

    title = "spent round escrows"
    parameter_name = "spent_escrow"
    SHOW = "show"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [(self.SHOW, "Shown")]

    def choices(self, changelist: Any) -> Any:
        for choice in super().choices(changelist):
            if choice["display"] == "All":  # what "All" means here: the default, without them
                choice["display"] = "Hidden"
            yield choice

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        if self.value() == self.SHOW:
            return queryset
        return queryset.exclude(spent_escrow_q(on_balance=queryset.model is AccountBalance))


def spent_escrow_q(*, on_balance: bool = False) -> Q:
    """A round escrow at zero whose round finished (the escrow settled or voided)."""
    finished = [EscrowState.SETTLED, EscrowState.VOIDED]
    if on_balance:
        return Q(account_type=AccountType.ROUND_ESCROW, balance=0, state__in=finished)
    return Q(type=AccountType.ROUND_ESCROW, balance_row__balance=0, balance_row__state__in=finished)
