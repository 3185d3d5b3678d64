"""Every write to the ledger. Nothing else may touch postings or balances.

Naming: `<entity>_<action>` opens the one durable transaction; `<entity>_<action>_post` does
the same work inside the caller's transaction (the round service, the idempotent request
wrapper). Locks are always taken in one order by `posting.lock_accounts`: accounts in
ascending id, the shared house and external accounts last (`posting.HOT_TYPES`).
"""

from __future__ import annotations

from typing import Literal

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from casino.platform.errors import ApplicationError, ConflictError
from ledger import posting
from ledger.destinations import destination_clean
from ledger.idempotency import fingerprint, key_reused_error
from ledger.models import (
    EntryKind,
    JournalEntry,
    WithdrawalRequest,
    WithdrawalStatus,
    withdrawal_reference,
)
from ledger.rounds import (
    UserRef,
    round_settle_post,
    round_stake_post,
    round_void_post,
    user_id_of,
)

__all__ = [
    "four_eyes_check",
    "round_settle",
    "round_settle_post",
    "round_stake",
    "round_stake_post",
    "round_void",
    "round_void_post",
    "wallet_deposit",
    "wallet_deposit_post",
    "wallet_faucet_post",
    "withdrawal_cancel_post",
    "withdrawal_complete_post",
    "withdrawal_request",
    "withdrawal_request_post",
]


def wallet_deposit_post(
    *,
    user: UserRef,
    amount_micro: int,
    idempotency_key: str,
    source: Literal["staff", "faucet", "api"] = "staff",
    created_by: UserRef | None = None,
    entry_fingerprint: str | None = None,
) -> JournalEntry:
    """Credit a player's available balance from the external account (no chain involved)."""
    if isinstance(amount_micro, bool) or not isinstance(amount_micro, int) or amount_micro <= 0:
        raise posting.LedgerInvariantError("a deposit must be > 0", code="amount_invalid")
    user_id = user_id_of(user)
    player = posting.player_available(user_id)
    fp = entry_fingerprint or fingerprint(
        {"op": "deposit", "user": user_id, "amount": amount_micro, "source": source}
    )
    rows = posting.lock_accounts([player, posting.EXTERNAL])
    existing = posting.find_entry(idempotency_key, fp)
    if existing is not None:
        return existing
    return posting.post(
        kind=EntryKind.DEPOSIT,
        reference=f"deposit:{source}:{user_id}",
        idempotency_key=idempotency_key,
        entry_fingerprint=fp,
        legs={posting.EXTERNAL.key: -amount_micro, player.key: amount_micro},
        rows=rows,
        created_by_id=None if created_by is None else user_id_of(created_by),
    )


def wallet_deposit(
    *,
    user: UserRef,
    amount_micro: int,
    idempotency_key: str,
    source: Literal["staff", "faucet", "api"] = "staff",
    created_by: UserRef | None = None,
) -> JournalEntry:
    """Durable `wallet_deposit_post`."""
    with transaction.atomic(durable=True):
        return wallet_deposit_post(
            user=user,
            amount_micro=amount_micro,
            idempotency_key=idempotency_key,
            source=source,
            created_by=created_by,
        )


def wallet_faucet_post(
    *, user: UserRef, amount_micro: int, idempotency_key: str, entry_fingerprint: str | None = None
) -> JournalEntry:
    """Demo faucet: a player credits themself, only when settings.DEMO_MODE is on."""
    if not settings.DEMO_MODE:
        raise ApplicationError(
            "The faucet exists only in demo mode.", code="faucet_disabled", status_code=403
        )
    cap: int = settings.LEDGER_FAUCET_MAX_MICRO
    if amount_micro > cap:
        raise ApplicationError(
            "The faucet gives at most the configured amount per request.",
            code="faucet_amount_too_large",
            extra={"max_micro": cap},
        )
    return wallet_deposit_post(
        user=user,
        amount_micro=amount_micro,
        idempotency_key=idempotency_key,
        source="faucet",
        created_by=user,
        entry_fingerprint=entry_fingerprint,
    )


