"""Round money: stakes into a round's escrow, settlement, duel pots, voids.

These run INSIDE the caller's transaction (the round service's durable one): they never open
a transaction themselves. `ledger.services` re-exports them and adds durable wrappers.

Design: one escrow account per round ("round_escrow:<round_ref>"). A stake moves money from
the player's available account into the round's escrow; settlement empties the escrow into
returns, the fee, and (house-banked rule sets only) the house bankroll. After settlement the
escrow is zero, so "the round's money" is always exactly the postings that name the round.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any, Literal

from django.db.models import Sum

from casino.platform.errors import ConflictError
from ledger import posting
from ledger.idempotency import fingerprint, key_reused_error
from ledger.models import Account, AccountType, EntryKind, EscrowState, JournalEntry, Posting

UserRef = Any  # a user instance, or its primary key (int or the engine's str(user.pk))


def user_id_of(user: UserRef) -> int:
    """The primary key of a user given as a model instance, an int or a numeric string."""
    pk = getattr(user, "pk", user)
    if isinstance(pk, bool) or not isinstance(pk, int | str):
        raise TypeError(f"not a user reference: {user!r}")
    return int(pk)


def round_reference(round_ref: str) -> str:
    return f"round:{round_ref}"


def _require_positive(amount_micro: int, what: str) -> None:
    if isinstance(amount_micro, bool) or not isinstance(amount_micro, int) or amount_micro <= 0:
        raise posting.LedgerInvariantError(
            f"{what} must be a positive int of micro-USDC.", code="amount_invalid"
        )


def _require_open(row: posting.LockedAccount, round_ref: str) -> None:
    if row.state != EscrowState.OPEN:
        raise ConflictError(
            f"Round {round_ref} is already {row.state}; its money can no longer move.",
            code=f"round_already_{row.state}",
            extra={"round": round_ref},
        )


def round_escrow_open(*, round_ref: str) -> None:
    """Create a new round's (empty, open) escrow, so its first stake takes the one-statement
    path (inside the caller's transaction; a no-op when the escrow exists)."""
    posting.create_accounts([posting.round_escrow(round_ref)])


def round_stake_post(
    *,
    round_ref: str,
    user: UserRef,
    amount_micro: int,
    kind: Literal["bet", "insurance"] = "bet",
    idempotency_key: str,
) -> JournalEntry:
    """Move a stake (a box bet, a double, a split or insurance) into the round's escrow.

    Same key and same arguments again: returns the first entry and moves nothing.
    """
    if kind not in (EntryKind.BET, EntryKind.INSURANCE):
        raise posting.LedgerInvariantError(f"not a stake kind: {kind}", code="kind_invalid")
    _require_positive(amount_micro, "a stake")
    user_id = user_id_of(user)
    player = posting.player_available(user_id)
    escrow = posting.round_escrow(round_ref)
    entry_fingerprint = fingerprint(
        {
            "op": "round_stake",
            "round": round_ref,
            "user": user_id,
            "amount": amount_micro,
            "kind": kind,
        }
    )
    legs = {player.key: -amount_micro, escrow.key: amount_micro}
    reference = round_reference(round_ref)
    fast = posting.transfer_fast(
        kind=kind,
        reference=reference,
        idempotency_key=idempotency_key,
        entry_fingerprint=entry_fingerprint,
        legs=legs,
        open_escrow_key=escrow.key,
    )
    if fast is not None:
        return fast
    # The general path: creates a new round's escrow, explains a shortfall, replays a key.
    rows = posting.lock_accounts([player, escrow])
    if rows[escrow.key].state != EscrowState.OPEN:
        existing = posting.find_entry(idempotency_key, entry_fingerprint)
        if existing is not None:
            return existing
        _require_open(rows[escrow.key], round_ref)
    return posting.post(
        kind=kind,
        reference=reference,
        idempotency_key=idempotency_key,
        entry_fingerprint=entry_fingerprint,
        legs=legs,
        rows=rows,
    )


def _sum_by_user(items: Sequence[tuple[UserRef, int]], what: str) -> dict[int, int]:
    totals: dict[int, int] = defaultdict(int)
    for user, amount in items:
        if isinstance(amount, bool) or not isinstance(amount, int) or amount < 0:
            raise posting.LedgerInvariantError(f"{what} must be ints >= 0.", code="amount_invalid")
        totals[user_id_of(user)] += amount
    return {uid: amount for uid, amount in totals.items() if amount}


def round_settle_post(
    *,
    round_ref: str,
    returns: Sequence[tuple[UserRef, int]],
    fee_micro: int = 0,
    house_banked: bool,
    idempotency_key: str,
    refunds: Sequence[tuple[UserRef, int]] = (),
    defer_house: bool = False,
) -> list[JournalEntry]:
    """Empty the round's escrow: gross returns to players, the fee, the house's difference.

    `returns` are gross amounts (stake included) per player; `refunds` are push refunds,
    posted as their own "refund" entry. House-banked: the house bankroll takes what is left
    in escrow, or pays what returns exceed it. Not house-banked (duel): returns + refunds +
    fee must equal the pot exactly, else nothing is posted and a 500 is raised.
    Entries: "refund", "fee", "payout" (each only if non-empty), keys "<key>:<kind>".

    `defer_house`: the house accounts' rows are not locked here; their balance changes are
    queued (`posting.post`) and go out with the caller's last write before its commit (the
    round service sends them with its `rawsql.flush`). Every settlement moves those two rows,
    so holding their locks from here to the commit would serialize every table's settlement
    on them. A house bankroll that may not go negative and has to pay is locked here as before.
    """
    if isinstance(fee_micro, bool) or not isinstance(fee_micro, int) or fee_micro < 0:
        raise posting.LedgerInvariantError("the fee must be an int >= 0.", code="amount_invalid")
    payouts = _sum_by_user(returns, "returns")
    pushes = _sum_by_user(refunds, "refunds")
    escrow = posting.round_escrow(round_ref)
    players = {uid: posting.player_available(uid) for uid in {*payouts, *pushes}}
    specs = [escrow, *players.values()]
    house = [posting.HOUSE_FEE_REVENUE]
    if house_banked:
        house.append(posting.HOUSE_BANKROLL)
    entry_fingerprint = fingerprint(
        {
            "op": "round_settle",
            "round": round_ref,
            "returns": sorted(payouts.items()),
            "refunds": sorted(pushes.items()),
            "fee": fee_micro,
            "house_banked": house_banked,
        }
    )
    if defer_house:
        rows = posting.lock_accounts(specs, unlocked=house)
    else:
        rows = posting.lock_accounts([*specs, *house])
    keys = {kind: f"{idempotency_key}:{kind}" for kind in ("refund", "fee", "payout")}
    escrow_row = rows[escrow.key]
    # A settlement closes the escrow in the same transaction, so an open escrow means no
    # settlement was posted yet: only a closed one can have entries under these keys.
    if escrow_row.state != EscrowState.OPEN:
        existing = list(
            JournalEntry.objects.filter(idempotency_key__in=keys.values()).order_by("id")
        )
        if existing:
            if any(e.fingerprint != entry_fingerprint for e in existing):
                raise key_reused_error(idempotency_key)
            return existing
    _require_open(escrow_row, round_ref)
    pot = escrow_row.balance
    house_share = pot - sum(payouts.values()) - sum(pushes.values()) - fee_micro
    if not house_banked and house_share != 0:
        raise posting.LedgerInvariantError(
            "Returns plus fee must equal the pot exactly in a player-banked round.",
            code="pot_mismatch",
            extra={"round": round_ref, "pot": pot, "unaccounted": house_share},
        )
    bankroll = rows.get(posting.HOUSE_BANKROLL.key)
    if bankroll and not bankroll.locked and house_share < 0 and not bankroll.may_go_negative:
        rows.update(posting.lock_accounts(house))  # the house pays: check it (both, in order)
    reference = round_reference(round_ref)
    entries: list[JournalEntry] = []

    def emit(kind: str, legs: dict[str, int], close: bool = False) -> None:
        if any(legs.values()):
            entries.append(
                posting.post(
                    kind=kind,
                    reference=reference,
                    idempotency_key=keys[kind],
                    entry_fingerprint=entry_fingerprint,
                    legs=legs,
                    rows=rows,
                    close=(escrow.key, EscrowState.SETTLED) if close else None,
                )
            )

    emit(
        EntryKind.REFUND,
        {escrow.key: -sum(pushes.values()), **{players[u].key: a for u, a in pushes.items()}},
    )
    emit(EntryKind.FEE, {escrow.key: -fee_micro, posting.HOUSE_FEE_REVENUE.key: fee_micro})
    payout_legs = {players[u].key: a for u, a in payouts.items()}
    payout_legs[escrow.key] = -(sum(payouts.values()) + house_share)
    if house_banked:
        payout_legs[posting.HOUSE_BANKROLL.key] = house_share
    # The payout closes the escrow in its own statement when it moves the escrow's money.
    closes = bool(payout_legs[escrow.key])
    emit(EntryKind.PAYOUT, payout_legs, close=closes)
    if escrow_row.balance != 0:
        raise posting.LedgerInvariantError(
            "The escrow is not empty after settlement.", code="escrow_not_empty"
        )
    if not closes or escrow_row.state != EscrowState.SETTLED:
        posting.escrow_state_set(escrow_row, EscrowState.SETTLED)
    return entries


def _round_nets(reference: str) -> dict[int, int]:
    """Net amount per account id over every entry of this round so far."""
    return {
        row["account_id"]: row["net"]
        for row in Posting.objects.filter(entry__reference=reference)
        .values("account_id")
        .annotate(net=Sum("amount"))
    }


def round_void_post(*, round_ref: str, idempotency_key: str) -> JournalEntry | None:
    """Void a round: one "void_reversal" entry undoes every stake, payout and fee of it.
    The reversal is the exact negation of the round's net postings per account, so every
    stake is refunded and every payout reversed, with a new entry. Where a player no longer
    has the winnings to give back, their available balance goes to zero and the shortfall is
    posted to their receivable account (staff see it). A second void is refused (409
    `round_already_voided`) unless it repeats the first one's idempotency key. Returns None
    when the round never moved money (the escrow is still marked voided).
    """
    reference = round_reference(round_ref)
    escrow = posting.round_escrow(round_ref)
    entry_fingerprint = fingerprint({"op": "round_void", "round": round_ref})
    for _attempt in range(3):
        nets = _round_nets(reference)
        specs = _void_specs(escrow, nets)
        rows = posting.lock_accounts(specs)
        # Under the locks, re-read: a stake that slipped in before we locked is included.
        locked_nets = _round_nets(reference)
        if set(locked_nets) <= {row.account_id for row in rows.values()}:
            break
    else:  # pragma: no cover - only under a storm of new accounts in one round
        raise ConflictError("The round kept changing; try again.", code="round_busy")
    prior = JournalEntry.objects.filter(kind=EntryKind.VOID_REVERSAL, reference=reference).first()
    if prior is not None:
        if prior.idempotency_key == idempotency_key and prior.fingerprint == entry_fingerprint:
            return prior
        raise ConflictError(
            f"Round {round_ref} is already voided.",
            code="round_already_voided",
            extra={"round": round_ref, "entry": prior.pk},
        )
    escrow_row = rows[escrow.key]
    if escrow_row.state == EscrowState.VOIDED:
        raise ConflictError(
            f"Round {round_ref} is already voided.",
            code="round_already_voided",
            extra={"round": round_ref},
        )
    legs = _void_legs(rows, locked_nets)
    entry = None
    if any(legs.values()):
        entry = posting.post(
            kind=EntryKind.VOID_REVERSAL,
            reference=reference,
            idempotency_key=idempotency_key,
            entry_fingerprint=entry_fingerprint,
            legs=legs,
            rows=rows,
        )
    posting.escrow_state_set(escrow_row, EscrowState.VOIDED)
    return entry


def _void_specs(escrow: posting.AccountSpec, nets: dict[int, int]) -> list[posting.AccountSpec]:
    specs = [escrow]
    for account in Account.objects.filter(pk__in=list(nets)):
        specs.append(
            posting.AccountSpec(account.key, account.type, account.owner_id, account.round_ref)
        )
        if account.type == AccountType.PLAYER_AVAILABLE and account.owner_id is not None:
            specs.append(posting.receivable(account.owner_id))
    return specs


def _void_legs(rows: dict[str, posting.LockedAccount], nets: dict[int, int]) -> dict[str, int]:
    by_id = {row.account_id: (key, row) for key, row in rows.items()}
    legs: dict[str, int] = defaultdict(int)
    for account_id, net in nets.items():
        key, row = by_id[account_id]
        reversal = -net
        if row.account_type == AccountType.PLAYER_AVAILABLE and row.balance + reversal < 0:
            # The winnings are gone: take what is there, book the rest as owed.
            shortfall = -(row.balance + reversal)
            reversal = -row.balance
            owner = row.owner_id
            assert owner is not None
            legs[posting.receivable(owner).key] -= shortfall
        legs[key] += reversal
    return dict(legs)
