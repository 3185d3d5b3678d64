"""Seed issue under real concurrency (PostgreSQL row locks)."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import transaction

from casino.platform.errors import ConflictError
from fairness import services
from fairness.models import SeedChain
from tests.fairness.factories import race


def _race(table_id: str, workers: int) -> list[Any]:
    def work() -> Any:
        try:
            with transaction.atomic():
                return services.seed_issue(table_id=table_id)
        except ConflictError as exc:
            return exc.code

    return race(work, workers)


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_concurrent_openers_of_a_table_without_a_chain_all_get_a_clear_409() -> None:
    results = _race("race", 4)
    assert results == ["no_chain"] * 4, results  # no round makes the chain it would use
    assert not SeedChain.objects.filter(table_id="race").exists()


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("activated", [False, True])
def test_concurrent_openers_get_one_seed_and_clear_409s(activated: bool) -> None:
    chain = services.chain_create(table_id="race", length=50)
    if activated:  # else the openers race to activate the table's prepared first chain
        SeedChain.objects.filter(pk=chain.pk).update(status="active")
    results = _race("race", 4)
    issued = [r for r in results if isinstance(r, services.IssuedSeed)]
    assert len(issued) == 1 and issued[0].nonce == 1, results
    assert sorted(r for r in results if isinstance(r, str)) == ["previous_round_open"] * 3
    assert SeedChain.objects.filter(table_id="race", status="active").count() == 1
    assert SeedChain.objects.get(table_id="race", status="active").next_index == 2
