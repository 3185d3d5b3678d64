"""The JavaScript implementation (fairness/static/fairness/*.js) run in Node 20.

The vectors are checked by `node --test`; a Hypothesis property compares the Python and the
JavaScript shoe over random seeds (many examples per node call); the JS verifier must reach the
Python verifier's verdict on valid and tampered rounds.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fairness.receipt import private_key_from_hex
from fairness.sample import resign, sample_bundle
from fairness.shoe import shoe_cards
from fairness.verify import KeyRing, verify_lines, verify_round

ROOT = Path(__file__).resolve().parents[2]
NODE = shutil.which("node") or "/usr/bin/node"
KEY = private_key_from_hex(hashlib.sha256(b"js parity").hexdigest())


def run_batch(payload: dict[str, Any]) -> dict[str, Any]:
    out = subprocess.run(
        [NODE, str(ROOT / "tests/fairness/js/batch.mjs")],
        input=json.dumps(payload), capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    result: dict[str, Any] = json.loads(out.stdout)
    return result


def test_node_checks_the_published_vectors() -> None:
    out = subprocess.run(
        [NODE, "--test", str(ROOT / "tests/fairness/js/")],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert out.returncode == 0, out.stdout + out.stderr
    assert "# fail 0" in out.stdout and "# pass 17" in out.stdout


shoe_inputs = st.tuples(
    st.binary(min_size=32, max_size=32).map(bytes.hex),
    st.lists(st.text("aZ09_.-", min_size=1, max_size=64), min_size=1, max_size=8).map("|".join),
    st.integers(min_value=1, max_value=2**53 - 1),
    st.integers(min_value=0, max_value=416),
)


@settings(max_examples=4, deadline=None)
@given(st.lists(shoe_inputs, min_size=25, max_size=25))
def test_python_and_javascript_shoes_agree(batch: list[tuple[str, str, int, int]]) -> None:
    result = run_batch({"shoes": [list(item) for item in batch]})
    assert result["shoes"] == [shoe_cards(*item) for item in batch]


def tampered_lines() -> list[dict[str, Any]]:
    seed = hashlib.sha256(b"js parity seed").hexdigest()
    good = sample_bundle(
        round_id="r1", server_seed=seed, client_seeds=["alice", "bob"], nonce=7, private_key=KEY
    )
    lines = [good]
    card = json.loads(json.dumps(good))
    dealt = next(e for e in card["events"] if e["type"].endswith("CardDealt"))
    dealt["data"]["card"] = "AS" if dealt["data"]["card"] != "AS" else "KD"
    card["receipt"]["cards"][0]["card"] = dealt["data"]["card"]
    lines.append(resign(card, KEY))
    swapped = json.loads(json.dumps(good))
    swapped["receipt"]["client_material"] = "bob|alice"
    lines.append(resign(swapped, KEY))
    badsig = json.loads(json.dumps(good))
    badsig["signature"] = "00" * 64
    lines.append(badsig)
    edited = json.loads(json.dumps(good))
    edited["events"][1]["data"]["amount"] += 1
    lines.append(edited)
    return lines


def test_the_javascript_verifier_reaches_the_python_verdicts() -> None:
    lines = tampered_lines()
    result = run_batch({"bundles": lines})
    python = [verify_round(line, KeyRing()) for line in lines]
    assert [r["ok"] for r in result["bundles"]] == [r.ok for r in python] == [
        True, False, False, False, False
    ]  # fmt: skip
    for js, py in zip(result["bundles"][1:], python[1:], strict=True):
        assert js["failures"][0] == py.failures[0]


@pytest.mark.parametrize("published", [True, False])
def test_the_javascript_verifier_checks_key_ids(published: bool) -> None:
    line = tampered_lines()[0]
    keys = {"0" * 16: line["public_key"]} if published else None
    if not published:
        line["key_id"] = "0" * 16
    result = run_batch({"bundles": [line], "keys": keys})
    assert result["bundles"][0]["failures"][0].startswith("key: ")


def test_the_javascript_verifier_checks_a_receipt_without_events() -> None:
    line = tampered_lines()[0]
    signed = {k: line[k] for k in ("receipt", "signature", "key_id", "public_key")}
    changed = json.loads(json.dumps(signed))
    changed["receipt"]["cards"][1]["card"] = (
        "AS" if signed["receipt"]["cards"][1]["card"] != "AS" else "KD"
    )
    result = run_batch({"receipts": [signed, changed, signed["receipt"]]})["receipts"]
    assert result[0] == {
        "ok": True, "failures": [], "cards": len(signed["receipt"]["cards"]),
        "play": "not run: a receipt alone has no events; paste the whole bundle line to check "
        "the play",
    }  # fmt: skip
    assert result[1]["failures"][0].startswith("signature: not a valid Ed25519 signature")
    assert result[1]["failures"][1].startswith("cards: position 1 dealt ")
    assert result[2]["failures"] == [
        "signature: no signature given: paste the whole proof to check it"
    ]


def test_the_javascript_verifier_checks_reveals_against_dealt_cards() -> None:
    line = sample_bundle(
        round_id="r2", server_seed=hashlib.sha256(b"hole").hexdigest(), client_seeds=["alice"],
        nonce=3, private_key=KEY,
    )  # fmt: skip
    hole = next(e for e in line["events"] if e["type"] == "HoleCardRevealed")
    hole["data"]["card"] = "AS" if hole["data"]["card"] != "AS" else "KD"
    forged = resign(line, KEY)
    js = run_batch({"bundles": [forged]})["bundles"][0]
    py = verify_round(forged, KeyRing())
    assert js["failures"] == py.failures and py.failures[0].startswith("cards: HoleCardRevealed ")


JS_MUTANT_LINE = json.dumps(tampered_lines()[0], sort_keys=True, separators=(",", ":"))


@settings(max_examples=3, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(min_value=0, max_value=len(JS_MUTANT_LINE) - 1),
            st.sampled_from('0123456789abcdefAS"{}[],:x'),
        ),
        min_size=60,
        max_size=60,
    )
)
def test_python_and_javascript_agree_on_mutated_lines(mutations: list[tuple[int, str]]) -> None:
    texts = [JS_MUTANT_LINE] + [
        JS_MUTANT_LINE[:p] + c + JS_MUTANT_LINE[p + 1 :] for p, c in mutations
    ]
    js = run_batch({"texts": texts})["texts"]
    python = [report.ok for report in verify_lines(texts, KeyRing())]
    assert js[0] is True
    assert js == python
