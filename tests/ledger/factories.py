"""Ledger test helpers: users, funding, and the invariants every test may assert."""

from __future__ import annotations

import itertools
import uuid

from django.contrib.auth import get_user_model
from django.db.models import Sum

from ledger import services
from ledger.models import AccountBalance, Posting
from ledger.reconcile import ledger_reconcile

_counter = itertools.count()


def make_user(*, staff: bool = False):  # type: ignore[no-untyped-def]
    """A fresh user with a unique name."""
    name = f"u{next(_counter)}-{uuid.uuid4().hex[:8]}"
    return get_user_model().objects.create_user(
        username=name, password=None, is_staff=staff, is_superuser=staff
    )


def fund(user, amount_micro: int) -> None:  # type: ignore[no-untyped-def]
    """Credit a player's available balance by a staff deposit."""
    services.wallet_deposit(
        user=user, amount_micro=amount_micro, idempotency_key=f"fund-{uuid.uuid4().hex}"
    )


def balance(key: str) -> int:
    """Stored balance of the account with this key (0 if it does not exist)."""
    row = AccountBalance.objects.filter(account__key=key).first()
    return 0 if row is None else row.balance


def available(user) -> int:  # type: ignore[no-untyped-def]
    return balance(f"player_available:{user.pk}")


def assert_ledger_ok() -> None:
    """Every reconciliation check passes and the ledger sums to zero."""
    report = ledger_reconcile()
    assert report.ok, report.problems
    assert report.total_micro == 0
    assert (Posting.objects.aggregate(t=Sum("amount"))["t"] or 0) == 0
