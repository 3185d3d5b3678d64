"""Ledger services: deposits, withdrawals, round stakes, settlement and voids."""

from __future__ import annotations

import pytest
from django.db import transaction
from django.test import override_settings

from casino.platform import rawsql
from casino.platform.errors import ApplicationError
from ledger import services
from ledger.models import EntryKind, JournalEntry, WithdrawalStatus
from tests.ledger.factories import assert_ledger_ok, available, balance, fund, make_user

pytestmark = pytest.mark.django_db

USDC = 1_000_000


def test_deposit_is_idempotent_by_key() -> None:
    user = make_user()
    first = services.wallet_deposit(user=user, amount_micro=5 * USDC, idempotency_key="d1")
    again = services.wallet_deposit(user=user, amount_micro=5 * USDC, idempotency_key="d1")
    assert again.pk == first.pk
    assert available(user) == 5 * USDC
    with pytest.raises(ApplicationError) as caught:
        services.wallet_deposit(user=user, amount_micro=6 * USDC, idempotency_key="d1")
    assert (caught.value.code, caught.value.status_code) == ("idempotency_key_reused", 422)
    assert available(user) == 5 * USDC
    assert_ledger_ok()


def test_withdrawal_request_complete_and_cancel() -> None:
    user, staff = make_user(), make_user(staff=True)
    fund(user, 10 * USDC)
    done = services.withdrawal_request(user=user, amount_micro=4 * USDC, idempotency_key="w1")
    assert (available(user), balance(f"pending_withdrawal:{user.pk}")) == (6 * USDC, 4 * USDC)
    with pytest.raises(ApplicationError) as caught:
        services.withdrawal_request(user=user, amount_micro=7 * USDC, idempotency_key="w2")
    assert caught.value.code == "insufficient_funds"
    assert available(user) == 6 * USDC
    with transaction.atomic(durable=True):
        services.withdrawal_complete_post(withdrawal_id=done.pk, staff=staff, idempotency_key="c1")
    done.refresh_from_db()
    assert done.status == WithdrawalStatus.COMPLETED
    assert balance(f"pending_withdrawal:{user.pk}") == 0
    with transaction.atomic(durable=True):  # the same key replays
        services.withdrawal_complete_post(withdrawal_id=done.pk, staff=staff, idempotency_key="c1")
    with pytest.raises(ApplicationError) as caught, transaction.atomic(durable=True):
        services.withdrawal_cancel_post(withdrawal_id=done.pk, staff=staff, idempotency_key="x")
    assert (caught.value.code, caught.value.status_code) == ("withdrawal_not_pending", 409)

    second = services.withdrawal_request(user=user, amount_micro=6 * USDC, idempotency_key="w3")
    with transaction.atomic(durable=True):
        services.withdrawal_cancel_post(withdrawal_id=second.pk, staff=staff, idempotency_key="c2")
    assert available(user) == 6 * USDC
    assert balance("external:usdc") == -6 * USDC
    assert_ledger_ok()


def test_stake_needs_funds_and_changes_nothing_when_short() -> None:
    user = make_user()
    fund(user, 1 * USDC)
    with pytest.raises(ApplicationError) as caught:
        services.round_stake(
            round_ref="r-short", user=user, amount_micro=2 * USDC, idempotency_key="b"
        )
    assert caught.value.code == "insufficient_funds"
    assert available(user) == 1 * USDC
    assert not JournalEntry.objects.filter(reference="round:r-short").exists()
    assert_ledger_ok()


