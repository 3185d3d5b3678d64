"""Concurrency on PostgreSQL: threads, each with its own database connection."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from django.db import connections
from rest_framework.test import APIClient

from casino.platform.errors import ApplicationError
from ledger import services
from ledger.models import JournalEntry
from tests.ledger.factories import assert_ledger_ok, available, balance, fund, make_user

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

STAKE = 2_500_000


def _in_threads(count: int, work: Callable[[int], Any]) -> list[Any]:
    """Run work(i) in `count` threads released together; each closes its own connection."""
    barrier = threading.Barrier(count)

    def run(i: int) -> Any:
        barrier.wait()
        try:
            return work(i)
        except ApplicationError as exc:
            return exc
        finally:
            connections.close_all()

    with ThreadPoolExecutor(max_workers=count) as pool:
        return list(pool.map(run, range(count)))


def test_fifty_concurrent_bets_from_a_wallet_funded_for_ten() -> None:
    user = make_user()
    fund(user, 10 * STAKE)
    results = _in_threads(
        50,
        lambda i: services.round_stake(
            round_ref=f"conc-{i % 5}", user=user.pk, amount_micro=STAKE, idempotency_key=f"bet-{i}"
        ),
    )
    wins = [r for r in results if isinstance(r, JournalEntry)]
    losses = [r for r in results if isinstance(r, ApplicationError)]
    assert len(wins) == 10
    assert len(losses) == 40
    assert {e.code for e in losses} == {"insufficient_funds"}
    assert available(user) == 0
    assert sum(balance(f"round_escrow:conc-{i}") for i in range(5)) == 10 * STAKE
    assert_ledger_ok()


DESTINATION = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"  # EIP-55's own example


def test_concurrent_duplicate_requests_move_money_once() -> None:
    user = make_user()
    fund(user, 10 * STAKE)

    def withdraw(_: int) -> tuple[int, Any]:
        client = APIClient()
        client.force_authenticate(user)
        response = client.post(
            "/api/wallet/withdrawals/",
            {"amount": "2.5", "network": "base", "address": DESTINATION},
            format="json",
            HTTP_IDEMPOTENCY_KEY="same-key",
        )
        return response.status_code, response.json()

    results = _in_threads(8, withdraw)
    created = [body for status, body in results if status == 201]
    conflicts = [body for status, body in results if status == 409]
    assert len(created) + len(conflicts) == 8
    assert created and all(body == created[0] for body in created)
    assert available(user) == 9 * STAKE
    assert balance(f"pending_withdrawal:{user.pk}") == STAKE
    assert_ledger_ok()


def test_concurrent_voids_one_wins() -> None:
    user = make_user()
    fund(user, 10 * STAKE)
    services.round_stake(round_ref="vv", user=user, amount_micro=STAKE, idempotency_key="b")
    results = _in_threads(6, lambda i: services.round_void(round_ref="vv", idempotency_key=f"v{i}"))
    assert sum(isinstance(r, JournalEntry) for r in results) == 1
    assert {r.code for r in results if isinstance(r, ApplicationError)} == {"round_already_voided"}
    assert available(user) == 10 * STAKE
    assert_ledger_ok()
