"""The house accounts are hot: every settlement moves them. A round service settlement reads
them without their locks and queues their balance change for its transaction's last write
(`round_settle_post(defer_house=True)`), so one table's slow transaction does not hold up
every other table's settlement; every lock follows one order (house and external last)."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from casino.platform import rawsql
from casino.platform.errors import ApplicationError
from ledger import services
from tests.casino.test_round_concurrency import in_parallel
from tests.ledger.factories import assert_ledger_ok, available, balance, fund, make_user

pytestmark = pytest.mark.django_db(transaction=True)

HOUSE = "house_bankroll"
FEES = "house_fee_revenue"
USDC = 1_000_000


def _staked(user: Any, ref: str, amount: int = 10 * USDC) -> None:
    services.round_stake(round_ref=ref, user=user, amount_micro=amount, idempotency_key=ref)


def _settle_post(ref: str, returns: list[tuple[Any, int]], fee: int = 0) -> None:
    """A round service style settlement inside the caller's transaction: deferred house legs."""
    services.round_settle_post(
        round_ref=ref,
        returns=returns,
        fee_micro=fee,
        house_banked=True,
        idempotency_key=f"settle-{ref}",
        defer_house=True,
    )


def _settle_deferred(ref: str, returns: list[tuple[Any, int]], fee: int = 0) -> None:
    """The same in its own transaction, the house legs sent by the final flush."""
    with transaction.atomic(durable=True):
        _settle_post(ref, returns, fee)
        rawsql.flush()


def test_deferred_house_legs_of_two_settlements_in_one_transaction_both_count() -> None:
    alice, bob = make_user(), make_user()
    fund(alice, 20 * USDC)
    fund(bob, 20 * USDC)
    _staked(alice, "a")
    _staked(bob, "b")
    with CaptureQueriesContext(connection) as queries, transaction.atomic(durable=True):
        # Alice loses 10 (a fee of 1 of it), Bob's 10 returns 15: the house nets 10 - 1 - 5.
        _settle_post("a", [], USDC)
        _settle_post("b", [(bob, 15 * USDC)])
        assert (balance(HOUSE), balance(FEES)) == (0, 0)  # not sent yet
        rawsql.flush()
    house_updates = [
        q["sql"] for q in queries.captured_queries if "balance + CASE b.account_id" in q["sql"]
    ]
    if connection.vendor == "postgresql":
        # One UPDATE for both settlements (two in one statement would lose one of them).
        assert len(house_updates) == 1
    assert (balance(HOUSE), balance(FEES)) == (4 * USDC, USDC)
    assert (available(alice), available(bob)) == (10 * USDC, 25 * USDC)
    assert_ledger_ok()


def test_a_failed_settlement_sends_no_house_change() -> None:
    alice = make_user()
    fund(alice, 20 * USDC)
    _staked(alice, "a")
    with pytest.raises(RuntimeError), transaction.atomic(durable=True):
        services.round_settle_post(
            round_ref="a", returns=[], house_banked=True, idempotency_key="s", defer_house=True
        )
        rawsql.discard_queued()  # what the round service does on the way out of a failure
        raise RuntimeError("the command failed after its settlement")
    _settle_deferred("a", [(alice, 10 * USDC)])  # a push later: nothing stale is sent with it
    assert (balance(HOUSE), balance(FEES), available(alice)) == (0, 0, 20 * USDC)
    assert_ledger_ok()


