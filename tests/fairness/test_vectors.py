"""The published test vectors (tests/fairness/vectors.json, printed in docs/fairness.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from fairness.canonical import canonical_json, event_hash
from fairness.chain import create_chain, verify_position, verify_seed
from fairness.receipt import (
    key_id,
    private_key_from_hex,
    public_key_bytes,
    sign_receipt,
    verify_receipt,
)
from fairness.shoe import FairShoe, RandomStream, shoe_cards
from tests.fairness.gen_vectors import build
from tests.fairness.reference import reference_shoe

ROOT = Path(__file__).resolve().parents[2]
VECTORS: dict[str, Any] = json.loads((ROOT / "tests/fairness/vectors.json").read_text())
SHOES = VECTORS["shoes"]


def test_the_file_is_what_the_generator_writes() -> None:
    assert build() == VECTORS


def test_there_are_at_least_six_shoe_vectors_covering_the_cases() -> None:
    names = " ".join(v["name"] for v in SHOES)
    assert len(SHOES) >= 6
    for needed in ("one participant", "three participants", "nonce 1", "large nonce"):
        assert needed in names
    assert any("|" in v["client_material"] for v in SHOES)
    assert all(len(v["first_20"]) == 20 and len(v["shoe"]) == 416 for v in SHOES)


@pytest.mark.parametrize("vector", SHOES, ids=[v["name"] for v in SHOES])
def test_shoe_vector(vector: dict[str, Any]) -> None:
    seed, material, nonce = vector["server_seed"], vector["client_material"], vector["nonce"]
    stream = RandomStream(seed, material, nonce)
    assert stream.blocks(1).hex() == vector["block0_hex"]
    assert list(RandomStream(seed, material, nonce).words(8)) == vector["first_words"]
    lazy = FairShoe(seed, material, nonce)
    assert [lazy.card_at(p) for p in range(20)] == vector["first_20"]
    assert shoe_cards(seed, material, nonce) == vector["shoe"]
    assert reference_shoe(seed, material, nonce) == vector["shoe"]


def test_the_rejection_vector_really_rejects() -> None:
    vector = next(v for v in SHOES if v["name"] == "rejection sampling")
    m = 416 - 7
    assert vector["first_words"][7] >= (2**32 // m) * m


def test_chain_vector() -> None:
    chain = VECTORS["chain"]
    built = create_chain(chain["length"], head=chain["head"])
    assert built.terminal == chain["terminal"] == chain["seeds"][-1]
    seeds = chain["seeds"]  # s_N ... s_0
    for k in range(1, chain["length"] + 1):
        seed = seeds[chain["length"] - k]
        assert verify_seed(seed, seeds[chain["length"] - k + 1])
        assert verify_position(seed, k, chain["terminal"])
    assert SHOES[0]["server_seed"] == seeds[chain["length"] - 1]  # s_1


def test_event_hash_vector() -> None:
    vector = VECTORS["event_hash"]
    assert canonical_json(vector["body"]).decode() == vector["canonical"]
    assert event_hash(vector["prev_hash"], vector["body"]) == vector["hash"]


def test_receipt_vector() -> None:
    vector = VECTORS["receipt"]
    key = private_key_from_hex(vector["private_key"])
    assert public_key_bytes(key).hex() == vector["public_key"]
    assert key_id(public_key_bytes(key)) == vector["key_id"]
    assert canonical_json(vector["receipt"]).decode() == vector["canonical"]
    assert sign_receipt(vector["receipt"], key) == vector["signature"]  # Ed25519 is deterministic
    assert verify_receipt(vector["receipt"], vector["signature"], vector["public_key"])
