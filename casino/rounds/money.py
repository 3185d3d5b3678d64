"""A round's money: the ledger postings its events imply, and the check that they match.

Posting: each money event goes through the ledger's round services inside the round
service's transaction, with an idempotency key derived from the round and the event's
version, so the same event can never be posted twice.

Checking (`round_legs_problems`): the engine's `ledger_legs` gives, per event, the money it
moves between abstract accounts (player, round escrow, house, fees). Summed over the round,
that gives a net per account; the ledger's postings referencing the round must give the same
nets. A void's shortfall booked to a player's receivable counts as that player's money.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Final

from django.db import connections

from casino.engine.events import (
    BetPlaced,
    Event,
    HandDoubled,
    HandSplit,
    InsuranceTaken,
    RoundOpened,
    RoundSettled,
    RoundVoided,
)
from casino.engine.evolve import RoundState
from casino.engine.money import FEES, HOUSE, MONEY_EVENTS, NO_MONEY_EVENTS, ROUND, ledger_legs
from casino.engine.rules import DUEL
from casino.eventstore.models import StoredEvent
from ledger.models import Account, AccountType, JournalEntry, Posting
from ledger.money import format_amount
from ledger.rounds import (
    round_escrow_open,
    round_reference,
    round_settle_post,
    round_stake_post,
    round_void_post,
)

# The events `post_legs` posts: those the engine says move money, and RoundOpened (the
# round's escrow). A command that appends none of them has nothing to post, and the round
# service does not call it.
POSTED: Final = (RoundOpened, *MONEY_EVENTS)


def post_legs(
    *, round_id: str, state: RoundState, events: Sequence[Event], stored: Sequence[StoredEvent]
) -> None:
    """Post the ledger entries of freshly appended `events` (aligned with `stored`); only the
    events of `POSTED` post anything."""
    for event, record in zip(events, stored, strict=True):
        key = f"round:{round_id}:v{record.version}"
        if isinstance(event, RoundOpened):
            round_escrow_open(round_ref=round_id)  # the first stake then posts in one statement
        elif isinstance(event, BetPlaced | HandDoubled | HandSplit):
            round_stake_post(
                round_ref=round_id,
                user=event.player_id,
                amount_micro=event.amount,
                kind="bet",
                idempotency_key=key,
            )
        elif isinstance(event, InsuranceTaken):
            round_stake_post(
                round_ref=round_id,
                user=event.player_id,
                amount_micro=event.amount,
                kind="insurance",
                idempotency_key=key,
            )
        elif isinstance(event, RoundSettled):
            _settle(round_id, state, event, key)
        elif isinstance(event, RoundVoided):
            round_void_post(round_ref=round_id, idempotency_key=key)


def _settle(round_id: str, state: RoundState, event: RoundSettled, key: str) -> None:
    returns: list[tuple[str, int]] = []
    refunds: list[tuple[str, int]] = []
    for hand in event.hands:
        if not hand.gross_return:
            continue
        target = refunds if hand.outcome == "push" else returns
        target.append((hand.player_id, hand.gross_return))
    returns.extend((r.player_id, r.gross_return) for r in event.insurance if r.gross_return)
    round_settle_post(
        round_ref=round_id,
        returns=returns,
        refunds=refunds,
        fee_micro=event.fee,
        house_banked=state.rules.kind != DUEL,
        idempotency_key=key,
        defer_house=True,  # the round service's `_queued_writes` sends them before its commit
    )


def expected_nets(events: Iterable[Event]) -> dict[str, int]:
    """Net micro-USDC per abstract account ("player:<id>", round, house, fees) the events imply."""
    nets: dict[str, int] = defaultdict(int)
    for event in events:
        if type(event) in NO_MONEY_EVENTS:  # ledger_legs gives [] for these
            continue
        for leg in ledger_legs(event):
            nets[leg.source] -= leg.amount
            nets[leg.destination] += leg.amount
    return {account: net for account, net in nets.items() if net}


def _abstract_account(account_type: str, owner_id: int | None) -> str:
    if account_type in (AccountType.PLAYER_AVAILABLE, AccountType.RECEIVABLE):
        return f"player:{owner_id}"
    return {
        AccountType.HOUSE_BANKROLL: HOUSE,
        AccountType.HOUSE_FEE_REVENUE: FEES,
    }.get(AccountType(account_type), ROUND)


# _abstract_account of each account type that is not a player's (one dict lookup a row).
_PLAYER_TYPES: Final = frozenset({str(AccountType.PLAYER_AVAILABLE), str(AccountType.RECEIVABLE)})
_ABSTRACT: Final = {
    str(t): _abstract_account(t, None) for t in AccountType if str(t) not in _PLAYER_TYPES
}


def recorded_nets_many(round_ids: Sequence[str]) -> dict[str, dict[str, int]]:
    """Per round: the net micro-USDC per abstract account of its ledger postings (one query)."""
    references = {round_reference(round_id): round_id for round_id in round_ids}
    nets: dict[str, dict[str, int]] = {round_id: defaultdict(int) for round_id in round_ids}
    if references:
        # What Posting.objects.filter(entry__reference__in=...).values("entry__reference",
        # "account__type", "account__owner_id").annotate(net=Sum("amount")) runs, as one raw
        # statement (no queryset to compile, plain rows).
        connection = connections[Posting.objects.db]
        marks = ", ".join(["%s"] * len(references))
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT e.reference, a.type, a.owner_id, SUM(p.amount) "
                f"FROM {Posting._meta.db_table} p "
                f"INNER JOIN {JournalEntry._meta.db_table} e ON p.entry_id = e.id "
                f"INNER JOIN {Account._meta.db_table} a ON p.account_id = a.id "
                f"WHERE e.reference IN ({marks}) GROUP BY 1, 2, 3",
                list(references),
            )
            rows = cursor.fetchall()
        abstract = _ABSTRACT
        for reference, account_type, owner_id, net in rows:
            account = abstract.get(account_type)
            if account is None:
                if account_type in _PLAYER_TYPES:
                    account = f"player:{owner_id}"  # as _abstract_account gives it
                else:  # a type the ledger does not know: _abstract_account's own error
                    account = _abstract_account(account_type, owner_id)
            nets[references[reference]][account] += int(net)
    return {
        round_id: {account: net for account, net in per_round.items() if net}
        for round_id, per_round in nets.items()
    }


def recorded_nets(round_id: str) -> dict[str, int]:
    """Net micro-USDC per abstract account of every ledger posting referencing the round."""
    return recorded_nets_many([round_id])[round_id]


def round_legs_problems(
    round_id: str, events: Iterable[Event], recorded: dict[str, int] | None = None
) -> list[str]:
    """Differences between the ledger's postings for a round and what its events imply."""
    expected = expected_nets(events)
    if recorded is None:
        recorded = recorded_nets(round_id)
    problems = []
    for account in sorted(set(expected) | set(recorded)):
        want, have = expected.get(account, 0), recorded.get(account, 0)
        if want != have:
            problems.append(
                f"ledger legs: {account} should net {format_amount(want)} USDC for this round, "
                f"the ledger has {format_amount(have)} USDC"
            )
    return problems
