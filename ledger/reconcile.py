"""Ledger reconciliation: the checks behind `manage.py reconcile`.

Built-in checks: every entry balances (>= 2 postings summing to zero); every stored balance
equals the sum of its postings; no account that may not go negative is negative; all
accounts together sum to zero; the journal matches the transparency log (each entry's hash
and chain link, fairness/logaudit.py) and the log's stored tree its checkpoint. Other apps
add checks with `register_check` (the round service adds "each round's ledger legs match
its events"):

    from ledger.reconcile import Problem, register_check

    @register_check("round_legs")
    def check_round_legs() -> list[Problem]: ...

A check that walks many items may report `progress(done, total)` as it goes: registered with
`register_check(name, progress=True)`, it is called as `check(progress=...)` (`manage.py
reconcile` draws it on a terminal's stderr, `casino.platform.progress.ProgressBar`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from django.db.models import Count, F, OuterRef, Q, Subquery, Sum
from django.db.models.functions import Coalesce

from fairness.logaudit import log_problems
from ledger.models import Account, AccountBalance, JournalEntry, Posting
from ledger.money import format_amount


@dataclass(frozen=True)
class Problem:
    """One failed check, naming the account (key) or entry it is about."""

    check: str
    message: str
    account: str | None = None
    entry: int | None = None
    details: dict[str, Any] = field(default_factory=dict)


Progress = Callable[[int, int], None]
Check = Callable[..., list[Problem]]
_EXTRA_CHECKS: dict[str, Check] = {}
_REPORTS_PROGRESS: set[str] = set()


def register_check(name: str, *, progress: bool = False) -> Callable[[Check], Check]:
    """Register an extra reconciliation check (run after the built-in ones); with `progress`
    it takes a `progress` keyword (a `Progress` callback, or None)."""

    def decorate(check: Check) -> Check:
        _EXTRA_CHECKS[name] = check
        if progress:
            _REPORTS_PROGRESS.add(name)
        else:
            _REPORTS_PROGRESS.discard(name)
        return check

    return decorate


def _unbalanced_entries() -> list[Problem]:
    rows = (
        JournalEntry.objects.annotate(
            total=Coalesce(Sum("postings__amount"), 0), lines=Count("postings")
        )
        .filter(~Q(total=0) | Q(lines__lt=2))
        .values("id", "kind", "reference", "total", "lines")[:1000]
    )
    return [
        Problem(
            "entry_balanced",
            f"entry {r['id']} ({r['kind']} {r['reference']}) sums to "
            f"{format_amount(r['total'])} USDC over {r['lines']} postings",
            entry=r["id"],
        )
        for r in rows
    ]


def _stored_balances() -> list[Problem]:
    posted = (
        Posting.objects.filter(account_id=OuterRef("account_id"))
        .values("account_id")
        .annotate(total=Sum("amount"))
        .values("total")
    )
    rows = (
        AccountBalance.objects.annotate(posted=Coalesce(Subquery(posted), 0))
        .exclude(balance=F("posted"))
        .values("account__key", "balance", "posted")[:1000]
    )
    problems = [
        Problem(
            "stored_balance",
            f"account {r['account__key']}: stored {format_amount(r['balance'])} USDC != "
            f"postings {format_amount(r['posted'])} USDC",
            account=r["account__key"],
        )
        for r in rows
    ]
    orphans = Account.objects.filter(balance_row__isnull=True).values_list("key", flat=True)
    problems += [
        Problem("stored_balance", f"account {k} has no balance row", account=k) for k in orphans
    ]
    return problems


def _negative_balances() -> list[Problem]:
    rows = AccountBalance.objects.filter(balance__lt=0, may_go_negative=False).values(
        "account__key", "account_type", "balance"
    )
    return [
        Problem(
            "non_negative",
            f"account {r['account__key']} ({r['account_type']}) is negative: "
            f"{format_amount(r['balance'])} USDC",
            account=r["account__key"],
        )
        for r in rows
    ]


@dataclass
class Report:
    ok: bool
    total_micro: int
    accounts: int
    entries: int
    postings: int
    problems: list[Problem]
    checks: list[str]

    def as_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "total_micro": self.total_micro,
            "accounts": self.accounts,
            "entries": self.entries,
            "postings": self.postings,
            "checks": self.checks,
            "problems": [asdict(p) for p in self.problems],
        }


def ledger_reconcile(*, progress: Progress | None = None) -> Report:
    """Run every check (built-in, then registered) and report; reads only. `progress` is
    handed to the registered checks (the round legs: `progress(rounds done, rounds)`)."""
    total_postings = Posting.objects.aggregate(t=Coalesce(Sum("amount"), 0))["t"]
    total_balances = AccountBalance.objects.aggregate(t=Coalesce(Sum("balance"), 0))["t"]
    problems = _unbalanced_entries() + _stored_balances() + _negative_balances()
    if total_postings != 0 or total_balances != 0:
        problems.append(
            Problem(
                "sum_zero",
                f"all accounts sum to {format_amount(total_balances)} USDC (postings "
                f"{format_amount(total_postings)} USDC), not 0",
            )
        )
    # The journal against the transparency log: each entry's hash, its leaf, the chain.
    problems += [Problem(p.check, p.message, entry=p.entry) for p in log_problems()]
    checks = ["entry_balanced", "stored_balance", "non_negative", "sum_zero"]
    checks += ["log_tree", "journal_chain"]
    for name, check in _EXTRA_CHECKS.items():
        checks.append(name)
        problems.extend(check(progress=progress) if name in _REPORTS_PROGRESS else check())
    return Report(
        ok=not problems,
        total_micro=total_balances,
        accounts=Account.objects.count(),
        entries=JournalEntry.objects.count(),
        postings=Posting.objects.count(),
        problems=problems,
        checks=checks,
    )
