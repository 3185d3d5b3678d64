"""The invariants the simulation checks after every step.

- the ledger balances and sums to zero (every entry balances, stored balances equal their
  postings, all accounts sum to zero: `ledger.reconcile`'s built-in checks);
- no available balance is negative (no account that may not go negative is, and no player's
  available balance at all);
- replay equals the projections: every round touched by the step is refolded from its events
  and compared with its `Round`/`RoundPlayer` rows (`casino.rounds.projections.rebuild_round`);
- every round touched by the step passes `audit` (finished rounds: the whole fairness-v1
  verification, receipt, chain and ledger legs; open rounds: hash chain, replay, ledger legs);
- no round is stuck past its deadline once the sweep ran;
- no client received a hidden card (`casino.client.leakcheck` on every HTTP body and WS message;
  recorded by the driver as it receives them).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.db.models import Max, Sum
from django.db.models.functions import Coalesce

from casino.client.leakcheck import message_leaks
from casino.eventstore.models import StoredEvent
from casino.models import Round, RoundStatus
from casino.rounds.audit import ChainWalker, audit
from casino.rounds.projections import rebuild_round
from ledger.models import AccountBalance, AccountType, Posting
from ledger.reconcile import (
    Problem,
    _negative_balances,
    _stored_balances,
    _unbalanced_entries,
)


class Checker:
    """Incremental checks: each step looks only at the events appended since the last one."""

    def __init__(self) -> None:
        self.last_position = StoredEvent.objects.aggregate(p=Max("position"))["p"] or 0
        self.walker = ChainWalker()
        self.audited = 0

    def touched_rounds(self) -> list[str]:
        """Round streams with events appended since the previous call, in append order."""
        rows = list(
            StoredEvent.objects.filter(position__gt=self.last_position)
            .order_by("position")
            .values_list("position", "stream_id")
        )
        if rows:
            self.last_position = rows[-1][0]
        streams = list(dict.fromkeys(stream for _, stream in rows))
        rounds = set(
            StoredEvent.objects.filter(
                stream_id__in=streams, version=1, type="RoundOpened"
            ).values_list("stream_id", flat=True)
        )
        return [s for s in streams if s in rounds]  # not seed chains or review streams

    def ledger(self) -> list[str]:

        problems: list[Problem] = _unbalanced_entries() + _stored_balances()
        problems += _negative_balances()
        total_postings = Posting.objects.aggregate(t=Coalesce(Sum("amount"), 0))["t"]
        total_balances = AccountBalance.objects.aggregate(t=Coalesce(Sum("balance"), 0))["t"]
        out = [f"ledger {p.check}: {p.message}" for p in problems]
        if total_postings or total_balances:
            out.append(
                f"ledger sum_zero: accounts sum to {total_balances} "
                f"(postings {total_postings}), not 0"
            )
        negative = AccountBalance.objects.filter(
            account_type=AccountType.PLAYER_AVAILABLE, balance__lt=0
        ).values_list("account__key", "balance")
        out += [f"ledger: available balance of {key} is negative: {bal}" for key, bal in negative]
        return out

    def rounds(self, round_ids: Iterable[str]) -> list[str]:
        """Projection against replay, and `audit`, for each round."""
        ids = list(round_ids)
        out: list[str] = []
        for round_id in ids:
            out += [f"projection: {p}" for p in rebuild_round(round_id, write=False)]
        if ids:
            self.audited += len(ids)
            for report in audit(ids, checks=(None, self.walker)):
                out += [f"audit round {report.round_id}: {p}" for p in report.problems]
        return out

    def stuck(self, now_ms: int) -> list[str]:
        """Rounds still open past their deadline (call right after the sweep ran)."""
        rows = Round.objects.filter(status=RoundStatus.OPEN, deadline_ms__lte=now_ms).values_list(
            "id", "phase", "deadline_ms"
        )
        return [
            f"stuck: round {rid} in phase {phase} is past its deadline {deadline} "
            f"(now {now_ms}) after the sweep"
            for rid, phase, deadline in rows
        ]


def leaks(body: Any, viewer_id: str | None, where: str) -> list[str]:
    """Hidden cards or seeds in what a client received."""
    return [f"leak in {where}: {p}" for p in message_leaks(body, viewer_id)]
