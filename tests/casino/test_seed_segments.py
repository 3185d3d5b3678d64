"""Seeds handed out from cached chain segments are the chain's own, at every position."""

from __future__ import annotations

import pytest

from fairness import services
from fairness.chain import create_chain
from fairness.seedcrypto import decrypt_secret

pytestmark = pytest.mark.django_db


def test_every_seed_of_a_chain_is_its_seed_at_that_position() -> None:
    row = services.chain_create(table_id="segments", length=250)  # not a multiple of 100
    chain = create_chain(row.length, head=decrypt_secret(row.head_encrypted))
    assert chain.terminal == row.terminal
    for k in reversed(range(row.length + 1)):  # each segment cached by its first lookup
        assert services._seed_of(row, k) == chain.seed(k), k
    for k in range(row.length + 1):  # and served from the cache
        assert services._seed_of(row, k) == chain.seed(k), k
