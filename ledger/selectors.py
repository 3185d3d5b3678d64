"""Reads of the ledger. A player's reads only ever touch accounts they own."""

from __future__ import annotations

from typing import Any

from django.db.models import Prefetch, QuerySet

from casino.platform import rawsql
from ledger.models import AccountBalance, AccountType, JournalEntry, Posting, WithdrawalRequest

WALLET_TYPES = (
    AccountType.PLAYER_AVAILABLE,
    AccountType.PENDING_WITHDRAWAL,
    AccountType.RECEIVABLE,
)


def wallet_balances(*, user_id: int) -> dict[str, int]:
    """The player's balances by account type (missing accounts read as zero)."""
    balances = {str(t): 0 for t in WALLET_TYPES}
    rows = rawsql.query(  # raw (casino.platform.rawsql's fast path): DEAL reads this on every bet
        "SELECT b.account_type, b.balance FROM ledger_accountbalance b "
        "JOIN ledger_account a ON a.id = b.account_id WHERE a.owner_id = %s",
        [user_id],
        _all,
    )
    for account_type, balance in rows:
        balances[account_type] = balance
    return balances


def _all(cursor: Any) -> list[tuple[Any, ...]]:
    return list(cursor.fetchall())


def wallet_entries(*, user_id: int) -> QuerySet[JournalEntry]:
    """Entries touching the player's accounts, newest first, with ONLY their own postings.

    A duel settlement has other players' postings in the same entry; they are not loaded.
    """
    own = Posting.objects.filter(account__owner_id=user_id).select_related("account")
    return (
        JournalEntry.objects.filter(
            pk__in=Posting.objects.filter(account__owner_id=user_id).values("entry_id")
        )
        .order_by("-id")
        .prefetch_related(Prefetch("postings", queryset=own, to_attr="own_postings"))
    )


def withdrawal_list(
    *, user_id: int | None = None, status: str | None = None
) -> QuerySet[WithdrawalRequest]:
    """Withdrawal requests, newest first; a player passes their own id."""
    rows = WithdrawalRequest.objects.order_by("-id")
    if user_id is not None:
        rows = rows.filter(user_id=user_id)
    if status:
        rows = rows.filter(status=status)
    return rows


def receivable_list() -> QuerySet[AccountBalance]:
    """Staff: receivable accounts with a debt (balance < 0 means the player owes)."""
    return (
        AccountBalance.objects.filter(account_type=AccountType.RECEIVABLE, balance__lt=0)
        .select_related("account__owner")
        .order_by("balance")
    )
