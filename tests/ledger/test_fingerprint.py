"""Request and entry fingerprints are stored (Idempotency-Key records, journal entries) and a
retry is compared with them: they must stay the sha256 of the canonical `json.dumps` text."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from ledger.idempotency import fingerprint

payloads = st.dictionaries(
    st.text(max_size=8),
    st.recursive(
        st.none()
        | st.booleans()
        | st.integers(min_value=-(2**70), max_value=2**70)
        | st.text(alphabet=st.characters(exclude_categories=("Cs",)), max_size=10),
        lambda inner: (
            st.lists(inner, max_size=3)
            | st.lists(st.tuples(st.integers(0, 99), st.integers(0, 10**9)), max_size=3)
            | st.dictionaries(st.text(max_size=5), inner, max_size=3)
        ),
        max_leaves=12,
    ),
    max_size=5,
)


def _reference(payload: Any) -> str:
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@settings(max_examples=300, deadline=None)
@given(payloads)
def test_a_fingerprint_is_the_sha256_of_the_canonical_json(payload: dict[str, Any]) -> None:
    assert fingerprint(payload) == _reference(payload)


def test_known_fingerprints_do_not_change() -> None:
    settle = {"op": "round_settle", "round": "r", "returns": sorted({7: 15}.items()), "fee": 0}
    assert fingerprint(settle) == _reference(settle)
    assert fingerprint({"round": "é", "confirm": True}) == (
        hashlib.sha256('{"confirm":true,"round":"é"}'.encode()).hexdigest()
    )
