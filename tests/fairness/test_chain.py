"""Seed chains: creation, walking, and checking a seed against its commitment."""

from __future__ import annotations

import hashlib
import itertools

import pytest

from fairness.chain import (
    create_chain,
    hash_seed,
    new_head,
    seed_at,
    verify_position,
    verify_seed,
    walk,
)

HEAD = hashlib.sha256(b"head").hexdigest()


def test_each_seed_is_the_hex_sha256_of_the_next() -> None:
    chain = create_chain(5, head=HEAD)
    seeds = [chain.seed(k) for k in range(5, -1, -1)]
    assert seeds[0] == HEAD
    for upper, lower in itertools.pairwise(seeds):
        assert lower == hashlib.sha256(upper.encode("ascii")).hexdigest()
    assert chain.terminal == seeds[-1] == seed_at(HEAD, 5, 0)


def test_each_round_seed_verifies_against_its_commitment_and_the_terminal() -> None:
    chain = create_chain(50, head=HEAD)
    for k in (1, 2, 25, 50):
        seed = chain.seed(k)
        assert verify_seed(seed, chain.commitment(k))
        assert verify_position(seed, k, chain.terminal)
    assert chain.commitment(1) == chain.terminal


def test_a_wrong_seed_fails_against_the_commitment() -> None:
    chain = create_chain(10, head=HEAD)
    assert not verify_seed(chain.seed(4), chain.commitment(3))
    assert not verify_seed(new_head(), chain.commitment(3))
    assert not verify_seed(chain.seed(3).upper(), chain.commitment(3))
    assert not verify_seed(chain.seed(3)[:-1], chain.commitment(3))
    assert not verify_position(chain.seed(3), 4, chain.terminal)


def test_walk_composes() -> None:
    assert walk(HEAD, 0) == HEAD
    assert walk(walk(HEAD, 3), 4) == walk(HEAD, 7) == hash_seed(walk(HEAD, 6))
    with pytest.raises(ValueError):
        walk(HEAD, -1)


def test_fresh_heads_are_random_lowercase_hex() -> None:
    heads = {new_head() for _ in range(20)}
    assert len(heads) == 20
    assert all(len(h) == 64 and h == h.lower() for h in heads)


@pytest.mark.parametrize("bad", [0, -1])
def test_chains_are_not_empty(bad: int) -> None:
    with pytest.raises(ValueError):
        create_chain(bad)


def test_a_malformed_head_is_refused() -> None:
    with pytest.raises(ValueError):
        create_chain(3, head="XYZ")