def test_house_banked_settlement_win_lose_push_insurance() -> None:
    win, lose, push = make_user(), make_user(), make_user()
    for user in (win, lose, push):
        fund(user, 100 * USDC)
    ref = "r-banked"
    services.round_stake(round_ref=ref, user=win, amount_micro=10 * USDC, idempotency_key="s1")
    services.round_stake(round_ref=ref, user=win, amount_micro=10 * USDC, idempotency_key="s1d")
    services.round_stake(
        round_ref=ref, user=win, amount_micro=5 * USDC, kind="insurance", idempotency_key="s1i"
    )
    services.round_stake(round_ref=ref, user=lose, amount_micro=10 * USDC, idempotency_key="s2")
    services.round_stake(round_ref=ref, user=push, amount_micro=10 * USDC, idempotency_key="s3")
    assert balance(f"round_escrow:{ref}") == 45 * USDC
    # win doubled to 20 and won (40 back), insurance lost; push gets 10 back.
    entries = services.round_settle(
        round_ref=ref,
        returns=[(win, 40 * USDC)],
        refunds=[(push, 10 * USDC)],
        house_banked=True,
        idempotency_key="settle",
    )
    assert [e.kind for e in entries] == [EntryKind.REFUND, EntryKind.PAYOUT]
    assert available(win) == 115 * USDC
    assert available(lose) == 90 * USDC
    assert available(push) == 100 * USDC
    assert balance(f"round_escrow:{ref}") == 0
    assert balance("house_bankroll") == -5 * USDC
    again = services.round_settle(
        round_ref=ref,
        returns=[(win, 40 * USDC)],
        refunds=[(push, 10 * USDC)],
        house_banked=True,
        idempotency_key="settle",
    )
    assert [e.pk for e in again] == [e.pk for e in entries]
    with pytest.raises(ApplicationError) as caught:
        services.round_stake(round_ref=ref, user=lose, amount_micro=USDC, idempotency_key="late")
    assert caught.value.code == "round_already_settled"
    assert_ledger_ok()


def test_player_banked_pot_must_balance_exactly() -> None:
    a, b = make_user(), make_user()
    fund(a, 10 * USDC)
    fund(b, 10 * USDC)
    for user, key in ((a, "a"), (b, "b")):
        services.round_stake(round_ref="duel-x", user=user, amount_micro=USDC, idempotency_key=key)
    with pytest.raises(ApplicationError) as caught:
        services.round_settle(
            round_ref="duel-x",
            returns=[(a, 1_940_000)],
            fee_micro=59_999,
            house_banked=False,
            idempotency_key="bad",
        )
    assert caught.value.code == "pot_mismatch"
    assert balance("round_escrow:duel-x") == 2 * USDC
    services.round_settle(
        round_ref="duel-x",
        returns=[(a, 1_940_000)],
        fee_micro=60_000,
        house_banked=False,
        idempotency_key="ok",
    )
    assert (available(a), available(b), balance("house_fee_revenue") >= 60_000) == (
        10_940_000,
        9 * USDC,
        True,
    )
    assert_ledger_ok()


def test_void_before_settlement_refunds_every_stake() -> None:
    a = make_user()
    fund(a, 10 * USDC)
    services.round_stake(round_ref="v0", user=a, amount_micro=3 * USDC, idempotency_key="1")
    services.round_stake(round_ref="v0", user=a, amount_micro=2 * USDC, idempotency_key="2")
    entry = services.round_void(round_ref="v0", idempotency_key="void")
    assert entry is not None and entry.kind == EntryKind.VOID_REVERSAL
    assert available(a) == 10 * USDC
    assert balance("round_escrow:v0") == 0
    with pytest.raises(ApplicationError) as caught:
        services.round_stake(round_ref="v0", user=a, amount_micro=USDC, idempotency_key="3")
    assert caught.value.code == "round_already_voided"
    assert_ledger_ok()


def test_void_after_settlement_reverses_everything_once() -> None:
    a, b = make_user(), make_user()
    fund(a, 10 * USDC)
    fund(b, 10 * USDC)
    fee_before, house_before = balance("house_fee_revenue"), balance("house_bankroll")
    for user, key in ((a, "a"), (b, "b")):
        services.round_stake(round_ref="v1", user=user, amount_micro=5 * USDC, idempotency_key=key)
    services.round_settle(
        round_ref="v1",
        returns=[(a, 9_700_000)],
        fee_micro=300_000,
        house_banked=False,
        idempotency_key="settle",
    )
    assert available(a) == 14_700_000
    first = services.round_void(round_ref="v1", idempotency_key="void-1")
    assert (available(a), available(b)) == (10 * USDC, 10 * USDC)
    assert (balance("house_fee_revenue"), balance("house_bankroll")) == (fee_before, house_before)
    assert services.round_void(round_ref="v1", idempotency_key="void-1") == first
    with pytest.raises(ApplicationError) as caught:
        services.round_void(round_ref="v1", idempotency_key="void-2")
    assert (caught.value.code, caught.value.status_code) == ("round_already_voided", 409)
    assert JournalEntry.objects.filter(reference="round:v1", kind="void_reversal").count() == 1
    assert_ledger_ok()