def withdrawal_request_post(
    *,
    user: UserRef,
    amount_micro: int,
    idempotency_key: str,
    entry_fingerprint: str | None = None,
    network: str = "",
    address: str = "",
) -> WithdrawalRequest:
    """Move funds from available to pending_withdrawal and open a request for staff.

    `network` and `address` (both or neither) are the destination, checked for the network's
    format (`ledger.destinations`); staff cannot complete a request without one. The request's
    entry is referenced `withdrawal:<id>`, as its completion or cancellation will be.
    """
    if isinstance(amount_micro, bool) or not isinstance(amount_micro, int) or amount_micro <= 0:
        raise posting.LedgerInvariantError("a withdrawal must be > 0", code="amount_invalid")
    if network or address:
        network, address = destination_clean(network, address)
    user_id = user_id_of(user)
    available = posting.player_available(user_id)
    pending = posting.pending_withdrawal(user_id)
    asked: dict[str, object] = {"op": "withdrawal_request", "user": user_id, "amount": amount_micro}
    if network:  # without a destination: the fingerprint of the requests made before them
        asked.update(network=network, address=address)
    fp = entry_fingerprint or fingerprint(asked)
    rows = posting.lock_accounts([available, pending])
    existing = posting.find_entry(idempotency_key, fp)
    if existing is not None:
        return WithdrawalRequest.objects.get(request_entry=existing)
    if rows[available.key].balance < amount_micro:  # before the row: nothing to undo
        raise posting.insufficient_funds(rows[available.key], amount_micro)
    withdrawal = WithdrawalRequest.objects.create(
        user_id=user_id, amount_micro=amount_micro, network=network, address=address
    )
    withdrawal.request_entry = posting.post(
        kind=EntryKind.WITHDRAWAL_REQUESTED,
        reference=withdrawal_reference(withdrawal.pk),
        idempotency_key=idempotency_key,
        entry_fingerprint=fp,
        legs={available.key: -amount_micro, pending.key: amount_micro},
        rows=rows,
        created_by_id=user_id,
    )
    withdrawal.save(update_fields=["request_entry"])
    return withdrawal


def withdrawal_request(
    *,
    user: UserRef,
    amount_micro: int,
    idempotency_key: str,
    network: str = "",
    address: str = "",
) -> WithdrawalRequest:
    """Durable `withdrawal_request_post`."""
    with transaction.atomic(durable=True):
        return withdrawal_request_post(
            user=user,
            amount_micro=amount_micro,
            idempotency_key=idempotency_key,
            network=network,
            address=address,
        )


def _withdrawal_resolve(
    *, withdrawal_id: int, staff: UserRef, idempotency_key: str, complete: bool
) -> WithdrawalRequest:
    kind = EntryKind.WITHDRAWAL_COMPLETED if complete else EntryKind.WITHDRAWAL_CANCELLED
    fp = fingerprint({"op": kind, "withdrawal": withdrawal_id})
    # The request row first, then accounts: every resolver takes locks in the same order.
    withdrawal = WithdrawalRequest.objects.select_for_update().filter(pk=withdrawal_id).first()
    if withdrawal is None:
        raise ApplicationError("No such withdrawal request.", code="not_found", status_code=404)
    if complete:
        four_eyes_check(withdrawal, staff)
    if withdrawal.status != WithdrawalStatus.PENDING:
        resolution = withdrawal.resolution_entry
        if resolution is not None and resolution.idempotency_key == idempotency_key:
            if resolution.fingerprint != fp:
                raise key_reused_error(idempotency_key)
            return withdrawal
        raise ConflictError(
            f"This withdrawal is already {withdrawal.status}.",
            code="withdrawal_not_pending",
            extra={"status": withdrawal.status},
        )
    pending = posting.pending_withdrawal(withdrawal.user_id)
    target = posting.EXTERNAL if complete else posting.player_available(withdrawal.user_id)
    rows = posting.lock_accounts([pending, target])
    if posting.find_entry(idempotency_key, fp) is not None:
        raise key_reused_error(idempotency_key)
    entry = posting.post(
        kind=kind,
        reference=withdrawal_reference(withdrawal.pk),
        idempotency_key=idempotency_key,
        entry_fingerprint=fp,
        legs={pending.key: -withdrawal.amount_micro, target.key: withdrawal.amount_micro},
        rows=rows,
        created_by_id=user_id_of(staff),
    )
    withdrawal.status = WithdrawalStatus.COMPLETED if complete else WithdrawalStatus.CANCELLED
    withdrawal.resolution_entry = entry
    withdrawal.resolved_by_id = user_id_of(staff)
    withdrawal.resolved_at = timezone.now()
    withdrawal.save(update_fields=["status", "resolution_entry", "resolved_by", "resolved_at"])
    return withdrawal


