"""The posting core: account addressing, locking in ascending id order, and writing entries.

Everything here runs inside the caller's transaction (it never opens one): the public
services in `ledger/services.py` own the durable transaction. Nothing else writes postings
or balances.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import connection
from django.db.models import BigIntegerField, Case, F, Value, When

from casino.errors import ApplicationError
from ledger.models import (
    NEGATIVE_CAPABLE_TYPES,
    Account,
    AccountBalance,
    AccountType,
    JournalEntry,
    Posting,
)


class LedgerInvariantError(ApplicationError):
    """A caller asked for money movements that cannot be right (a bug, never a user error)."""

    status_code = 500


@dataclass(frozen=True)
class AccountSpec:
    """How to find (or create) one account: its unique key plus what a new one looks like."""

    key: str
    type: str
    owner_id: int | None = None
    round_ref: str = ""


def player_available(user_id: int) -> AccountSpec:
    return AccountSpec(f"player_available:{user_id}", AccountType.PLAYER_AVAILABLE, user_id)


def pending_withdrawal(user_id: int) -> AccountSpec:
    return AccountSpec(f"pending_withdrawal:{user_id}", AccountType.PENDING_WITHDRAWAL, user_id)


def receivable(user_id: int) -> AccountSpec:
    return AccountSpec(f"receivable:{user_id}", AccountType.RECEIVABLE, user_id)


def round_escrow(round_ref: str) -> AccountSpec:
    return AccountSpec(f"round_escrow:{round_ref}", AccountType.ROUND_ESCROW, None, round_ref)


HOUSE_BANKROLL = AccountSpec("house_bankroll", AccountType.HOUSE_BANKROLL)
HOUSE_FEE_REVENUE = AccountSpec("house_fee_revenue", AccountType.HOUSE_FEE_REVENUE)
EXTERNAL = AccountSpec("external:usdc", AccountType.EXTERNAL)


def may_go_negative(account_type: str) -> bool:
    """Whether this account type may go below zero under the current configuration."""
    allowed: list[str] = settings.LEDGER_NEGATIVE_BALANCE_TYPES
    return account_type in NEGATIVE_CAPABLE_TYPES and account_type in allowed


def fingerprint(payload: Mapping[str, Any]) -> str:
    """sha256 of the canonical JSON of what a request asked for."""
    canonical = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _lock_query(keys: list[str]) -> dict[str, AccountBalance]:
    rows = (
        AccountBalance.objects.select_related("account")
        .filter(account__key__in=keys)
        .order_by("account_id")
    )
    if connection.features.has_select_for_update:
        # ORDER BY before FOR UPDATE: PostgreSQL locks rows as they come out of the sort,
        # so every transaction takes its locks in ascending account id (no deadlocks).
        rows = rows.select_for_update(of=("self",))
    return {row.account.key: row for row in rows}


def _create_accounts(specs: Iterable[AccountSpec]) -> None:
    specs = list(specs)
    # Concurrent creators of the same account: the loser's insert is a no-op, not an error.
    Account.objects.bulk_create(
        [
            Account(key=s.key, type=s.type, owner_id=s.owner_id, round_ref=s.round_ref)
            for s in specs
        ],
        ignore_conflicts=True,
    )
    ids = dict(Account.objects.filter(key__in=[s.key for s in specs]).values_list("key", "id"))
    AccountBalance.objects.bulk_create(
        [
            AccountBalance(
                account_id=ids[s.key], account_type=s.type, may_go_negative=may_go_negative(s.type)
            )
            for s in specs
        ],
        ignore_conflicts=True,
    )


def lock_accounts(specs: Iterable[AccountSpec]) -> dict[str, AccountBalance]:
    """Lock the balance rows of these accounts (creating missing ones), in ascending id."""
    by_key = {s.key: s for s in specs}
    keys = sorted(by_key)
    rows = _lock_query(keys)
    missing = [by_key[k] for k in keys if k not in rows]
    if missing:
        _create_accounts(missing)
        rows = _lock_query(keys)
    return rows


def find_entry(idempotency_key: str, entry_fingerprint: str) -> JournalEntry | None:
    """The entry already posted under this key, or None; another fingerprint is a 422."""
    entry = JournalEntry.objects.filter(idempotency_key=idempotency_key).first()
    if entry is not None and entry.fingerprint != entry_fingerprint:
        raise key_reused_error(idempotency_key)
    return entry


def key_reused_error(idempotency_key: str) -> ApplicationError:
    return ApplicationError(
        "This Idempotency-Key was already used for a different request.",
        code="idempotency_key_reused",
        status_code=422,
        extra={"idempotency_key": idempotency_key},
    )


def insufficient_funds(row: AccountBalance, needed: int) -> ApplicationError:
    from ledger.money import format_amount

    return ApplicationError(
        "Insufficient funds for this operation.",
        code="insufficient_funds",
        status_code=400,
        extra={
            "account_type": row.account_type,
            "balance": format_amount(row.balance),
            "needed": format_amount(needed),
        },
    )


def post(
    *,
    kind: str,
    reference: str,
    idempotency_key: str,
    entry_fingerprint: str,
    legs: Mapping[str, int],
    rows: Mapping[str, AccountBalance],
    created_by_id: int | None = None,
) -> JournalEntry:
    """Write one balanced entry and move the stored balances of already locked `rows`.

    `legs` maps account key to signed micro-USDC; zero legs are dropped. The in-memory
    `rows` are updated too, so a caller may post several entries under one set of locks.
    """
    nonzero = {key: amount for key, amount in legs.items() if amount != 0}
    if sum(nonzero.values()) != 0 or len(nonzero) < 2:
        raise LedgerInvariantError(
            "A journal entry must have two or more postings summing to zero.",
            code="entry_unbalanced",
            extra={"legs": nonzero},
        )
    for key, amount in nonzero.items():
        row = rows[key]
        if row.balance + amount < 0 and not row.may_go_negative:
            raise insufficient_funds(row, -amount)
    entry = JournalEntry.objects.create(
        kind=kind,
        reference=reference,
        idempotency_key=idempotency_key,
        fingerprint=entry_fingerprint,
        created_by_id=created_by_id,
    )
    Posting.objects.bulk_create(
        [
            Posting(entry=entry, account_id=rows[key].account_id, amount=amount)
            for key, amount in nonzero.items()
        ]
    )
    AccountBalance.objects.filter(pk__in=[rows[key].pk for key in nonzero]).update(
        balance=F("balance")
        + Case(
            *[When(pk=rows[key].pk, then=Value(amount)) for key, amount in nonzero.items()],
            output_field=BigIntegerField(),
        )
    )
    for key, amount in nonzero.items():
        rows[key].balance += amount
    return entry