def test_void_after_winnings_withdrawn_books_a_receivable() -> None:
    winner, loser = make_user(), make_user()
    fund(winner, 10 * USDC)
    fund(loser, 10 * USDC)
    for user, key in ((winner, "w"), (loser, "l")):
        services.round_stake(round_ref="v2", user=user, amount_micro=10 * USDC, idempotency_key=key)
    services.round_settle(
        round_ref="v2",
        returns=[(winner, 19_400_000)],
        fee_micro=600_000,
        house_banked=False,
        idempotency_key="settle",
    )
    services.withdrawal_request(user=winner, amount_micro=19_000_000, idempotency_key="out")
    assert available(winner) == 400_000
    services.round_void(round_ref="v2", idempotency_key="void")
    # The winner owes back 9.4 (19.4 won - 10 staked); 0.4 was there, 9.0 is owed.
    assert available(winner) == 0
    assert balance(f"receivable:{winner.pk}") == -9 * USDC
    assert available(loser) == 10 * USDC
    assert_ledger_ok()


@override_settings(DEMO_MODE=False)
def test_faucet_only_in_demo_mode() -> None:
    user = make_user()
    with pytest.raises(ApplicationError) as caught, transaction.atomic(durable=True):
        services.wallet_faucet_post(user=user, amount_micro=USDC, idempotency_key="f")
    assert (caught.value.code, caught.value.status_code) == ("faucet_disabled", 403)
    assert available(user) == 0


def test_stake_replays_by_key_even_when_funds_or_round_changed() -> None:
    user = make_user()
    fund(user, 2 * USDC)
    first = services.round_stake(
        round_ref="rp", user=user, amount_micro=2 * USDC, idempotency_key="k"
    )
    # Balance is now 0: a retry is still the same bet, not an insufficient_funds error.
    again = services.round_stake(
        round_ref="rp", user=user, amount_micro=2 * USDC, idempotency_key="k"
    )
    assert again.pk == first.pk
    with pytest.raises(ApplicationError) as caught:
        services.round_stake(round_ref="rp", user=user, amount_micro=USDC, idempotency_key="k")
    assert caught.value.code == "idempotency_key_reused"
    fund(user, USDC)
    with pytest.raises(ApplicationError) as caught:
        services.round_stake(round_ref="rp", user=user, amount_micro=USDC, idempotency_key="k")
    assert caught.value.code == "idempotency_key_reused"
    services.round_settle(round_ref="rp", returns=[], house_banked=True, idempotency_key="s")
    late = services.round_stake(
        round_ref="rp", user=user, amount_micro=2 * USDC, idempotency_key="k"
    )
    assert late.pk == first.pk
    assert available(user) == USDC
    assert_ledger_ok()


@pytest.mark.postgres
def test_a_bet_into_an_open_round_is_one_statement_on_postgres() -> None:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    user = make_user()
    fund(user, 5 * USDC)
    services.round_stake(round_ref="q", user=user, amount_micro=USDC, idempotency_key="q1")
    # As the round service posts it: in a queued block, whose queued writes (the bet's
    # transparency-log leaf) go out with the caller's last write, counted apart.
    with (
        CaptureQueriesContext(connection) as queries,
        transaction.atomic(durable=True),
        rawsql.queued_block(),
    ):
        services.round_stake_post(round_ref="q", user=user, amount_micro=USDC, idempotency_key="q2")
        statements = [q["sql"] for q in queries.captured_queries if "SAVEPOINT" not in q["sql"]]
    assert len(statements) == 1, statements
    assert available(user) == 3 * USDC
    assert_ledger_ok()


