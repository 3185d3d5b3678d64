"""The fair shoe: spec conformance, laziness, input validation and the CLI."""

from __future__ import annotations

import hashlib
import hmac
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fairness import shoe as shoe_module
from fairness.shoe import (
    SHOE_SIZE,
    UNSHUFFLED,
    FairnessInputError,
    FairShoe,
    RandomStream,
    card_code,
    first_cards,
    shoe_cards,
)
from tests.fairness.reference import reference_shoe

SEED = hashlib.sha256(b"test").hexdigest()
server_seeds = st.binary(min_size=32, max_size=32).map(bytes.hex)
client_seeds = st.text("abcXYZ019_.-", min_size=1, max_size=64)
client_materials = st.lists(client_seeds, min_size=1, max_size=7).map("|".join)
nonces = st.integers(min_value=1, max_value=10**18)


def test_card_encoding_follows_the_unshuffled_order() -> None:
    assert [card_code(q) for q in (0, 9, 12, 13, 26, 39, 51)] == [
        "AS", "TS", "KS", "AH", "AD", "AC", "KC"
    ]  # fmt: skip
    assert UNSHUFFLED[52] == "AS" and UNSHUFFLED[415] == "KC"
    assert Counter(UNSHUFFLED) == Counter({card: 8 for card in UNSHUFFLED[:52]})


def test_stream_blocks_are_hmac_of_material_nonce_and_counter() -> None:
    stream = RandomStream(SEED, "alice|bob", 7)
    expected = b"".join(
        hmac.new(SEED.encode(), f"alice|bob:7:{c}".encode(), hashlib.sha256).digest()
        for c in range(3)
    )
    assert stream.blocks(3) == expected
    words = RandomStream(SEED, "alice|bob", 7).words(24)
    assert words[0] == int.from_bytes(expected[:4], "big")
    assert words[23] == int.from_bytes(expected[92:96], "big")


def test_uniform_rejects_words_at_or_above_the_bound() -> None:
    stream = RandomStream(SEED, "x", 1)
    stream._words = [2**32 - 1, 2**32 - 2, 5]  # the first two fall in the biased tail for m=3
    stream._next = 0
    assert stream.uniform(3) == 5 % 3
    with pytest.raises(ValueError):
        stream.uniform(0)


@settings(max_examples=60, deadline=None)
@given(server_seeds, client_materials, nonces)
def test_fast_shoe_equals_the_naive_reference(seed: str, material: str, nonce: int) -> None:
    assert shoe_cards(seed, material, nonce) == reference_shoe(seed, material, nonce)


@settings(max_examples=60, deadline=None)
@given(server_seeds, nonces, st.lists(st.integers(0, SHOE_SIZE - 1), min_size=1, max_size=8))
def test_lazy_card_at_in_any_order_equals_the_full_shoe(
    seed: str, nonce: int, positions: list[int]
) -> None:
    full = shoe_cards(seed, "player", nonce)
    lazy = FairShoe(seed, "player", nonce)
    assert [lazy.card_at(p) for p in positions] == [full[p] for p in positions]
    assert lazy.cards() == full
    assert Counter(full) == Counter(UNSHUFFLED)


def test_the_rejection_path_matches_the_reference(monkeypatch: pytest.MonkeyPatch) -> None:
    # Real rejections are rarer than 1e-7 a draw; lowering the bounds forces many of them.
    limits = tuple(((2**31) // m) * m for m in range(SHOE_SIZE, 0, -1))
    monkeypatch.setattr(shoe_module, "_LIMITS", limits)
    got = shoe_cards(SEED, "x", 3)
    stream = RandomStream(SEED, "x", 3)
    expected = list(UNSHUFFLED)
    for i in range(SHOE_SIZE - 1):
        m = SHOE_SIZE - i
        x = stream.next_word()
        while x >= limits[i]:
            x = stream.next_word()
        j = i + x % m
        expected[i], expected[j] = expected[j], expected[i]
    assert got == expected


@settings(max_examples=80, deadline=None)
@given(server_seeds, client_materials, nonces, st.integers(0, shoe_module.FIRST_CARDS_MAX + 8))
def test_first_cards_equal_the_shoe(seed: str, material: str, nonce: int, count: int) -> None:
    assert first_cards(seed, material, nonce, count) == FairShoe(seed, material, nonce).cards(count)


def test_first_cards_follow_a_rejected_word() -> None:
    # Vector 6: block 0 word 7 is rejected at step 7, so step 7 draws word 8.
    vectors = json.loads((Path(__file__).parent / "vectors.json").read_text())
    vector = next(v for v in vectors["shoes"] if v["name"] == "rejection sampling")
    args = (vector["server_seed"], vector["client_material"], vector["nonce"])
    for count in (7, 8, 9, 20):
        assert first_cards(*args, count) == vector["shoe"][:count]


def test_first_cards_with_forced_rejections_match_the_shoe(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    limits = tuple(((2**31) // m) * m for m in range(SHOE_SIZE, 0, -1))
    monkeypatch.setattr(shoe_module, "_LIMITS", limits)
    for nonce in range(1, 30):
        assert first_cards(SEED, "x", nonce, 12) == FairShoe(SEED, "x", nonce).cards(12)


@pytest.mark.parametrize(
    ("seed", "material", "nonce"),
    [
        (SEED[:-1], "x", 1),
        (SEED + "0", "x", 1),
        (SEED.upper(), "x", 1),
        ("g" * 64, "x", 1),
        (SEED, "", 1),
        (SEED, "a||b", 1),
        (SEED, "bad seed", 1),
        (SEED, "x" * 65, 1),
        (SEED, "x", 0),
        (SEED, "x", -3),
    ],
)
def test_invalid_inputs_are_refused(seed: str, material: str, nonce: int) -> None:
    with pytest.raises(FairnessInputError):
        FairShoe(seed, material, nonce)


def test_positions_outside_the_shoe_are_refused() -> None:
    shoe = FairShoe(SEED, "x", 1)
    for position in (-1, SHOE_SIZE):
        with pytest.raises(IndexError):
            shoe.card_at(position)


def test_cli_prints_cards_space_separated() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "fairness.shoe", "--server-seed", SEED, "--client-seed", "a|b",
         "--nonce", "5", "--cards", "20"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert out.stdout.split() == shoe_cards(SEED, "a|b", 5, 20)


def test_cli_reports_a_bad_seed_without_a_traceback() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "fairness.shoe", "--server-seed", "zz", "--client-seed", "a",
         "--nonce", "1"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert out.returncode == 2
    assert "server seed must be 64 lowercase hex" in out.stderr
    assert "Traceback" not in out.stderr