def withdrawal_requester_ids(withdrawal: WithdrawalRequest) -> set[int]:
    """Who asked for this withdrawal: its player and whoever created its request entry."""
    ids = {withdrawal.user_id}
    if withdrawal.request_entry_id is not None:
        created_by = (
            JournalEntry.objects.filter(pk=withdrawal.request_entry_id)
            .values_list("created_by_id", flat=True)
            .first()
        )
        if created_by is not None:
            ids.add(created_by)
    return ids


def four_eyes_check(withdrawal: WithdrawalRequest, staff: UserRef) -> None:
    """Refuse (403 `four_eyes`) an approval by the person who requested the withdrawal."""
    if user_id_of(staff) in withdrawal_requester_ids(withdrawal):
        raise ApplicationError(
            f"Four eyes: you requested withdrawal {withdrawal.reference}, so you cannot "
            "approve it. Another staff member must complete it.",
            code="four_eyes",
            status_code=403,
            extra={"withdrawal_id": withdrawal.pk},
        )


def withdrawal_complete_post(
    *, withdrawal_id: int, staff: UserRef, idempotency_key: str
) -> WithdrawalRequest:
    """Staff: the funds left (off-chain, by hand): pending_withdrawal -> external.

    The approver must not be the requester (`four_eyes_check`)."""
    return _withdrawal_resolve(
        withdrawal_id=withdrawal_id, staff=staff, idempotency_key=idempotency_key, complete=True
    )


def withdrawal_cancel_post(
    *, withdrawal_id: int, staff: UserRef, idempotency_key: str
) -> WithdrawalRequest:
    """Staff: give the funds back: pending_withdrawal -> player available."""
    return _withdrawal_resolve(
        withdrawal_id=withdrawal_id, staff=staff, idempotency_key=idempotency_key, complete=False
    )


def round_void(*, round_ref: str, idempotency_key: str) -> JournalEntry | None:
    """Durable `round_void_post` (the round service normally calls the _post form)."""
    with transaction.atomic(durable=True):
        return round_void_post(round_ref=round_ref, idempotency_key=idempotency_key)


def round_stake(
    *,
    round_ref: str,
    user: UserRef,
    amount_micro: int,
    kind: Literal["bet", "insurance"] = "bet",
    idempotency_key: str,
) -> JournalEntry:
    """Durable `round_stake_post` (tests, benchmarks, tools)."""
    with transaction.atomic(durable=True):
        return round_stake_post(
            round_ref=round_ref,
            user=user,
            amount_micro=amount_micro,
            kind=kind,
            idempotency_key=idempotency_key,
        )


def round_settle(
    *,
    round_ref: str,
    returns: list[tuple[UserRef, int]],
    fee_micro: int = 0,
    house_banked: bool,
    idempotency_key: str,
    refunds: list[tuple[UserRef, int]] | None = None,
) -> list[JournalEntry]:
    """Durable `round_settle_post` (tests, benchmarks, tools)."""
    with transaction.atomic(durable=True):
        return round_settle_post(
            round_ref=round_ref,
            returns=returns,
            fee_micro=fee_micro,
            house_banked=house_banked,
            idempotency_key=idempotency_key,
            refunds=refunds or (),
        )