def test_creating_accounts_adds_balance_rows_to_new_and_existing_accounts() -> None:
    # One statement on PostgreSQL (two on SQLite): accounts it creates get their balance
    # rows, and so does an account that exists without one; existing rows stay as they are.
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from ledger import posting
    from ledger.models import Account, AccountBalance, AccountType

    user = make_user()
    fund(user, 2 * USDC)
    bare = Account.objects.create(key="round_escrow:bare", type=AccountType.ROUND_ESCROW)
    specs = [
        posting.round_escrow("bare"),
        posting.round_escrow("new"),
        posting.player_available(int(user.pk)),
    ]
    with CaptureQueriesContext(connection) as queries:
        posting.create_accounts(specs)
    assert len(queries) == (1 if connection.vendor == "postgresql" else 2)
    rows = {
        b.account.key: (b.account_type, b.may_go_negative, b.balance, b.state)
        for b in AccountBalance.objects.select_related("account").filter(
            account__key__in=[s.key for s in specs]
        )
    }
    assert rows == {
        "round_escrow:bare": ("round_escrow", False, 0, "open"),
        "round_escrow:new": ("round_escrow", False, 0, "open"),
        f"player_available:{user.pk}": ("player_available", False, 2 * USDC, "open"),
    }
    assert Account.objects.get(key="round_escrow:new").round_ref == "new"
    assert bare.pk == AccountBalance.objects.get(account__key="round_escrow:bare").pk
    assert_ledger_ok()


@pytest.mark.parametrize(
    ("returned", "refunded", "statements"),
    [
        (15 * USDC, 0, 2),  # a win: the lock, then the payout that also closes the escrow
        (0, 10 * USDC, 3),  # a push: the refund empties the escrow, the payout moves nothing
    ],
)
def test_a_settlement_closes_the_escrow_in_its_payout_statement_on_postgres(
    returned: int, refunded: int, statements: int
) -> None:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from ledger.models import AccountBalance

    user = make_user()
    fund(user, 30 * USDC)
    for ref in ("warm-up", "c"):  # the warm-up creates the house's accounts
        services.round_stake(round_ref=ref, user=user, amount_micro=10 * USDC, idempotency_key=ref)
    services.round_settle(round_ref="warm-up", returns=[], house_banked=True, idempotency_key="w")
    # In a queued block, as the round service posts it: the entries' log leaves and the house's
    # deferred balance go out with the caller's last write, not counted here.
    with (
        CaptureQueriesContext(connection) as queries,
        transaction.atomic(durable=True),
        rawsql.queued_block(),
    ):
        services.round_settle_post(
            round_ref="c",
            returns=[(user, returned)] if returned else [],
            refunds=[(user, refunded)] if refunded else [],
            house_banked=True,
            idempotency_key="settle",
        )
        written = [q["sql"] for q in queries.captured_queries if "SAVEPOINT" not in q["sql"]]
    if connection.vendor == "postgresql":
        assert len(written) == statements, [w[:90] for w in written]
    escrow = AccountBalance.objects.get(account__key="round_escrow:c")
    assert (escrow.balance, escrow.state) == (0, "settled")
    assert available(user) == 10 * USDC + returned + refunded
    assert_ledger_ok()


def test_a_posted_entry_is_the_row_the_database_holds() -> None:
    """`post` and `transfer_fast` build the entry they wrote without reading it back."""
    user = make_user()
    fund(user, 30 * USDC)
    entries = [
        services.round_stake(round_ref="e", user=user, amount_micro=USDC, idempotency_key="e1"),
        *services.round_settle(
            round_ref="e", returns=[(user, 2 * USDC)], house_banked=True, idempotency_key="e2"
        ),
    ]
    for entry in entries:
        stored = JournalEntry.objects.get(pk=entry.pk)
        assert {
            f.attname: getattr(entry, f.attname) for f in JournalEntry._meta.concrete_fields
        } == {f.attname: getattr(stored, f.attname) for f in JournalEntry._meta.concrete_fields}
        assert (entry._state.adding, entry._state.db) == (False, stored._state.db)
