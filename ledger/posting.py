"""The posting core: account addressing, locking in ascending id order, and writing entries.

Everything here runs inside the caller's transaction (it never opens one): the public
services in `ledger/services.py` own the durable transaction. Nothing else writes postings
or balances.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import connection
from django.utils import timezone

from casino.platform import rawsql
from casino.platform.errors import ApplicationError
from fairness import transparency
from ledger.idempotency import key_reused_error
from ledger.models import (
    NEGATIVE_CAPABLE_TYPES,
    AccountType,
    JournalEntry,
)
from ledger.money import format_amount


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

# The accounts every player's money passes through (one row each, shared by all tables): they
# are locked after every other row, so a transaction holds them as briefly as it can, and a
# round's settlement may leave their balance update to the end of its transaction (`post`'s
# deferred legs). Every lock in this module follows that order: other rows in ascending id,
# then these in ascending id, so two transactions never wait on each other in a cycle.
HOT_TYPES = (AccountType.HOUSE_BANKROLL, AccountType.HOUSE_FEE_REVENUE, AccountType.EXTERNAL)
_LOCK_ORDER = (
    "ORDER BY b.account_type IN ("
    + ", ".join(f"'{t.value}'" for t in HOT_TYPES)
    + "), b.account_id"
)


def may_go_negative(account_type: str) -> bool:
    """Whether this account type may go below zero under the current configuration."""
    allowed: list[str] = settings.LEDGER_NEGATIVE_BALANCE_TYPES
    return account_type in NEGATIVE_CAPABLE_TYPES and account_type in allowed


@dataclass
class LockedAccount:
    """One account's balance row, read under its row lock (the caller's transaction)."""

    key: str
    account_id: int
    account_type: str
    owner_id: int | None
    may_go_negative: bool
    balance: int
    state: str
    # False: read without its lock (a hot account, see HOT_TYPES); `post` writes its postings
    # and queues its balance change for the end of the transaction; `balance` is only a guide.
    locked: bool = True


_ROW_COLUMNS = (
    "SELECT a.key, b.account_id, b.account_type, a.owner_id, b.may_go_negative, b.balance, "
    "b.state FROM ledger_accountbalance b JOIN ledger_account a ON a.id = b.account_id "
)


def _lock_query(keys: list[str], unlocked: Sequence[str] = ()) -> dict[str, LockedAccount]:
    """The balance rows of `keys` under their locks, and of `unlocked` without (one statement)."""
    placeholders = ", ".join(["%s"] * len(keys))
    # ORDER BY before FOR UPDATE: PostgreSQL locks rows as they come out of the sort, so every
    # transaction takes its locks in the same order (_LOCK_ORDER: no deadlocks). SQLite has no
    # row locks: its IMMEDIATE transactions serialize writers instead.
    if not connection.features.has_select_for_update_of:
        rows = rawsql.query(
            f"{_ROW_COLUMNS}WHERE a.key IN ({', '.join(['%s'] * (len(keys) + len(unlocked)))})",
            [*keys, *unlocked],
            _locked_rows,
        )
        for key in unlocked:
            if key in rows:
                rows[key].locked = False
        return rows
    locked = f"{_ROW_COLUMNS}WHERE a.key IN ({placeholders}) {_LOCK_ORDER} FOR UPDATE OF b"
    if not unlocked:
        return rawsql.query(locked, keys, _locked_rows)
    sql = (
        f"WITH l AS ({locked}) SELECT *, true FROM l UNION ALL "
        f"{_ROW_COLUMNS.replace('b.state ', 'b.state, false ')}"
        f"WHERE a.key IN ({', '.join(['%s'] * len(unlocked))})"
    )
    return rawsql.query(sql, [*keys, *unlocked], _locked_rows)


def _locked_rows(cursor: Any) -> dict[str, LockedAccount]:
    return {
        row[0]: LockedAccount(
            row[0], row[1], row[2], row[3], bool(row[4]), row[5], row[6], len(row) < 8 or row[7]
        )
        for row in cursor.fetchall()
    }


def _create_accounts(specs: Iterable[AccountSpec]) -> None:
    specs = list(specs)
    now = connection.ops.adapt_datetimefield_value(timezone.now())
    # Concurrent creators of one account: the loser's insert is a no-op, not an error.
    accounts = (
        "INSERT INTO ledger_account (key, type, owner_id, round_ref, currency, created_at) "
        "VALUES "
        + ", ".join(["(%s, %s, %s, %s, 'USDC', %s)"] * len(specs))
        + " ON CONFLICT (key) DO NOTHING"
    )
    account_params = [v for s in specs for v in (s.key, str(s.type), s.owner_id, s.round_ref, now)]
    cases = " ".join(["WHEN %s THEN %s"] * len(specs))
    keys = ", ".join(["%s"] * len(specs))
    balances = (
        "INSERT INTO ledger_accountbalance (account_id, account_type, may_go_negative, "
        f"balance, state) SELECT id, type, CASE key {cases} END, 0, 'open' FROM "
    )
    balance_params = [v for s in specs for v in (s.key, may_go_negative(s.type))]
    existing = f"ledger_account WHERE key IN ({keys})"
    conflict = " ON CONFLICT (account_id) DO NOTHING"
    if connection.vendor == "postgresql":
        # One statement: the accounts this statement creates come from its RETURNING (its
        # other parts do not see them), the ones that existed from the table.
        rawsql.execute(
            f"WITH a AS ({accounts} RETURNING id, type, key) {balances}"
            f"(SELECT id, type, key FROM a UNION ALL SELECT id, type, key FROM {existing}) n"
            + conflict,
            [*account_params, *balance_params, *(s.key for s in specs)],
        )
        return
    rawsql.execute(accounts, account_params)
    rawsql.execute(balances + existing + conflict, [*balance_params, *(s.key for s in specs)])


def create_accounts(specs: Iterable[AccountSpec]) -> None:
    """Create these accounts and their balance rows unless they exist (no locks taken)."""
    _create_accounts(specs)


def lock_accounts(
    specs: Iterable[AccountSpec], unlocked: Iterable[AccountSpec] = ()
) -> dict[str, LockedAccount]:
    """Lock the balance rows of these accounts (creating missing ones), hot accounts last
    (_LOCK_ORDER); read those of `unlocked` (hot accounts whose balance change `post` defers)
    without their locks."""
    by_key = {s.key: s for s in specs}
    keys = sorted(by_key)
    later = {s.key: s for s in unlocked if s.key not in by_key}
    unlocked_keys = sorted(later)
    rows = _lock_query(keys, unlocked_keys)
    missing = [spec for key, spec in {**by_key, **later}.items() if key not in rows]
    if missing:
        _create_accounts(missing)
        rows = _lock_query(keys, unlocked_keys)
    return rows


_HOT_BALANCES = "ledger.hot_balances"  # rawsql.later_collect's key: account id -> delta


def _hot_update(deltas: dict[int, int]) -> tuple[str, list[Any]] | None:
    """The deferred balance changes of hot accounts as one UPDATE (their locks in order)."""
    lines = sorted((account_id, delta) for account_id, delta in deltas.items() if delta)
    if not lines:
        return None
    ids = ", ".join(["%s"] * len(lines))
    params: list[Any] = [v for line in lines for v in line]
    if connection.vendor == "postgresql":
        cases = " ".join(["WHEN %s THEN %s::bigint"] * len(lines))
        # The rows are locked in order by the sub-select, as _lock_query would, before the
        # UPDATE changes them (an UPDATE alone locks in whatever order its plan reads).
        return (
            f"UPDATE ledger_accountbalance b SET balance = b.balance + CASE b.account_id {cases} "
            "END FROM (SELECT account_id FROM ledger_accountbalance "
            f"WHERE account_id IN ({ids}) ORDER BY account_id FOR UPDATE) l "
            "WHERE b.account_id = l.account_id",
            [*params, *(account_id for account_id, _ in lines)],
        )
    cases = " ".join(["WHEN %s THEN %s"] * len(lines))
    return (
        f"UPDATE ledger_accountbalance SET balance = balance + CASE account_id {cases} END "
        f"WHERE account_id IN ({ids})",
        [*params, *(account_id for account_id, _ in lines)],
    )


def escrow_state_set(row: LockedAccount, state: str) -> None:
    """Move a locked round escrow to `state` (settled, voided)."""
    rawsql.execute(
        "UPDATE ledger_accountbalance SET state = %s WHERE account_id = %s", [state, row.account_id]
    )
    row.state = state


def find_entry(idempotency_key: str, entry_fingerprint: str) -> JournalEntry | None:
    """The entry already posted under this key, or None; another fingerprint is a 422."""
    found = rawsql.fetch_one(
        "SELECT id, fingerprint FROM ledger_journalentry WHERE idempotency_key = %s",
        [idempotency_key],
    )
    if found is None:
        return None
    if found[1] != entry_fingerprint:
        raise key_reused_error(idempotency_key)
    return JournalEntry.objects.get(pk=found[0])


def insufficient_funds(row: LockedAccount, needed: int) -> ApplicationError:
    """A 409: the request was well formed, the balance does not allow it now (the game API
    answers the same code with the same status)."""

    return ApplicationError(
        "Insufficient funds for this operation.",
        code="insufficient_funds",
        status_code=409,
        extra={
            "account_type": row.account_type,
            "balance": format_amount(row.balance),
            "needed": format_amount(needed),
        },
    )


_ENTRY_INSERT = (
    "INSERT INTO ledger_journalentry "
    "(kind, reference, idempotency_key, fingerprint, created_by_id, created_at) "
    "VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (idempotency_key) DO NOTHING RETURNING id"
)


def _write_postgres(
    entry_row: list[Any], lines: list[tuple[int, int, bool]], close: tuple[int, str] | None
) -> int | None:
    """One statement (one round trip): the entry, its postings and the balance updates (of the
    lines marked True), and the escrow's new state (`close`: its account id and state) if asked.

    Returns None when the key already exists (nothing written: the CTEs join on the entry).
    """
    values = ", ".join(["(%s::bigint, %s::bigint, %s::boolean)"] * len(lines))
    # One UPDATE per row and statement: the state goes with the balance, not in a CTE of its own.
    state = ", state = CASE WHEN b.account_id = %s THEN %s ELSE b.state END" if close else ""
    sql = (
        f"WITH e AS ({_ENTRY_INSERT}), lines(account_id, amount, now) AS (VALUES {values}), "
        "p AS (INSERT INTO ledger_posting (entry_id, account_id, amount) "
        "SELECT e.id, l.account_id, l.amount FROM e, lines l), "
        f"u AS (UPDATE ledger_accountbalance b SET balance = b.balance + l.amount{state} "
        "FROM e, lines l WHERE b.account_id = l.account_id AND l.now) "
        "SELECT id FROM e"
    )
    params = [*entry_row, *(v for line in lines for v in line), *(close or ())]
    found = rawsql.fetch_one(sql, params)
    return None if found is None else int(found[0])


def _write_portable(entry_row: list[Any], lines: list[tuple[int, int, bool]]) -> int | None:
    """The same writes as three statements (SQLite has no data-modifying CTEs)."""
    with connection.cursor() as cursor:
        cursor.execute(_ENTRY_INSERT, entry_row)
        found = cursor.fetchone()
        if found is None:
            return None
        entry_id = int(found[0])
        cursor.execute(
            "INSERT INTO ledger_posting (entry_id, account_id, amount) VALUES "
            + ", ".join(["(%s, %s, %s)"] * len(lines)),
            [v for account_id, amount, _ in lines for v in (entry_id, account_id, amount)],
        )
        now = [(account_id, amount) for account_id, amount, update in lines if update]
        if now:
            cursor.execute(
                "UPDATE ledger_accountbalance SET balance = balance + CASE account_id "
                + " ".join(["WHEN %s THEN %s"] * len(now))
                + " END WHERE account_id IN ("
                + ", ".join(["%s"] * len(now))
                + ")",
                [v for line in now for v in line] + [account_id for account_id, _ in now],
            )
    return entry_id


def post(
    *,
    kind: str,
    reference: str,
    idempotency_key: str,
    entry_fingerprint: str,
    legs: Mapping[str, int],
    rows: Mapping[str, LockedAccount],
    created_by_id: int | None = None,
    close: tuple[str, str] | None = None,
) -> JournalEntry:
    """Write one balanced entry and move the stored balances of already locked `rows`.

    `legs` maps account key to signed micro-USDC; zero legs are dropped. The in-memory
    `rows` are updated too, so a caller may post several entries under one set of locks.
    A row read without its lock (`locked` False, a hot account) takes only credits, or debits
    where it may go negative (nothing to check): its balance change is queued
    (`rawsql.later_collect`) and goes out with the transaction's last write, which the caller
    must send (`rawsql.flush` at the latest).
    If `idempotency_key` was used already, nothing is written and the first entry is
    returned (or 422 `idempotency_key_reused` when its fingerprint differs). `close`: (a
    round escrow's key among the legs, its new state), set as `escrow_state_set` would (on
    PostgreSQL in the entry's own statement).
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
        if not row.locked:
            if amount < 0 and not row.may_go_negative:
                raise LedgerInvariantError(
                    "A debit that needs a balance check must lock its account.",
                    code="unlocked_debit",
                    extra={"account": key},
                )
            continue
        if row.balance + amount < 0 and not row.may_go_negative:
            # A retry of an entry that already went through is a replay, not a shortfall.
            existing = find_entry(idempotency_key, entry_fingerprint)
            if existing is not None:
                return existing
            raise insufficient_funds(row, -amount)
    created_at = timezone.now()
    entry_row = [
        str(kind),
        reference,
        idempotency_key,
        entry_fingerprint,
        created_by_id,
        connection.ops.adapt_datetimefield_value(created_at),
    ]
    lines = [(rows[key].account_id, amount, rows[key].locked) for key, amount in nonzero.items()]
    closing = None if close is None else (rows[close[0]].account_id, close[1])
    # Raw SQL on the hot path: the ORM's per-statement Python cost was most of a transfer.
    if connection.vendor == "postgresql" and (close is None or close[0] in nonzero):
        entry_id = _write_postgres(entry_row, lines, closing)
        closed = entry_id is not None
    else:
        entry_id, closed = _write_portable(entry_row, lines), False
    if close is not None:
        if not closed:
            escrow_state_set(rows[close[0]], close[1])
        rows[close[0]].state = close[1]
    if entry_id is None:
        existing = find_entry(idempotency_key, entry_fingerprint)
        assert existing is not None
        return existing
    transparency.queue_journal_entry(
        entry_id=entry_id, kind=kind, reference=reference, created_at=created_at, postings=nonzero
    )
    deferred: dict[int, int] | None = None
    for key, amount in nonzero.items():
        row = rows[key]
        row.balance += amount
        if not row.locked:
            if deferred is None:
                deferred = rawsql.later_collect(_HOT_BALANCES, _hot_update)
            deferred[row.account_id] = deferred.get(row.account_id, 0) + amount
    return _entry(
        entry_id, kind, reference, idempotency_key, entry_fingerprint, created_by_id, created_at
    )


def _entry(
    pk: int,
    kind: str,
    reference: str,
    idempotency_key: str,
    entry_fingerprint: str,
    created_by_id: int | None,
    created_at: Any,
) -> JournalEntry:
    """The written entry's instance, as the ORM would read it back (its row's values)."""
    row = [pk, kind, reference, idempotency_key, entry_fingerprint, created_by_id, created_at]
    entry = rawsql.instance(JournalEntry, row, using=connection.alias)
    assert entry is not None
    return entry


def transfer_fast(
    *,
    kind: str,
    reference: str,
    idempotency_key: str,
    entry_fingerprint: str,
    legs: Mapping[str, int],
    open_escrow_key: str | None = None,
) -> JournalEntry | None:
    """PostgreSQL only: lock, check and write one entry in ONE statement (one round trip).

    Locks the balance rows in _LOCK_ORDER (FOR UPDATE in the first CTE), checks that every
    account exists, none that may not go negative would, and `open_escrow_key` (if given)
    is still open; only then inserts the entry (ON CONFLICT on the key: nothing) with its
    postings and balance updates. Returns the new entry, or None when anything else
    happened (missing account, shortfall, closed round, repeated key): nothing was written
    and the caller takes the general path, which explains or replays under the same locks.
    """
    if connection.vendor != "postgresql":
        return None
    keys = sorted(legs)
    created_at = timezone.now()
    values = ", ".join(["(%s::text, %s::bigint)"] * len(keys))
    sql = (
        "WITH locked AS (SELECT b.account_id, a.key, b.balance, b.may_go_negative, b.state "
        "FROM ledger_accountbalance b JOIN ledger_account a ON a.id = b.account_id "
        f"WHERE a.key IN ({', '.join(['%s'] * len(keys))}) "
        f"{_LOCK_ORDER} FOR UPDATE OF b), "
        f"lines(key, amount) AS (VALUES {values}), "
        "j AS (SELECT l.account_id, x.amount, l.balance, l.may_go_negative, l.state, l.key "
        "FROM locked l JOIN lines x ON x.key = l.key), "
        "ok AS (SELECT count(*) = %s "
        "AND bool_and(balance + amount >= 0 OR may_go_negative) "
        "AND bool_and(state = 'open' OR key <> %s) AS ok FROM j), "
        "e AS (INSERT INTO ledger_journalentry "
        "(kind, reference, idempotency_key, fingerprint, created_by_id, created_at) "
        "SELECT %s, %s, %s, %s, NULL, %s WHERE (SELECT ok FROM ok) "
        "ON CONFLICT (idempotency_key) DO NOTHING RETURNING id), "
        "p AS (INSERT INTO ledger_posting (entry_id, account_id, amount) "
        "SELECT e.id, j.account_id, j.amount FROM e, j), "
        "u AS (UPDATE ledger_accountbalance b SET balance = b.balance + j.amount "
        "FROM e, j WHERE b.account_id = j.account_id) "
        "SELECT id FROM e"
    )
    params: list[Any] = [*keys]
    params += [v for key in keys for v in (key, legs[key])]
    params += [len(keys), open_escrow_key or ""]
    params += [str(kind), reference, idempotency_key, entry_fingerprint, created_at]
    found = rawsql.fetch_one(sql, params)
    if found is None:
        return None
    entry_id = int(found[0])
    transparency.queue_journal_entry(
        entry_id=entry_id, kind=kind, reference=reference, created_at=created_at, postings=legs
    )
    return _entry(entry_id, kind, reference, idempotency_key, entry_fingerprint, None, created_at)
