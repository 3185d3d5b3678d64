"""The browser's beacon verification (fairness/static/fairness/beacon.js, on the vendored
@noble/curves) run in Node 20: real quicknet rounds by `node --test`, and a Hypothesis property
that it reaches fairness/beacon.py's verdict, and randomness, on local-beacon rounds, valid and
tampered. A verification costs Node ~70 ms, so the batches are small."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from fairness.beacon import QUICKNET, BeaconError, LocalBeacon, local_secret_key, verify

ROOT = Path(__file__).resolve().parents[2]
NODE = shutil.which("node") or "/usr/bin/node"
OTHER = LocalBeacon(local_secret_key("tests/fairness/test_beacon_js other"))


def test_node_checks_the_beacon_vectors() -> None:
    out = subprocess.run(
        [NODE, "--test", str(ROOT / "tests/fairness/js/beacon.spec.mjs")],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert out.returncode == 0, out.stdout + out.stderr
    assert "# fail 0" in out.stdout and "# pass 4" in out.stdout


def python_verdict(round_: int, signature: str, key: str) -> str | None:
    try:
        return verify(round_, signature, key).hex()
    except BeaconError:
        return None


def node_verdicts(items: list[tuple[int, str, str]]) -> list[str | None]:
    out = subprocess.run(
        [NODE, str(ROOT / "tests/fairness/js/beacon_batch.mjs")],
        input=json.dumps({"items": items}), capture_output=True, text=True, timeout=120,
        check=True,
    )  # fmt: skip
    results: list[str | None] = json.loads(out.stdout)["results"]
    return results


TAMPERINGS = ("none", "byte", "round", "other key", "quicknet key", "signer")

rounds = st.tuples(
    st.integers(min_value=1, max_value=2**53 - 1),
    st.sampled_from(TAMPERINGS),
    st.integers(min_value=0, max_value=47),
    st.integers(min_value=1, max_value=255),
)


@settings(max_examples=3, deadline=None)
@given(st.text(max_size=16), st.lists(rounds, min_size=8, max_size=8))
def test_python_and_javascript_agree_on_local_beacon_rounds(
    seed: str, batch: list[tuple[int, str, int, int]]
) -> None:
    local = LocalBeacon(local_secret_key(seed))
    key = local.beacon.public_key
    items: list[tuple[int, str, str]] = []
    for round_, tampering, index, mask in batch:
        signature = local.sign_round(round_)
        if tampering == "byte":
            raw = bytearray.fromhex(signature)
            raw[index] ^= mask
            items.append((round_, raw.hex(), key))
        elif tampering == "round":
            items.append((round_ + 1, signature, key))
        elif tampering == "other key":
            items.append((round_, signature, OTHER.beacon.public_key))
        elif tampering == "quicknet key":
            items.append((round_, signature, QUICKNET.public_key))
        elif tampering == "signer":
            items.append((round_, OTHER.sign_round(round_), key))
        else:
            items.append((round_, signature, key))
    expected = [python_verdict(*item) for item in items]
    assert node_verdicts(items) == expected
    for (_, tampering, _, _), verdict in zip(batch, expected, strict=True):
        assert (verdict is not None) == (tampering == "none")
