"""The fast canonical JSON (a C encoder built once) and the event-body shortcut give
json.dumps' bytes exactly, for any JSON value and any body values."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fairness.canonical import (
    GENESIS,
    body_text,
    canonical_json,
    canonical_json_float_free,
    canonical_text,
    canonical_text_float_free,
    event_body,
    event_hash,
    recomputed_hashes,
    stored_event_hash,
)


def reference(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


# Every kind of JSON value, with text that needs escaping and non-ASCII, and ints past 64 bits.
scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(alphabet=st.characters(exclude_categories=("Cs",)), max_size=12)
)
json_values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.text(max_size=6).filter(lambda k: k.isprintable()), inner, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=400, deadline=None)
@given(json_values)
def test_canonical_text_is_json_dumps_sorted_and_compact(value: Any) -> None:
    assert canonical_text(value) == reference(value)
    assert canonical_json(value) == reference(value).encode("utf-8")


@settings(max_examples=300, deadline=None)
@given(
    stream=st.text(max_size=10) | st.integers() | st.none(),
    version=st.integers(min_value=-5, max_value=2**66) | st.booleans() | st.text(max_size=3),
    type_=st.text(max_size=12) | st.none(),
    schema_version=st.integers(min_value=0, max_value=9) | st.booleans(),
    data=json_values,
    recorded_at=st.text(max_size=30) | st.integers(),
)
def test_the_body_shortcut_is_the_canonical_body_whatever_the_values(
    stream: Any, version: Any, type_: Any, schema_version: Any, data: Any, recorded_at: Any
) -> None:
    body = event_body(
        stream=stream, version=version, type=type_, schema_version=schema_version,
        data=data, recorded_at=recorded_at,
    )  # fmt: skip
    assert body_text(stream, version, type_, schema_version, data, recorded_at) == reference(body)
    prev = hashlib.sha256(repr(body).encode()).hexdigest()
    assert stored_event_hash(prev, {**body, "hash": "x"}) == event_hash(prev, body)


def test_a_bool_where_the_version_belongs_is_encoded_as_json_true() -> None:
    body = event_body(
        stream="s", version=True, type="T", schema_version=1, data={}, recorded_at="t"
    )  # fmt: skip
    assert '"version":true' in body_text("s", True, "T", 1, {}, "t")
    assert stored_event_hash(GENESIS, body) == event_hash(GENESIS, body)


def test_values_json_cannot_encode_are_refused_as_json_dumps_refuses_them() -> None:
    with pytest.raises(TypeError):
        canonical_text({"when": object()})
    with pytest.raises(TypeError):
        canonical_text({1: "a", "b": 2})  # keys of mixed types cannot be sorted
    with pytest.raises(ValueError):  # a prev_hash that is not ASCII cannot be hashed
        stored_event_hash("é" * 64, event_body(
            stream="s", version=1, type="T", schema_version=1, data={}, recorded_at="t"
        ))  # fmt: skip


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.fixed_dictionaries(
            {
                "stream": st.sampled_from(["r1", "é"]) | st.integers(0, 2),
                "version": st.integers(1, 5) | st.booleans(),
                "type": st.sampled_from(["BetPlaced", "Tab\t"]),
                "schema_version": st.integers(1, 2) | st.booleans(),
                "data": json_values,
                "recorded_at": st.sampled_from(["2026-01-01T00:00:00.000000Z", "x"]),
                "hash": st.none()
                | st.integers()
                | st.text(alphabet="0123456789abcdef", max_size=3),
            }
        ),
        min_size=1,
        max_size=5,
    )
)
def test_recomputed_hashes_chain_each_body_to_the_hash_recorded_before_it(
    events: list[dict[str, Any]],
) -> None:
    expected, prev = [], GENESIS
    for event in events:
        body = {k: event[k] for k in ("stream", "version", "type", "schema_version", "data",
                                      "recorded_at")}  # fmt: skip
        computed = event_hash(prev, body)
        expected.append(computed)
        prev = event["hash"] if isinstance(event["hash"], str) else computed
    assert recomputed_hashes(events) == expected


float_free_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.text(alphabet=st.characters(exclude_categories=("Cs",)), max_size=12),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=500, deadline=None)
@given(float_free_values)
def test_the_float_free_encoder_is_canonical_json_byte_for_byte(value: Any) -> None:
    assert canonical_json_float_free(value) == reference(value).encode("utf-8")
    assert canonical_text_float_free(value) == reference(value)


def test_the_float_free_encoder_falls_back_where_orjson_refuses_or_is_missing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import fairness.canonical as module

    odd = {"big": 2**64, "deep": [[{"é": -(2**63) - 1}]]}  # past orjson's 64-bit ints
    assert canonical_json_float_free(odd) == reference(odd).encode()
    assert canonical_text_float_free(odd) == reference(odd)
    with pytest.raises(UnicodeEncodeError):  # a lone surrogate has no UTF-8, on either path
        canonical_json_float_free({"s": "\ud800"})
    assert canonical_text_float_free({"s": "\ud800"}) == reference({"s": "\ud800"})  # as text
    monkeypatch.setattr(module, "_orjson", None)
    assert canonical_json_float_free({"b": 1, "a": "é"}) == '{"a":"é","b":1}'.encode()
    assert canonical_text_float_free({"b": 1, "a": "é"}) == '{"a":"é","b":1}'


@settings(max_examples=100, deadline=None)
@given(st.lists(st.fixed_dictionaries({
    "stream": st.sampled_from(["r1", "é"]), "version": st.integers(1, 5) | st.booleans(),
    "type": st.sampled_from(["BetPlaced", "Tab\t"]), "schema_version": st.integers(1, 2),
    "data": float_free_values, "recorded_at": st.sampled_from(["2026-01-01T00:00:00.000000Z"]),
    "hash": st.none() | st.text(alphabet="0123456789abcdef", max_size=3),
}), min_size=1, max_size=4))  # fmt: skip
def test_both_hashing_paths_give_the_same_hashes(events: list[dict[str, Any]]) -> None:
    assert recomputed_hashes(events, float_free=True) == recomputed_hashes(events)


def test_the_verifier_runs_without_orjson_or_msgspec(tmp_path: Any) -> None:
    import subprocess
    import sys

    from fairness.receipt import private_key_from_hex
    from fairness.sample import sample_bundle

    key = private_key_from_hex(hashlib.sha256(b"no orjson").hexdigest())
    line = sample_bundle(
        round_id="r1", server_seed="a" * 64, client_seeds=["alice"], nonce=1, private_key=key
    )
    bundle = tmp_path / "b.jsonl"
    bundle.write_text(canonical_text(line) + "\n")
    blocked = (
        "import sys; sys.modules['orjson'] = sys.modules['msgspec'] = None; "
        "from fairness import bundle, canonical, verify; "
        "assert canonical._orjson is None and bundle._FAST is None; "
        "sys.exit(verify.main([sys.argv[1]]))"
    )
    out = subprocess.run(
        [sys.executable, "-c", blocked, str(bundle)], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("OK   line 1 round r1: ")