@pytest.mark.parametrize("house_pays", [False, True])
def test_a_bankroll_that_may_not_go_negative_is_locked_and_checked(
    settings: Any, house_pays: bool
) -> None:
    settings.LEDGER_NEGATIVE_BALANCE_TYPES = ["external", "receivable"]
    alice = make_user()
    fund(alice, 20 * USDC)
    _staked(alice, "a")
    if not house_pays:  # the house takes 10: a credit, deferred as for any bankroll
        _settle_deferred("a", [])
        assert (balance(HOUSE), available(alice)) == (10 * USDC, 10 * USDC)
        assert_ledger_ok()
        return
    with pytest.raises(ApplicationError) as refused:
        _settle_deferred("a", [(alice, 25 * USDC)])  # a 15 win: the empty house cannot pay 15
    assert refused.value.code == "insufficient_funds"
    assert refused.value.extra["account_type"] == HOUSE
    assert (balance(HOUSE), available(alice), balance("round_escrow:a")) == (
        0,
        10 * USDC,
        10 * USDC,
    )
    assert_ledger_ok()


@pytest.mark.postgres
@pytest.mark.parametrize("defer_house", [True, False])
def test_a_paused_settlement_does_not_hold_up_another_tables_settlement(
    defer_house: bool,
) -> None:
    alice, bob = make_user(), make_user()
    fund(alice, 30 * USDC)
    fund(bob, 20 * USDC)
    _staked(alice, "a")
    _staked(bob, "b")
    # The house's accounts exist once any round has settled (a first one creates them, and
    # a second creator waits for the first one's insert to commit).
    _staked(alice, "warm-up")
    _settle_deferred("warm-up", [])
    inside, release, bob_done = threading.Event(), threading.Event(), threading.Event()

    def settle(ref: str, pause: bool) -> None:
        with transaction.atomic(durable=True):
            services.round_settle_post(
                round_ref=ref,
                returns=[],
                house_banked=True,
                idempotency_key=f"settle-{ref}",
                defer_house=defer_house,
            )
            if pause:  # Alice's transaction goes on with the rest of its command
                inside.set()
                release.wait(timeout=30)
            rawsql.flush()
        if not pause:
            bob_done.set()

    def alice_settles() -> None:
        settle("a", pause=True)

    def bob_settles() -> None:
        assert inside.wait(timeout=30)
        settle("b", pause=False)

    runner = threading.Thread(target=lambda: in_parallel([alice_settles, bob_settles]))
    runner.start()
    # Deferred: Bob settles while Alice's transaction is still open. Locked up front (the
    # durable wrappers' way): Bob waits on the house rows until Alice commits.
    finished_while_paused = bob_done.wait(timeout=3 if defer_house else 1)
    release.set()
    runner.join(timeout=60)
    assert finished_while_paused is defer_house
    assert bob_done.is_set()
    assert (balance(HOUSE), available(alice), available(bob)) == (30 * USDC, 10 * USDC, 10 * USDC)
    assert_ledger_ok()


@pytest.mark.postgres
def test_settlements_deposits_and_voids_of_the_same_players_at_once_never_deadlock() -> None:
    """Settlements lock escrow and player rows and the house last; deposits lock the player
    and then the external account; voids lock everything in the same order."""
    users = [make_user() for _ in range(6)]
    for i, user in enumerate(users):
        fund(user, 50 * USDC)
        _staked(user, f"open-{i}")
        _staked(user, f"done-{i}")
        _settle_deferred(f"done-{i}", [(user, 20 * USDC)])  # a 10 win, voided below
    actions: list[Callable[[], object]] = []
    for i, user in enumerate(users):
        actions.append(lambda i=i: _settle_deferred(f"open-{i}", []))
        actions.append(
            lambda user=user: services.wallet_deposit(
                user=user, amount_micro=5 * USDC, idempotency_key=uuid.uuid4().hex
            )
        )
        actions.append(
            lambda i=i: services.round_void(round_ref=f"done-{i}", idempotency_key=f"v{i}")
        )
    results = in_parallel(actions)
    assert [r for r in results if isinstance(r, Exception)] == []
    # Each player: 50 funded + 5 deposited, 10 lost in "open", "done" voided (stake back).
    assert [available(u) for u in users] == [45 * USDC] * 6
    assert balance(HOUSE) == 6 * 10 * USDC
    assert_ledger_ok()
